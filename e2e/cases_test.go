//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
)

// runner runs one headless turn of a harness with the probe plugin loaded.
type runner func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult

// rewriteAndToolContext is the probe case for the tool phases' answers:
// preToolUse rewrites the shell command (the rewritten command runs, the
// model's does not) and postToolUse adds context (it reaches the model with
// the tool result). install is nil when the runner loads the bundle itself.
func rewriteAndToolContext(t *testing.T, harness, preEvent, postEvent string, install func(project, home string), run runner) {
	project, home, rec := probeCase(t, "")
	os.WriteFile(filepath.Join(rec, "pre-tool-reply"), []byte(`{"updatedInput":{"command":"echo rewritten > rewritten.txt"}}`), 0o644)
	os.WriteFile(filepath.Join(rec, "post-tool-reply"), []byte(`{"additionalContext":"CTX-POST-TOOL"}`), 0o644)
	if install != nil {
		install(project, home)
	}
	llm := startLLM(t, llmscript.ShellThenText("echo original > original.txt", "done"))
	r := run(t, llm, project, home, []string{"E2E_DIR=" + rec}, "write a file")
	if r.err != nil {
		t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	evs := events(t, rec)
	t.Run("rewrite", func(t *testing.T) {
		verified(t, harness, "rewrite input", preEvent)
		b, err := os.ReadFile(filepath.Join(project, "rewritten.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "rewritten" {
			t.Errorf("the rewritten command did not run: rewritten.txt = %q, %v\n%s\n%s", b, err, r.stdout, r.stderr)
		}
		if exists(filepath.Join(project, "original.txt")) {
			t.Errorf("the model's own command ran: original.txt exists")
		}
	})
	t.Run("tool-context", func(t *testing.T) {
		verified(t, harness, "add context", postEvent)
		if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("CTX-POST-TOOL") }) {
			t.Errorf("post-tool context never reached the model (%d requests)", len(llm.Requests()))
			for _, q := range llm.Requests() {
				t.Logf("%s", q.Body)
			}
		}
	})
	checkEvents(t, harness, project, evs, "preToolUse", "postToolUse")
}

