package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/runtime/internal/fakellm"
)

var protocols = []string{Anthropic, OpenAIChat, OpenAIResponses, Gemini}

const token = "test-token"

// clientPath is where a client of a protocol posts.
func clientPath(proto, path string) string {
	switch proto {
	case OpenAIChat, OpenAIResponses:
		return "/v1" + path
	}
	return path
}

// encodeStream renders canonical events as a protocol's stream body.
func encodeStream(t *testing.T, proto string, req *Request, evs []Event) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r := *req
	r.streamUsage = true // the proxy always asks a Chat upstream for usage
	enc := adapterFor(proto).newStreamEncoder(newSSEWriter(rec), &r)
	for _, e := range evs {
		enc.encode(e)
	}
	enc.close()
	return rec.Body.String()
}

// split cuts s into n-byte pieces, cutting through multi-byte characters.
func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// collect decodes a client-side stream with the client protocol's own
// decoder and assembles the canonical response.
func collect(t *testing.T, proto string, body io.Reader) (*Response, []Event) {
	t.Helper()
	dec := adapterFor(proto).newStreamDecoder(nil)
	var evs []Event
	emit := func(e Event) { evs = append(evs, e) }
	rd := NewSSEReader(body)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("client stream: %v", err)
		}
		if err := dec.decode(ev, emit); err != nil {
			t.Fatalf("client stream event %q %s: %v", ev.Event, ev.Data, err)
		}
	}
	dec.finish(emit)
	return assemble(evs), evs
}

func assemble(evs []Event) *Response {
	r := &Response{}
	var txt, th strings.Builder
	tools := map[int]*Part{}
	var order []int
	for _, e := range evs {
		switch e.Kind {
		case EvText:
			txt.WriteString(e.Text)
		case EvThinking:
			th.WriteString(e.Text)
		case EvToolStart:
			tools[e.Index] = &Part{Kind: PartToolCall, ToolID: e.ToolID, ToolName: e.ToolName}
			order = append(order, e.Index)
		case EvToolArgs:
			if p := tools[e.Index]; p != nil {
				p.Args = append(p.Args, e.Text...)
			}
		case EvEnd:
			r.Stop, r.Usage = e.Stop, e.Usage
		case EvError:
			r.Stop = "error: " + e.Err.Message
		}
	}
	if th.Len() > 0 {
		r.Parts = append(r.Parts, Part{Kind: PartThinking, Text: th.String()})
	}
	if txt.Len() > 0 {
		r.Parts = append(r.Parts, Part{Kind: PartText, Text: txt.String()})
	}
	for _, i := range order {
		p := tools[i]
		p.Args = argsObject(p.Args)
		r.Parts = append(r.Parts, *p)
	}
	return r
}

// essence is what must survive any pair: text, tool names and arguments,
// stop reason, token counts.
type essence struct {
	Text  string
	Tools []string
	Stop  string
	In    int
	Out   int
	Cache int
}

func essenceOf(r *Response) essence {
	e := essence{Text: text(r.Parts), Stop: r.Stop, In: r.Usage.Input, Out: r.Usage.Output, Cache: r.Usage.CacheRead}
	if e.Stop == "" {
		e.Stop = StopEnd
	}
	for _, p := range r.Parts {
		if p.Kind == PartToolCall {
			var v any
			json.Unmarshal(argsObject(p.Args), &v)
			b, _ := json.Marshal(v)
			e.Tools = append(e.Tools, p.ToolName+string(b))
		}
	}
	return e
}

type rig struct {
	up    *fakellm.Server
	proxy *httptest.Server
	srv   *Server
}

