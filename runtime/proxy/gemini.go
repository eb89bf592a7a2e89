package proxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

type geminiAdapter struct{}

type gemPart struct {
	Text             string        `json:"text,omitempty"`
	Thought          bool          `json:"thought,omitempty"`
	ThoughtSignature string        `json:"thoughtSignature,omitempty"`
	InlineData       *gemBlob      `json:"inlineData,omitempty"`
	FileData         *gemFile      `json:"fileData,omitempty"`
	FunctionCall     *gemCall      `json:"functionCall,omitempty"`
	FunctionResponse *gemCallReply `json:"functionResponse,omitempty"`
}

type gemBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}
type gemFile struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}
type gemCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}
type gemCallReply struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type gemContent struct {
	Role  string    `json:"role,omitempty"`
	Parts []gemPart `json:"parts"`
}

type gemFuncDecl struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type gemRequest struct {
	Contents          []gemContent `json:"contents"`
	SystemInstruction *gemContent  `json:"systemInstruction,omitempty"`
	Tools             []struct {
		FunctionDeclarations []gemFuncDecl `json:"functionDeclarations,omitempty"`
	} `json:"tools,omitempty"`
	ToolConfig *struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode,omitempty"`
			AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig,omitempty"`
	GenerationConfig *gemGenConfig `json:"generationConfig,omitempty"`
	// Model is not part of Gemini's body: the route puts it there.
	Model string `json:"-"`
}

type gemGenConfig struct {
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
	TopP            *float64 `json:"topP,omitempty"`
	TopK            *int     `json:"topK,omitempty"`
	StopSequences   []string `json:"stopSequences,omitempty"`
	ThinkingConfig  *struct {
		ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
		ThinkingLevel   string `json:"thinkingLevel,omitempty"`
		IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	} `json:"thinkingConfig,omitempty"`
}

type gemUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
}

