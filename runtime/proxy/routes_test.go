package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"sitter.dev/sitter/runtime/internal/fakellm"
)

func post(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestCountTokens: passed through to a same-protocol upstream, estimated
// locally otherwise (never an inference call).
func TestCountTokens(t *testing.T) {
	body := `{"model":"m","system":"` + strings.Repeat("s", 400) + `","messages":[{"role":"user","content":"hello"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`
	g := newRig(t, OpenAIChat, nil)
	st, b := post(t, g.proxy.URL+"/v1/messages/count_tokens?beta=true", body, map[string]string{"X-Api-Key": token})
	if st != 200 || !strings.HasPrefix(b, `{"input_tokens":1`) || len(g.up.Requests()) != 0 {
		t.Errorf("estimate: %d %s, %d upstream calls", st, b, len(g.up.Requests()))
	}
	g = newRig(t, Anthropic, nil)
	g.up.Script(fakellm.Reply{Body: `{"input_tokens":42}`})
	st, b = post(t, g.proxy.URL+"/v1/messages/count_tokens?beta=true", body, map[string]string{"X-Api-Key": token})
	if st != 200 || b != `{"input_tokens":42}` || g.up.Requests()[0].Path != "/v1/messages/count_tokens" {
		t.Errorf("passthrough: %d %s %+v", st, b, g.up.Requests())
	}
	g = newRig(t, OpenAIChat, nil)
	st, b = post(t, g.proxy.URL+"/v1beta/models/gemini-x:countTokens", `{"contents":[{"parts":[{"text":"hello there"}]}]}`, map[string]string{"X-Goog-Api-Key": token})
	if st != 200 || !strings.HasPrefix(b, `{"totalTokens":`) {
		t.Errorf("gemini count: %d %s", st, b)
	}
}

// TestGeminiJSONArrayStream: without alt=sse Gemini streams a JSON array.
func TestGeminiJSONArrayStream(t *testing.T) {
	g := newRig(t, OpenAIChat, nil)
	g.up.Script(fakellm.Reply{Chunks: []string{chatChunk(`{"content":"hi"}`, "stop"), "data: [DONE]\n\n"}})
	st, b := post(t, g.proxy.URL+"/v1beta/models/m:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`, map[string]string{"X-Goog-Api-Key": token})
	if st != 200 || !strings.HasPrefix(b, "[{") || !strings.HasSuffix(b, "}]") || !strings.Contains(b, `"text":"hi"`) {
		t.Errorf("%d %s", st, b)
	}
	if q := g.up.Requests()[0]; q.Path != "/v1/chat/completions" || !strings.Contains(string(q.Body), `"model":"m"`) || !strings.Contains(string(q.Body), `"stream":true`) {
		t.Errorf("upstream: %s %s", q.Path, q.Body)
	}
}

// TestIdleTimeout: an upstream silent after its first event ends the
// stream with the ingress protocol's error frame.
func TestIdleTimeout(t *testing.T) {
	g := newRig(t, OpenAIChat, func(c *Config) { c.IdleTimeout = 20e6 })
	gate := make(chan struct{}) // never opened: the upstream stalls
	defer close(gate)
	g.up.Script(fakellm.Reply{Gate: gate, Chunks: []string{chatChunk(`{"content":"a"}`, ""), "data: [DONE]\n\n"}})
	resp := g.call(t, Anthropic, baseRequest(true))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "event: error") || !strings.Contains(string(b), "upstream silent") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

// TestFirstByteTimeout: no response headers in time → 504 in the
// ingress protocol's shape, before anything was committed.
func TestFirstByteTimeout(t *testing.T) {
	g := newRig(t, OpenAIChat, func(c *Config) { c.FirstByteTimeout = 20e6 })
	// A listener that accepts and never answers.
	hang := newHangingServer(t)
	g.srv.cfg.Provider.BaseURL = hang
	resp := g.call(t, Gemini, baseRequest(false))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 504 || !strings.Contains(string(b), `"status":"DEADLINE_EXCEEDED"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

// TestModelOverride: --model rewrites the model even on a same-protocol
// route; aliases resolve.
func TestModelOverride(t *testing.T) {
	g := newRig(t, OpenAIChat, func(c *Config) { c.Model = "sonnet"; c.Provider.Models = map[string]string{"sonnet": "gpt-big"} })
	g.up.Script(fakellm.Reply{Body: string(chatAdapter{}.encodeResponse(answer()))})
	resp := g.call(t, OpenAIChat, baseRequest(false))
	io.ReadAll(resp.Body)
	if !strings.Contains(string(g.up.Requests()[0].Body), `"model":"gpt-big"`) {
		t.Errorf("%s", g.up.Requests()[0].Body)
	}
}

// TestHeaders: inbound credentials never reach the upstream; anthropic-beta
// passes only to an Anthropic upstream on the passthrough route (CCR strips
// it before a foreign upstream).
func TestHeaders(t *testing.T) {
	hdr := map[string]string{"X-Api-Key": token, "Authorization": "Bearer " + token, "Anthropic-Beta": "context-1", "Cookie": "c=1"}
	body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	for _, up := range []string{Anthropic, OpenAIChat} {
		g := newRig(t, up, nil)
		g.up.Script(fakellm.Reply{Body: string(adapterFor(up).encodeResponse(&Response{Parts: []Part{{Kind: PartText, Text: "x"}}}))})
		if st, b := post(t, g.proxy.URL+"/v1/messages?beta=true", body, hdr); st != 200 {
			t.Fatalf("%s: %d %s", up, st, b)
		}
		h := g.up.Requests()[0].Header
		if strings.Contains(h.Get("Authorization")+h.Get("X-Api-Key"), token) || h.Get("Cookie") != "" {
			t.Errorf("%s: client credentials forwarded: %v", up, h)
		}
		if got := h.Get("Anthropic-Beta"); (up == Anthropic) != (got == "context-1") {
			t.Errorf("%s: anthropic-beta %q", up, got)
		}
	}
}

// TestSilentUpstreamCommitsAtFirstPing: an upstream that answered 200 and
// then thinks in silence gets the client's headers committed and pinged
// (message_start first, as Anthropic requires) instead of an idle cut.
func TestSilentUpstreamCommitsAtFirstPing(t *testing.T) {
	g := newRig(t, OpenAIChat, func(c *Config) { c.PingInterval = 5e6 })
	gate := make(chan struct{})
	g.up.Script(fakellm.Reply{Gate: gate, Chunks: []string{": hello\n\n", chatChunk(`{"content":"late"}`, "stop"), "data: [DONE]\n\n"}})
	resp := g.call(t, Anthropic, baseRequest(true))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	buf := make([]byte, 4096)
	n, _ := io.ReadAtLeast(resp.Body, buf, len("event: message_start"))
	if !strings.HasPrefix(string(buf[:n]), "event: message_start") {
		t.Fatalf("first bytes: %q", buf[:n])
	}
	close(gate)
	got, _ := collect(t, Anthropic, io.MultiReader(strings.NewReader(string(buf[:n])), resp.Body))
	if text(got.Parts) != "late" || got.Stop != StopEnd {
		t.Errorf("%+v", got)
	}
}