func newRig(t *testing.T, upstream string, mod func(*Config)) *rig {
	t.Helper()
	up, err := fakellm.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	cfg := Config{Provider: Provider{ID: "fake-" + upstream, Protocol: upstream, BaseURL: up.URL, Auth: map[string]string{
		Anthropic: "x-api-key", OpenAIChat: "bearer", OpenAIResponses: "bearer", Gemini: "x-goog-api-key"}[upstream],
		Key: "upstream-key", DefaultModel: "m-1", MaxOutputTokens: 1000}, Token: token}
	if upstream == OpenAIChat || upstream == OpenAIResponses {
		cfg.Provider.BaseURL += "/v1"
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(srv)
	t.Cleanup(ps.Close)
	return &rig{up: up, proxy: ps, srv: srv}
}

// call sends a canonical request as an ingress client would.
func (g *rig) call(t *testing.T, ingress string, req *Request) *http.Response {
	t.Helper()
	path, q, body, err := adapterFor(ingress).encodeRequest(req, &Provider{BaseURL: "http://client"})
	if err != nil {
		t.Fatal(err)
	}
	u := g.proxy.URL + clientPath(ingress, path)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	hr, _ := http.NewRequest("POST", u, bytes.NewReader(body))
	switch ingress {
	case Anthropic:
		hr.Header.Set("X-Api-Key", token)
	case Gemini:
		hr.Header.Set("X-Goog-Api-Key", token)
	default:
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func baseRequest(stream bool) *Request {
	return &Request{
		Model: "m-1", System: "be brief", MaxTokens: 100, Stream: stream,
		Messages: []Message{
			{Role: "user", Parts: []Part{{Kind: PartText, Text: "list files"}}},
			{Role: "assistant", Parts: []Part{{Kind: PartText, Text: "ok"}, {Kind: PartToolCall, ToolID: "call_1", ToolName: "Bash", Args: json.RawMessage(`{"command":"ls"}`)}}},
			{Role: "user", Parts: []Part{{Kind: PartToolResult, ToolID: "call_1", ToolName: "Bash", Text: "a.txt"}}},
		},
		Tools: []Tool{{Name: "Bash", Description: "run", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}},
	}
}

var answerText = "Héllo wörld ✓ 日本語 🎉"

func answer() *Response {
	return &Response{ID: "x", Model: "m-1", Stop: StopTool, Usage: Usage{Input: 120, Output: 30, CacheRead: 20},
		Parts: []Part{
			{Kind: PartText, Text: answerText},
			{Kind: PartToolCall, ToolID: "call_a", ToolName: "Bash", Args: json.RawMessage(`{"command":"ls -la","cwd":"/tmp/ü"}`)},
			{Kind: PartToolCall, ToolID: "call_b", ToolName: "Read", Args: json.RawMessage(`{"path":"a.txt"}`)},
		}}
}

// answerEvents streams answer() with tool arguments split into many fragments.
func answerEvents() []Event {
	evs := []Event{{Kind: EvStart, ID: "x", Model: "m-1", Usage: Usage{Input: 120, CacheRead: 20}}}
	for _, r := range answerText { // events hold whole characters; the network split cuts them
		evs = append(evs, Event{Kind: EvText, Text: string(r)})
	}
	for i, p := range answer().Parts[1:] {
		evs = append(evs, Event{Kind: EvToolStart, Index: i, ToolID: p.ToolID, ToolName: p.ToolName})
		for _, s := range split(string(p.Args), 2) {
			evs = append(evs, Event{Kind: EvToolArgs, Index: i, Text: s})
		}
	}
	return append(evs, Event{Kind: EvEnd, Stop: StopTool, Usage: Usage{Input: 120, Output: 30, CacheRead: 20}})
}

// scenario is one upstream answer, as a whole response and as a stream.
type scenario struct {
	name   string
	resp   *Response
	events []Event
}

func scenarios() []scenario {
	empty := &Response{ID: "x", Model: "m-1", Stop: StopEnd, Usage: Usage{Input: 5}}
	long := &Response{ID: "x", Model: "m-1", Stop: StopMax, Usage: Usage{Input: 5, Output: 7}, Parts: []Part{{Kind: PartText, Text: "cut shor"}}}
	return []scenario{
		{"tools", answer(), answerEvents()},
		{"empty", empty, []Event{{Kind: EvStart, ID: "x"}, {Kind: EvEnd, Stop: StopEnd, Usage: Usage{Input: 5}}}},
		{"max-tokens", long, []Event{{Kind: EvStart, ID: "x"}, {Kind: EvText, Text: "cut "}, {Kind: EvText, Text: "shor"}, {Kind: EvEnd, Stop: StopMax, Usage: Usage{Input: 5, Output: 7}}}},
	}
}

// TestPairs runs every ingress × upstream pair, JSON and streaming, with
// parallel tool calls, arguments split across many chunks, multi-byte
// characters split across network writes, empty content and a length stop.
func TestPairs(t *testing.T) {
	for _, sc := range scenarios() {
		want := essenceOf(sc.resp)
		for _, in := range protocols {
			for _, up := range protocols {
				t.Run(sc.name+"/"+in+"→"+up+"/json", func(t *testing.T) {
					g := newRig(t, up, nil)
					g.up.Script(fakellm.Reply{Body: string(adapterFor(up).encodeResponse(sc.resp))})
					resp := g.call(t, in, baseRequest(false))
					b, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %s", resp.StatusCode, b)
					}
					got, err := adapterFor(in).decodeResponse(b, nil)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, essenceOf(got)); diff != "" {
						t.Errorf("(-want +got):\n%s\nbody: %s", diff, b)
					}
					checkUpstreamRequest(t, g, up)
				})
				t.Run(sc.name+"/"+in+"→"+up+"/stream", func(t *testing.T) {
					g := newRig(t, up, nil)
					body := encodeStream(t, up, baseRequest(true), sc.events)
					g.up.Script(fakellm.Reply{Chunks: split(body, 5)})
					resp := g.call(t, in, baseRequest(true))
					if resp.StatusCode != 200 {
						b, _ := io.ReadAll(resp.Body)
						t.Fatalf("status %d: %s", resp.StatusCode, b)
					}
					got, _ := collect(t, in, resp.Body)
					if diff := cmp.Diff(want, essenceOf(got)); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
					checkUpstreamRequest(t, g, up)
				})
			}
		}
	}
}

// TestErrorPairs: for every pair, an upstream error before the first byte
// keeps its status in the client's error shape, and one after the first
// byte becomes the client's error frame.
func TestErrorPairs(t *testing.T) {
	for _, in := range protocols {
		for _, up := range protocols {
			if in == up {
				continue // passthrough
			}
			t.Run(in+"→"+up+"/before", func(t *testing.T) {
				g := newRig(t, up, nil)
				st, body := encodeError(up, &APIError{Status: 429, Message: "slow down"})
				g.up.Script(fakellm.Reply{Status: st, Body: string(body)})
				resp := g.call(t, in, baseRequest(true))
				b, _ := io.ReadAll(resp.Body)
				wantSt, wantBody := encodeError(in, &APIError{Status: 429, Message: "slow down"})
				if resp.StatusCode != wantSt || string(b) != string(wantBody) {
					t.Errorf("got %d %s, want %d %s", resp.StatusCode, b, wantSt, wantBody)
				}
			})
			t.Run(in+"→"+up+"/after", func(t *testing.T) {
				g := newRig(t, up, nil)
				body := encodeStream(t, up, baseRequest(true), []Event{{Kind: EvStart, ID: "x"}, {Kind: EvText, Text: "partial"},
					{Kind: EvError, Err: &APIError{Status: 500, Message: "boom"}}})
				g.up.Script(fakellm.Reply{Chunks: split(body, 9)})
				resp := g.call(t, in, baseRequest(true))
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				got, _ := collect(t, in, resp.Body)
				if text(got.Parts) != "partial" || got.Stop != "error: boom" {
					t.Errorf("got %+v", got)
				}
			})
		}
	}
}

// checkUpstreamRequest decodes what the upstream received in its own
// protocol: the conversation must have survived, credentials replaced.
func checkUpstreamRequest(t *testing.T, g *rig, up string) {
	t.Helper()
	reqs := g.up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests", len(reqs))
	}
	r := reqs[0]
	if strings.Contains(fmt.Sprint(r.Header), token) {
		t.Errorf("the client token reached the upstream: %v", r.Header)
	}
	switch up {
	case Anthropic:
		if r.Header.Get("X-Api-Key") != "upstream-key" || r.Header.Get("Anthropic-Version") == "" {
			t.Errorf("anthropic auth headers: %v", r.Header)
		}
	case Gemini:
		if r.Header.Get("X-Goog-Api-Key") != "upstream-key" {
			t.Errorf("gemini auth header: %v", r.Header)
		}
	default:
		if r.Header.Get("Authorization") != "Bearer upstream-key" {
			t.Errorf("bearer: %v", r.Header)
		}
	}
	got, err := adapterFor(up).decodeRequest(r.Body)
	if err != nil {
		t.Fatalf("upstream request: %v\n%s", err, r.Body)
	}
	if got.System != "be brief" || len(got.Tools) != 1 || got.Tools[0].Name != "Bash" {
		t.Errorf("upstream request lost system or tools: %s", r.Body)
	}
	var kinds []string
	for _, m := range got.Messages {
		for _, p := range m.Parts {
			kinds = append(kinds, m.Role+":"+p.Kind+":"+p.Text+p.ToolName)
		}
	}
	want := []string{"user:text:list files", "assistant:text:ok", "assistant:tool_call:Bash", "user:tool_result:a.txtBash"}
	if up != Gemini {
		want[3] = "user:tool_result:a.txt" // only Gemini names results
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("upstream conversation (-want +got):\n%s\n%s", diff, r.Body)
	}
}

