//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// droidRPC is a Factory Droid session driven through `droid exec
// --input-format stream-jsonrpc` (the protocol its desktop and daemon
// clients speak): unlike a one-shot `droid exec`, such a session calls
// UserPromptSubmit for each message, Notification when a tool waits for
// the user's permission, and PreCompact when the client asks for a
// compaction.
type droidRPC struct {
	*jsonLines
	t      *testing.T
	in     io.WriteCloser
	nextID int
}

// startDroidRPC starts the session in project (the fake LLM as its custom
// model) and initializes it at the given autonomy level ("off" asks before
// every tool that writes).
func startDroidRPC(t *testing.T, llm *llmscript.Server, project, home string, more []string, autonomy string) *droidRPC {
	t.Helper()
	bin, env := droidSetup(t, llm, home, more)
	cmd := exec.Command(bin, "exec", "--input-format", "stream-jsonrpc", "--output-format", "stream-jsonrpc", "-m", "custom:Fake-0")
	cmd.Dir, cmd.Env = project, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start droid: %v", err)
	}
	d := &droidRPC{jsonLines: newJSONLines(), t: t, in: in}
	done := d.read(out)
	t.Cleanup(func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		<-done
		if t.Failed() {
			t.Logf("droid stderr:\n%s", stderr.String())
		}
	})
	d.call("droid.initialize_session", map[string]any{"machineId": "e2e", "cwd": project, "modelId": "custom:Fake-0", "autonomyLevel": autonomy})
	return d
}

// send writes one JSON-RPC request and returns its id.
func (d *droidRPC) send(method string, params map[string]any) string {
	d.t.Helper()
	d.nextID++
	id := strconv.Itoa(d.nextID)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "type": "request", "factoryApiVersion": "1.0.0", "id": id, "method": method, "params": params})
	if _, err := fmt.Fprintf(d.in, "%s\n", b); err != nil {
		d.t.Fatalf("write to droid: %v", err)
	}
	return id
}

