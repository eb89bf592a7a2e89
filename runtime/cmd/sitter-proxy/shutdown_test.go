package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestShutdownEndsRequestsInFlight: requests still waiting on a slow
// upstream when the grace period runs out get their protocol's error (a
// JSON error, or an error event on a stream already under way), not an
// empty reply, and each is recorded, all within the grace period.
// Without routes, the same (the Anthropic stream passed through gets its
// error event appended).
func TestShutdownEndsRequestsInFlight(t *testing.T) {
	defer func(g time.Duration) { shutdownGrace = g }(shutdownGrace)
	shutdownGrace = time.Second
	t.Run("routes", func(t *testing.T) { shutdownInFlight(t, true) })
	t.Run("provider", func(t *testing.T) { shutdownInFlight(t, false) })
}

func shutdownInFlight(t *testing.T, routed bool) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":0}}}\n\n")
			w.(http.Flusher).Flush()
		}
		arrived.Done()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	dir := t.TempDir()
	routes, record := filepath.Join(dir, "routes.json"), filepath.Join(dir, "routes.jsonl")
	os.WriteFile(routes, []byte(`{"providers": {"anthropic": {"baseURL": "`+slow.URL+`"}}, "rules": {"default": "anthropic,claude-x"}}`), 0o600)
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "SITTER_STATE_DIR": dir}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		args := []string{"--routes", routes, "--record", record, "--token", "tok"}
		if !routed {
			args = []string{"--provider", "anthropic", "--upstream", slow.URL, "--token", "tok"}
		}
		done <- run(ctx, args, func(k string) string { return env[k] }, pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	url := strings.TrimPrefix(strings.TrimSpace(line), "SITTER_PROXY_URL=")
	type answer struct {
		status int
		body   string
		err    error
	}
	send := func(body string) chan answer {
		ch := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(body))
			req.Header.Set("X-Api-Key", "tok")
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				ch <- answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			ch <- answer{resp.StatusCode, string(b), err}
		}()
		return ch
	}
	plain := send(`{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	stream := send(`{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	arrived.Wait()
	start := time.Now()
	cancel()
	a := <-plain
	if a.err != nil || a.status != 529 || !strings.Contains(a.body, `"type":"overloaded_error"`) || !strings.Contains(a.body, "shut down") {
		t.Errorf("plain request: %d %q %v; want Anthropic's 529 error saying the proxy shut down", a.status, a.body, a.err)
	}
	a = <-stream
	if a.err != nil || a.status != 200 || !strings.Contains(a.body, "event: message_start") || !strings.Contains(a.body, "event: error") || !strings.Contains(a.body, "shut down") {
		t.Errorf("stream: %d %q %v; want its error event saying the proxy shut down", a.status, a.body, a.err)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if d := time.Since(start); d > shutdownGrace+500*time.Millisecond {
		t.Errorf("stopped after %s, grace %s", d, shutdownGrace)
	}
	if !strings.Contains(stderr.String(), "shut down") {
		t.Errorf("log: %s", stderr.String())
	}
	if !routed {
		return
	}
	b, _ := os.ReadFile(record)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("record: %q, want 2 lines", b)
	}
	for _, l := range lines {
		var r struct {
			Status int
			Error  string
			Stream bool
		}
		json.Unmarshal([]byte(l), &r)
		if !strings.Contains(r.Error, "shut down") || r.Stream && r.Status != 200 || !r.Stream && r.Status != 529 {
			t.Errorf("record %s: want the shutdown error", l)
		}
	}
}
