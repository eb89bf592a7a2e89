package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/runtime/internal/fakellm"
)

// gateHandler is a slog handler whose every record waits for gate (at
// most a minute): a request's log line that blocked its answer would
// hold the client until then.
type gateHandler struct{ gate <-chan struct{} }

func (h gateHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h gateHandler) Handle(context.Context, slog.Record) error {
	select {
	case <-h.gate:
	case <-time.After(time.Minute):
	}
	return nil
}
func (h gateHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h gateHandler) WithGroup(string) slog.Handler      { return h }

// answered sends body to url and fails unless the whole answer, with its
// Content-Length, arrives while the proxy's bookkeeping for the request
// (its log line, its route record) is still held back; then it lets the
// bookkeeping go.
func answered(t *testing.T, url, body string, gate chan struct{}) {
	t.Helper()
	defer close(gate)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("X-Api-Key", token)
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("the answer waited for the request's log line or route record: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the answer's body waited for the request's log line or route record: %v", err)
	}
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(b)) || len(resp.TransferEncoding) > 0 {
		t.Fatalf("status %d, Content-Length %d, Transfer-Encoding %v for a body of %d bytes: %s", resp.StatusCode, resp.ContentLength, resp.TransferEncoding, len(b), b)
	}
}

// TestAnswerBeforeBookkeeping: a translated JSON answer reaches the client
// before the proxy writes the request's log line or its route record,
// which are not the client's wait, and keeps its Content-Length.
func TestAnswerBeforeBookkeeping(t *testing.T) {
	const body = `{"model":"m-1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	t.Run("log", func(t *testing.T) {
		gate := make(chan struct{})
		g := newRig(t, OpenAIChat, func(c *Config) { c.Log = slog.New(gateHandler{gate}) })
		g.up.Always(fakellm.Reply{Body: string(chatAdapter{}.encodeResponse(answer()))})
		answered(t, g.proxy.URL+"/v1/messages", body, gate)
	})
	t.Run("record", func(t *testing.T) {
		// A request without tools is background (testSignals): its rule
		// has a fallback, so the answer passes through the buffering
		// writer of an attempt that a fallback could still replace.
		gate := make(chan struct{})
		g := newRoutesRig(t, threeRoutes, func(rc *RouterConfig) {
			rc.Record = func(RouteRecord) {
				select {
				case <-gate:
				case <-time.After(time.Minute):
				}
			}
		})
		answered(t, g.proxy.URL+"/v1/messages", body, gate)
	})
}