type gemResponse struct {
	Candidates []struct {
		Content      gemContent `json:"content"`
		FinishReason string     `json:"finishReason,omitempty"`
		Index        int        `json:"index"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback,omitempty"`
	UsageMetadata *gemUsage       `json:"usageMetadata,omitempty"`
	ModelVersion  string          `json:"modelVersion,omitempty"`
	ResponseID    string          `json:"responseId,omitempty"`
	Error         json.RawMessage `json:"error,omitempty"`
}

func (u *gemUsage) canonical() Usage {
	return Usage{Input: u.PromptTokenCount, Output: u.CandidatesTokenCount + u.ThoughtsTokenCount, CacheRead: u.CachedContentTokenCount, Reasoning: u.ThoughtsTokenCount}
}

func gemUsageOf(u Usage) *gemUsage {
	return &gemUsage{PromptTokenCount: u.Input, CandidatesTokenCount: u.Output - u.Reasoning, TotalTokenCount: u.Input + u.Output, CachedContentTokenCount: u.CacheRead, ThoughtsTokenCount: u.Reasoning}
}

// DecodeGeminiRequest is decodeRequest with the model from the route.
func (geminiAdapter) decodeRequest(body []byte) (*Request, error) {
	var in gemRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	r := &Request{}
	if in.SystemInstruction != nil {
		var t []string
		for _, p := range in.SystemInstruction.Parts {
			t = append(t, p.Text)
		}
		r.System = strings.Join(t, "\n")
	}
	// Calls often come without ids: make them per position, and answer
	// each response with the oldest open call of its name.
	open := map[string][]string{}
	n := 0
	for _, c := range in.Contents {
		m := Message{Role: "user"}
		if c.Role == "model" {
			m.Role = "assistant"
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				id := p.FunctionCall.ID
				if id == "" {
					id = fmt.Sprintf("call_%d_%s", n, p.FunctionCall.Name)
				}
				n++
				open[p.FunctionCall.Name] = append(open[p.FunctionCall.Name], id)
				m.Parts = append(m.Parts, Part{Kind: PartToolCall, ToolID: id, ToolName: p.FunctionCall.Name, Args: argsObject(p.FunctionCall.Args), Signature: p.ThoughtSignature})
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				id := fr.ID
				if q := open[fr.Name]; id == "" && len(q) > 0 {
					id = q[0]
				}
				if q := open[fr.Name]; len(q) > 0 {
					open[fr.Name] = q[1:]
				}
				m.Parts = append(m.Parts, gemResult(id, fr))
			case p.InlineData != nil:
				m.Parts = append(m.Parts, Part{Kind: PartImage, MIME: p.InlineData.MimeType, Data: p.InlineData.Data})
			case p.FileData != nil:
				m.Parts = append(m.Parts, Part{Kind: PartImage, MIME: p.FileData.MimeType, URL: p.FileData.FileURI})
			case p.Thought:
				m.Parts = append(m.Parts, Part{Kind: PartThinking, Text: p.Text, Signature: p.ThoughtSignature})
			default:
				m.Parts = append(m.Parts, Part{Kind: PartText, Text: p.Text})
			}
		}
		r.Messages = append(r.Messages, m)
	}
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			s := f.ParametersJSONSchema
			if len(s) == 0 {
				s = f.Parameters
			}
			r.Tools = append(r.Tools, Tool{Name: f.Name, Description: f.Description, Schema: s})
		}
	}
	if tc := in.ToolConfig; tc != nil {
		fc := tc.FunctionCallingConfig
		switch strings.ToUpper(fc.Mode) {
		case "AUTO":
			r.ToolChoice = &ToolChoice{Mode: "auto"}
		case "NONE":
			r.ToolChoice = &ToolChoice{Mode: "none"}
		case "ANY", "VALIDATED":
			r.ToolChoice = &ToolChoice{Mode: "required"}
			if len(fc.AllowedFunctionNames) == 1 {
				r.ToolChoice = &ToolChoice{Mode: "tool", Name: fc.AllowedFunctionNames[0]}
			}
		}
	}
	if g := in.GenerationConfig; g != nil {
		r.MaxTokens, r.Temperature, r.TopP, r.TopK, r.Stop = g.MaxOutputTokens, g.Temperature, g.TopP, g.TopK, g.StopSequences
		if tc := g.ThinkingConfig; tc != nil {
			if tc.ThinkingBudget != nil && *tc.ThinkingBudget > 0 {
				r.ThinkingBudget = *tc.ThinkingBudget
			}
			if tc.ThinkingLevel != "" {
				r.Effort = strings.ToLower(tc.ThinkingLevel)
			}
		}
	}
	return r, nil
}

// gemResult reads a functionResponse: {output} or {error}, else the whole object.
func gemResult(id string, fr *gemCallReply) Part {
	p := Part{Kind: PartToolResult, ToolID: id, ToolName: fr.Name}
	var obj map[string]json.RawMessage
	if json.Unmarshal(fr.Response, &obj) == nil {
		if e, ok := obj["error"]; ok && len(obj) == 1 {
			p.IsError = true
			p.Text = rawText(e)
			return p
		}
		if o, ok := obj["output"]; ok && len(obj) == 1 {
			p.Text = rawText(o)
			return p
		}
	}
	p.Text = string(fr.Response)
	return p
}

func rawText(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return string(r)
}

