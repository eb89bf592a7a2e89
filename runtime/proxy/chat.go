package proxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

type chatAdapter struct{}

type chatToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ToolCalls        []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	Reasoning        string          `json:"reasoning,omitempty"`
}

type chatContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools,omitempty"`
	ToolChoice          json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	Stop                json.RawMessage `json:"stop,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

func (u *chatUsage) canonical() Usage {
	c := Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		c.CacheRead = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		c.Reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	return c
}

func chatUsageOf(u Usage) *chatUsage {
	c := &chatUsage{PromptTokens: u.Input, CompletionTokens: u.Output, TotalTokens: u.Input + u.Output}
	c.PromptTokensDetails = &struct {
		CachedTokens int `json:"cached_tokens"`
	}{u.CacheRead}
	if u.Reasoning > 0 {
		c.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{u.Reasoning}
	}
	return c
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatMessage `json:"delta,omitempty"`
	FinishReason *string      `json:"finish_reason"`
}

type chatResponse struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   *chatUsage      `json:"usage,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// chatParts decodes a message content: a string or content parts.
func chatParts(raw json.RawMessage) []Part {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil
		}
		return []Part{{Kind: PartText, Text: s}}
	}
	var ps []chatContentPart
	json.Unmarshal(raw, &ps)
	var out []Part
	for _, p := range ps {
		switch p.Type {
		case "text", "input_text", "output_text":
			out = append(out, Part{Kind: PartText, Text: p.Text})
		case "image_url":
			if p.ImageURL != nil {
				out = append(out, imagePart(p.ImageURL.URL))
			}
		}
	}
	return out
}

// imagePart splits a data: URL into MIME and base64 data.
func imagePart(u string) Part {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, _ := strings.Cut(rest, ",")
		return Part{Kind: PartImage, MIME: strings.TrimSuffix(meta, ";base64"), Data: data}
	}
	return Part{Kind: PartImage, URL: u}
}

func imageURL(p Part) string {
	if p.URL != "" {
		return p.URL
	}
	return "data:" + p.MIME + ";base64," + p.Data
}

func (chatAdapter) decodeRequest(body []byte) (*Request, error) {
	var in chatRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("chat request: %w", err)
	}
	r := &Request{Model: in.Model, MaxTokens: in.MaxCompletionTokens, Temperature: in.Temperature, TopP: in.TopP, Stream: in.Stream, Parallel: in.ParallelToolCalls, Effort: in.ReasoningEffort}
	if r.MaxTokens == 0 {
		r.MaxTokens = in.MaxTokens
	}
	r.streamUsage = in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	if len(in.Stop) > 0 {
		var s string
		if json.Unmarshal(in.Stop, &s) == nil {
			r.Stop = []string{s}
		} else {
			json.Unmarshal(in.Stop, &r.Stop)
		}
	}
	var sys []string
	for _, m := range in.Messages {
		switch m.Role {
		case "system", "developer":
			sys = append(sys, text(chatParts(m.Content)))
		case "tool":
			r.Messages = append(r.Messages, Message{Role: "user", Parts: []Part{{Kind: PartToolResult, ToolID: m.ToolCallID, Text: text(chatParts(m.Content))}}})
		case "assistant":
			msg := Message{Role: "assistant"}
			if rc := m.ReasoningContent + m.Reasoning; rc != "" {
				msg.Parts = append(msg.Parts, Part{Kind: PartThinking, Text: rc})
			}
			msg.Parts = append(msg.Parts, chatParts(m.Content)...)
			for _, tc := range m.ToolCalls {
				msg.Parts = append(msg.Parts, Part{Kind: PartToolCall, ToolID: tc.ID, ToolName: tc.Function.Name, Args: argsObject(json.RawMessage(tc.Function.Arguments))})
			}
			r.Messages = append(r.Messages, msg)
		default:
			r.Messages = append(r.Messages, Message{Role: "user", Parts: chatParts(m.Content)})
		}
	}
	r.System = strings.Join(sys, "\n\n")
	for _, t := range in.Tools {
		if t.Type != "" && t.Type != "function" {
			continue
		}
		r.Tools = append(r.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	r.ToolChoice = openAIToolChoice(in.ToolChoice, true)
	return r, nil
}

// openAIToolChoice decodes Chat ({function:{name}}) and Responses ({name}) tool_choice.
func openAIToolChoice(raw json.RawMessage, nested bool) *ToolChoice {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return &ToolChoice{Mode: s}
		}
		return nil
	}
	var v struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	name := v.Name
	if name == "" {
		name = v.Function.Name
	}
	if name == "" {
		return nil
	}
	return &ToolChoice{Mode: "tool", Name: name}
}