// TestUpstreamErrorBeforeFirstByte: an upstream failure before any event
// keeps a real status and the ingress protocol's error body.
func TestUpstreamErrorBeforeFirstByte(t *testing.T) {
	cases := []struct {
		up, in     string
		status     int
		body       string
		wantStatus int
		wantBody   string
	}{
		{OpenAIChat, Anthropic, 503, `{"error":{"message":"busy","type":"server_error"}}`, 529, `{"error":{"message":"busy","type":"overloaded_error"},"type":"error"}`},
		{OpenAIChat, Anthropic, 429, `{"error":{"message":"slow down","type":"rate_limit"}}`, 429, `{"error":{"message":"slow down","type":"rate_limit_error"},"type":"error"}`},
		{Anthropic, OpenAIChat, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, 400, `{"error":{"code":null,"message":"bad","param":null,"type":"invalid_request_error"}}`},
		{Anthropic, Gemini, 401, `{"type":"error","error":{"type":"authentication_error","message":"no key"}}`, 401, `{"error":{"code":401,"message":"no key","status":"UNAUTHENTICATED"}}`},
		{Gemini, OpenAIResponses, 429, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, 429, `{"error":{"code":null,"message":"quota","param":null,"type":"rate_limit_exceeded"}}`},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s→%s/%d/stream=%v", c.in, c.up, c.status, stream), func(t *testing.T) {
				g := newRig(t, c.up, nil)
				g.up.Script(fakellm.Reply{Status: c.status, Body: c.body, Header: map[string]string{"Retry-After": "7"}})
				resp := g.call(t, c.in, baseRequest(stream))
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != c.wantStatus || strings.TrimSpace(string(b)) != c.wantBody {
					t.Errorf("got %d %s\nwant %d %s", resp.StatusCode, b, c.wantStatus, c.wantBody)
				}
				if resp.Header.Get("Retry-After") != "7" {
					t.Errorf("retry-after not passed through")
				}
			})
		}
	}
}