func (geminiAdapter) encodeRequest(r *Request, p *Provider) (string, url.Values, []byte, error) {
	fillToolNames(r)
	out := gemRequest{Contents: []gemContent{}}
	if r.System != "" {
		out.SystemInstruction = &gemContent{Parts: []gemPart{{Text: r.System}}}
	}
	for _, m := range mergeTurns(r.Messages) {
		c := gemContent{Role: "user"}
		if m.Role == "assistant" {
			c.Role = "model"
		}
		first := true
		for _, pt := range m.Parts {
			switch pt.Kind {
			case PartText:
				if pt.Text != "" {
					c.Parts = append(c.Parts, gemPart{Text: pt.Text})
				}
			case PartImage:
				if pt.Data != "" {
					c.Parts = append(c.Parts, gemPart{InlineData: &gemBlob{MimeType: pt.MIME, Data: pt.Data}})
				} else {
					c.Parts = append(c.Parts, gemPart{FileData: &gemFile{MimeType: pt.MIME, FileURI: pt.URL}})
				}
			case PartToolCall:
				gp := gemPart{FunctionCall: &gemCall{Name: pt.ToolName, Args: argsObject(pt.Args)}}
				if first {
					// Gemini 3 checks the signature of the first call of a step.
					gp.ThoughtSignature = pt.Signature
					if gp.ThoughtSignature == "" {
						gp.ThoughtSignature = p.sigs.get(pt.ToolID)
					}
					first = false
				}
				c.Parts = append(c.Parts, gp)
			case PartToolResult:
				key := "output"
				if pt.IsError {
					key = "error"
				}
				resp, _ := json.Marshal(map[string]string{key: pt.Text})
				c.Parts = append(c.Parts, gemPart{FunctionResponse: &gemCallReply{Name: pt.ToolName, Response: resp}})
			}
		}
		if len(c.Parts) > 0 {
			out.Contents = append(out.Contents, c)
		}
	}
	if len(r.Tools) > 0 {
		var decls []gemFuncDecl
		for _, t := range r.Tools {
			decls = append(decls, gemFuncDecl{Name: t.Name, Description: t.Description, Parameters: SanitizeGeminiSchema(t.Schema)})
		}
		out.Tools = append(out.Tools, struct {
			FunctionDeclarations []gemFuncDecl `json:"functionDeclarations,omitempty"`
		}{decls})
		if tc := r.ToolChoice; tc != nil {
			out.ToolConfig = &struct {
				FunctionCallingConfig struct {
					Mode                 string   `json:"mode,omitempty"`
					AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
				} `json:"functionCallingConfig"`
			}{}
			fc := &out.ToolConfig.FunctionCallingConfig
			switch tc.Mode {
			case "none":
				fc.Mode = "NONE"
			case "required":
				fc.Mode = "ANY"
			case "tool":
				fc.Mode, fc.AllowedFunctionNames = "ANY", []string{tc.Name}
			default:
				fc.Mode = "AUTO"
			}
		}
	}
	g := &gemGenConfig{MaxOutputTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, StopSequences: r.Stop}
	budget := r.ThinkingBudget
	if budget == 0 {
		budget = effortBudget(r.Effort)
	}
	if budget > 0 {
		g.ThinkingConfig = &struct {
			ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
			ThinkingLevel   string `json:"thinkingLevel,omitempty"`
			IncludeThoughts bool   `json:"includeThoughts,omitempty"`
		}{ThinkingBudget: &budget, IncludeThoughts: true}
	}
	if g.MaxOutputTokens != 0 || g.Temperature != nil || g.TopP != nil || g.TopK != nil || len(g.StopSequences) > 0 || g.ThinkingConfig != nil {
		out.GenerationConfig = g
	}
	b, err := json.Marshal(out)
	action, q := "generateContent", url.Values(nil)
	if r.Stream {
		action, q = "streamGenerateContent", url.Values{"alt": {"sse"}}
	}
	prefix := "/v1beta"
	if strings.Contains(p.BaseURL, "/publishers/") {
		prefix = "" // Vertex: the base already names the API version
	}
	return prefix + "/models/" + url.PathEscape(r.Model) + ":" + action, q, b, err
}

func gemStop(finish string, tools bool) string {
	if tools {
		return StopTool
	}
	switch finish {
	case "MAX_TOKENS":
		return StopMax
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return StopRefusal
	}
	return StopEnd
}

func gemFinish(stop string) string {
	switch stop {
	case StopMax:
		return "MAX_TOKENS"
	case StopRefusal:
		return "SAFETY"
	}
	return "STOP"
}

// gemCallID is the id the client sees for a Gemini call without one.
func gemCallID(c *gemCall) string {
	if c.ID != "" {
		return c.ID
	}
	return "toolu_" + randomID()
}

