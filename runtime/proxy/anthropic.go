package proxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

type anthropicAdapter struct{}

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *antSource      `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
}

type antSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type antMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type antRequest struct {
	Model         string          `json:"model"`
	System        json.RawMessage `json:"system,omitempty"`
	Messages      []antMessage    `json:"messages"`
	Tools         []antTool       `json:"tools,omitempty"`
	ToolChoice    json.RawMessage `json:"tool_choice,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	Thinking      *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens,omitempty"`
	} `json:"thinking,omitempty"`
}

type antUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

type antResponse struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []antBlock `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        antUsage   `json:"usage"`
}

// textOrBlocks decodes a field that is a string or a list of blocks.
func textOrBlocks(raw json.RawMessage) ([]antBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []antBlock{{Type: "text", Text: s}}, nil
	}
	var bs []antBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, err
	}
	return bs, nil
}

func (anthropicAdapter) decodeRequest(body []byte) (*Request, error) {
	var in antRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	r := &Request{Model: in.Model, MaxTokens: in.MaxTokens, Temperature: in.Temperature, TopP: in.TopP, TopK: in.TopK, Stop: in.StopSequences, Stream: in.Stream}
	sys, err := textOrBlocks(in.System)
	if err != nil {
		return nil, fmt.Errorf("anthropic system: %w", err)
	}
	var st []string
	for _, b := range sys {
		st = append(st, b.Text)
	}
	r.System = strings.Join(st, "\n\n")
	for i, m := range in.Messages {
		bs, err := textOrBlocks(m.Content)
		if err != nil {
			return nil, fmt.Errorf("anthropic messages[%d].content: %w", i, err)
		}
		msg := Message{Role: m.Role}
		for _, b := range bs {
			if p, ok := antPart(b); ok {
				msg.Parts = append(msg.Parts, p)
			}
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range in.Tools {
		if len(t.InputSchema) == 0 {
			continue // server tools (web_search, …) have no schema
		}
		r.Tools = append(r.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	if len(in.ToolChoice) > 0 {
		var tc struct {
			Type                   string `json:"type"`
			Name                   string `json:"name"`
			DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
		}
		if err := json.Unmarshal(in.ToolChoice, &tc); err == nil {
			mode := map[string]string{"auto": "auto", "any": "required", "none": "none", "tool": "tool"}[tc.Type]
			if mode != "" {
				r.ToolChoice = &ToolChoice{Mode: mode, Name: tc.Name}
			}
			if tc.DisableParallelToolUse {
				r.Parallel = ptr(false)
			}
		}
	}
	if in.Thinking != nil && in.Thinking.Type != "disabled" {
		r.ThinkingBudget = in.Thinking.BudgetTokens
		if r.ThinkingBudget == 0 {
			r.Effort = "medium"
		}
	}
	return r, nil
}

func antPart(b antBlock) (Part, bool) {
	switch b.Type {
	case "text":
		return Part{Kind: PartText, Text: b.Text}, true
	case "image":
		if b.Source == nil {
			return Part{}, false
		}
		if b.Source.Type == "url" {
			return Part{Kind: PartImage, URL: b.Source.URL}, true
		}
		return Part{Kind: PartImage, MIME: b.Source.MediaType, Data: b.Source.Data}, true
	case "tool_use":
		return Part{Kind: PartToolCall, ToolID: b.ID, ToolName: b.Name, Args: argsObject(b.Input)}, true
	case "tool_result":
		inner, _ := textOrBlocks(b.Content)
		var t []string
		for _, x := range inner {
			if x.Type == "text" {
				t = append(t, x.Text)
			}
		}
		return Part{Kind: PartToolResult, ToolID: b.ToolUseID, Text: strings.Join(t, "\n"), IsError: b.IsError}, true
	case "thinking":
		p := Part{Kind: PartThinking}
		if b.Thinking != nil {
			p.Text = *b.Thinking
		}
		if b.Signature != nil {
			p.Signature = *b.Signature
		}
		return p, true
	case "redacted_thinking":
		return Part{Kind: PartThinking, Redacted: b.Data}, true
	}
	return Part{}, false
}

var antIDRe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// antID makes a foreign tool id valid for Anthropic (`functions.Bash:0`).
func antID(id string) string {
	if id == "" {
		return "toolu_" + randomID()
	}
	return antIDRe.ReplaceAllString(id, "_")
}

func antBlocks(parts []Part, history bool) []antBlock {
	var out []antBlock
	for _, p := range parts {
		switch p.Kind {
		case PartText:
			if p.Text != "" {
				out = append(out, antBlock{Type: "text", Text: p.Text})
			}
		case PartImage:
			if p.URL != "" {
				out = append(out, antBlock{Type: "image", Source: &antSource{Type: "url", URL: p.URL}})
			} else {
				out = append(out, antBlock{Type: "image", Source: &antSource{Type: "base64", MediaType: p.MIME, Data: p.Data}})
			}
		case PartToolCall:
			out = append(out, antBlock{Type: "tool_use", ID: antID(p.ToolID), Name: p.ToolName, Input: argsObject(p.Args)})
		case PartToolResult:
			c, _ := json.Marshal(p.Text)
			out = append(out, antBlock{Type: "tool_result", ToolUseID: antID(p.ToolID), Content: c, IsError: p.IsError})
		case PartThinking:
			// Anthropic verifies signatures: history thinking without
			// one (from another model) cannot go back.
			if p.Redacted != "" {
				out = append(out, antBlock{Type: "redacted_thinking", Data: p.Redacted})
			} else if !history || p.Signature != "" {
				out = append(out, antBlock{Type: "thinking", Thinking: ptr(p.Text), Signature: ptr(p.Signature)})
			}
		}
	}
	return out
}

func (anthropicAdapter) encodeRequest(r *Request, p *Provider) (string, url.Values, []byte, error) {
	out := antRequest{Model: r.Model, MaxTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, StopSequences: r.Stop, Stream: r.Stream}
	if out.MaxTokens == 0 {
		out.MaxTokens = p.MaxOutputTokens
		if out.MaxTokens == 0 {
			out.MaxTokens = 8192
		}
	}
	if r.System != "" {
		out.System, _ = json.Marshal(r.System)
	}
	for _, m := range mergeTurns(r.Messages) {
		bs := antBlocks(m.Parts, true)
		if len(bs) == 0 {
			continue
		}
		c, _ := json.Marshal(bs)
		out.Messages = append(out.Messages, antMessage{Role: m.Role, Content: c})
	}
	if out.Messages == nil {
		out.Messages = []antMessage{}
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, antTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.Schema)})
	}
	if tc := r.ToolChoice; tc != nil || r.Parallel != nil {
		v := map[string]any{"type": "auto"}
		if tc != nil {
			v["type"] = map[string]string{"auto": "auto", "required": "any", "none": "none", "tool": "tool"}[tc.Mode]
			if tc.Mode == "tool" {
				v["name"] = tc.Name
			}
		}
		if r.Parallel != nil && !*r.Parallel && v["type"] != "none" {
			v["disable_parallel_tool_use"] = true
		}
		if len(r.Tools) > 0 {
			out.ToolChoice, _ = json.Marshal(v)
		}
	}
	budget := r.ThinkingBudget
	if budget == 0 {
		budget = effortBudget(r.Effort)
	}
	if budget > 0 {
		if budget < 1024 {
			budget = 1024
		}
		if out.MaxTokens <= budget {
			out.MaxTokens = budget + 4096
		}
		out.Thinking = &struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens,omitempty"`
		}{"enabled", budget}
		// thinking forbids changing temperature and top_k.
		out.Temperature, out.TopK = nil, nil
	}
	b, err := json.Marshal(out)
	return "/v1/messages", nil, b, err
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 || string(s) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

func antUsageOf(u Usage) antUsage {
	in := u.Input - u.CacheRead - u.CacheWrite
	if in < 0 {
		in = 0
	}
	return antUsage{InputTokens: in, OutputTokens: u.Output, CacheReadInputTokens: u.CacheRead, CacheCreationInputTokens: u.CacheWrite}
}

func usageOfAnt(u antUsage) Usage {
	return Usage{Input: u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}
}

func (anthropicAdapter) encodeResponse(r *Response) []byte {
	stop := r.Stop
	if hasTool(r.Parts) {
		stop = StopTool
	}
	if stop == "" {
		stop = StopEnd
	}
	content := antBlocks(r.Parts, false)
	if content == nil {
		content = []antBlock{}
	}
	id := r.ID
	if !strings.HasPrefix(id, "msg_") {
		id = "msg_" + randomID()
	}
	b, _ := json.Marshal(antResponse{ID: id, Type: "message", Role: "assistant", Model: r.Model, Content: content, StopReason: &stop, Usage: antUsageOf(r.Usage)})
	return b
}

func (anthropicAdapter) decodeResponse(body []byte, _ *sigStore) (*Response, error) {
	var in antResponse
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("anthropic response: %w", err)
	}
	r := &Response{ID: in.ID, Model: in.Model, Usage: usageOfAnt(in.Usage)}
	if in.StopReason != nil {
		r.Stop = normStop(*in.StopReason)
	}
	for _, b := range in.Content {
		if p, ok := antPart(b); ok {
			r.Parts = append(r.Parts, p)
		}
	}
	return r, nil
}