// TestUpstreamErrorAfterFirstByte: a mid-stream error becomes the ingress
// protocol's error frame after a committed 200.
func TestUpstreamErrorAfterFirstByte(t *testing.T) {
	upBody := "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"error\":{\"message\":\"upstream exploded\",\"type\":\"server_error\"}}\n\n"
	want := map[string]string{
		Anthropic:       "event: error\ndata: {\"error\":{\"message\":\"upstream exploded\",\"type\":\"api_error\"},\"type\":\"error\"}",
		OpenAIChat:      "data: {\"error\":{\"code\":null,\"message\":\"upstream exploded\",\"param\":null,\"type\":\"server_error\"}}",
		OpenAIResponses: "event: response.failed",
		Gemini:          "data: {\"error\":{\"code\":500,\"message\":\"upstream exploded\",\"status\":\"INTERNAL\"}}",
	}
	for _, in := range protocols {
		if in == OpenAIChat {
			continue // same protocol: passed through
		}
		t.Run(in, func(t *testing.T) {
			g := newRig(t, OpenAIChat, nil)
			g.up.Script(fakellm.Reply{Chunks: []string{upBody}})
			resp := g.call(t, in, baseRequest(true))
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.Contains(string(b), "hi") || !strings.Contains(string(b), want[in]) {
				t.Errorf("status %d, body:\n%s\nwant it to contain %q", resp.StatusCode, b, want[in])
			}
			if strings.Contains(string(b), "message_stop") || strings.Contains(string(b), "[DONE]") || strings.Contains(string(b), "response.completed") {
				t.Errorf("an errored stream must not also end normally:\n%s", b)
			}
		})
	}
}

