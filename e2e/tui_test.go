//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"sitter.dev/sitter/e2e/llmscript"
	"sitter.dev/sitter/runtime/launch"
)

// Some events fire only for what a user types in a harness's TUI (Pi's
// and oh-my-pi's `!` user shell, oh-my-pi's input). tuiProc runs the TUI
// in a pseudo-terminal, as sitter launch's bridge-interactive mode does,
// with runtime/launch's screen emulator answering the terminal's queries;
// a case types into it and reads the screen.
type tuiProc struct {
	t      *testing.T
	tty    *os.File
	mu     sync.Mutex
	screen *launch.Screen
	notify chan struct{}
}

// startTUI starts bin under a 50x160 pseudo-terminal in dir; it is killed
// (its process group) at the end of the test.
func startTUI(t *testing.T, dir string, env []string, bin string, args ...string) *tuiProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(env, "TERM=xterm-256color")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	u := &tuiProc{t: t, tty: tty, screen: launch.NewScreen(50, 160), notify: make(chan struct{}, 1)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				u.mu.Lock()
				u.screen.Write(buf[:n])
				rep := u.screen.Replies()
				u.mu.Unlock()
				if len(rep) > 0 {
					tty.Write(rep)
				}
				select {
				case u.notify <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s screen at the end:\n%s", filepath.Base(bin), u.text())
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		cancel()
		tty.Close()
		<-read
	})
	return u
}

func (u *tuiProc) text() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.screen.Text()
}

// waitFor waits up to a minute for cond, checked on each output and every
// 200 ms (files the harness writes change without output).
func (u *tuiProc) waitFor(what string, cond func(screen string) bool) {
	u.t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond(u.text()) {
		select {
		case <-u.notify:
		case <-tick.C:
		case <-deadline:
			u.t.Fatalf("no %s within a minute; screen:\n%s", what, u.text())
		}
	}
}

// typeLine types text, waits until the screen shows it (the editor has
// it), then presses Enter.
func (u *tuiProc) typeLine(text string) {
	u.t.Helper()
	u.tty.Write([]byte(text))
	u.waitFor("typed text on the screen", func(s string) bool { return strings.Contains(s, text) })
	time.Sleep(300 * time.Millisecond)
	u.tty.Write([]byte("\r"))
}

// piTUI starts a harness of Pi's family in its TUI against the fake LLM,
// with the replier plugin installed and replies written, and waits for
// its editor (ready: a text of the idle screen).
func (f piFamily) tuiCase(t *testing.T, replies map[string]string) (u *tuiProc, llm *llmscript.Server, project, rec string) {
	t.Helper()
	project, home, rec := probeCase(t, "")
	for name, body := range replies {
		os.WriteFile(filepath.Join(rec, name), []byte(body), 0o644)
	}
	pluginInstall(t, replierBundle(t, f.harness), f.harness, project, home)
	llm = startLLM(t, llmscript.Text("TUI-ANSWER-DONE"))
	bin, env, args := f.tui(t, llm, home, []string{"E2E_DIR=" + rec})
	u = startTUI(t, project, env, bin, args...)
	u.waitFor("the TUI's editor", func(s string) bool { return strings.Contains(s, "fake-model") })
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
	u.typeLine("!echo ran > denied.txt")
	u.waitFor("the deny reason on screen", func(s string) bool { return strings.Contains(s, "REASON-E2E-DENIED") })
	if exists(filepath.Join(project, "denied.txt")) {
		t.Errorf("the denied command ran")
	}
	os.Remove(filepath.Join(rec, "userShell-reply"))
	u.typeLine("!echo ran > allowed.txt")
	u.waitFor("allowed.txt", func(string) bool { return exists(filepath.Join(project, "allowed.txt")) })
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
	u.typeLine("TYPED-DENIED: say done")
	u.waitFor("the deny answered", func(string) bool { return !exists(filepath.Join(rec, "userPromptSubmit-reply-once")) })
	u.typeLine("TYPED-ALLOWED: say done")
	u.waitFor("the model's answer", func(s string) bool { return strings.Contains(s, "TUI-ANSWER-DONE") })
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
