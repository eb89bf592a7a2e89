package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time: on a shared machine
// the benchmarks also report CPU ns/op, which other load does not inflate
// as it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports its CPU ns/op too.
func loop(b *testing.B, f func()) {
	c0 := cpuTime()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(n), "cpu-ns/op")
}

// routes20 is a routes file of 20 rules (as runtime/cmd/proxybench's):
// the six built-in ones and 14 custom ones, none of which the bench
// requests match before the signal rules.
func routes20(upstream string) string {
	var custom []string
	for i := 0; i < 12; i++ {
		custom = append(custom, fmt.Sprintf(`{"name": "model-%d", "model": "^claude-opus-%d", "use": "a,gpt-x"}`, i, i))
	}
	custom = append(custom, `{"name": "codex", "harness": "codex", "use": "a,gpt-x"}`, `{"name": "tagged", "header": "X-Route", "value": "^fast$", "use": "a,gpt-x"}`)
	return fmt.Sprintf(`{"providers": {"a": {"provider": "openai", "baseURL": %q}},
  "rules": {"default": "a,gpt-x", "background": "a,gpt-bg", "think": "a,gpt-think", "webSearch": "a,gpt-x", "image": "a,gpt-x",
    "longContext": {"use": "a,gpt-x", "threshold": 100000}, "custom": [%s]}}`, upstream, strings.Join(custom, ",\n"))
}

// claudeTurn is a main turn shaped like Claude Code's: a long system
// prompt, 25 tools with schemas, a few turns of history with a tool
// call, adaptive thinking.
func claudeTurn() []byte {
	var tools []string
	for i := 0; i < 25; i++ {
		tools = append(tools, fmt.Sprintf(`{"name":"Tool%d","description":%q,"input_schema":{"type":"object","properties":{"command":{"type":"string","description":"what to run"},"timeout":{"type":"number"}},"required":["command"]}}`, i, strings.Repeat("Does a thing. ", 40)))
	}
	msgs := `[{"role":"user","content":[{"type":"text","text":"list the files"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Listing."},{"type":"tool_use","id":"toolu_1","name":"Tool0","input":{"command":"ls -la"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":` + fmt.Sprintf("%q", strings.Repeat("file.go\n", 200)) + `}]}]}]`
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"thinking":{"type":"adaptive"},"system":[{"type":"text","text":` +
		fmt.Sprintf("%q", strings.Repeat("You are an interactive CLI tool. ", 300)) + `,"cache_control":{"type":"ephemeral"}}],"messages":` + msgs +
		`,"tools":[` + strings.Join(tools, ",") + `],"metadata":{"user_id":"u"}}`)
}

const benchSmall = `{"model":"gpt-x","max_tokens":100,"system":"be brief","messages":[{"role":"user","content":"list files"}],"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]}`

func benchRouter(b *testing.B, client *http.Client, record func(RouteRecord)) *Router {
	b.Helper()
	rt, err := LoadRoutes("routes20.json", []byte(routes20("http://up.test/v1")), testAtlas, testKeys)
	if err != nil {
		b.Fatal(err)
	}
	if len(rt.Rules) != 20 {
		b.Fatalf("%d rules", len(rt.Rules))
	}
	r, err := NewRouter(RouterConfig{Routes: rt, Signals: atlasSignals, Harness: "claude-code", Base: Config{Token: token, Client: client}, Record: record})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// atlasSignals are every protocol's signals of atlas/routing.cue (the
// bench tests all of them, as a real request would).
var atlasSignals = Signals{
	Think: map[string][]SignalMatch{
		Anthropic: {{Path: "thinking.type", Values: []string{`"enabled"`}}},
	},
	WebSearch: map[string][]SignalMatch{
		Anthropic: {{Path: "tools[].type", Prefix: "web_search"}},
	},
	Image: map[string][]SignalMatch{
		Anthropic: {{Path: "messages[].content[].type", Values: []string{`"image"`}}, {Path: "messages[].content[].content[].type", Values: []string{`"image"`}}},
	},
	Background: testSignals.Background,
}

// BenchmarkRouteDecision: choosing a rule of a 20-rule file with the
// atlas's signals, for a small request and for a Claude Code main turn.
func BenchmarkRouteDecision(b *testing.B) {
	r := benchRouter(b, nil, nil)
	for _, c := range []struct {
		name string
		body []byte
	}{{"small", []byte(benchSmall)}, {"claude-turn", claudeTurn()}} {
		b.Run(c.name, func(b *testing.B) {
			h := http.Header{"X-Api-Key": {token}, "Anthropic-Version": {"2023-06-01"}}
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			loop(b, func() {
				if rule, _ := r.Classify(Anthropic, "claude-code", c.body, h, ""); rule != RuleDefault {
					b.Fatal(rule)
				}
			})
		})
	}
}

// stubUpstream answers every call with one OpenAI Chat completion, in
// memory: the serve benchmarks time the proxy's own work only.
type stubUpstream struct{}

const benchChatJSON = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how can I help?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":30}}`

func (stubUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(benchChatJSON)), ContentLength: int64(len(benchChatJSON)), Request: r}, nil
}

// BenchmarkServe: one translated exchange (Anthropic client, OpenAI Chat
// upstream in memory) through the proxy without routes and with the
// 20-rule file; the difference is what routing costs a request.
func BenchmarkServe(b *testing.B) {
	client := &http.Client{Transport: stubUpstream{}}
	plain, err := New(Config{Provider: Provider{ID: "openai", Protocol: OpenAIChat, BaseURL: "http://up.test/v1", Auth: "bearer", Key: "k", DefaultModel: "gpt-x"}, Token: token, Client: client})
	if err != nil {
		b.Fatal(err)
	}
	rec := NewRecordFile(io.Discard, nil)
	defer rec.Close()
	routed := benchRouter(b, client, rec.Record)
	for _, body := range []struct {
		name string
		b    []byte
	}{{"small", []byte(benchSmall)}, {"claude-turn", bytes.ReplaceAll(claudeTurn(), []byte(`"stream":true`), []byte(`"stream":false`))}} {
		for _, h := range []struct {
			name string
			h    http.Handler
		}{{"plain", plain}, {"routed", routed}} {
			b.Run(body.name+"/"+h.name, func(b *testing.B) {
				b.ReportAllocs()
				loop(b, func() {
					req := httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(body.b))
					req.Header.Set("X-Api-Key", token)
					w := httptest.NewRecorder()
					h.h.ServeHTTP(w, req)
					if w.Code != 200 {
						b.Fatal(w.Code, w.Body.String())
					}
				})
			})
		}
	}
}
