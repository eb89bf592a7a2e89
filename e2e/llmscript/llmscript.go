// Package llmscript is the e2e suite's fake LLM: a loopback server that
// speaks Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and
// Gemini well enough for the real harness CLIs, answers each request from a
// script that sees the conversation so far, and records every request so
// tests can assert what a harness sent (a stop-hook reason reaching the
// model, context a hook added).
package llmscript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Turn is what the script answers: text, a call of the harness's shell
// tool with a command, or a call of a tool the request offers by name.
type Turn struct {
	Text  string
	Shell string // a shell command to run through the harness's shell tool
	// Tool names a tool to call with Input (a subagent tool, say); the
	// first of several names separated by "|" that the request offers is
	// called. When the request offers none, the turn is Text.
	Tool  string
	Input map[string]any
	// InputTokens is the prompt size the answer's usage reports (0: 100);
	// a large one makes a harness compact its context.
	InputTokens int
	// Status, when set, answers with that HTTP error status and the
	// protocol's error body, Text its message.
	Status int
}

func (t Turn) inputTokens() int {
	if t.InputTokens > 0 {
		return t.InputTokens
	}
	return 100
}

// Script decides the next turn from the request (its raw body and whether
// it already carries a tool result).
type Script func(r *Request) Turn

// ShellThenText calls the shell tool with cmd until a tool result appears,
// then answers text.
func ShellThenText(cmd, text string) Script {
	return func(r *Request) Turn {
		if r.HasToolResult() {
			return Turn{Text: text}
		}
		return Turn{Shell: cmd}
	}
}

// Text always answers text.
func Text(text string) Script { return func(*Request) Turn { return Turn{Text: text} } }

// Request is one recorded model request.
type Request struct {
	Protocol string // anthropic, responses, chat, gemini
	Path     string
	Body     []byte
	body     map[string]any
}

// Contains reports whether the request body mentions s (JSON-decoded text,
// so escaped characters compare as written).
func (r *Request) Contains(s string) bool {
	if bytes.Contains(r.Body, []byte(s)) {
		return true
	}
	var found bool
	walk(r.body, func(v string) {
		if strings.Contains(v, s) {
			found = true
		}
	})
	return found
}

// ToolNames lists the names of the tools the request offers.
func (r *Request) ToolNames() []string {
	var names []string
	tools, _ := r.body["tools"].([]any)
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if fd, ok := m["function"].(map[string]any); ok { // chat
			m = fd
		}
		if decls, ok := m["functionDeclarations"].([]any); ok { // gemini
			for _, d := range decls {
				dm, _ := d.(map[string]any)
				if n, _ := dm["name"].(string); n != "" {
					names = append(names, n)
				}
			}
			continue
		}
		if m["type"] == "namespace" { // responses: a group of functions
			sub, _ := m["tools"].([]any)
			for _, f := range sub {
				fm, _ := f.(map[string]any)
				if n, _ := fm["name"].(string); n != "" {
					names = append(names, n)
				}
			}
			continue
		}
		if n, _ := m["name"].(string); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// namespaceOf names the namespace tool (Responses API) that offers the
// function name, if one does.
func namespaceOf(r *Request, name string) (string, bool) {
	tools, _ := r.body["tools"].([]any)
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if m["type"] != "namespace" {
			continue
		}
		sub, _ := m["tools"].([]any)
		for _, f := range sub {
			fm, _ := f.(map[string]any)
			if fm["name"] == name {
				ns, _ := m["name"].(string)
				return ns, true
			}
		}
	}
	return "", false
}

// HasTool reports whether the request offers a tool of that name.
func (r *Request) HasTool(name string) bool {
	for _, n := range r.ToolNames() {
		if n == name {
			return true
		}
	}
	return false
}

// UserTextContains reports whether a user message's own text (not a tool
// result the harness sends in a user message) mentions s: it tells a
// subagent's conversation, which starts with the task its parent gave it,
// from the parent's, where the task is only a tool call's argument.
func (r *Request) UserTextContains(s string) bool {
	var found bool
	text := func(v any) {
		walk(v, func(x string) {
			if strings.Contains(x, s) {
				found = true
			}
		})
	}
	for _, key := range []string{"messages", "input", "contents"} {
		msgs, _ := r.body[key].([]any)
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			if mm["role"] != "user" {
				continue
			}
			switch c := mm["content"].(type) {
			case string:
				text(c)
			case []any: // anthropic and responses content blocks
				for _, b := range c {
					bm, _ := b.(map[string]any)
					if t, _ := bm["type"].(string); t == "text" || t == "input_text" {
						text(bm["text"])
					}
				}
			}
			if parts, ok := mm["parts"].([]any); ok { // gemini
				for _, p := range parts {
					pm, _ := p.(map[string]any)
					text(pm["text"])
				}
			}
		}
	}
	return found
}

