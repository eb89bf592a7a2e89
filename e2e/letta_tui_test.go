//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// waitEvent waits until the handler recorded the native event in rec.
func waitEvent(t *testing.T, d *tty, rec, nativeEvent string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if nativeNames(events(t, rec))[nativeEvent] > 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no %s recorded after %s; got %v; screen:\n%s", nativeEvent, timeout, nativeNames(events(t, rec)), d.raw())
}

// lettaTTY starts the real Letta Code TUI (local backend, the fake LLM as
// its OpenAI-compatible provider) with the replier plugin installed into
// the project, and waits for its prompt.
func lettaTTY(t *testing.T, script llmscript.Script, replies map[string]string) (d *tty, llm *llmscript.Server, project, rec string) {
	t.Helper()
	bundle := replierBundle(t, "letta-code")
	project, home, rec := probeCase(t, "")
	for name, body := range replies {
		os.WriteFile(filepath.Join(rec, name), []byte(body), 0o644)
	}
	pluginInstall(t, bundle, "letta-code", project, home)
	llm = startLLM(t, script)
	bin, env := lettaSetup(t, llm, home, []string{"E2E_DIR=" + rec})
	d = startTTY(t, project, env, bin, "--backend", "local")
	d.waitScreen(`Tutor · fake-model`, 2*time.Minute)
	time.Sleep(2 * time.Second)
	return d, llm, project, rec
}

// TestLettaTUI drives Letta Code's terminal UI (in a pseudo-terminal),
// which, unlike `letta -p`, calls SessionStart, UserPromptSubmit, Stop,
// Notification and SessionEnd.
func TestLettaTUI(t *testing.T) {
	// One turn: a shell call, then text; the first Stop is blocked, so the
	// reason reaches the model and the turn goes on; the turn's end raises
	// Notification ("Turn completed, awaiting your input"); /exit raises
	// SessionEnd.
	t.Run("session-stop-continue", func(t *testing.T) {
		verified(t, "letta-code", "continue", "Stop")
		d, llm, project, rec := lettaTTY(t, llmscript.ShellThenText("echo hi > hi.txt", "TURN-DONE"), map[string]string{
			"stop-reply-once": `{"decision":"block","reason":"REASON-CONTINUE: once more"}`,
		})
		d.typeLine("write hi.txt")
		waitEvent(t, d, rec, "Notification", 2*time.Minute)
		d.typeLine("/exit")
		if !d.wait(30 * time.Second) {
			t.Errorf("letta did not exit after /exit; screen:\n%s", d.raw())
		}
		evs := events(t, rec)
		for _, e := range []struct{ native, phase string }{
			{"SessionStart", "sessionStart"}, {"UserPromptSubmit", "userPromptSubmit"}, {"SessionEnd", "sessionEnd"},
		} {
			observed(t, "letta-code", nativeEvents(t, "letta-code", project, evs, e.native, e.phase))
		}
		// Letta's Stop and Notification payloads carry no agent id (the
		// atlas says so), so their canonical events have no session id.
		for _, e := range []struct{ native, phase, payload string }{
			{"Stop", "stop", "stop_reason"}, {"Notification", "notification", "Turn completed"},
		} {
			verified(t, "letta-code", "observe", e.native)
			var got []event
			for _, x := range evs {
				if x.NativeEvent == e.native {
					got = append(got, x)
				}
			}
			if len(got) == 0 || got[0].Phase != e.phase || got[0].Session.Cwd != project || !strings.Contains(string(got[0].Raw), e.payload) {
				t.Errorf("%s events %+v: want phase %s, the project as cwd, %q in the payload", e.native, got, e.phase, e.payload)
			}
		}
		fidelityNote("letta-code", "`Stop` and `Notification` carry no agent id (their payloads have event_type and working_directory, not agent_id), so their canonical events have no session id.")
		if n := len(stopEvents(evs)); n != 2 {
			t.Errorf("%d Stop calls, want 2 (the blocked one, then the one after the model answered again)", n)
		}
		reqs := llm.Requests()
		if len(reqs) == 0 || !reqs[len(reqs)-1].Contains("REASON-CONTINUE") {
			t.Errorf("the last model request does not carry the Stop reason (%d requests)", len(reqs))
			logRequests(t, llm)
		}
	})
	// A UserPromptSubmit deny keeps the prompt from the model.
	t.Run("prompt-deny", func(t *testing.T) {
		verified(t, "letta-code", "deny", "UserPromptSubmit")
		d, llm, project, rec := lettaTTY(t, llmscript.Text("TURN-DONE"), map[string]string{
			"userPromptSubmit-reply": `{"decision":"deny","reason":"REASON-PROMPT-BLOCKED"}`,
		})
		d.typeLine("PROMPT-7c1e write hi.txt")
		waitEvent(t, d, rec, "UserPromptSubmit", 2*time.Minute)
		d.waitScreen(`REASON-PROMPT-BLOCKED`, time.Minute)
		time.Sleep(5 * time.Second)
		observed(t, "letta-code", nativeEvents(t, "letta-code", project, events(t, rec), "UserPromptSubmit", "userPromptSubmit"))
		if llm.Any(func(q *llmscript.Request) bool { return q.Contains("PROMPT-7c1e") }) {
			t.Errorf("the denied prompt reached the model")
		}
		if strings.Contains(d.text(), "TURN-DONE") {
			t.Errorf("the model answered the denied prompt; screen:\n%s", d.raw())
		}
	})
	// /compact raises PreCompact (with the agent as the session). The
	// trailing space closes the command menu, which would otherwise pick
	// another command starting with /compact.
	t.Run("compact", func(t *testing.T) {
		d, _, project, rec := lettaTTY(t, llmscript.Text("TURN-DONE"), nil)
		d.typeLine("hello")
		waitEvent(t, d, rec, "Stop", 2*time.Minute)
		d.typeLine("/compact ")
		waitEvent(t, d, rec, "PreCompact", 2*time.Minute)
		observed(t, "letta-code", nativeEvents(t, "letta-code", project, events(t, rec), "PreCompact", "preCompact"))
	})
}
