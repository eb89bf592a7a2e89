//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// clineRun runs one headless Cline turn (cline --json "<prompt>", act mode,
// tools auto-approved) against the fake LLM, reached through the
// openai-compatible provider in the fresh home's provider settings (what
// `cline auth -p openai-compatible -b <url>` writes; without updatedAt Cline
// replaces the file with its own default provider). The local session
// backend keeps Cline from starting its background hub daemon, which would
// outlive the run.
func clineRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin, env := clineSetup(t, llm, home, more)
	return runCLI(t, project, env, 2*time.Minute, bin, "--json", prompt)
}

// clineSetup writes the home's provider settings for the fake LLM and
// returns the binary and the environment.
func clineSetup(t *testing.T, llm *llmscript.Server, home string, more []string) (string, []string) {
	t.Helper()
	bin := install(t, clis["cline"])
	dir := filepath.Join(home, ".cline", "data", "settings")
	os.MkdirAll(dir, 0o755)
	settings := fmt.Sprintf(`{"version": 1, "lastUsedProvider": "openai-compatible", "modes": {}, "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible", "apiKey": "sk-fake", "model": "fake-model", "baseUrl": %q}, "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}}
`, llm.URL+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "providers.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(append(baseEnv(t, home), more...), "CLINE_SESSION_BACKEND_MODE=local")
	return bin, env
}

// TestClineGuard: the guard bundle installed with `sitter plugin install`
// (its PreToolUse script in the project's .clinerules/hooks) stops rm -rf
// of a folder outside the project, and lets a harmless command run.
// Cline's only veto is a cancel, which ends the run (finishReason
// aborted): there is no next model request to carry the reason, and
// `cline --json` does not print it (the atlas's PreToolUse deny).
func TestClineGuard(t *testing.T) {
	fidelityNote("cline", "A deny (the guard's too) is Cline's cancel: the tool does not run and the run ends (`finishReason` `aborted`); the model is not told the reason and `cline --json` does not print it (3.0.65 has no per-call veto for hook files).")
	tmp := t.TempDir()
	project, outside := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside")
	for _, d := range []string{project, outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	pluginInstall(t, filepath.Join(repo(t), "artifacts", "guard", "cline"), "cline", project, filepath.Join(tmp, "install-home"))
	if !exists(filepath.Join(project, ".clinerules", "hooks", "PreToolUse")) {
		t.Fatalf("sitter plugin install wrote no .clinerules/hooks/PreToolUse")
	}
	t.Run("deny", func(t *testing.T) {
		verified(t, "cline", "observe", "PreToolUse")
		verified(t, "cline", "deny", "PreToolUse")
		llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
		r := clineRun(t, llm, project, t.TempDir(), nil, "clean up")
		if r.err != nil {
			t.Fatalf("cline: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if !exists(filepath.Join(outside, "keep.txt")) {
			t.Fatalf("the guard did not stop rm -rf %s\n%s\n%s", outside, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, `"finishReason":"aborted"`) {
			t.Errorf("the run was not ended by the deny\n%s", r.stdout)
		}
		if n := len(llm.Requests()); n != 1 {
			t.Errorf("%d model requests, want 1: the cancel ends the run before the tool result is sent", n)
		}
	})
	t.Run("allow", func(t *testing.T) {
		llm := startLLM(t, llmscript.ShellThenText("echo hi > ok.txt", "done"))
		r := clineRun(t, llm, project, t.TempDir(), nil, "write ok.txt")
		if r.err != nil {
			t.Fatalf("cline: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if b, err := os.ReadFile(filepath.Join(project, "ok.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
			t.Fatalf("ok.txt = %q, %v; stdout %s stderr %s", b, err, r.stdout, r.stderr)
		}
	})
}

// TestClineProbe: the probe, replier and observer bundles installed with
// `sitter plugin install` (their scripts in .clinerules/hooks) see the
// run's events with its session and workspace, and the tool hooks'
// answers work: rewrite (the rewritten command runs, the model's does
// not) and context before and after the tool (both reach the model with
// the result).
func TestClineProbe(t *testing.T) {
	bundle := probeBundle(t, "cline")
	withProbe := func(project, home string) { pluginInstall(t, bundle, "cline", project, home) }
	t.Run("events", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		withProbe(project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := clineRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("cline: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		evs := events(t, rec)
		observed(t, "cline", evs)
		checkEvents(t, "cline", project, evs, "sessionStart", "preToolUse", "postToolUse", "stop")
		capture(t, "cline", clis["cline"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "cline")
		observeAll(t, "cline", func(project, home string) { pluginInstall(t, observer, "cline", project, home) }, clineRun)
	})
	t.Run("tool-phases", func(t *testing.T) {
		rewriteAndToolContext(t, "cline", "PreToolUse", "PostToolUse", withProbe, clineRun)
	})
	t.Run("pre-tool-context", func(t *testing.T) {
		replier := replierBundle(t, "cline")
		withReplier := func(project, home string) { pluginInstall(t, replier, "cline", project, home) }
		addContext(t, "cline", "preToolUse", "PreToolUse", false, llmscript.ShellThenText("echo hi", "done"), withReplier, clineRun)
	})
}

// TestClineLifecycle: the task events a plain turn does not raise. A model
// that refuses every request (HTTP 400) fails the task: TaskError. A model
// error that says the request was aborted fails it as a cancel: TaskCancel,
// then SessionShutdown. A run a hook cancels ends aborted without an error:
// SessionShutdown only (3.0.65 calls TaskCancel only for an abort-like
// error). (A SIGINT to `cline --json` while a shell call runs ends the
// process without TaskCancel or SessionShutdown.)
func TestClineLifecycle(t *testing.T) {
	fidelityNote("cline", "`TaskCancel` fires only for a run that failed with an error mentioning cancel, abort or interrupt (proved with a model error saying the request was aborted); a run stopped with Esc in the terminal UI or by a hook's cancel ends `aborted` without an error and calls `SessionShutdown` alone.")
	replier := replierBundle(t, "cline")
	withReplier := func(project, home string) { pluginInstall(t, replier, "cline", project, home) }
	t.Run("task-error", func(t *testing.T) {
		apiFailure(t, "cline", "TaskError", withReplier, clineRun)
	})
	t.Run("task-cancel", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		withReplier(project, home)
		llm := startLLM(t, func(*llmscript.Request) llmscript.Turn {
			return llmscript.Turn{Status: 400, Text: "E2E-ABORT: the request was aborted upstream"}
		})
		clineRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "say hi")
		// The task's end hooks run detached: they may finish after cline.
		evs := waitRecorded(t, rec, 30*time.Second, "TaskCancel", "SessionShutdown")
		for _, e := range []struct{ native, phase string }{{"TaskCancel", "interrupt"}, {"SessionShutdown", "sessionEnd"}} {
			got := nativeEvents(t, "cline", project, evs, e.native, e.phase)
			observed(t, "cline", got)
			if !strings.Contains(string(got[0].Raw), "E2E-ABORT") {
				t.Errorf("%s does not carry the error as its reason: %s", e.native, got[0].Raw)
			}
		}
		if n := nativeNames(evs)["TaskError"]; n != 0 {
			t.Errorf("TaskError called %d times for an abort", n)
		}
	})
	// A hook's cancel aborts the run: SessionShutdown (with the run's
	// session), no TaskCancel.
	t.Run("shutdown-on-abort", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		os.WriteFile(filepath.Join(rec, "preToolUse-reply"), []byte(`{"decision":"deny","reason":"REASON-CANCEL-RUN"}`), 0o644)
		withReplier(project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi > hi.txt", "done"))
		r := clineRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "write hi.txt")
		if !strings.Contains(r.stdout, `"finishReason":"aborted"`) {
			t.Fatalf("the run did not end aborted\n%s\n%s", r.stdout, r.stderr)
		}
		evs := waitRecorded(t, rec, 30*time.Second, "SessionShutdown")
		observed(t, "cline", nativeEvents(t, "cline", project, evs, "SessionShutdown", "sessionEnd"))
		time.Sleep(2 * time.Second)
		if n := nativeNames(events(t, rec))["TaskCancel"]; n != 0 {
			t.Errorf("TaskCancel called %d times for an abort without an error (3.0.65 does not)", n)
		}
	})
}

// waitRecorded waits until each native event was recorded in rec at least
// once (hooks Cline runs detached may finish after the process), then
// returns the recorded events; it fails the test at the timeout.
func waitRecorded(t *testing.T, rec string, timeout time.Duration, nativeEvents ...string) []event {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		evs := events(t, rec)
		seen := nativeNames(evs)
		missing := false
		for _, n := range nativeEvents {
			missing = missing || seen[n] == 0
		}
		if !missing {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %v recorded within %s; got %v", nativeEvents, timeout, seen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// clineTTY starts Cline's terminal UI (act mode, tools auto-approved) in a
// pseudo-terminal with the given arguments and waits for its prompt,
// closing the subscription offer it may show first. The UI starts Cline's
// hub daemon in a session of its own, which outlives the UI's process
// group: it is killed at the end of the test too (found by the test's
// HOME in its environment).
func clineTTY(t *testing.T, project string, env []string, bin string, args ...string) *tty {
	t.Helper()
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	t.Cleanup(func() { killByHome(home) })
	d := startTTY(t, project, env, bin, args...)
	d.waitScreen(`any other key to close|Act \(Tab\)`, 2*time.Minute)
	time.Sleep(3 * time.Second)
	if strings.Contains(d.text(), "any other key to close") {
		d.send("x")
		d.waitFor("the offer to close", time.Minute, func(s string) bool { return !strings.Contains(s, "any other key to close") })
	}
	time.Sleep(time.Second)
	return d
}

// TestClineTUI drives Cline's terminal UI, where a session is resumed and a
// message can be added to a running task.
func TestClineTUI(t *testing.T) {
	replier := replierBundle(t, "cline")
	// A message typed while a task runs is queued; Enter on the empty
	// input sends it to steer the running task: that user message, not
	// the task's own prompt, calls UserPromptSubmit.
	t.Run("steer-prompt", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		pluginInstall(t, replier, "cline", project, home)
		llm := startLLM(t, func(q *llmscript.Request) llmscript.Turn {
			if q.HasToolResult() || q.Contains("STEER-PROMPT-3b9e") {
				return llmscript.Turn{Text: "TURN-DONE"}
			}
			return llmscript.Turn{Shell: "sleep 15"}
		})
		bin, env := clineSetup(t, llm, home, []string{"E2E_DIR=" + rec})
		d := clineTTY(t, project, env, bin)
		d.typeShown("write hi.txt")
		d.waitScreen(`run_commands\(sleep 15\)`, time.Minute)
		d.typeShown("STEER-PROMPT-3b9e also say done")
		d.waitScreen(`Queued messages`, time.Minute)
		time.Sleep(time.Second)
		d.send("\r")
		waitEvent(t, d, rec, "UserPromptSubmit", time.Minute)
		got := nativeEvents(t, "cline", project, events(t, rec), "UserPromptSubmit", "userPromptSubmit")
		observed(t, "cline", got)
		if !strings.Contains(string(got[0].Raw), "STEER-PROMPT-3b9e") {
			t.Errorf("UserPromptSubmit does not carry the steering message: %s", got[0].Raw)
		}
	})
	// `cline --id <session>` opens the terminal UI on a session a headless
	// run left; the next prompt's run calls TaskResume, not TaskStart, with
	// that session.
	t.Run("resume", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		pluginInstall(t, replier, "cline", project, home)
		llm := startLLM(t, func(q *llmscript.Request) llmscript.Turn {
			if q.Contains("RESUMED-PROMPT") {
				return llmscript.Turn{Text: "TURN-DONE-RESUMED"}
			}
			return llmscript.Turn{Text: "TURN-DONE"}
		})
		r := clineRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "say done")
		if r.err != nil {
			t.Fatalf("cline: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		first := waitRecorded(t, rec, 30*time.Second, "TaskStart")
		session := first[0].Session.ID
		if n := nativeNames(first)["TaskResume"]; n != 0 {
			t.Fatalf("the first run called TaskResume")
		}
		bin, env := clineSetup(t, llm, home, []string{"E2E_DIR=" + rec})
		d := clineTTY(t, project, env, bin, "--id", session)
		d.typeShown("RESUMED-PROMPT say done again")
		waitEvent(t, d, rec, "TaskResume", time.Minute)
		d.waitScreen(`TURN-DONE-RESUMED`, time.Minute)
		got := nativeEvents(t, "cline", project, events(t, rec), "TaskResume", "sessionStart")
		observed(t, "cline", got)
		if got[0].Session.ID != session {
			t.Errorf("TaskResume session %q, want the resumed %q", got[0].Session.ID, session)
		}
	})
}

// killByHome kills every process whose environment has HOME=home: what a
// harness started under a test's own home and detached from it.
func killByHome(home string) {
	if home == "" {
		return
	}
	want := []byte("HOME=" + home + "\x00")
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "environ"))
		if err == nil && bytes.Contains(b, want) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