// normStop keeps Anthropic's stop reasons, folding the rare ones.
func normStop(s string) string {
	switch s {
	case StopEnd, StopMax, StopTool, StopSequence, StopRefusal:
		return s
	case "model_context_window_exceeded":
		return StopMax
	}
	return StopEnd
}

// Streaming: Anthropic upstream → canonical.

type antStreamDecoder struct {
	stop  string
	usage Usage
	ended bool
	kinds map[int]string
}

func (anthropicAdapter) newStreamDecoder(*sigStore) streamDecoder {
	return &antStreamDecoder{kinds: map[int]string{}}
}

func (d *antStreamDecoder) decode(ev SSE, emit func(Event)) error {
	var v struct {
		Type    string       `json:"type"`
		Message *antResponse `json:"message"`
		Index   int          `json:"index"`
		Block   *antBlock    `json:"content_block"`
		Delta   *struct {
			Type        string  `json:"type"`
			Text        string  `json:"text"`
			PartialJSON string  `json:"partial_json"`
			Thinking    string  `json:"thinking"`
			Signature   string  `json:"signature"`
			StopReason  *string `json:"stop_reason"`
		} `json:"delta"`
		Usage *antUsage `json:"usage"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		return fmt.Errorf("anthropic stream event %q: %w", ev.Event, err)
	}
	switch v.Type {
	case "message_start":
		if v.Message != nil {
			d.usage = usageOfAnt(v.Message.Usage)
			emit(Event{Kind: EvStart, ID: v.Message.ID, Model: v.Message.Model, Usage: d.usage})
		}
	case "content_block_start":
		if v.Block == nil {
			break
		}
		d.kinds[v.Index] = v.Block.Type
		switch v.Block.Type {
		case "tool_use":
			emit(Event{Kind: EvToolStart, Index: v.Index, ToolID: v.Block.ID, ToolName: v.Block.Name})
			if in := strings.TrimSpace(string(v.Block.Input)); in != "" && in != "{}" {
				emit(Event{Kind: EvToolArgs, Index: v.Index, Text: in})
			}
		case "text":
			if v.Block.Text != "" {
				emit(Event{Kind: EvText, Text: v.Block.Text})
			}
		case "thinking":
			if v.Block.Thinking != nil && *v.Block.Thinking != "" {
				emit(Event{Kind: EvThinking, Text: *v.Block.Thinking})
			}
		}
	case "content_block_delta":
		if v.Delta == nil {
			break
		}
		switch v.Delta.Type {
		case "text_delta":
			emit(Event{Kind: EvText, Text: v.Delta.Text})
		case "input_json_delta":
			emit(Event{Kind: EvToolArgs, Index: v.Index, Text: v.Delta.PartialJSON})
		case "thinking_delta":
			emit(Event{Kind: EvThinking, Text: v.Delta.Thinking})
		case "signature_delta":
			emit(Event{Kind: EvSignature, Text: v.Delta.Signature, Index: -1})
		}
	case "message_delta":
		if v.Delta != nil && v.Delta.StopReason != nil {
			d.stop = normStop(*v.Delta.StopReason)
		}
		if v.Usage != nil {
			// message_delta usage is cumulative; input may be absent (0).
			if v.Usage.InputTokens > 0 || v.Usage.CacheReadInputTokens > 0 {
				d.usage = usageOfAnt(*v.Usage)
			} else {
				d.usage.Output = v.Usage.OutputTokens
			}
		}
	case "message_stop":
		d.ended = true
		emit(Event{Kind: EvEnd, Stop: d.stop, Usage: d.usage})
	case "error":
		msg := string(ev.Data)
		status := 500
		if v.Error != nil {
			msg = v.Error.Message
			if v.Error.Type == "overloaded_error" {
				status = 529
			}
		}
		d.ended = true
		emit(Event{Kind: EvError, Err: &APIError{Status: status, Message: msg}})
	}
	return nil
}

// finish: an Anthropic stream ends with message_stop (or error); EOF
// before it is a cut stream.
func (d *antStreamDecoder) finish(emit func(Event)) {
	if !d.ended {
		d.ended = true
		emit(cutStream("message_stop"))
	}
}

// Streaming: canonical → Anthropic client.

type antStreamEncoder struct {
	w       *sseWriter
	model   string
	started bool
	open    string // kind of the open block: "text", "thinking", "tool", ""
	openIdx int    // the tool slot of an open tool block
	next    int    // next block index
	tools   bool
	// estimate fills message_start's input_tokens when the upstream has
	// not said yet: 0 there broke Claude Code's context display
	// (CLIProxyAPI #1700). message_delta carries the real count.
	estimate int
}

func (anthropicAdapter) newStreamEncoder(w *sseWriter, req *Request) streamEncoder {
	return &antStreamEncoder{w: w, model: req.Model, estimate: req.estimate}
}

func (e *antStreamEncoder) send(name string, v any) {
	b, _ := json.Marshal(v)
	e.w.event(name, b)
}

func (e *antStreamEncoder) start(id, model string, u Usage) {
	if e.started {
		return
	}
	e.started = true
	if !strings.HasPrefix(id, "msg_") {
		id = "msg_" + randomID()
	}
	if model == "" {
		model = e.model
	}
	if u.Input == 0 {
		u.Input = e.estimate
	}
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": antUsageOf(Usage{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}),
	}})
	e.ping()
}

func (e *antStreamEncoder) closeBlock() {
	if e.open == "" {
		return
	}
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": e.next - 1})
	e.open = ""
}

func (e *antStreamEncoder) openBlock(kind string, block map[string]any) {
	e.closeBlock()
	e.open = kind
	e.send("content_block_start", map[string]any{"type": "content_block_start", "index": e.next, "content_block": block})
	e.next++
}

func (e *antStreamEncoder) delta(d map[string]any) {
	e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": e.next - 1, "delta": d})
}

func (e *antStreamEncoder) encode(ev Event) {
	if ev.Kind != EvError || e.started {
		e.start(ev.ID, ev.Model, ev.Usage)
	}
	switch ev.Kind {
	case EvText:
		if ev.Text == "" {
			return
		}
		if e.open != "text" {
			e.openBlock("text", map[string]any{"type": "text", "text": ""})
		}
		e.delta(map[string]any{"type": "text_delta", "text": ev.Text})
	case EvThinking:
		if e.open != "thinking" {
			e.openBlock("thinking", map[string]any{"type": "thinking", "thinking": "", "signature": ""})
		}
		e.delta(map[string]any{"type": "thinking_delta", "thinking": ev.Text})
	case EvSignature:
		if ev.Index >= 0 && ev.ToolID != "" {
			return // a tool call's signature stays server-side (sigStore)
		}
		if e.open != "thinking" {
			e.openBlock("thinking", map[string]any{"type": "thinking", "thinking": "", "signature": ""})
		}
		e.delta(map[string]any{"type": "signature_delta", "signature": ev.Text})
	case EvToolStart:
		e.tools = true
		e.openBlock("tool", map[string]any{"type": "tool_use", "id": antID(ev.ToolID), "name": ev.ToolName, "input": map[string]any{}})
		e.openIdx = ev.Index
	case EvToolArgs:
		if e.open == "tool" && e.openIdx == ev.Index && ev.Text != "" {
			e.delta(map[string]any{"type": "input_json_delta", "partial_json": ev.Text})
		}
	case EvEnd:
		e.closeBlock()
		stop := ev.Stop
		if e.tools {
			stop = StopTool
		}
		if stop == "" {
			stop = StopEnd
		}
		e.send("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": antUsageOf(ev.Usage)})
		e.send("message_stop", map[string]any{"type": "message_stop"})
	case EvError:
		_, typ := anthropicStatus(ev.Err.Status)
		e.send("error", map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": ev.Err.Message}})
	}
}

func (e *antStreamEncoder) ping() {
	if !e.started {
		e.start("", "", Usage{}) // a ping may not precede message_start; start sends one
		return
	}
	e.send("ping", map[string]any{"type": "ping"})
}
func (e *antStreamEncoder) close() {}
