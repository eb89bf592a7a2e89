package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// newHangingServer accepts connections on 127.0.0.1 and never answers.
func newHangingServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/v1"
}

// TestClientLeftIsNotAnUpstreamFailure: a client that gives up while the
// upstream has not answered yet is logged (and recorded, with routes) as
// the client's doing (499), not as a 502 "upstream: … context canceled"
// that blames the provider.
func TestClientLeftIsNotAnUpstreamFailure(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	s, err := New(Config{Provider: Provider{ID: "openai", Protocol: OpenAIChat, BaseURL: newHangingServer(t), Auth: "bearer", Key: "k"},
		Token: token, Log: slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(s)
	defer front.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", front.URL+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Api-Key", token)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("want the client's deadline to end the request")
	}
	var l struct {
		Status int
		Error  string
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		line := logs.String()
		mu.Unlock()
		if line != "" {
			json.Unmarshal([]byte(line), &l)
			break
		}
	}
	if l.Status != 499 || !strings.Contains(l.Error, "client closed") {
		t.Errorf("logged status %d error %q, want 499 and the client's leaving", l.Status, l.Error)
	}
}
