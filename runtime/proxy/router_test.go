package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"sitter.dev/sitter/runtime/internal/fakellm"
)

// testAtlas mirrors three providers of the atlas (atlas/providers.cue).
var testAtlas = RoutesAtlas{
	Providers: map[string]ProviderSpec{
		"anthropic": {Provider: Provider{Protocol: Anthropic, BaseURL: "https://api.anthropic.test", Auth: "x-api-key", DefaultModel: "claude-x", MaxOutputTokens: 1000}, KeyEnv: "ANTHROPIC_API_KEY"},
		"openai":    {Provider: Provider{Protocol: OpenAIChat, BaseURL: "https://api.openai.test/v1", Auth: "bearer", DefaultModel: "gpt-x"}, KeyEnv: "OPENAI_API_KEY"},
		"gemini":    {Provider: Provider{Protocol: Gemini, BaseURL: "https://gemini.test", Auth: "x-goog-api-key", DefaultModel: "gemini-x"}, KeyEnv: "GEMINI_API_KEY"},
		"azure":     {Provider: Provider{Protocol: OpenAIChat, BaseURL: "https://{resource}.azure.test/openai", Auth: "api-key", APIVersion: "1"}, KeyEnv: "AZURE_KEY", Params: [][2]string{{"resource", "AZURE_RESOURCE"}}},
	},
	Harnesses: []string{"claude-code", "codex", "gemini-cli"},
}