// reasoningModel: o-series and gpt-5 reject max_tokens and temperature ≠ 1.
func reasoningModel(m string) bool {
	m = strings.ToLower(m)
	return strings.HasPrefix(m, "gpt-5") || len(m) > 1 && m[0] == 'o' && m[1] >= '0' && m[1] <= '9'
}

func (chatAdapter) encodeRequest(r *Request, p *Provider) (string, url.Values, []byte, error) {
	out := chatRequest{Model: r.Model, Temperature: r.Temperature, TopP: r.TopP, Stream: r.Stream, ParallelToolCalls: r.Parallel}
	if len(r.Tools) == 0 {
		out.ParallelToolCalls = nil
	}
	if reasoningModel(r.Model) {
		out.MaxCompletionTokens = r.MaxTokens
		out.Temperature, out.TopP = nil, nil
		out.ReasoningEffort = r.Effort
		if out.ReasoningEffort == "" {
			out.ReasoningEffort = budgetEffort(r.ThinkingBudget)
		}
	} else {
		out.MaxTokens = r.MaxTokens
	}
	if r.Stream {
		out.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	if len(r.Stop) > 0 {
		out.Stop, _ = json.Marshal(r.Stop)
	}
	if r.System != "" {
		c, _ := json.Marshal(r.System)
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: c})
	}
	for _, m := range r.Messages {
		out.Messages = append(out.Messages, chatMessages(m)...)
	}
	for _, t := range r.Tools {
		var ct chatTool
		ct.Type = "function"
		ct.Function.Name, ct.Function.Description, ct.Function.Parameters = t.Name, t.Description, schemaOrEmpty(stripCacheControl(t.Schema))
		out.Tools = append(out.Tools, ct)
	}
	if tc := r.ToolChoice; tc != nil && len(r.Tools) > 0 {
		if tc.Mode == "tool" {
			out.ToolChoice, _ = json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}})
		} else {
			out.ToolChoice, _ = json.Marshal(tc.Mode)
		}
	}
	b, err := json.Marshal(out)
	path := "/chat/completions"
	if p.Auth == "api-key" {
		path = "/deployments/" + url.PathEscape(r.Model) + "/chat/completions"
	}
	return path, nil, b, err
}

// chatMessages turns one canonical turn into Chat messages: tool results
// become one tool message each, first.
func chatMessages(m Message) []chatMessage {
	var out []chatMessage
	if m.Role == "assistant" {
		msg := chatMessage{Role: "assistant"}
		var t, th strings.Builder
		for _, p := range m.Parts {
			switch p.Kind {
			case PartText:
				t.WriteString(p.Text)
			case PartThinking:
				th.WriteString(p.Text)
			case PartToolCall:
				var tc chatToolCall
				tc.ID, tc.Type = p.ToolID, "function"
				tc.Function.Name, tc.Function.Arguments = p.ToolName, string(argsObject(p.Args))
				msg.ToolCalls = append(msg.ToolCalls, tc)
			}
		}
		if t.Len() > 0 || len(msg.ToolCalls) == 0 {
			msg.Content, _ = json.Marshal(t.String())
		} else {
			msg.Content = json.RawMessage("null")
		}
		return []chatMessage{msg}
	}
	var parts []chatContentPart
	for _, p := range m.Parts {
		switch p.Kind {
		case PartToolResult:
			t := p.Text
			if p.IsError {
				t = "Error: " + t
			}
			c, _ := json.Marshal(t)
			out = append(out, chatMessage{Role: "tool", ToolCallID: p.ToolID, Content: c})
		case PartText:
			parts = append(parts, chatContentPart{Type: "text", Text: p.Text})
		case PartImage:
			parts = append(parts, chatContentPart{Type: "image_url", ImageURL: &struct {
				URL string `json:"url"`
			}{imageURL(p)}})
		}
	}
	if len(parts) > 0 {
		var c json.RawMessage
		if len(parts) == 1 && parts[0].Type == "text" {
			c, _ = json.Marshal(parts[0].Text)
		} else {
			c, _ = json.Marshal(parts)
		}
		out = append(out, chatMessage{Role: "user", Content: c})
	}
	return out
}

func chatStop(s string) string {
	switch s {
	case "length":
		return StopMax
	case "tool_calls", "function_call":
		return StopTool
	case "content_filter":
		return StopRefusal
	}
	return StopEnd
}

func chatFinish(s string) string {
	switch s {
	case StopMax:
		return "length"
	case StopTool:
		return "tool_calls"
	case StopRefusal:
		return "content_filter"
	}
	return "stop"
}