// TestPassthrough: same protocol → bytes untouched, credentials replaced.
func TestPassthrough(t *testing.T) {
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			g := newRig(t, p, nil)
			weird := `{"id":"keep-me","unknown_field":[1,2,3],"x":"é"}`
			g.up.Script(fakellm.Reply{Body: weird})
			resp := g.call(t, p, baseRequest(false))
			b, _ := io.ReadAll(resp.Body)
			if string(b) != weird {
				t.Errorf("body changed: %s", b)
			}
			sent, _, clientBody, _ := adapterFor(p).encodeRequest(baseRequest(false), &Provider{BaseURL: "http://client"})
			_ = sent
			if got := g.up.Requests()[0].Body; !bytes.Equal(got, clientBody) {
				t.Errorf("request body changed:\n%s\n%s", got, clientBody)
			}
		})
	}
}

func TestAuthAndLimits(t *testing.T) {
	g := newRig(t, OpenAIChat, func(c *Config) { c.MaxBody = 1000 })
	hr, _ := http.NewRequest("POST", g.proxy.URL+"/v1/messages", strings.NewReader(`{}`))
	hr.Header.Set("X-Api-Key", "wrong")
	resp, _ := http.DefaultClient.Do(hr)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), "authentication_error") || strings.Contains(string(b), token) {
		t.Errorf("wrong token: %d %s", resp.StatusCode, b)
	}
	// Bearer works on the Anthropic route too (ANTHROPIC_AUTH_TOKEN).
	hr, _ = http.NewRequest("POST", g.proxy.URL+"/v1/messages", strings.NewReader(strings.Repeat("x", 2000)))
	hr.Header.Set("Authorization", "Bearer "+token)
	resp, _ = http.DefaultClient.Do(hr)
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("oversized body: %d", resp.StatusCode)
	}
	resp, _ = http.Get(g.proxy.URL + "/healthz")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz %d", resp.StatusCode)
	}
	if len(g.up.Requests()) != 0 {
		t.Errorf("rejected requests reached the upstream")
	}
}

// TestRetryOnlyBeforeFirstByte: a 503 is retried; a stream that broke
// after its first byte is not.
func TestRetryOnlyBeforeFirstByte(t *testing.T) {
	g := newRig(t, OpenAIChat, func(c *Config) { c.Retries = 2; c.RetryBackoff = 1 })
	g.up.Script(fakellm.Reply{Status: 503, Body: `{"error":{"message":"busy"}}`},
		fakellm.Reply{Body: string(chatAdapter{}.encodeResponse(answer()))})
	resp := g.call(t, Anthropic, baseRequest(false))
	io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || len(g.up.Requests()) != 2 {
		t.Errorf("status %d after %d upstream calls", resp.StatusCode, len(g.up.Requests()))
	}
	g2 := newRig(t, OpenAIChat, func(c *Config) { c.Retries = 2; c.RetryBackoff = 1 })
	g2.up.Script(fakellm.Reply{Chunks: []string{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n", "data: {not json"}})
	resp = g2.call(t, Anthropic, baseRequest(true))
	io.ReadAll(resp.Body)
	if len(g2.up.Requests()) != 1 {
		t.Errorf("a started stream was retried: %d calls", len(g2.up.Requests()))
	}
}

// TestClientDisconnectCancelsUpstream: the upstream request ends when the
// client goes away mid-stream.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	g := newRig(t, OpenAIChat, nil)
	gate := make(chan struct{})
	g.up.Script(fakellm.Reply{Gate: gate, Chunks: []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n",
	}})
	resp := g.call(t, Anthropic, baseRequest(true))
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-g.up.Done // the fake's handler returns only when its request context ends
}

// TestKeepAlive: upstream silence after the first event yields pings.
func TestKeepAlive(t *testing.T) {
	g := newRig(t, OpenAIChat, func(c *Config) { c.PingInterval = 5e6 })
	gate := make(chan struct{})
	g.up.Script(fakellm.Reply{Gate: gate, Chunks: []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
		"data: [DONE]\n\n",
	}})
	resp := g.call(t, Anthropic, baseRequest(true))
	br := bufio.NewReader(resp.Body)
	pings := 0
	for pings < 3 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "event: ping\n" {
			pings++
		}
	}
	close(gate)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "message_stop") {
		t.Errorf("stream did not end: %s", rest)
	}
}