// testSignals are the atlas's signals for Anthropic clients
// (atlas/routing.cue), as generated/providers holds them.
var testSignals = Signals{
	Think:     map[string][]SignalMatch{Anthropic: {{Path: "thinking.type", Values: []string{`"enabled"`}}}},
	WebSearch: map[string][]SignalMatch{Anthropic: {{Path: "tools[].type", Prefix: "web_search"}}},
	Image:     map[string][]SignalMatch{Anthropic: {{Path: "messages[].content[].type", Values: []string{`"image"`}}}},
	Background: map[string][][]SignalMatch{"claude-code": {
		{{Path: "tools", Present: "false"}},
		{{Path: "model", Pattern: "(?i)haiku"}},
	}},
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var testKeys = env(map[string]string{"ANTHROPIC_API_KEY": "ka", "OPENAI_API_KEY": "ko", "GEMINI_API_KEY": "kg"})

// TestLoadRoutesErrors: every problem of a routes file is named with
// file:line:col, at start.
func TestLoadRoutesErrors(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown atlas provider", `{"providers": {"a": {"provider": "nope"}}, "rules": {"default": "a,m"}}`,
			`r.json:1:34: providers.a: unknown provider "nope" (the atlas has: anthropic, azure, gemini, openai)`},
		{"rule names an unknown provider", "{\"providers\": {\"openai\": {}},\n \"rules\": {\"default\": \"openai,m\", \"think\": \"b,m\"}}",
			`r.json:2:44: rules.think: unknown provider "b" (the routes file names: openai)`},
		{"missing key", `{"providers": {"openai": {"keyEnv": "NO_SUCH_KEY"}}, "rules": {"default": "openai,m"}}`,
			`r.json:1:37: providers.openai: the key variable NO_SUCH_KEY is not set`},
		{"missing placeholder", `{"providers": {"azure": {}}, "rules": {"default": "azure,m"}}`,
			`set AZURE_RESOURCE (fills {resource}`},
		{"cyclic fallback", "{\"providers\": {\"openai\": {}},\n\"rules\": {\n  \"default\": {\"use\": \"openai,a\", \"fallbacks\": [\"think\"]},\n  \"think\": {\"use\": \"openai,b\", \"fallbacks\": [\"default\"]}}}",
			`r.json:4:46: rules.think.fallbacks: cyclic fallback default → think → default`},
		{"unknown fallback rule", `{"providers": {"openai": {}}, "rules": {"default": {"use": "openai,a", "fallbacks": ["nope"]}}}`,
			`rules.default.fallbacks: no rule "nope"`},
		{"model not listed", `{"providers": {"openai": {"models": ["x"]}}, "rules": {"default": "openai,y"}}`,
			`rules.default: provider openai has no model "y" (its models: x)`},
		{"no default", `{"providers": {"openai": {}}, "rules": {"think": "openai,y"}}`, `rules: no default rule`},
		{"unknown member", `{"providers": {"openai": {}}, "rules": {"default": "openai,y", "fast": "openai,y"}}`, `r.json:1:64: rules: unknown rule "fast"`},
		{"longContext without threshold", `{"providers": {"openai": {}}, "rules": {"default": "openai,y", "longContext": {"use": "openai,y"}}}`, `rules.longContext: no threshold`},
		{"custom without condition", `{"providers": {"openai": {}}, "rules": {"default": "openai,y", "custom": [{"use": "openai,y"}]}}`, `rules.custom-1: a custom rule needs model, harness or header`},
		{"unknown harness", `{"providers": {"openai": {}}, "rules": {"default": "openai,y", "custom": [{"harness": "vim", "use": "openai,y"}]}}`, `unknown harness "vim"`},
		{"bad regexp", `{"providers": {"openai": {}}, "rules": {"default": "openai,y", "custom": [{"model": "(", "use": "openai,y"}]}}`, `rules.custom-1.model: want a regular expression`},
		{"syntax", "{\"providers\": {\"openai\": {}},\n \"rules\": {\"default\": \"openai,y\",}}", `r.json:2:`},
		// An empty or non-string keyEnv is an error, not the atlas's
		// variable in silence.
		{"empty keyEnv", `{"providers": {"openai": {"keyEnv": ""}}, "rules": {"default": "openai,y"}}`,
			`r.json:1:37: providers.openai.keyEnv: want the name of an environment variable, have ""`},
		{"keyEnv not a string", "{\"providers\": {\"openai\": {\n  \"keyEnv\": null}}, \"rules\": {\"default\": \"openai,y\"}}",
			`r.json:2:13: providers.openai.keyEnv: want the name of an environment variable, have null`},
		{"baseURL without a host", `{"providers": {"openai": {"baseURL": "http://"}}, "rules": {"default": "openai,y"}}`,
			`r.json:1:38: providers.openai.baseURL: want an http:// or https:// URL with a host, have "http://"`},
	}
	for _, c := range cases {
		_, err := LoadRoutes("r.json", []byte(c.file), testAtlas, testKeys)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestRoutesSyntaxPosition: a JSON syntax error names the line and the
// column (1-based, in bytes, as every file:line:col) of the offending
// character; a file that is not JSON at all says a routes file is JSON.
func TestRoutesSyntaxPosition(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"bad value", `{"providers": @}`, `r.json:1:15: invalid JSON: invalid character '@' looking for beginning of value`},
		{"bare word, line 3", "{\n  \"providers\": {\"anthropic\": {}},\n  \"rules\": {\"default\": anthropic,x}\n}", `r.json:3:24: invalid JSON: invalid character 'a' looking for beginning of value`},
		{"cut literal", `{"providers": tru}`, `r.json:1:18: invalid JSON: invalid character '}' in literal true (expecting 'e')`},
		{"columns in bytes", `{"é": @}`, `r.json:1:8: invalid JSON: invalid character '@'`},
		{"data after the document", `{} x`, `r.json:1:4: invalid JSON: invalid character 'x' after top-level value`},
		{"unexpected end", "{\"providers\": {\n", `r.json:1:16: invalid JSON: unexpected end of JSON input`},
		{"not JSON", `p`, `r.json:1:1: the routes file must be JSON`},
		{"not JSON, indented", `   p`, `r.json:1:4: the routes file must be JSON`},
		{"YAML", "providers:\n  anthropic: {}\nrules:\n  default: anthropic,claude-sonnet-4-5\n", `r.json:1:1: the routes file must be JSON`},
	}
	for _, c := range cases {
		_, err := LoadRoutes("r.json", []byte(c.file), testAtlas, testKeys)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one error starting %q", c.name, err, c.want)
		}
	}
}

// TestLoadRoutesOneErrorEach: a bad rule is reported once, as what is
// wrong with it, not also as a missing rule; a rule naming a provider
// whose own entry is wrong is not reported again.
func TestLoadRoutesOneErrorEach(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"default names an unknown provider", `{"providers": {"openai": {}}, "rules": {"default": "nope,m"}}`,
			`r.json:1:52: rules.default: unknown provider "nope" (the routes file names: openai)`},
		{"default names an unlisted model", `{"providers": {"openai": {"models": ["x"]}}, "rules": {"default": "openai,y"}}`,
			`r.json:1:67: rules.default: provider openai has no model "y" (its models: x)`},
		{"default is a number", `{"providers": {"openai": {}}, "rules": {"default": 5}}`,
			`r.json:1:52: rules.default: want "provider,model" or an object with use`},
		{"default's use names an unknown provider", `{"providers": {"openai": {}}, "rules": {"default": {"use": "nope,m"}}}`,
			`r.json:1:60: rules.default.use: unknown provider "nope" (the routes file names: openai)`},
		{"a provider entry is wrong", `{"providers": {"a": {"provider": "nope"}}, "rules": {"default": "a,m"}}`,
			`r.json:1:34: providers.a: unknown provider "nope" (the atlas has: anthropic, azure, gemini, openai)`},
	}
	for _, c := range cases {
		_, err := LoadRoutes("r.json", []byte(c.file), testAtlas, testKeys)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got\n%v\nwant\n%s", c.name, err, c.want)
		}
	}
	_, err := LoadRoutes("r.json", []byte(`{"providers": {}, "rules": {"default": "foo,m"}}`), testAtlas, testKeys)
	if err == nil || !strings.Contains(err.Error(), `rules.default: unknown provider "foo" (the routes file names no provider)`) || strings.Contains(err.Error(), "names: )") {
		t.Errorf("no provider: %v", err)
	}
}