func (chatAdapter) decodeResponse(body []byte, _ *sigStore) (*Response, error) {
	var in chatResponse
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("chat response: %w", err)
	}
	r := &Response{ID: in.ID, Model: in.Model, Stop: StopEnd}
	if in.Usage != nil {
		r.Usage = in.Usage.canonical()
	}
	if len(in.Choices) == 0 {
		return r, nil
	}
	c := in.Choices[0]
	if c.FinishReason != nil {
		r.Stop = chatStop(*c.FinishReason)
	}
	if m := c.Message; m != nil {
		if rc := m.ReasoningContent + m.Reasoning; rc != "" {
			r.Parts = append(r.Parts, Part{Kind: PartThinking, Text: rc})
		}
		r.Parts = append(r.Parts, chatParts(m.Content)...)
		for _, tc := range m.ToolCalls {
			r.Parts = append(r.Parts, Part{Kind: PartToolCall, ToolID: tc.ID, ToolName: tc.Function.Name, Args: argsObject(json.RawMessage(tc.Function.Arguments))})
		}
	}
	return r, nil
}

func (chatAdapter) encodeResponse(r *Response) []byte {
	msgs := chatMessages(Message{Role: "assistant", Parts: r.Parts})
	stop := r.Stop
	if hasTool(r.Parts) {
		stop = StopTool
	}
	fr := chatFinish(stop)
	id := r.ID
	if !strings.HasPrefix(id, "chatcmpl-") {
		id = "chatcmpl-" + randomID()
	}
	b, _ := json.Marshal(chatResponse{ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: r.Model,
		Choices: []chatChoice{{Index: 0, Message: &msgs[0], FinishReason: &fr}}, Usage: chatUsageOf(r.Usage)})
	return b
}

// Streaming: Chat upstream → canonical.

type chatSlot struct {
	slot    int
	id      string
	name    string
	started bool
	buf     strings.Builder
}

type chatStreamDecoder struct {
	started bool
	slots   map[int]*chatSlot // by upstream index
	n       int
	stop    string
	usage   Usage
	ended   bool
	tools   bool
}

func (chatAdapter) newStreamDecoder(*sigStore) streamDecoder {
	return &chatStreamDecoder{slots: map[int]*chatSlot{}}
}

