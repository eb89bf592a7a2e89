package proxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

type responsesAdapter struct{}

type respContent struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type respItem struct {
	Type             string          `json:"type,omitempty"`
	ID               string          `json:"id,omitempty"`
	Role             string          `json:"role,omitempty"`
	Status           string          `json:"status,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	CallID           string          `json:"call_id,omitempty"`
	Name             string          `json:"name,omitempty"`
	Arguments        *string         `json:"arguments,omitempty"`
	Output           json.RawMessage `json:"output,omitempty"`
	Summary          []respContent   `json:"summary,omitempty"`
	EncryptedContent string          `json:"encrypted_content,omitempty"`
}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type respRequest struct {
	Model             string          `json:"model"`
	Instructions      string          `json:"instructions,omitempty"`
	Input             json.RawMessage `json:"input"`
	Tools             []respTool      `json:"tools,omitempty"`
	ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	MaxOutputTokens   int             `json:"max_output_tokens,omitempty"`
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	Stream            bool            `json:"stream,omitempty"`
	Reasoning         *struct {
		Effort  string `json:"effort,omitempty"`
		Summary string `json:"summary,omitempty"`
	} `json:"reasoning,omitempty"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type respResponse struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	CreatedAt         int64      `json:"created_at"`
	Status            string     `json:"status"`
	Model             string     `json:"model"`
	Output            []respItem `json:"output"`
	Usage             *respUsage `json:"usage,omitempty"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error json.RawMessage `json:"error,omitempty"`
}

func (u *respUsage) canonical() Usage {
	return Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.InputTokensDetails.CachedTokens, Reasoning: u.OutputTokensDetails.ReasoningTokens}
}

func respUsageOf(u Usage) *respUsage {
	r := &respUsage{InputTokens: u.Input, OutputTokens: u.Output, TotalTokens: u.Input + u.Output}
	r.InputTokensDetails.CachedTokens = u.CacheRead
	r.OutputTokensDetails.ReasoningTokens = u.Reasoning
	return r
}

func respContentParts(raw json.RawMessage) []Part {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Part{{Kind: PartText, Text: s}}
	}
	var cs []respContent
	json.Unmarshal(raw, &cs)
	var out []Part
	for _, c := range cs {
		switch c.Type {
		case "input_text", "output_text", "text":
			out = append(out, Part{Kind: PartText, Text: c.Text})
		case "input_image":
			if c.ImageURL != "" {
				out = append(out, imagePart(c.ImageURL))
			}
		case "refusal":
			out = append(out, Part{Kind: PartText, Text: c.Text})
		}
	}
	return out
}

// respItemPart decodes a non-message item.
func respItemPart(it respItem) (Part, bool) {
	switch it.Type {
	case "function_call":
		args := ""
		if it.Arguments != nil {
			args = *it.Arguments
		}
		id := it.CallID
		if id == "" {
			id = it.ID
		}
		return Part{Kind: PartToolCall, ToolID: id, ToolName: it.Name, Args: argsObject(json.RawMessage(args))}, true
	case "function_call_output":
		var s string
		if json.Unmarshal(it.Output, &s) != nil {
			s = text(respContentParts(it.Output))
		}
		return Part{Kind: PartToolResult, ToolID: it.CallID, Text: s}, true
	case "reasoning":
		var t []string
		for _, s := range it.Summary {
			t = append(t, s.Text)
		}
		return Part{Kind: PartThinking, Text: strings.Join(t, "\n"), Signature: it.EncryptedContent}, true
	}
	return Part{}, false
}

func (responsesAdapter) decodeRequest(body []byte) (*Request, error) {
	var in respRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	r := &Request{Model: in.Model, System: in.Instructions, MaxTokens: in.MaxOutputTokens, Temperature: in.Temperature, TopP: in.TopP, Stream: in.Stream, Parallel: in.ParallelToolCalls}
	if in.Reasoning != nil {
		r.Effort = in.Reasoning.Effort
	}
	var s string
	if json.Unmarshal(in.Input, &s) == nil {
		r.Messages = []Message{{Role: "user", Parts: []Part{{Kind: PartText, Text: s}}}}
	} else if len(in.Input) > 0 {
		var items []respItem
		if err := json.Unmarshal(in.Input, &items); err != nil {
			return nil, fmt.Errorf("responses input: %w", err)
		}
		var sys []string
		if r.System != "" {
			sys = append(sys, r.System)
		}
		for _, it := range items {
			if it.Type == "" || it.Type == "message" {
				switch it.Role {
				case "system", "developer":
					sys = append(sys, text(respContentParts(it.Content)))
				case "assistant":
					r.Messages = append(r.Messages, Message{Role: "assistant", Parts: respContentParts(it.Content)})
				default:
					r.Messages = append(r.Messages, Message{Role: "user", Parts: respContentParts(it.Content)})
				}
				continue
			}
			p, ok := respItemPart(it)
			if !ok {
				continue
			}
			role := "assistant"
			if p.Kind == PartToolResult {
				role = "user"
			}
			r.Messages = append(r.Messages, Message{Role: role, Parts: []Part{p}})
		}
		r.System = strings.Join(sys, "\n\n")
		r.Messages = mergeTurns(r.Messages)
	}
	for _, t := range in.Tools {
		if t.Type != "function" {
			continue // built-in tools (web_search, …) have no equivalent
		}
		r.Tools = append(r.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.Parameters})
	}
	r.ToolChoice = openAIToolChoice(in.ToolChoice, false)
	return r, nil
}

func (responsesAdapter) encodeRequest(r *Request, p *Provider) (string, url.Values, []byte, error) {
	out := respRequest{Model: r.Model, Instructions: r.System, MaxOutputTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP, Stream: r.Stream}
	if len(r.Tools) > 0 {
		out.ParallelToolCalls = r.Parallel
	}
	if reasoningModel(r.Model) {
		out.Temperature, out.TopP = nil, nil
	}
	effort := r.Effort
	if effort == "" {
		effort = budgetEffort(r.ThinkingBudget)
	}
	if effort != "" {
		out.Reasoning = &struct {
			Effort  string `json:"effort,omitempty"`
			Summary string `json:"summary,omitempty"`
		}{effort, "auto"}
	}
	var items []respItem
	for _, m := range r.Messages {
		items = append(items, respItems(m)...)
	}
	if items == nil {
		items = []respItem{}
	}
	out.Input, _ = json.Marshal(items)
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(stripCacheControl(t.Schema))})
	}
	if tc := r.ToolChoice; tc != nil && len(r.Tools) > 0 {
		if tc.Mode == "tool" {
			out.ToolChoice, _ = json.Marshal(map[string]string{"type": "function", "name": tc.Name})
		} else {
			out.ToolChoice, _ = json.Marshal(tc.Mode)
		}
	}
	b, err := json.Marshal(out)
	return "/responses", nil, b, err
}

func respItems(m Message) []respItem {
	var out []respItem
	var content []respContent
	flush := func() {
		if len(content) == 0 {
			return
		}
		c, _ := json.Marshal(content)
		it := respItem{Type: "message", Role: m.Role, Content: c}
		out = append(out, it)
		content = nil
	}
	for _, p := range m.Parts {
		switch p.Kind {
		case PartText:
			if m.Role == "assistant" {
				content = append(content, respContent{Type: "output_text", Text: p.Text})
			} else {
				content = append(content, respContent{Type: "input_text", Text: p.Text})
			}
		case PartImage:
			content = append(content, respContent{Type: "input_image", ImageURL: imageURL(p)})
		case PartToolCall:
			flush()
			a := string(argsObject(p.Args))
			out = append(out, respItem{Type: "function_call", CallID: p.ToolID, Name: p.ToolName, Arguments: &a})
		case PartToolResult:
			flush()
			t := p.Text
			if p.IsError {
				t = "Error: " + t
			}
			o, _ := json.Marshal(t)
			out = append(out, respItem{Type: "function_call_output", CallID: p.ToolID, Output: o})
		}
	}
	flush()
	return out
}

func respStop(r *respResponse) string {
	if r.Status == "incomplete" && r.IncompleteDetails != nil {
		switch r.IncompleteDetails.Reason {
		case "max_output_tokens":
			return StopMax
		case "content_filter":
			return StopRefusal
		}
	}
	return StopEnd
}

func (responsesAdapter) decodeResponse(body []byte, _ *sigStore) (*Response, error) {
	var in respResponse
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("responses response: %w", err)
	}
	r := &Response{ID: in.ID, Model: in.Model, Stop: respStop(&in)}
	if in.Usage != nil {
		r.Usage = in.Usage.canonical()
	}
	for _, it := range in.Output {
		if it.Type == "message" {
			r.Parts = append(r.Parts, respContentParts(it.Content)...)
		} else if p, ok := respItemPart(it); ok {
			r.Parts = append(r.Parts, p)
		}
	}
	if hasTool(r.Parts) {
		r.Stop = StopTool
	}
	return r, nil
}

func respOutput(parts []Part) []respItem {
	var out []respItem
	for _, p := range parts {
		switch p.Kind {
		case PartText:
			if n := len(out); n > 0 && out[n-1].Type == "message" {
				var cs []respContent
				json.Unmarshal(out[n-1].Content, &cs)
				cs[0].Text += p.Text
				out[n-1].Content, _ = json.Marshal(cs)
				continue
			}
			c, _ := json.Marshal([]map[string]any{{"type": "output_text", "text": p.Text, "annotations": []any{}}})
			out = append(out, respItem{Type: "message", ID: "msg_" + randomID(), Role: "assistant", Status: "completed", Content: c})
		case PartToolCall:
			a := string(argsObject(p.Args))
			out = append(out, respItem{Type: "function_call", ID: "fc_" + randomID(), CallID: p.ToolID, Name: p.ToolName, Arguments: &a, Status: "completed"})
		case PartThinking:
			it := respItem{Type: "reasoning", ID: "rs_" + randomID(), Summary: []respContent{}, EncryptedContent: p.Signature}
			if p.Text != "" {
				it.Summary = []respContent{{Type: "summary_text", Text: p.Text}}
			}
			out = append(out, it)
		}
	}
	if out == nil {
		out = []respItem{}
	}
	return out
}

func respEnvelope(id, model, stop string, out []respItem, u *Usage) respResponse {
	r := respResponse{ID: id, Object: "response", CreatedAt: time.Now().Unix(), Status: "completed", Model: model, Output: out}
	switch stop {
	case StopMax:
		r.Status = "incomplete"
		r.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{"max_output_tokens"}
	case StopRefusal:
		r.Status = "incomplete"
		r.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{"content_filter"}
	}
	if u != nil {
		r.Usage = respUsageOf(*u)
	}
	return r
}

func (responsesAdapter) encodeResponse(r *Response) []byte {
	id := r.ID
	if !strings.HasPrefix(id, "resp_") {
		id = "resp_" + randomID()
	}
	b, _ := json.Marshal(respEnvelope(id, r.Model, r.Stop, respOutput(r.Parts), &r.Usage))
	return b
}

// Streaming: Responses upstream → canonical.

type respStreamDecoder struct {
	slots map[int]*respSlot // by output_index
	n     int
	ended bool
}

type respSlot struct {
	slot    int
	gotArgs bool
}

func (responsesAdapter) newStreamDecoder(*sigStore) streamDecoder {
	return &respStreamDecoder{slots: map[int]*respSlot{}}
}

func (d *respStreamDecoder) decode(ev SSE, emit func(Event)) error {
	var v struct {
		Type        string        `json:"type"`
		Response    *respResponse `json:"response"`
		OutputIndex int           `json:"output_index"`
		Item        *respItem     `json:"item"`
		Delta       string        `json:"delta"`
		Arguments   string        `json:"arguments"`
		Message     string        `json:"message"`
		Code        string        `json:"code"`
	}
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		return fmt.Errorf("responses stream event %q: %w", ev.Event, err)
	}
	if d.ended {
		return nil
	}
	switch v.Type {
	case "response.created":
		if v.Response != nil {
			emit(Event{Kind: EvStart, ID: v.Response.ID, Model: v.Response.Model})
		}
	case "response.output_item.added":
		if v.Item != nil && v.Item.Type == "function_call" {
			s := &respSlot{slot: d.n}
			d.n++
			d.slots[v.OutputIndex] = s
			id := v.Item.CallID
			if id == "" {
				id = v.Item.ID
			}
			emit(Event{Kind: EvToolStart, Index: s.slot, ToolID: id, ToolName: v.Item.Name})
			if v.Item.Arguments != nil && *v.Item.Arguments != "" {
				s.gotArgs = true
				emit(Event{Kind: EvToolArgs, Index: s.slot, Text: *v.Item.Arguments})
			}
		}
	case "response.output_text.delta", "response.refusal.delta":
		emit(Event{Kind: EvText, Text: v.Delta})
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		emit(Event{Kind: EvThinking, Text: v.Delta})
	case "response.function_call_arguments.delta":
		if s := d.slots[v.OutputIndex]; s != nil && v.Delta != "" {
			s.gotArgs = true
			emit(Event{Kind: EvToolArgs, Index: s.slot, Text: v.Delta})
		}
	case "response.function_call_arguments.done":
		if s := d.slots[v.OutputIndex]; s != nil && !s.gotArgs && v.Arguments != "" {
			s.gotArgs = true
			emit(Event{Kind: EvToolArgs, Index: s.slot, Text: v.Arguments})
		}
	case "response.output_item.done":
		if v.Item == nil {
			break
		}
		switch v.Item.Type {
		case "function_call":
			if s := d.slots[v.OutputIndex]; s != nil && !s.gotArgs && v.Item.Arguments != nil && *v.Item.Arguments != "" {
				s.gotArgs = true
				emit(Event{Kind: EvToolArgs, Index: s.slot, Text: *v.Item.Arguments})
			}
		case "reasoning":
			if v.Item.EncryptedContent != "" {
				emit(Event{Kind: EvSignature, Index: -1, Text: v.Item.EncryptedContent})
			}
		}
	case "response.completed", "response.incomplete":
		d.ended = true
		e := Event{Kind: EvEnd, Stop: StopEnd}
		if r := v.Response; r != nil {
			e.Stop = respStop(r)
			if r.Usage != nil {
				e.Usage = r.Usage.canonical()
			}
		}
		if d.n > 0 {
			e.Stop = StopTool
		}
		emit(e)
	case "response.failed", "error":
		d.ended = true
		msg := v.Message
		if v.Response != nil && len(v.Response.Error) > 0 {
			msg = decodeError(500, append(append([]byte(`{"error":`), v.Response.Error...), '}')).Message
		}
		if msg == "" {
			msg = "upstream response failed"
		}
		emit(Event{Kind: EvError, Err: &APIError{Status: 500, Message: msg, Code: v.Code}})
	}
	return nil
}

// finish: a Responses stream ends with response.completed, .incomplete,
// .failed or error; EOF before any of them is a cut stream.
func (d *respStreamDecoder) finish(emit func(Event)) {
	if !d.ended {
		d.ended = true
		emit(cutStream("response.completed"))
	}
}

// Streaming: canonical → Responses client.

type respStreamEncoder struct {
	w       *sseWriter
	id      string
	model   string
	seq     int
	started bool
	open    string // "message", "reasoning", "tool", ""
	openIdx int
	item    respItem
	text    strings.Builder
	args    map[int]*strings.Builder
	out     []respItem
	tools   bool
}

func (responsesAdapter) newStreamEncoder(w *sseWriter, req *Request) streamEncoder {
	return &respStreamEncoder{w: w, id: "resp_" + randomID(), model: req.Model, args: map[int]*strings.Builder{}}
}

func (e *respStreamEncoder) send(typ string, v map[string]any) {
	v["type"] = typ
	v["sequence_number"] = e.seq
	e.seq++
	b, _ := json.Marshal(v)
	e.w.event(typ, b)
}

func (e *respStreamEncoder) envelope(status string) respResponse {
	r := respEnvelope(e.id, e.model, "", e.out, nil)
	r.Status = status
	return r
}

func (e *respStreamEncoder) closeItem() {
	idx := len(e.out)
	switch e.open {
	case "message":
		t := e.text.String()
		e.send("response.output_text.done", map[string]any{"item_id": e.item.ID, "output_index": idx, "content_index": 0, "text": t})
		part := map[string]any{"type": "output_text", "text": t, "annotations": []any{}}
		e.send("response.content_part.done", map[string]any{"item_id": e.item.ID, "output_index": idx, "content_index": 0, "part": part})
		e.item.Content, _ = json.Marshal([]any{part})
		e.item.Status = "completed"
	case "reasoning":
		t := e.text.String()
		e.send("response.reasoning_summary_text.done", map[string]any{"item_id": e.item.ID, "output_index": idx, "summary_index": 0, "text": t})
		e.send("response.reasoning_summary_part.done", map[string]any{"item_id": e.item.ID, "output_index": idx, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": t}})
		e.item.Summary = []respContent{{Type: "summary_text", Text: t}}
	case "tool":
		a := e.args[e.openIdx].String()
		if a == "" {
			a = "{}"
		}
		e.send("response.function_call_arguments.done", map[string]any{"item_id": e.item.ID, "output_index": idx, "arguments": a})
		e.item.Arguments = &a
		e.item.Status = "completed"
	default:
		return
	}
	e.send("response.output_item.done", map[string]any{"output_index": idx, "item": e.item})
	e.out = append(e.out, e.item)
	e.open = ""
	e.text.Reset()
}

func (e *respStreamEncoder) openItem(kind string, it respItem) {
	e.closeItem()
	e.open, e.item = kind, it
	e.send("response.output_item.added", map[string]any{"output_index": len(e.out), "item": it})
}

func (e *respStreamEncoder) encode(ev Event) {
	if !e.started {
		// Even an error starts the stream: response.failed needs the
		// response.created before it (SDKs assemble from that snapshot).
		e.started = true
		if ev.Model != "" {
			e.model = ev.Model
		}
		e.send("response.created", map[string]any{"response": e.envelope("in_progress")})
		e.send("response.in_progress", map[string]any{"response": e.envelope("in_progress")})
	}
	idx := len(e.out)
	switch ev.Kind {
	case EvText:
		if ev.Text == "" {
			return
		}
		if e.open != "message" {
			e.openItem("message", respItem{Type: "message", ID: "msg_" + randomID(), Role: "assistant", Status: "in_progress", Content: json.RawMessage("[]")})
			e.send("response.content_part.added", map[string]any{"item_id": e.item.ID, "output_index": idx, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		}
		e.text.WriteString(ev.Text)
		e.send("response.output_text.delta", map[string]any{"item_id": e.item.ID, "output_index": idx, "content_index": 0, "delta": ev.Text})
	case EvThinking:
		if e.open != "reasoning" {
			e.openItem("reasoning", respItem{Type: "reasoning", ID: "rs_" + randomID(), Summary: []respContent{}})
			e.send("response.reasoning_summary_part.added", map[string]any{"item_id": e.item.ID, "output_index": idx, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
		}
		e.text.WriteString(ev.Text)
		e.send("response.reasoning_summary_text.delta", map[string]any{"item_id": e.item.ID, "output_index": idx, "summary_index": 0, "delta": ev.Text})
	case EvSignature:
		if e.open == "reasoning" && ev.ToolID == "" {
			e.item.EncryptedContent += ev.Text
		}
	case EvToolStart:
		e.tools = true
		e.args[ev.Index] = &strings.Builder{}
		empty := ""
		e.openItem("tool", respItem{Type: "function_call", ID: "fc_" + randomID(), CallID: ev.ToolID, Name: ev.ToolName, Arguments: &empty, Status: "in_progress"})
		e.openIdx = ev.Index
	case EvToolArgs:
		b := e.args[ev.Index]
		if b == nil || ev.Text == "" {
			return
		}
		b.WriteString(ev.Text)
		if e.open == "tool" && e.openIdx == ev.Index {
			e.send("response.function_call_arguments.delta", map[string]any{"item_id": e.item.ID, "output_index": idx, "delta": ev.Text})
		}
	case EvEnd:
		e.closeItem()
		stop := ev.Stop
		if e.tools {
			stop = StopTool
		}
		r := respEnvelope(e.id, e.model, stop, e.out, &ev.Usage)
		name := "response.completed"
		if r.Status == "incomplete" {
			name = "response.incomplete"
		}
		e.send(name, map[string]any{"response": r})
	case EvError:
		e.send("error", map[string]any{"code": openAIType(ev.Err.Status, ev.Err.Code), "message": ev.Err.Message, "param": nil})
		r := e.envelope("failed")
		r.Error, _ = json.Marshal(map[string]string{"code": "server_error", "message": ev.Err.Message})
		e.send("response.failed", map[string]any{"response": r})
	}
}

func (e *respStreamEncoder) ping()  { e.w.raw([]byte(": ping\n\n")) }
func (e *respStreamEncoder) close() {}