// threeUpstreams is a routes rig: A speaks OpenAI Chat, B Anthropic, C
// Gemini; the client speaks Anthropic (Claude Code).
type routesRig struct {
	a, b, c *fakellm.Server
	proxy   *httptest.Server
	router  *Router
	mu      sync.Mutex
	records []RouteRecord
}

const chatOK = `{"id":"c1","model":"gpt-a","choices":[{"index":0,"message":{"role":"assistant","content":"from A"},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":2}}`
const antOK = `{"id":"m1","type":"message","role":"assistant","model":"claude-b","content":[{"type":"text","text":"from B"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":3}}`
const gemOK = `{"candidates":[{"content":{"role":"model","parts":[{"text":"from C"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":13,"candidatesTokenCount":4}}`

func newRoutesRig(t *testing.T, routes string, mod func(*RouterConfig)) *routesRig {
	t.Helper()
	g := &routesRig{}
	for _, s := range []**fakellm.Server{&g.a, &g.b, &g.c} {
		up, err := fakellm.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { up.Close() })
		*s = up
	}
	g.a.Always(fakellm.Reply{Body: chatOK})
	g.b.Always(fakellm.Reply{Body: antOK})
	g.c.Always(fakellm.Reply{Body: gemOK})
	routes = strings.NewReplacer("{A}", g.a.URL+"/v1", "{B}", g.b.URL, "{C}", g.c.URL).Replace(routes)
	rt, err := LoadRoutes("routes.json", []byte(routes), testAtlas, testKeys)
	if err != nil {
		t.Fatal(err)
	}
	rc := RouterConfig{Routes: rt, Signals: testSignals, Harness: "claude-code", Base: Config{Token: token},
		Record: func(r RouteRecord) { g.mu.Lock(); g.records = append(g.records, r); g.mu.Unlock() }}
	if mod != nil {
		mod(&rc)
	}
	g.router, err = NewRouter(rc)
	if err != nil {
		t.Fatal(err)
	}
	g.proxy = httptest.NewServer(g.router)
	t.Cleanup(g.proxy.Close)
	return g
}

const threeRoutes = `{
  "providers": {
    "a": {"provider": "openai", "baseURL": "{A}"},
    "b": {"provider": "anthropic", "baseURL": "{B}"},
    "c": {"provider": "gemini", "baseURL": "{C}"}
  },
  "rules": {
    "default": "b,claude-b",
    "background": {"use": "a,gpt-a", "fallbacks": ["default"]},
    "longContext": {"use": "c,gemini-c", "threshold": 2000},
    "think": "c,gemini-think",
    "webSearch": "a,gpt-search",
    "image": "c,gemini-vision",
    "custom": [
      {"name": "opus", "model": "opus", "use": "a,gpt-big"},
      {"name": "tagged", "header": "X-Route", "value": "^fast$", "use": "c,gemini-fast"}
    ]
  }
}`

// record is the i-th route record, waited for: the router records a
// request after its answer has gone to the client.
func (g *routesRig) record(t *testing.T, i int) RouteRecord {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		n := len(g.records)
		var r RouteRecord
		if i < n {
			r = g.records[i]
		}
		g.mu.Unlock()
		if i < n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route record #%d after 10 s (%d records)", i, n)
		}
	}
}

func (g *routesRig) send(t *testing.T, body string, hdr map[string]string) (int, string) {
	t.Helper()
	h := map[string]string{"X-Api-Key": token}
	for k, v := range hdr {
		h[k] = v
	}
	return post(t, g.proxy.URL+"/v1/messages", body, h)
}