func (d *chatStreamDecoder) decode(ev SSE, emit func(Event)) error {
	data := strings.TrimSpace(string(ev.Data))
	if data == "[DONE]" {
		d.end(emit)
		return nil
	}
	if d.ended {
		return nil
	}
	var c chatResponse
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return fmt.Errorf("chat stream chunk: %w", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		e := decodeError(500, append(append([]byte(`{"error":`), c.Error...), '}'))
		d.ended = true
		emit(Event{Kind: EvError, Err: e})
		return nil
	}
	if !d.started {
		d.started = true
		emit(Event{Kind: EvStart, ID: c.ID, Model: c.Model})
	}
	if c.Usage != nil {
		d.usage = c.Usage.canonical()
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if dl := ch.Delta; dl != nil {
			if rc := dl.ReasoningContent + dl.Reasoning; rc != "" {
				emit(Event{Kind: EvThinking, Text: rc})
			}
			var s string
			if len(dl.Content) > 0 && json.Unmarshal(dl.Content, &s) == nil && s != "" {
				emit(Event{Kind: EvText, Text: s})
			}
			for i, tc := range dl.ToolCalls {
				d.tool(i, tc, emit)
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			// Held until [DONE] or EOF: the usage chunk comes after it.
			d.stop = chatStop(*ch.FinishReason)
		}
	}
	return nil
}

// tool keys deltas by index, falling back to id when a provider reuses
// index 0 for every call; a call opens once its name arrived.
func (d *chatStreamDecoder) tool(pos int, tc chatToolCall, emit func(Event)) {
	idx := pos
	if tc.Index != nil {
		idx = *tc.Index
	}
	s := d.slots[idx]
	if s != nil && tc.ID != "" && s.id != "" && tc.ID != s.id {
		// A new call reusing an index: give it a fresh key.
		idx = -1000 - d.n
		s = nil
	}
	if s == nil {
		s = &chatSlot{slot: d.n}
		d.n++
		d.slots[idx] = s
	}
	if tc.ID != "" && s.id == "" {
		s.id = tc.ID
	}
	if tc.Function.Name != "" && s.name == "" {
		s.name = tc.Function.Name
	}
	if tc.Function.Arguments != "" {
		if s.started {
			emit(Event{Kind: EvToolArgs, Index: s.slot, Text: tc.Function.Arguments})
		} else {
			s.buf.WriteString(tc.Function.Arguments)
		}
	}
	if !s.started && s.name != "" {
		d.open(s, emit)
	}
}

func (d *chatStreamDecoder) open(s *chatSlot, emit func(Event)) {
	s.started = true
	d.tools = true
	if s.id == "" {
		s.id = "call_" + randomID()
	}
	emit(Event{Kind: EvToolStart, Index: s.slot, ToolID: s.id, ToolName: s.name})
	if s.buf.Len() > 0 {
		emit(Event{Kind: EvToolArgs, Index: s.slot, Text: s.buf.String()})
		s.buf.Reset()
	}
}

// finish: a Chat stream ends with [DONE]. Without it, a finish_reason
// already received still marks the answer complete (only the trailing
// usage chunk may be missing; some compatible servers omit [DONE]); with
// neither, the stream was cut.
func (d *chatStreamDecoder) finish(emit func(Event)) {
	if d.ended {
		return
	}
	if d.stop == "" {
		d.ended = true
		emit(cutStream("finish_reason and [DONE]"))
		return
	}
	d.end(emit)
}

// end closes a complete stream.
func (d *chatStreamDecoder) end(emit func(Event)) {
	if d.ended {
		return
	}
	d.ended = true
	if !d.started {
		emit(Event{Kind: EvStart})
	}
	stop := d.stop
	if d.tools {
		stop = StopTool
	}
	if stop == "" {
		stop = StopEnd
	}
	emit(Event{Kind: EvEnd, Stop: stop, Usage: d.usage})
}

// Streaming: canonical → Chat client.

type chatStreamEncoder struct {
	w       *sseWriter
	id      string
	model   string
	created int64
	started bool
	slots   map[int]int
	usage   bool
}

func (chatAdapter) newStreamEncoder(w *sseWriter, req *Request) streamEncoder {
	return &chatStreamEncoder{w: w, id: "chatcmpl-" + randomID(), model: req.Model, created: time.Now().Unix(), slots: map[int]int{}, usage: req.streamUsage}
}

func (e *chatStreamEncoder) chunk(delta map[string]any, finish *string, usage *chatUsage) {
	choices := []any{}
	if delta != nil || finish != nil {
		if delta == nil {
			delta = map[string]any{}
		}
		choices = append(choices, map[string]any{"index": 0, "delta": delta, "finish_reason": finish})
	}
	v := map[string]any{"id": e.id, "object": "chat.completion.chunk", "created": e.created, "model": e.model, "choices": choices}
	if usage != nil {
		v["usage"] = usage
	}
	b, _ := json.Marshal(v)
	e.w.event("", b)
}

func (e *chatStreamEncoder) encode(ev Event) {
	if !e.started && ev.Kind != EvError {
		e.started = true
		if ev.Model != "" {
			e.model = ev.Model
		}
		e.chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	}
	switch ev.Kind {
	case EvText:
		if ev.Text != "" {
			e.chunk(map[string]any{"content": ev.Text}, nil, nil)
		}
	case EvThinking:
		e.chunk(map[string]any{"reasoning_content": ev.Text}, nil, nil)
	case EvToolStart:
		n := len(e.slots)
		e.slots[ev.Index] = n
		e.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": n, "id": ev.ToolID, "type": "function",
			"function": map[string]any{"name": ev.ToolName, "arguments": ""}}}}, nil, nil)
	case EvToolArgs:
		n, ok := e.slots[ev.Index]
		if ok && ev.Text != "" {
			e.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": n, "function": map[string]any{"arguments": ev.Text}}}}, nil, nil)
		}
	case EvEnd:
		stop := ev.Stop
		if len(e.slots) > 0 {
			stop = StopTool
		}
		fr := chatFinish(stop)
		e.chunk(nil, &fr, nil)
		if e.usage {
			e.chunk(nil, nil, chatUsageOf(ev.Usage))
		}
		e.w.event("", []byte("[DONE]"))
	case EvError:
		_, b := encodeError(OpenAIChat, ev.Err)
		e.w.event("", b)
	}
}

func (e *chatStreamEncoder) ping()  { e.w.raw([]byte(": ping\n\n")) }
func (e *chatStreamEncoder) close() {}

// stripCacheControl removes Anthropic's cache_control from a schema.
func stripCacheControl(s json.RawMessage) json.RawMessage {
	if !strings.Contains(string(s), "cache_control") && !strings.Contains(string(s), "defer_loading") {
		return s
	}
	var v map[string]any
	if json.Unmarshal(s, &v) != nil {
		return s
	}
	delete(v, "cache_control")
	delete(v, "defer_loading")
	b, _ := json.Marshal(v)
	return b
}