// observeAll runs one turn with the observer plugin (a recording handler on
// every phase) and claims "observe" for each native event that reached it.
// The observer answers nothing, so the turn must go as without it.
func observeAll(t *testing.T, harness string, install func(project, home string), run runner) {
	project, home, rec := probeCase(t, "")
	if install != nil {
		install(project, home)
	}
	llm := startLLM(t, llmscript.ShellThenText("echo hi > ok.txt", "done"))
	r := run(t, llm, project, home, []string{"E2E_DIR=" + rec}, "write ok.txt")
	if r.err != nil {
		t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(project, "ok.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Errorf("ok.txt = %q, %v: the turn did not go as without the observer", b, err)
	}
	evs := events(t, rec)
	if len(evs) == 0 {
		t.Fatalf("no hook call reached the observer")
	}
	ph := phases(evs)
	for _, p := range []string{"preToolUse", "postToolUse"} {
		if ph[p] == 0 {
			t.Errorf("no %s event recorded; got %v", p, ph)
		}
	}
	// The session of the turn is the one the tool events carry.
	var session string
	for _, e := range evs {
		if e.Phase == "preToolUse" {
			session = e.Session.ID
		}
	}
	// An event is claimed only when its canonical form has the turn's
	// session, the project as cwd (when it has one) and, on tool phases,
	// the shell kind; events whose payload names no session are noted.
	var good []event
	noSession := map[string]bool{}
	for _, e := range evs {
		switch {
		case e.Harness != harness:
			t.Errorf("%s: harness %q", e.NativeEvent, e.Harness)
		case e.Session.ID == "":
			noSession[e.NativeEvent] = true
		case e.Session.ID != session:
			t.Errorf("%s: session id %q, want %q", e.NativeEvent, e.Session.ID, session)
		case e.Session.Cwd != "" && e.Session.Cwd != project:
			t.Errorf("%s: cwd %q, want %q", e.NativeEvent, e.Session.Cwd, project)
		case (e.Phase == "preToolUse" || e.Phase == "postToolUse") && (e.Tool == nil || e.Tool.Kind != "shell"):
			t.Errorf("%s: tool %+v, want kind shell", e.NativeEvent, e.Tool)
		default:
			good = append(good, e)
		}
	}
	for _, e := range good {
		delete(noSession, e.NativeEvent)
	}
	var ns []string
	for n := range noSession {
		ns = append(ns, "`"+n+"`")
	}
	sort.Strings(ns)
	if len(ns) > 0 {
		fidelityNote(harness, "Observed without a session id (the payload carries none the atlas maps), so not counted as verified: "+strings.Join(ns, ", ")+".")
	}
	observed(t, harness, good)
	seen := map[string]int{}
	for _, e := range evs {
		seen[e.NativeEvent]++
	}
	t.Logf("%s events observed: %v", harness, seen)
}

// guardCase runs the guard plugin's deny and allow cases on a harness whose
// bundle is installed into the project with sitter plugin install.
func guardCase(t *testing.T, harness, event string, run func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult) {
	tmp := t.TempDir()
	project, outside := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside")
	for _, d := range []string{project, outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	bundle := filepath.Join(repo(t), "artifacts", "guard", harness)
	pluginInstall(t, bundle, harness, project, filepath.Join(tmp, "install-home"))

	t.Run("deny", func(t *testing.T) {
		verified(t, harness, "observe", event)
		verified(t, harness, "deny", event)
		home := t.TempDir()
		llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
		r := run(t, llm, project, home, nil, "clean up")
		if r.err != nil {
			t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
		}
		if !exists(filepath.Join(outside, "keep.txt")) {
			t.Fatalf("the guard did not stop rm -rf %s\n%s\n%s", outside, r.stdout, r.stderr)
		}
		if !llm.Any(func(r *llmscript.Request) bool { return r.HasToolResult() && r.Contains("guard: recursive-delete") }) {
			t.Errorf("the model never received the guard's reason; requests: %d\n%s\n%s", len(llm.Requests()), r.stdout, r.stderr)
			for _, q := range llm.Requests() {
				t.Logf("%s", q.Body)
			}
		}
	})
	t.Run("allow", func(t *testing.T) {
		home := t.TempDir()
		llm := startLLM(t, llmscript.ShellThenText("echo hi > ok.txt", "done"))
		r := run(t, llm, project, home, nil, "write ok.txt")
		if r.err != nil {
			t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(project, "ok.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "hi" {
			t.Fatalf("ok.txt = %q, %v; stdout %s stderr %s", b, err, r.stdout, r.stderr)
		}
	})
}

// promptMarker is in the prompt of the prompt-deny case and nowhere else.
const promptMarker = "PROMPT-MARKER-5e1d"

// promptDeny is the probe case for a deny on the prompt-submit event: the
// userPromptSubmit handler answers a deny, so the prompt must never reach
// the model (no model request carries it). shows is what the CLI must then
// print on stdout or stderr: the reason where the harness shows it to the
// user, what it prints instead where it does not, "" when it drops the
// prompt silently. The CLI may exit non-zero when its only prompt is
// refused; it must not hang, and the hook must have seen the prompt (so the
// refusal is the handler's, not a failure before the prompt was read).
func promptDeny(t *testing.T, harness, nativeEvent, shows string, install func(project, home string), run runner) {
	verified(t, harness, "deny", nativeEvent)
	project, home, rec := probeCase(t, "")
	os.WriteFile(filepath.Join(rec, "prompt-reply"), []byte(`{"decision":"deny","reason":"REASON-PROMPT-BLOCKED"}`), 0o644)
	if install != nil {
		install(project, home)
	}
	llm := startLLM(t, llmscript.ShellThenText("echo leaked > leaked.txt", "done"))
	r := run(t, llm, project, home, []string{"E2E_DIR=" + rec}, promptMarker+": write a file")
	if r.err != nil && strings.Contains(r.err.Error(), "timed out") {
		t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	if r.err != nil {
		t.Logf("%s exited with %v after the refused prompt", harness, r.err)
	}
	var saw bool
	for _, e := range events(t, rec) {
		if e.Phase == "userPromptSubmit" && e.NativeEvent == nativeEvent && strings.Contains(string(e.Raw), promptMarker) {
			saw = true
		}
	}
	if !saw {
		t.Fatalf("no %s event carrying the prompt reached the probe\n%s\n%s", nativeEvent, r.stdout, r.stderr)
	}
	if llm.Any(func(q *llmscript.Request) bool { return q.Contains(promptMarker) }) {
		t.Errorf("the denied prompt reached the model (%d requests)\n%s\n%s", len(llm.Requests()), r.stdout, r.stderr)
		for _, q := range llm.Requests() {
			t.Logf("%s", q.Body)
		}
	}
	if exists(filepath.Join(project, "leaked.txt")) {
		t.Errorf("the model acted on the denied prompt: leaked.txt exists")
	}
	if shows != "" && !strings.Contains(r.stdout+r.stderr, shows) {
		t.Errorf("the CLI does not show %q after the deny\n-- stdout --\n%s\n-- stderr --\n%s", shows, r.stdout, r.stderr)
	}
}

// postToolDeny is the probe case for a deny (block) on the post-tool event:
// the tool has already run, and the handler's reason must reach the model
// with the tool result in the next request. replaces says the harness
// replaces the tool result with the reason: the tool's own output must then
// never reach the model.
func postToolDeny(t *testing.T, harness, nativeEvent string, replaces bool, install func(project, home string), run runner) {
	verified(t, harness, "deny", nativeEvent)
	project, home, rec := probeCase(t, "")
	os.WriteFile(filepath.Join(rec, "post-tool-reply"), []byte(`{"decision":"deny","reason":"REASON-POST-BLOCK"}`), 0o644)
	if install != nil {
		install(project, home)
	}
	// The tool prints TOOL-OUTPUT-41c7, which its command does not spell out
	// (the command is in the conversation as the model's call).
	llm := startLLM(t, llmscript.ShellThenText("printf 'TOOL-%s\\n' OUTPUT-41c7; echo ran > ran.txt", "done"))
	r := run(t, llm, project, home, []string{"E2E_DIR=" + rec}, "write a file")
	if r.err != nil {
		t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(project, "ran.txt")); err != nil || strings.TrimSpace(string(b)) != "ran" {
		t.Errorf("the tool did not run: ran.txt = %q, %v\n%s\n%s", b, err, r.stdout, r.stderr)
	}
	var next *llmscript.Request
	for _, q := range llm.Requests() {
		if q.HasToolResult() {
			next = q
			break
		}
	}
	switch {
	case next == nil:
		t.Errorf("no model request carries the tool result (%d requests)\n%s\n%s", len(llm.Requests()), r.stdout, r.stderr)
	case !next.Contains("REASON-POST-BLOCK"):
		t.Errorf("the post-tool block reason is not in the request after the tool ran\n%s\n%s\n%s", next.Body, r.stdout, r.stderr)
	}
	if replaces && llm.Any(func(q *llmscript.Request) bool { return q.Contains("TOOL-OUTPUT-41c7") }) {
		t.Errorf("the tool's own output reached the model; the reason should have replaced it")
	}
	checkEvents(t, harness, project, events(t, rec), "preToolUse", "postToolUse")
}