// TestRouterRules: each rule sends the request to its provider and model,
// in that provider's protocol, and the answer comes back in the client's.
func TestRouterRules(t *testing.T) {
	g := newRoutesRig(t, threeRoutes, nil)
	tools := `,"tools":[{"name":"Bash","input_schema":{"type":"object"}}]`
	cases := []struct {
		name, body string
		hdr        map[string]string
		up         *fakellm.Server
		rule       string
		model      string // in the upstream body (or path, for Gemini)
		answer     string
	}{
		{"main turn", `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"hi"}]` + tools + `}`, nil, g.b, "default", `"model":"claude-b"`, "from B"},
		{"background (no tools)", `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"title this"}]}`, nil, g.a, "background", `"model":"gpt-a"`, "from A"},
		{"background (haiku)", `{"model":"claude-haiku-4-5","max_tokens":10,"messages":[{"role":"user","content":"x"}]` + tools + `}`, nil, g.a, "background", `"model":"gpt-a"`, "from A"},
		{"long context", `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("long ", 2000) + `"}]` + tools + `}`, nil, g.c, "longContext", "gemini-c", "from C"},
		{"think", `{"model":"claude-sonnet","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]` + tools + `}`, nil, g.c, "think", "gemini-think", "from C"},
		{"adaptive is not think", `{"model":"claude-sonnet","max_tokens":2000,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"}]` + tools + `}`, nil, g.b, "default", `"model":"claude-b"`, "from B"},
		{"web search", `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"news"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search","max_uses":5}]}`, nil, g.a, "webSearch", `"model":"gpt-search"`, "from A"},
		{"image", `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"text","text":"what is this"}]}]` + tools + `}`, nil, g.c, "image", "gemini-vision", "from C"},
		{"custom model", `{"model":"claude-opus-4-1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]` + tools + `}`, nil, g.a, "opus", `"model":"gpt-big"`, "from A"},
		{"custom header", `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"hi"}]` + tools + `}`, map[string]string{"X-Route": "fast"}, g.c, "tagged", "gemini-fast", "from C"},
		{"direct provider,model", `{"model":"c,gemini-direct","max_tokens":10,"messages":[{"role":"user","content":"title"}]}`, nil, g.c, "direct", "gemini-direct", "from C"},
	}
	for i, c := range cases {
		before := len(c.up.Requests())
		st, b := g.send(t, c.body, c.hdr)
		if st != 200 || !strings.Contains(b, c.answer) {
			t.Errorf("%s: %d %s", c.name, st, b)
			continue
		}
		rs := c.up.Requests()
		if len(rs) != before+1 {
			t.Errorf("%s: the upstream got %d requests, want 1", c.name, len(rs)-before)
			continue
		}
		q := rs[len(rs)-1]
		if !strings.Contains(string(q.Body), c.model) && !strings.Contains(q.Path, c.model) {
			t.Errorf("%s: upstream %s %s lacks %s", c.name, q.Path, q.Body, c.model)
		}
		if rec := g.record(t, i); rec.Rule != c.rule || rec.Status != 200 || rec.Attempts != 1 || rec.InputTokens == 0 || rec.Client != Anthropic || rec.Harness != "claude-code" {
			t.Errorf("%s: record %+v, want rule %s", c.name, rec, c.rule)
		}
	}
}

// TestRouterFallback: A answering 429 sends the request on to B within
// the same call; every upstream failing gives the client its protocol's
// error, for a stream too.
func TestRouterFallback(t *testing.T) {
	g := newRoutesRig(t, threeRoutes, nil)
	g.a.Script(fakellm.Reply{Status: 429, Body: `{"error":{"message":"slow down","type":"rate_limit"}}`})
	st, b := g.send(t, `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"title"}]}`, nil)
	if st != 200 || !strings.Contains(b, "from B") {
		t.Fatalf("fallback: %d %s", st, b)
	}
	if len(g.a.Requests()) != 1 || len(g.b.Requests()) != 1 {
		t.Errorf("A got %d, B got %d requests, want 1 each", len(g.a.Requests()), len(g.b.Requests()))
	}
	if r := g.record(t, 0); r.Provider != "b" || r.Attempts != 2 || len(r.Failed) != 1 || r.Failed[0] != "a,gpt-a" {
		t.Errorf("record %+v", r)
	}

	// Both fail: the last answer (B's 503, as Anthropic's overloaded 529) reaches the client.
	g.a.Script(fakellm.Reply{Status: 500, Body: `{"error":{"message":"boom"}}`})
	g.b.Script(fakellm.Reply{Status: 503, Body: `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`})
	st, b = g.send(t, `{"model":"claude-sonnet","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"title"}]}`, nil)
	if st != 529 || !strings.Contains(b, `"type":"error"`) || !strings.Contains(b, "busy") {
		t.Errorf("all failing: %d %s", st, b)
	}
}

// TestRouterFallbackLatency: an attempt that failed over keeps its own
// latency in the record (FailedMS, beside Failed), so that the stats of
// its provider show how long it took; the record's LatencyMS stays the
// whole request's.
func TestRouterFallbackLatency(t *testing.T) {
	const wait = 40 * time.Millisecond
	for _, status := range []int{429, 500} {
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			time.Sleep(wait)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"not now"}}`)
		}))
		defer slow.Close()
		g := newRoutesRig(t, strings.Replace(threeRoutes, `"{A}"`, `"`+slow.URL+`/v1"`, 1), nil)
		st, b := g.send(t, `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"title"}]}`, nil)
		if st != 200 || !strings.Contains(b, "from B") {
			t.Fatalf("%d: fallback: %d %s", status, st, b)
		}
		r := g.record(t, 0)
		if len(r.Failed) != 1 || len(r.FailedMS) != 1 {
			t.Fatalf("%d: record %+v, want one failed attempt with its latency", status, r)
		}
		if ms := r.FailedMS[0]; ms < float64(wait.Milliseconds()) || ms > r.LatencyMS {
			t.Errorf("%d: failed attempt took %v ms, want at least %v and at most the request's %v ms", status, ms, wait.Milliseconds(), r.LatencyMS)
		}
	}
}

// TestRouteRecordSentModel: the record names the model sent upstream,
// the rule's alias beside it; a failed attempt is named by the model it
// sent too.
func TestRouteRecordSentModel(t *testing.T) {
	routes := strings.Replace(threeRoutes, `"default": "b,claude-b"`, `"default": "b,sonnet"`, 1)
	routes = strings.Replace(routes, `"background": {"use": "a,gpt-a"`, `"background": {"use": "a,mini"`, 1)
	g := newRoutesRig(t, routes, func(rc *RouterConfig) {
		for name, alias := range map[string][2]string{"b": {"sonnet", "claude-sonnet-4-5"}, "a": {"mini", "gpt-4.1-mini"}} {
			p := rc.Routes.Providers[name]
			p.Models = map[string]string{alias[0]: alias[1]}
			rc.Routes.Providers[name] = p
		}
	})
	tools := `,"tools":[{"name":"Bash","input_schema":{"type":"object"}}]`
	if st, b := g.send(t, `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]`+tools+`}`, nil); st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	if q := g.b.Requests()[0]; !strings.Contains(string(q.Body), `"model":"claude-sonnet-4-5"`) {
		t.Fatalf("upstream got %s", q.Body)
	}
	if r := g.record(t, 0); r.Model != "claude-sonnet-4-5" || r.Alias != "sonnet" {
		t.Errorf("record model %q alias %q, want claude-sonnet-4-5 and sonnet", r.Model, r.Alias)
	}
	// Background: a,mini fails, then default's b,sonnet answers.
	g.a.Script(fakellm.Reply{Status: 429, Body: `{"error":{"message":"slow down"}}`})
	if st, b := g.send(t, `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"title"}]}`, nil); st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	if r := g.record(t, 1); r.Model != "claude-sonnet-4-5" || len(r.Failed) != 1 || r.Failed[0] != "a,gpt-4.1-mini" {
		t.Errorf("record %+v, want model claude-sonnet-4-5, failed [a,gpt-4.1-mini]", r)
	}
	// A model that is no alias is sent, and recorded, as the rule names it.
	g2 := newRoutesRig(t, threeRoutes, nil)
	g2.send(t, `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]`+tools+`}`, nil)
	if r := g2.record(t, 0); r.Model != "claude-b" || r.Alias != "" {
		t.Errorf("record model %q alias %q, want claude-b and none", r.Model, r.Alias)
	}
}

// TestRouterTimeoutFallback: an upstream that sends no headers within the
// retry timeout is left for the next fallback.
func TestRouterTimeoutFallback(t *testing.T) {
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stuck.Close()
	defer close(release)
	routes := strings.Replace(threeRoutes, `"{A}"`, `"`+stuck.URL+`/v1"`, 1)
	routes = strings.Replace(routes, `"rules"`, `"retry": {"attempts": 2, "timeout": "50ms"}, "rules"`, 1)
	g := newRoutesRig(t, routes, nil)
	st, b := g.send(t, `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"title"}]}`, nil)
	if st != 200 || !strings.Contains(b, "from B") {
		t.Fatalf("%d %s", st, b)
	}
}

// TestRouterAttempts: the retry budget bounds the calls of one request.
func TestRouterAttempts(t *testing.T) {
	routes := strings.Replace(threeRoutes, `"rules"`, `"retry": {"attempts": 1}, "rules"`, 1)
	g := newRoutesRig(t, routes, nil)
	g.a.Script(fakellm.Reply{Status: 429, Body: `{"error":{"message":"slow down"}}`})
	st, _ := g.send(t, `{"model":"claude-sonnet","max_tokens":10,"messages":[{"role":"user","content":"title"}]}`, nil)
	if st != 429 || len(g.b.Requests()) != 0 {
		t.Errorf("status %d, B got %d requests", st, len(g.b.Requests()))
	}
}

// TestRouterAuth: the token is checked before anything is routed.
func TestRouterAuth(t *testing.T) {
	g := newRoutesRig(t, threeRoutes, nil)
	st, _ := post(t, g.proxy.URL+"/v1/messages", `{"model":"x","messages":[]}`, map[string]string{"X-Api-Key": "wrong"})
	if st != 401 || len(g.a.Requests())+len(g.b.Requests())+len(g.c.Requests()) != 0 {
		t.Errorf("status %d", st)
	}
}

// TestRouterLogsRefused: a request refused before a rule is chosen (a
// wrong token, a body over the limit) has its log line, as without
// routes; it reaches no upstream and is not a routed request's record.
func TestRouterLogsRefused(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	g := newRoutesRig(t, threeRoutes, func(rc *RouterConfig) {
		rc.Base.MaxBody = 64
		rc.Base.Log = slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil))
	})
	if st, _ := post(t, g.proxy.URL+"/v1/messages", `{}`, map[string]string{"X-Api-Key": "wrong"}); st != 401 {
		t.Errorf("wrong token: %d", st)
	}
	if st, _ := post(t, g.proxy.URL+"/v1/chat/completions", `{"model":"x","messages":[{"role":"user","content":"`+strings.Repeat("a", 100)+`"}]}`, map[string]string{"Authorization": "Bearer " + token}); st != 413 {
		t.Errorf("large body: %d", st)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct {
			Msg, Route, Error string
			Status            int
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "request" {
			got = append(got, fmt.Sprintf("%s %d %v", l.Route, l.Status, l.Error != ""))
		}
	}
	if want := []string{"/v1/messages 401 true", "/v1/chat/completions 413 true"}; !slices.Equal(got, want) {
		t.Errorf("request lines %q, want %q\n%s", got, want, logs.String())
	}
	if n := len(g.a.Requests()) + len(g.b.Requests()) + len(g.c.Requests()); n != 0 {
		t.Errorf("%d upstream calls", n)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestRouterNoHarness: without a known harness, no background signal applies.
func TestRouterNoHarness(t *testing.T) {
	g := newRoutesRig(t, threeRoutes, func(rc *RouterConfig) { rc.Harness = "" })
	rule, _ := g.router.Classify(Anthropic, "", []byte(`{"model":"claude-sonnet","messages":[]}`), http.Header{}, "")
	if rule != RuleDefault {
		t.Errorf("rule %s", rule)
	}
}

// TestRecordFile: records are JSON lines.
func TestRecordFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.jsonl")
	f, _ := os.Create(p)
	rf := NewRecordFile(f, nil)
	rf.Record(RouteRecord{Rule: "default", Provider: "b", Status: 200})
	rf.Record(RouteRecord{Rule: "background", Provider: "a", Status: 429})
	rf.Close()
	f.Close()
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var r RouteRecord
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &r) != nil || r.Rule != "background" {
		t.Errorf("%q", b)
	}
}

// BenchmarkClassify: choosing a rule for a small request with every
// signal rule set.
func BenchmarkClassify(b *testing.B) {
	rt, err := LoadRoutes("r.json", []byte(strings.NewReplacer("{A}", "http://a/v1", "{B}", "http://b", "{C}", "http://c").Replace(threeRoutes)), testAtlas, testKeys)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewRouter(RouterConfig{Routes: rt, Signals: testSignals, Harness: "claude-code"})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"model":"gpt-x","max_tokens":100,"system":"be brief","messages":[{"role":"user","content":"list files"}],"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]}`)
	h := http.Header{}
	for b.Loop() {
		r.Classify(Anthropic, "claude-code", body, h, "")
	}
}