// LastToolResult is the text of the conversation's last tool result ("" if
// none): what the harness sent back for the model's last tool call.
func (r *Request) LastToolResult() string {
	var last any
	walkMaps(r.body, func(m map[string]any) {
		switch {
		case m["type"] == "tool_result":
			last = m["content"]
		case m["type"] == "function_call_output":
			last = m["output"]
		case m["role"] == "tool":
			last = m["content"]
		case m["functionResponse"] != nil:
			last = m["functionResponse"]
		}
	})
	var b strings.Builder
	walk(last, func(x string) { b.WriteString(x) })
	return b.String()
}

// HasToolResult reports whether the conversation carries a tool result.
func (r *Request) HasToolResult() bool {
	var found bool
	walkMaps(r.body, func(m map[string]any) {
		switch {
		case m["type"] == "tool_result", m["type"] == "function_call_output", m["role"] == "tool":
			found = true
		case m["functionResponse"] != nil:
			found = true
		}
	})
	return found
}

func walk(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case map[string]any:
		for _, e := range x {
			walk(e, fn)
		}
	case []any:
		for _, e := range x {
			walk(e, fn)
		}
	}
}

func walkMaps(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, e := range x {
			walkMaps(e, fn)
		}
	case []any:
		for _, e := range x {
			walkMaps(e, fn)
		}
	}
}

// Server is a running fake LLM.
type Server struct {
	URL string

	mu       sync.Mutex
	script   Script
	requests []*Request
	srv      *http.Server
	calls    int
	changed  chan struct{} // closed and replaced on every recorded request
}