func (geminiAdapter) decodeResponse(body []byte, st *sigStore) (*Response, error) {
	var in gemResponse
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("gemini response: %w", err)
	}
	r := &Response{ID: in.ResponseID, Model: in.ModelVersion, Stop: StopEnd}
	if in.UsageMetadata != nil {
		r.Usage = in.UsageMetadata.canonical()
	}
	if len(in.Candidates) == 0 {
		if in.PromptFeedback != nil && in.PromptFeedback.BlockReason != "" {
			r.Stop = StopRefusal
		}
		return r, nil
	}
	c := in.Candidates[0]
	for _, p := range c.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			id := gemCallID(p.FunctionCall)
			st.put(id, p.ThoughtSignature)
			r.Parts = append(r.Parts, Part{Kind: PartToolCall, ToolID: id, ToolName: p.FunctionCall.Name, Args: argsObject(p.FunctionCall.Args)})
		case p.Thought:
			r.Parts = append(r.Parts, Part{Kind: PartThinking, Text: p.Text, Signature: p.ThoughtSignature})
		case p.Text != "":
			r.Parts = append(r.Parts, Part{Kind: PartText, Text: p.Text})
		}
	}
	r.Stop = gemStop(c.FinishReason, hasTool(r.Parts))
	return r, nil
}

func gemParts(parts []Part) []gemPart {
	out := []gemPart{}
	for _, p := range parts {
		switch p.Kind {
		case PartText:
			out = append(out, gemPart{Text: p.Text})
		case PartThinking:
			out = append(out, gemPart{Text: p.Text, Thought: true, ThoughtSignature: p.Signature})
		case PartToolCall:
			out = append(out, gemPart{FunctionCall: &gemCall{ID: p.ToolID, Name: p.ToolName, Args: argsObject(p.Args)}})
		}
	}
	return out
}

func (geminiAdapter) encodeResponse(r *Response) []byte {
	b, _ := json.Marshal(gemChunk(gemParts(r.Parts), gemFinish(r.Stop), &r.Usage, r.Model, r.ID))
	return b
}

func gemChunk(parts []gemPart, finish string, u *Usage, model, id string) map[string]any {
	cand := map[string]any{"content": gemContent{Role: "model", Parts: parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	v := map[string]any{"candidates": []any{cand}}
	if u != nil {
		v["usageMetadata"] = gemUsageOf(*u)
	}
	if model != "" {
		v["modelVersion"] = model
	}
	if id != "" {
		v["responseId"] = id
	}
	return v
}

// Streaming: Gemini upstream → canonical. Each chunk is a whole response;
// calls arrive whole.

type gemStreamDecoder struct {
	st      *sigStore
	started bool
	n       int
	reason  string
	usage   Usage
	ended   bool
	blocked bool
}

func (geminiAdapter) newStreamDecoder(st *sigStore) streamDecoder { return &gemStreamDecoder{st: st} }

func (d *gemStreamDecoder) decode(ev SSE, emit func(Event)) error {
	var c gemResponse
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return fmt.Errorf("gemini stream chunk: %w", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		d.ended = true
		e := decodeError(500, append(append([]byte(`{"error":`), c.Error...), '}'))
		var code struct {
			Code int `json:"code"`
		}
		if json.Unmarshal(c.Error, &code) == nil && code.Code != 0 {
			e.Status = code.Code
		}
		emit(Event{Kind: EvError, Err: e})
		return nil
	}
	if !d.started {
		d.started = true
		emit(Event{Kind: EvStart, ID: c.ResponseID, Model: c.ModelVersion})
	}
	if c.UsageMetadata != nil {
		d.usage = c.UsageMetadata.canonical()
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" && len(c.Candidates) == 0 {
		d.blocked = true
	}
	for _, cand := range c.Candidates {
		for _, p := range cand.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				id := gemCallID(p.FunctionCall)
				d.st.put(id, p.ThoughtSignature)
				emit(Event{Kind: EvToolStart, Index: d.n, ToolID: id, ToolName: p.FunctionCall.Name})
				emit(Event{Kind: EvToolArgs, Index: d.n, Text: string(argsObject(p.FunctionCall.Args))})
				d.n++
			case p.Thought:
				if p.Text != "" {
					emit(Event{Kind: EvThinking, Text: p.Text})
				}
				if p.ThoughtSignature != "" {
					emit(Event{Kind: EvSignature, Index: -1, Text: p.ThoughtSignature})
				}
			case p.Text != "":
				emit(Event{Kind: EvText, Text: p.Text})
			}
		}
		if cand.FinishReason != "" {
			d.reason = cand.FinishReason
		}
		break
	}
	return nil
}

