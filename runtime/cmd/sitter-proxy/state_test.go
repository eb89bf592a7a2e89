package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"sitter.dev/sitter/runtime/internal/fakellm"
)

// replica starts one gateway in front of the fake Gemini upstream and
// returns its URL.
func replica(t *testing.T, upstream string, extra ...string) string {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var stderr strings.Builder
	args := append([]string{"--provider", "gemini", "--upstream", upstream, "--token", "tok"}, extra...)
	go func() {
		done <- run(ctx, args, func(string) string { return "" }, pw, &stderr)
		pw.Close()
	}()
	t.Cleanup(func() { cancel(); <-done })
	line, err := bufio.NewReader(pr).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "SITTER_PROXY_URL=")
	if err != nil || !ok {
		t.Fatalf("replica: %q, %v; stderr %s", line, err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	return base
}

func anthropicCall(t *testing.T, base, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(body))
	req.Header.Set("X-Api-Key", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return string(b)
}

// Two replicas behind one address with --state-store: the thought
// signature Gemini gave a tool call through replica 1 goes back upstream
// when the conversation's next turn reaches replica 2. Without the store,
// replica 2 has only the sentinel.
func TestReplicasShareSignatures(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(ns.Shutdown)
	for _, shared := range []bool{true, false} {
		up, err := fakellm.Start()
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		var extra []string
		if shared {
			extra = []string{"--state-store", ns.ClientURL()}
		}
		r1, r2 := replica(t, up.URL, extra...), replica(t, up.URL, extra...)
		up.Script(fakellm.Reply{Body: `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"Bash","args":{"command":"ls"}},"thoughtSignature":"SIG-1"}]},"finishReason":"STOP"}]}`},
			fakellm.Reply{Body: `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`})
		first := anthropicCall(t, r1, `{"model":"gemini-3-pro","max_tokens":100,"messages":[{"role":"user","content":"list"}]}`)
		var msg struct {
			Content []struct{ Type, ID string }
		}
		json.Unmarshal([]byte(first), &msg)
		if len(msg.Content) != 1 || msg.Content[0].ID == "" || strings.Contains(first, "SIG-1") {
			t.Fatalf("replica 1 answered %s", first)
		}
		id := msg.Content[0].ID
		anthropicCall(t, r2, `{"model":"gemini-3-pro","max_tokens":100,"messages":[{"role":"user","content":"list"},
			{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"Bash","input":{"command":"ls"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":"a.txt"}]}]}`)
		sent := string(up.Requests()[1].Body)
		has := strings.Contains(sent, `"thoughtSignature":"SIG-1"`)
		if has != shared {
			t.Errorf("shared=%t: replica 2 sent upstream:\n%s", shared, sent)
		}
	}
}

// --state-store with a password or a token: the gateway's refusal of
// another scheme and its failure to reach the store do not print it.
func TestStateStoreURLSecretsHidden(t *testing.T) {
	for _, u := range []string{"https://me:hunter2@127.0.0.1:1", "nats://me:hunter2@127.0.0.1:1", "nats://s3cr3ttoken@127.0.0.1:1"} {
		var out, errb strings.Builder
		code := run(context.Background(), []string{"--provider", "gemini", "--upstream", "http://127.0.0.1:1", "--token", "tok", "--state-store", u},
			func(string) string { return "" }, &out, &errb)
		msg := errb.String()
		if code != 1 || !strings.Contains(msg, "--state-store") || !strings.Contains(msg, "xxxxx@127.0.0.1:1") || strings.Contains(msg, "hunter2") || strings.Contains(msg, "s3cr3ttoken") {
			t.Errorf("--state-store %s: exit %d, %q; want exit 1 naming the store without its secret", u, code, msg)
		}
	}
}