// TestTopMembers: the byte scanner splits what encoding/json decodes, and
// gives up on what it rejects.
func TestTopMembers(t *testing.T) {
	for _, in := range topMembersCases {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		checkTopMembers(t, in, want)
	}
	for _, bad := range []string{`[1]`, `{"a":}`, `{"a":"b"`, `{"a" "b"}`, `{"a":[1}`, ``, `{"a":"b\"}`} {
		got := make([][]byte, 1)
		if topMembers([]byte(bad), []string{"a"}, got) || got[0] != nil {
			t.Errorf("%q: split as %q", bad, got[0])
		}
	}
}

var topMembersCases = []string{
	`{"model":"m","n":1.5e3,"t":true,"x":null,"tools":[{"a":"}]\"{"},[]],"s":"a\"b\\","o":{"k":{"l":[1,2]}},"e":"\\\\"}`,
	` { "a" : "b" , "c\u0041" : [ ] } `,
	`{}`,
	// Strings past the 16 bytes skipString reads one by one, with escapes
	// on either side of that border.
	`{"long":"0123456789abcd\\\"ef\"gh\\","b":"0123456789abcde\\","c":"0123456789abcdef\\\\\"x\""}`,
}

// FuzzTopMembers: on any object encoding/json reads, the byte scanner
// splits the same members.
func FuzzTopMembers(f *testing.F) {
	for _, in := range topMembersCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var want map[string]json.RawMessage
		if !utf8.ValidString(in) || json.Unmarshal([]byte(in), &want) != nil {
			return // encoding/json reads bad UTF-8 as U+FFFD; the signals' names are ASCII
		}
		var keys []string
		eachMember([]byte(in), func(k, _ []byte) bool { keys = append(keys, string(k)); return false })
		if len(keys) != len(want) {
			return // a repeated name: encoding/json keeps the last, folding case
		}
		checkTopMembers(t, in, want)
	})
}

