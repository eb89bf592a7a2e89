package proxy

import (
	"encoding/json"
	"strings"
)

// Protocol names, as in the atlas's #Protocol.
const (
	Anthropic       = "anthropic"
	OpenAIChat      = "openai-chat"
	OpenAIResponses = "openai-responses"
	Gemini          = "gemini"
)

// Request is the canonical LLM request.
type Request struct {
	Model       string
	System      string
	Messages    []Message
	Tools       []Tool
	ToolChoice  *ToolChoice
	MaxTokens   int
	Temperature *float64
	TopP        *float64
	TopK        *int
	Stop        []string
	Stream      bool
	// Parallel is false when the client forbade parallel tool calls.
	Parallel *bool
	// ThinkingBudget > 0 or Effort != "" asks for reasoning.
	ThinkingBudget int
	Effort         string
	// streamUsage: a Chat client asked for the trailing usage chunk.
	streamUsage bool
	// estimate is a local input token count for message_start when the
	// upstream reports usage only at the end.
	estimate int
}

// Message is one turn. Role is "user" or "assistant"; tool results are
// parts of a user message.
type Message struct {
	Role  string
	Parts []Part
}

// Part kinds.
const (
	PartText       = "text"
	PartImage      = "image"
	PartToolCall   = "tool_call"
	PartToolResult = "tool_result"
	PartThinking   = "thinking"
)

// Part is one piece of a message.
type Part struct {
	Kind string
	Text string // text, thinking, tool result text
	// Image: MIME and base64 Data, or URL.
	MIME, Data, URL string
	// Tool call and result: ToolID, ToolName; Args is a JSON object.
	ToolID, ToolName string
	Args             json.RawMessage
	IsError          bool
	// Signature carries a thinking signature, Responses encrypted_content
	// or a Gemini thoughtSignature riding on a function call.
	Signature string
	// Redacted is an Anthropic redacted_thinking payload.
	Redacted string
}

// Tool is a function the model may call; Schema is a JSON Schema object.
type Tool struct {
	Name, Description string
	Schema            json.RawMessage
}

// ToolChoice: Mode is auto, none, required or tool (with Name).
type ToolChoice struct{ Mode, Name string }

// Stop reasons (Anthropic's vocabulary).
const (
	StopEnd      = "end_turn"
	StopMax      = "max_tokens"
	StopTool     = "tool_use"
	StopSequence = "stop_sequence"
	StopRefusal  = "refusal"
)

// Usage: Input counts every prompt token, cached ones included (the OpenAI
// and Gemini convention); Output includes Reasoning.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int
}

// Response is the canonical non-streaming answer.
type Response struct {
	ID, Model string
	Parts     []Part
	Stop      string
	Usage     Usage
}

// Event kinds of a canonical stream.
const (
	EvStart     = "start"     // ID, Model, Usage (input known so far)
	EvText      = "text"      // Text
	EvThinking  = "thinking"  // Text
	EvSignature = "signature" // Text: signature of the current thinking, or of tool Index
	EvToolStart = "tool"      // Index, ToolID, ToolName
	EvToolArgs  = "args"      // Index, Text: a fragment of the JSON arguments
	EvEnd       = "end"       // Stop, Usage
	EvError     = "error"     // Err
)

// Event is one step of a canonical stream. Tool Index values are the
// decoder's own slot numbers: unique per tool call within a response.
type Event struct {
	Kind             string
	ID, Model        string
	Text             string
	Index            int
	ToolID, ToolName string
	Stop             string
	Usage            Usage
	Err              *APIError
}

// hasTool reports whether any part is a tool call.
func hasTool(parts []Part) bool {
	for _, p := range parts {
		if p.Kind == PartToolCall {
			return true
		}
	}
	return false
}

// text joins the text parts.
func text(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Kind == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// fillToolNames gives every tool result the name of its call, which
// Gemini keys results by, from the whole history.
func fillToolNames(r *Request) {
	names := map[string]string{}
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			if p.Kind == PartToolCall {
				names[p.ToolID] = p.ToolName
			}
		}
	}
	for i := range r.Messages {
		for j := range r.Messages[i].Parts {
			p := &r.Messages[i].Parts[j]
			if p.Kind == PartToolResult && p.ToolName == "" {
				p.ToolName = names[p.ToolID]
			}
		}
	}
}

// mergeTurns joins consecutive messages of one role (Chat sends one tool
// message per result; Anthropic and Gemini want them in one turn) and puts
// tool results before other parts of a user turn.
func mergeTurns(ms []Message) []Message {
	var out []Message
	for _, m := range ms {
		if len(m.Parts) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Parts = append(out[n-1].Parts, m.Parts...)
			continue
		}
		out = append(out, Message{Role: m.Role, Parts: append([]Part(nil), m.Parts...)})
	}
	for i := range out {
		if out[i].Role != "user" {
			continue
		}
		var res, rest []Part
		for _, p := range out[i].Parts {
			if p.Kind == PartToolResult {
				res = append(res, p)
			} else {
				rest = append(rest, p)
			}
		}
		out[i].Parts = append(res, rest...)
	}
	return out
}

// argsObject returns tool arguments as a JSON object, "{}" when empty or
// not an object (a model may stream nothing for a call without arguments).
func argsObject(a json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(string(a))
	if s == "" || s[0] != '{' || !json.Valid([]byte(s)) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// effortBudget turns a reasoning effort into a thinking budget and back.
func effortBudget(effort string) int {
	switch effort {
	case "minimal":
		return 1024
	case "low":
		return 2048
	case "medium":
		return 8192
	case "high", "xhigh":
		return 24576
	}
	return 0
}

func budgetEffort(b int) string {
	switch {
	case b <= 0:
		return ""
	case b <= 2048:
		return "low"
	case b <= 8192:
		return "medium"
	}
	return "high"
}

func ptr[T any](v T) *T { return &v }
