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

// Some events fire only for what a user types in a harness's TUI (Pi's
// and oh-my-pi's `!` user shell, oh-my-pi's input): these cases type into
// the TUI under a pseudo-terminal (tty_test.go) and read its screen.

// piTUI starts a harness of Pi's family in its TUI against the fake LLM,
// with the replier plugin installed and replies written, and waits for
// its editor (ready: a text of the idle screen).
func (f piFamily) tuiCase(t *testing.T, replies map[string]string) (u *tty, llm *llmscript.Server, project, rec string) {
	t.Helper()
	project, home, rec := probeCase(t, "")
	for name, body := range replies {
		os.WriteFile(filepath.Join(rec, name), []byte(body), 0o644)
	}
	pluginInstall(t, replierBundle(t, f.harness), f.harness, project, home)
	llm = startLLM(t, llmscript.Text("TUI-ANSWER-DONE"))
	bin, env, args := f.tui(t, llm, home, []string{"E2E_DIR=" + rec})
	u = startTTY(t, project, env, bin, args...)
	u.waitFor("the TUI's editor", time.Minute, func(s string) bool { return strings.Contains(s, "fake-model") })
	// The session starts after the screen: wait for its hook.
	deadline := time.Now().Add(time.Minute)
	for phases(events(t, rec))["sessionStart"] == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return u, llm, project, rec
}

// userBash: the user's own `!` command is refused while the userShell
// handler denies (it does not run, the reason is its output on screen)
// and runs when the handler answers nothing.
func (f piFamily) userBash(t *testing.T) {
	verified(t, f.harness, "deny", "user_bash")
	u, _, project, rec := f.tuiCase(t, map[string]string{"userShell-reply": denyReply})
	u.typeShown("!echo ran > denied.txt")
	u.waitFor("the deny reason on screen", time.Minute, func(s string) bool { return strings.Contains(s, "REASON-E2E-DENIED") })
	if exists(filepath.Join(project, "denied.txt")) {
		t.Errorf("the denied command ran")
	}
	os.Remove(filepath.Join(rec, "userShell-reply"))
	u.typeShown("!echo ran > allowed.txt")
	u.waitFor("allowed.txt", time.Minute, func(string) bool { return exists(filepath.Join(project, "allowed.txt")) })
	got := nativeEvents(t, f.harness, project, events(t, rec), "user_bash", "userShell")
	if len(got) != 2 {
		t.Errorf("%d user_bash events, want 2", len(got))
	}
	observed(t, f.harness, got)
}

// inputDeny: a prompt typed in the TUI is dropped while the
// userPromptSubmit handler denies (it never reaches the model) and sent
// when the handler answers nothing. The deny is a reply-once file, which
// the handler removes when it answers: then the second prompt is typed.
func (f piFamily) inputDeny(t *testing.T) {
	verified(t, f.harness, "deny", "input")
	u, llm, project, rec := f.tuiCase(t, map[string]string{"userPromptSubmit-reply-once": denyReply})
	u.typeShown("TYPED-DENIED: say done")
	u.waitFor("the deny answered", time.Minute, func(string) bool { return !exists(filepath.Join(rec, "userPromptSubmit-reply-once")) })
	u.typeShown("TYPED-ALLOWED: say done")
	u.waitFor("the model's answer", time.Minute, func(s string) bool { return strings.Contains(s, "TUI-ANSWER-DONE") })
	if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("TYPED-ALLOWED") }) {
		t.Errorf("the prompt never reached the model without the deny")
	}
	// The allowed prompt was answered after the denied one was handled:
	// had the denied one got through, a request would carry it by now.
	if llm.Any(func(q *llmscript.Request) bool { return q.Contains("TYPED-DENIED") }) {
		t.Errorf("the denied prompt reached the model")
	}
	got := nativeEvents(t, f.harness, project, events(t, rec), "input", "userPromptSubmit")
	if len(got) != 2 {
		t.Errorf("%d input events, want 2", len(got))
	}
	observed(t, f.harness, got)
}

// piTUIArgs is how Pi starts its TUI against the fake LLM.
func piTUIArgs(t *testing.T, llm *llmscript.Server, home string, more []string) (string, []string, []string) {
	bin, env := piSetup(t, llm, home, more, []string{`{"id": "fake-model", "reasoning": false}`})
	return bin, env, []string{"--offline", "--provider", "fake", "--model", "fake-model"}
}

// ompTUIArgs is how oh-my-pi starts its TUI against the fake LLM, without
// the setup wizard a fresh home gets (providers, sign-in) and without the
// update check.
func ompTUIArgs(t *testing.T, llm *llmscript.Server, home string, more []string) (string, []string, []string) {
	bin, env := ompSetup(t, llm, home, more, nil)
	f, err := os.OpenFile(filepath.Join(home, ".omp", "agent", "config.yml"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("startup:\n  setupWizard: false\n  checkUpdate: false\n")
	f.Close()
	return bin, env, []string{"--model", "fake/fake-model", "--no-title"}
}

func TestPiTUI(t *testing.T) {
	t.Run("user-bash", func(t *testing.T) { piFam.userBash(t) })
}

func TestOhMyPiTUI(t *testing.T) {
	t.Run("input", func(t *testing.T) { ompFam.inputDeny(t) })
}