// Start listens on a random 127.0.0.1 port.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, changed: make(chan struct{})}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// SetScript replaces the script.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// Requests returns the model requests received so far (not HEAD probes,
// token counts or title requests without tools).
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Wait blocks until the requests received so far satisfy fn, or until
// done is closed (it then reports false). For harnesses that keep running
// after the command a test started has returned (a server).
func (s *Server) Wait(done <-chan struct{}, fn func([]*Request) bool) bool {
	for {
		s.mu.Lock()
		reqs := append([]*Request(nil), s.requests...)
		changed := s.changed
		s.mu.Unlock()
		if fn(reqs) {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

// Any reports whether some request satisfies fn.
func (s *Server) Any(fn func(*Request) bool) bool {
	for _, r := range s.Requests() {
		if fn(r) {
			return true
		}
	}
	return false
}

func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	path := hr.URL.Path
	switch {
	case hr.Method == http.MethodHead || (hr.Method == http.MethodGet && path == "/"):
		w.WriteHeader(http.StatusOK)
		return
	case strings.HasSuffix(path, "/count_tokens") || strings.HasSuffix(path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":100,"totalTokens":100}`)
		return
	case hr.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}],"models":[]}`)
		return
	}
	r := &Request{Path: path, Body: body}
	json.Unmarshal(body, &r.body)
	switch {
	case strings.HasSuffix(path, "/messages"):
		r.Protocol = "anthropic"
	case strings.HasSuffix(path, "/responses"):
		r.Protocol = "responses"
	case strings.HasSuffix(path, "/chat/completions"):
		r.Protocol = "chat"
	case strings.Contains(path, ":generateContent") || strings.Contains(path, ":streamGenerateContent"):
		r.Protocol = "gemini"
	default:
		http.Error(w, `{"error":{"message":"fake LLM: unknown route `+path+`"}}`, http.StatusNotFound)
		return
	}
	s.mu.Lock()
	script := s.script
	s.calls++
	n := s.calls
	s.requests = append(s.requests, r)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	turn := Turn{Text: "ok"}
	if script != nil {
		turn = script(r)
	}
	if turn.Status != 0 {
		apiError(w, r.Protocol, turn.Status, turn.Text)
		return
	}
	id := fmt.Sprintf("%d", n)
	stream := r.body["stream"] == true || r.Protocol == "gemini" && strings.Contains(path, "stream")
	switch r.Protocol {
	case "anthropic":
		anthropic(w, r, turn, id, stream)
	case "responses":
		responses(w, r, turn, id)
	case "chat":
		chat(w, r, turn, id, stream)
	case "gemini":
		gemini(w, r, turn, stream)
	}
}

// shellTool finds the harness's shell tool among the request's tools and
// how it takes its command.
func shellTool(r *Request) (name string, args func(cmd string) map[string]any) {
	known := []string{"Bash", "bash", "shell", "exec_command", "run_shell_command", "local_shell", "shell_command", "Execute", "run_commands", "exec"}
	tools, _ := r.body["tools"].([]any)
	type cand struct {
		name     string
		props    map[string]any
		required []any
	}
	var cands []cand
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if fd, ok := m["function"].(map[string]any); ok { // chat
			m = fd
		}
		var props map[string]any
		var required []any
		for _, key := range []string{"input_schema", "parameters", "parametersJsonSchema"} {
			if p, ok := m[key].(map[string]any); ok {
				props, _ = p["properties"].(map[string]any)
				required, _ = p["required"].([]any)
			}
		}
		if decls, ok := m["functionDeclarations"].([]any); ok { // gemini
			for _, d := range decls {
				dm, _ := d.(map[string]any)
				var dp map[string]any
				for _, key := range []string{"parameters", "parametersJsonSchema"} {
					if p, ok := dm[key].(map[string]any); ok {
						dp, _ = p["properties"].(map[string]any)
					}
				}
				n, _ := dm["name"].(string)
				cands = append(cands, cand{n, dp, nil})
			}
			continue
		}
		n, _ := m["name"].(string)
		cands = append(cands, cand{n, props, required})
	}
	for _, k := range known {
		for _, c := range cands {
			if c.name != k {
				continue
			}
			if p, ok := c.props["command"].(map[string]any); ok && p["type"] == "array" {
				return c.name, func(cmd string) map[string]any {
					return map[string]any{"command": []string{"bash", "-lc", cmd}}
				}
			}
			if p, ok := c.props["commands"].(map[string]any); ok && p["type"] == "array" { // Cline's run_commands
				return c.name, func(cmd string) map[string]any { return map[string]any{"commands": []string{cmd}} }
			}
			if _, ok := c.props["cmd"]; ok {
				return c.name, func(cmd string) map[string]any { return map[string]any{"cmd": cmd} }
			}
			if _, ok := c.props["riskLevel"]; ok { // Droid's Execute refuses a call without its risk fields
				return c.name, func(cmd string) map[string]any {
					return map[string]any{"command": cmd, "summary": "e2e", "riskLevel": "low", "riskLevelReason": "e2e test command"}
				}
			}
			// Other required string parameters (Letta Code's Bash wants
			// a description) get a fixed value.
			return c.name, func(cmd string) map[string]any {
				args := map[string]any{"command": cmd}
				for _, r := range c.required {
					name, _ := r.(string)
					if p, ok := c.props[name].(map[string]any); ok && name != "command" && p["type"] == "string" {
						args[name] = "run a command"
					}
				}
				return args
			}
		}
	}
	return "", nil
}

// toolCall resolves a shell turn to (name, JSON args), or falls back to
// text when the request offers no shell tool (e.g. a title request).
func toolCall(r *Request, t Turn) (string, string, bool) {
	if t.Tool != "" {
		for _, name := range strings.Split(t.Tool, "|") {
			if r.HasTool(name) {
				in := t.Input
				if in == nil {
					in = map[string]any{}
				}
				b, _ := json.Marshal(in)
				return name, string(b), true
			}
		}
		return "", "", false
	}
	if t.Shell == "" {
		return "", "", false
	}
	name, args := shellTool(r)
	if name == "" {
		return "", "", false
	}
	b, _ := json.Marshal(args(t.Shell))
	return name, string(b), true
}

func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func anthropic(w http.ResponseWriter, r *Request, t Turn, id string, stream bool) {
	model, _ := r.body["model"].(string)
	usage := map[string]any{"input_tokens": t.inputTokens(), "output_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
	name, args, isTool := toolCall(r, t)
	text := t.Text
	if text == "" {
		text = "ok"
	}
	stop := "end_turn"
	var block map[string]any
	if isTool {
		stop = "tool_use"
		var input any
		json.Unmarshal([]byte(args), &input)
		block = map[string]any{"type": "tool_use", "id": "toolu_fake" + id, "name": name, "input": input}
	} else {
		block = map[string]any{"type": "text", "text": text}
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_fake" + id, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_fake" + id, "type": "message", "role": "assistant", "model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if isTool {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": name, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": args}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

func responses(w http.ResponseWriter, r *Request, t Turn, id string) {
	model, _ := r.body["model"].(string)
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	ev := func(typ string, v map[string]any) {
		v["type"] = typ
		v["sequence_number"] = seq
		seq++
		sse(w, typ, v)
	}
	resp := map[string]any{"id": "resp_fake" + id, "object": "response", "model": model, "status": "in_progress", "output": []any{}}
	ev("response.created", map[string]any{"response": resp})
	var item map[string]any
	if name, args, ok := toolCall(r, t); ok {
		item = map[string]any{"type": "function_call", "id": "fc_fake" + id, "call_id": "call_fake" + id, "name": name, "arguments": args, "status": "completed"}
		added := map[string]any{"type": "function_call", "id": item["id"], "call_id": item["call_id"], "name": name, "arguments": "", "status": "in_progress"}
		if ns, ok := namespaceOf(r, name); ok {
			item["namespace"], added["namespace"] = ns, ns
		}
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": item["id"], "delta": args})
		ev("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": item["id"], "arguments": args})
	} else {
		text := t.Text
		if text == "" {
			text = "ok"
		}
		part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		item = map[string]any{"type": "message", "id": "msg_fake" + id, "role": "assistant", "status": "completed", "content": []any{part}}
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "delta": text})
		ev("response.output_text.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "text": text})
		ev("response.content_part.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "part": part})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	resp["status"] = "completed"
	resp["output"] = []any{item}
	resp["usage"] = map[string]any{"input_tokens": t.inputTokens(), "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": t.inputTokens() + 10}
	ev("response.completed", map[string]any{"response": resp})
}

func chat(w http.ResponseWriter, r *Request, t Turn, id string, stream bool) {
	model, _ := r.body["model"].(string)
	name, args, isTool := toolCall(r, t)
	text := t.Text
	if text == "" {
		text = "ok"
	}
	usage := map[string]any{"prompt_tokens": t.inputTokens(), "completion_tokens": 10, "total_tokens": t.inputTokens() + 10}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": text}
		finish := "stop"
		if isTool {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_fake" + id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-fake" + id, "object": "chat.completion", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{"id": "chatcmpl-fake" + id, "object": "chat.completion.chunk", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	if isTool {
		chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0, "id": "call_fake" + id, "type": "function", "function": map[string]any{"name": name, "arguments": ""}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": args}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		chunk(map[string]any{"content": text}, nil)
		chunk(map[string]any{}, "stop")
	}
	sse(w, "", map[string]any{"id": "chatcmpl-fake" + id, "object": "chat.completion.chunk", "created": 1, "model": model, "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func gemini(w http.ResponseWriter, r *Request, t Turn, stream bool) {
	var part map[string]any
	if name, args, ok := toolCall(r, t); ok {
		var a any
		json.Unmarshal([]byte(args), &a)
		part = map[string]any{"functionCall": map[string]any{"name": name, "args": a}}
	} else {
		text := t.Text
		if text == "" {
			text = "ok"
		}
		part = map[string]any{"text": text}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": t.inputTokens(), "candidatesTokenCount": 10, "totalTokenCount": t.inputTokens() + 10},
		"modelVersion":  "fake-model",
	}
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "", resp)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// apiError answers an HTTP error in the protocol's error shape.
func apiError(w http.ResponseWriter, protocol string, status int, msg string) {
	var body any
	switch protocol {
	case "anthropic":
		body = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	case "gemini":
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// LastInput is the strings of every message since the model's last turn
// (tool results, user messages such as a stop hook's reason, context a
// hook added), each string separately, in order: what an agent reacts to
// next.
func (r *Request) LastInput() []string {
	var msgs []any
	for _, key := range []string{"messages", "input", "contents"} {
		if m, ok := r.body[key].([]any); ok {
			msgs = m
			break
		}
	}
	from := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m != nil && modelTurn(m) {
			from = i + 1
			break
		}
	}
	var out []string
	for _, m := range msgs[from:] {
		walk(m, func(s string) { out = append(out, s) })
	}
	return out
}

// modelTurn reports whether a conversation item is the model's own: an
// assistant or model message, or a Responses function call or reasoning.
func modelTurn(m map[string]any) bool {
	switch m["role"] {
	case "assistant", "model":
		return true
	}
	switch m["type"] {
	case "function_call", "reasoning", "custom_tool_call", "local_shell_call":
		return true
	}
	return false
}