// finish: a Gemini stream has no end event; its last chunk carries the
// candidate's finishReason (or a prompt block). EOF before one is a cut
// stream.
func (d *gemStreamDecoder) finish(emit func(Event)) {
	if d.ended {
		return
	}
	d.ended = true
	if d.reason == "" && !d.blocked {
		emit(cutStream("a finishReason"))
		return
	}
	if !d.started {
		emit(Event{Kind: EvStart})
	}
	stop := gemStop(d.reason, d.n > 0)
	if d.blocked {
		stop = StopRefusal
	}
	emit(Event{Kind: EvEnd, Stop: stop, Usage: d.usage})
}

// Streaming: canonical → Gemini client. A call is sent whole once its
// arguments are complete (the next event of another kind, or the end).

type gemStreamEncoder struct {
	w     *sseWriter
	model string
	array bool // no alt=sse: a streamed JSON array
	n     int
	tool  *gemCall
	args  strings.Builder
	tools bool
}

func (geminiAdapter) newStreamEncoder(w *sseWriter, req *Request) streamEncoder {
	return &gemStreamEncoder{w: w, model: req.Model}
}

func (e *gemStreamEncoder) chunk(v any) {
	b, _ := json.Marshal(v)
	if e.array {
		if e.n == 0 {
			e.w.raw([]byte("["))
		} else {
			e.w.raw([]byte(",\r\n"))
		}
		e.w.raw(b)
	} else {
		e.w.event("", b)
	}
	e.n++
}

func (e *gemStreamEncoder) flushTool() {
	if e.tool == nil {
		return
	}
	e.tool.Args = argsObject(json.RawMessage(e.args.String()))
	e.chunk(gemChunk([]gemPart{{FunctionCall: e.tool}}, "", nil, e.model, ""))
	e.tool = nil
	e.args.Reset()
}

func (e *gemStreamEncoder) encode(ev Event) {
	if ev.Kind != EvToolArgs {
		e.flushTool()
	}
	switch ev.Kind {
	case EvText:
		if ev.Text != "" {
			e.chunk(gemChunk([]gemPart{{Text: ev.Text}}, "", nil, e.model, ""))
		}
	case EvThinking:
		e.chunk(gemChunk([]gemPart{{Text: ev.Text, Thought: true}}, "", nil, e.model, ""))
	case EvToolStart:
		e.tools = true
		e.tool = &gemCall{ID: ev.ToolID, Name: ev.ToolName}
	case EvToolArgs:
		if e.tool != nil {
			e.args.WriteString(ev.Text)
		}
	case EvEnd:
		stop := ev.Stop
		if e.tools {
			stop = StopTool
		}
		e.chunk(gemChunk([]gemPart{}, gemFinish(stop), &ev.Usage, e.model, ""))
	case EvError:
		_, b := encodeError(Gemini, ev.Err)
		e.chunk(json.RawMessage(b))
		if !e.array {
			// Google's own mid-stream error is a bare JSON object, which is
			// what @google/genai (Gemini CLI) checks each network read for
			// and raises as an ApiError; a data: event with only "error"
			// would reach it as an empty chunk. With no blank line after it, it is
			// an error there even when merged into a larger read
			// ("Incomplete JSON segment at the end"). SSE parsers skip the
			// line (no field name).
			e.w.raw(append(b, '\n'))
		}
	}
}

func (e *gemStreamEncoder) ping() {
	if !e.array {
		e.w.raw([]byte(": ping\n\n"))
	}
}

func (e *gemStreamEncoder) close() {
	if e.array {
		if e.n == 0 {
			e.w.raw([]byte("["))
		}
		e.w.raw([]byte("]"))
	}
}