func checkTopMembers(t *testing.T, in string, want map[string]json.RawMessage) {
	t.Helper()
	names := []string{"absent"}
	for k := range want {
		names = append(names, k)
	}
	got := make([][]byte, len(names))
	if !topMembers([]byte(in), names, got) {
		t.Errorf("%s: not split", in)
	}
	if got[0] != nil && want["absent"] == nil {
		t.Errorf("%s: absent = %s", in, got[0])
	}
	for i, k := range names[1:] {
		if strings.TrimSpace(string(got[i+1])) != strings.TrimSpace(string(want[k])) {
			t.Errorf("%s: %s = %s, want %s", in, k, got[i+1], want[k])
		}
		if m := member([]byte(in), k); strings.TrimSpace(string(m)) != strings.TrimSpace(string(want[k])) {
			t.Errorf("%s: member %s = %s, want %s", in, k, m, want[k])
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestRecordFileLoss: a record that cannot be written is counted and
// reported, never dropped silently.
func TestRecordFileLoss(t *testing.T) {
	var log strings.Builder
	rf := NewRecordFile(failWriter{}, slog.New(slog.NewTextHandler(&log, nil)))
	rf.Record(RouteRecord{Rule: "default"})
	rf.Record(RouteRecord{Rule: "think"})
	err := rf.Close()
	if err == nil || !strings.Contains(err.Error(), "2 records lost") || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("close: %v", err)
	}
	if !strings.Contains(log.String(), "disk full") {
		t.Errorf("log: %q", log.String())
	}
	rf.Record(RouteRecord{Rule: "late"})
	if !strings.Contains(log.String(), "after close") {
		t.Errorf("a record after close: log %q", log.String())
	}
}

// TestMatcherWalk: paths walked in the body's bytes, as encoding/json
// would read them.
func TestMatcherWalk(t *testing.T) {
	cases := []struct {
		m    SignalMatch
		body string
		want bool
	}{
		{SignalMatch{Path: "a.b", Present: "false"}, `{"a":{"c":1}}`, true},
		{SignalMatch{Path: "a.b", Present: "false"}, `{"a":{"b":[]}}`, true},
		{SignalMatch{Path: "a.b", Present: "false"}, `{"a":{"b":[0]}}`, false},
		{SignalMatch{Path: "a[].b", Present: "true"}, `{"a":[{"b":null},{"b":{"x":1}}]}`, true},
		{SignalMatch{Path: "a[].b", Present: "true"}, `{"a":[{"b":null},{"b":{ }}]}`, false},
		{SignalMatch{Path: "a[].b[].c", Values: []string{`"x"`}}, `{"a":[{"b":[{"c":"y"}]},{"z":"x"},{"b":[{"d":"x"},{"c": "x" }]}]}`, true},
		{SignalMatch{Path: "a[].b[].c", Values: []string{`"x"`}}, `{"a":[{"b":[{"c":"y"}]},{"c":"x"}]}`, false},
		{SignalMatch{Path: "a.c", Prefix: "web_"}, `{"a":{"b":"web_x","c":"web_search"}}`, true},
		{SignalMatch{Path: "a.c", Prefix: "web_"}, `{"a":{"b":"web_x","c":"\"web_"}}`, false},
		{SignalMatch{Path: "m", Pattern: "(?i)haiku"}, `{"m":"claude-\u0048aiku"}`, true},
		{SignalMatch{Path: "a.b", Values: []string{"true"}}, `{"x":"\"b\": true","a":{"b":false}}`, false},
	}
	for _, c := range cases {
		cs, err := compileSignals(Signals{Think: map[string][]SignalMatch{"p": {c.m}}})
		if err != nil {
			t.Fatal(err)
		}
		v := splitBody([]byte(c.body), cs.tops, make([][]byte, len(cs.tops)), "")
		if got := anyHolds(cs.think["p"], &v); got != c.want {
			t.Errorf("%+v on %s: %v, want %v", c.m, c.body, got, c.want)
		}
	}
}

// TestSkipString holds skipString (its first 16 bytes one by one, then
// quote to quote) to a plain byte-by-byte reading, for every text of up
// to 11 bytes over a letter, a quote and a backslash, after padding that
// moves it across the 16-byte boundary, and with text after it or none.
func TestSkipString(t *testing.T) {
	ref := func(b []byte, i int) int {
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '"':
				return j + 1
			case '\\':
				j++
			}
		}
		return -1
	}
	alphabet := []byte{'a', '"', '\\'}
	var texts [][]byte
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		texts = append(texts, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(append(append([]byte(nil), prefix...), c), n-1)
		}
	}
	gen(nil, 11)
	for n := 0; n <= 40; n++ { // runs of backslashes from the first byte on
		texts = append(texts, []byte(strings.Repeat(`\`, n)+`"`), []byte(strings.Repeat(`\`, n)+`x"`))
	}
	for _, pad := range []int{0, 3, 7, 8, 12, 14, 15, 16, 25} {
		for _, tail := range []string{"", `,"k":1}`} {
			for _, text := range texts {
				b := append(append([]byte(`"`+strings.Repeat("x", pad)), text...), tail...)
				if got, want := skipString(b, 0), ref(b, 0); got != want {
					t.Fatalf("skipString(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// TestCheckBaseURL: a base URL no request could reach (no http or https
// scheme, no host) is refused when the gateway is made, not answered with
// a 502 "unsupported protocol scheme" on every request.
func TestCheckBaseURL(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:11434/v1", "https://api.openai.com/v1", "http://localhost"} {
		if err := CheckBaseURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "notaurl", "localhost:8080", "api.openai.com/v1", "ftp://h/v1", "http://", "http:///v1", "http://[::1"} {
		if err := CheckBaseURL(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
		_, err := New(Config{Provider: Provider{ID: "openai", Protocol: OpenAIChat, BaseURL: bad, Auth: "bearer"}})
		if err == nil || !strings.Contains(err.Error(), "want an http:// or https:// URL") {
			t.Errorf("New with base URL %q: %v", bad, err)
		}
	}
}

// The flags that decide what a gateway serves must go together and name
// what the atlas knows: sitter proxy and sitter-proxy refuse the same.
func TestCheckServeFlags(t *testing.T) {
	known := Known{Providers: []string{"anthropic", "openai"}, Harnesses: []string{"claude-code", "codex"},
		HarnessID: func(n string) (string, bool) {
			if n == "claude" {
				n = "claude-code"
			}
			return n, n == "claude-code" || n == "codex"
		}}
	for _, c := range []struct {
		f    ServeFlags
		want string // "" for none
	}{
		{ServeFlags{Provider: "openai"}, ""},
		{ServeFlags{Routes: "r.json", Harness: "claude-code", Record: "x.jsonl"}, ""},
		{ServeFlags{Routes: "r.json", Harness: "claude"}, ""},
		{ServeFlags{}, "--provider or --routes is required"},
		{ServeFlags{Provider: "mars"}, `unknown provider "mars" (known: `},
		{ServeFlags{Provider: "openai", Record: "x.jsonl"}, "--harness and --record go with --routes"},
		{ServeFlags{Routes: "r.json", Model: "m"}, "--routes names the providers and models"},
		{ServeFlags{Routes: "r.json", Harness: "claud"}, `--harness: unknown harness "claud" (known: `},
	} {
		err := CheckServeFlags(c.f, known)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("CheckServeFlags(%+v) = %v, want %q", c.f, err, c.want)
		}
	}
}