// call sends a request and waits for its response, failing the test on a
// JSON-RPC error.
func (d *droidRPC) call(method string, params map[string]any) map[string]any {
	d.t.Helper()
	id := d.send(method, params)
	m := d.waitMsg(method+" response", 3*time.Minute, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
	if e, ok := m["error"]; ok {
		d.t.Fatalf("%s: %v", method, e)
	}
	r, _ := m["result"].(map[string]any)
	return r
}

// waitMsg waits until the session printed a message cond accepts.
func (d *droidRPC) waitMsg(what string, timeout time.Duration, cond func(map[string]any) bool) map[string]any {
	d.t.Helper()
	deadline := time.After(timeout)
	seen := 0
	for {
		d.mu.Lock()
		msgs := d.lines[seen:]
		seen = len(d.lines)
		d.mu.Unlock()
		for _, m := range msgs {
			if cond(m) {
				return m
			}
		}
		select {
		case <-d.notify:
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// notification is the inner notification of a droid.session_notification
// message (nil for any other message).
func notification(m map[string]any) map[string]any {
	if m["method"] != "droid.session_notification" {
		return nil
	}
	p, _ := m["params"].(map[string]any)
	n, _ := p["notification"].(map[string]any)
	return n
}

// turn sends a user message and waits for the turn to complete.
func (d *droidRPC) turn(text string) {
	d.t.Helper()
	d.call("droid.add_user_message", map[string]any{"text": text})
	d.waitMsg("the turn to complete", 3*time.Minute, func(m map[string]any) bool {
		n := notification(m)
		return n != nil && n["type"] == "agent_turn_completed"
	})
}

// TestDroidRPC: the events `droid exec` does not raise, in a JSON-RPC
// session: UserPromptSubmit (its context reaches the model, its deny keeps
// the prompt from it), Notification (a tool waiting for permission) and
// PreCompact (droid.compact_session; a deny keeps the compaction from
// happening).
func TestDroidRPC(t *testing.T) {
	fidelityNote("droid", "`UserPromptSubmit`, `Notification` and `PreCompact` are proved in a JSON-RPC session (`droid exec --input-format stream-jsonrpc`, the protocol of Droid's desktop and daemon clients): a message sent with droid.add_user_message, a tool waiting for permission at autonomy off, droid.compact_session.")
	replier := replierBundle(t, "droid")
	session := func(t *testing.T, replies map[string]string, script llmscript.Script, autonomy string) (d *droidRPC, llm *llmscript.Server, project, rec string) {
		project, home, rec := probeCase(t, "")
		for name, body := range replies {
			os.WriteFile(filepath.Join(rec, name), []byte(body), 0o644)
		}
		pluginInstall(t, replier, "droid", project, home)
		llm = startLLM(t, script)
		return startDroidRPC(t, llm, project, home, []string{"E2E_DIR=" + rec}, autonomy), llm, project, rec
	}
	t.Run("prompt-context", func(t *testing.T) {
		verified(t, "droid", "add context", "UserPromptSubmit")
		d, llm, project, rec := session(t, map[string]string{"userPromptSubmit-reply": `{"additionalContext":"CTX-PROMPT-SUBMIT-5d2c"}`}, llmscript.Text("TURN-DONE"), "high")
		d.turn("say done")
		observed(t, "droid", nativeEvents(t, "droid", project, events(t, rec), "UserPromptSubmit", "userPromptSubmit"))
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-SUBMIT-5d2c") }) {
			t.Errorf("the UserPromptSubmit context never reached the model (%d requests)", len(llm.Requests()))
			logRequests(t, llm)
		}
	})
	t.Run("prompt-deny", func(t *testing.T) {
		verified(t, "droid", "deny", "UserPromptSubmit")
		d, llm, project, rec := session(t, map[string]string{"userPromptSubmit-reply": `{"decision":"deny","reason":"REASON-PROMPT-BLOCKED"}`}, llmscript.ShellThenText("echo leaked > leaked.txt", "TURN-DONE"), "high")
		d.call("droid.add_user_message", map[string]any{"text": promptMarker + ": write a file"})
		d.waitMsg("the refused prompt to be discarded", 2*time.Minute, func(m map[string]any) bool {
			n := notification(m)
			return n != nil && (n["type"] == "queued_messages_discarded" || n["type"] == "agent_turn_completed")
		})
		time.Sleep(3 * time.Second)
		observed(t, "droid", nativeEvents(t, "droid", project, events(t, rec), "UserPromptSubmit", "userPromptSubmit"))
		if llm.Any(func(q *llmscript.Request) bool { return q.Contains(promptMarker) }) {
			t.Errorf("the denied prompt reached the model")
			logRequests(t, llm)
		}
		if exists(filepath.Join(project, "leaked.txt")) {
			t.Errorf("the model acted on the denied prompt: leaked.txt exists")
		}
	})
	// At autonomy off a command that writes waits for the user's
	// permission, which raises Notification.
	t.Run("notification", func(t *testing.T) {
		d, _, project, rec := session(t, nil, llmscript.ShellThenText("echo hi > hi.txt", "TURN-DONE"), "off")
		d.call("droid.add_user_message", map[string]any{"text": "write hi.txt"})
		d.waitMsg("a permission request", 2*time.Minute, func(m map[string]any) bool { return m["method"] == "droid.request_permission" })
		waitRecorded(t, rec, time.Minute, "Notification")
		got := nativeEvents(t, "droid", project, events(t, rec), "Notification", "notification")
		observed(t, "droid", got)
	})
	// droid.compact_session after a turn raises PreCompact and asks the
	// model for a summary; with a deny there is no summary request and no
	// new session.
	for _, deny := range []bool{false, true} {
		name := "compact"
		replies := map[string]string{}
		if deny {
			name = "compact-deny"
			replies["preCompact-reply"] = `{"decision":"deny","reason":"REASON-NO-COMPACT"}`
		}
		t.Run(name, func(t *testing.T) {
			if deny {
				verified(t, "droid", "deny", "PreCompact")
			}
			d, llm, project, rec := session(t, replies, llmscript.ShellThenText("echo hi", "TURN-DONE"), "high")
			d.turn("run echo hi")
			before := len(llm.Requests())
			id := d.send("droid.compact_session", map[string]any{})
			resp := d.waitMsg("the compact_session response", 3*time.Minute, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
			observed(t, "droid", nativeEvents(t, "droid", project, events(t, rec), "PreCompact", "preCompact"))
			result, _ := resp["result"].(map[string]any)
			compacted := len(llm.Requests()) > before && result != nil && result["newSessionId"] != nil
			switch {
			case deny && (len(llm.Requests()) > before || result != nil && result["newSessionId"] != nil):
				t.Errorf("the session was compacted despite the deny: %v", resp)
			case !deny && !compacted:
				t.Errorf("no compaction (summary request and new session) without a deny: %v", resp)
			}
		})
	}
}
