//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
)

// runner runs one headless turn of a harness with the probe plugin loaded.
type runner func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult

// rewriteAndToolContext is the probe case for the tool phases' answers:
// preToolUse rewrites the shell command (the rewritten command runs, the
// model's does not) and postToolUse adds context (it reaches the model with
// the tool result). install is nil when the runner loads the bundle itself;
// postEvent "" skips the post-tool context (a harness whose post-tool event
// cannot add any).
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
	if postEvent != "" {
		t.Run("tool-context", func(t *testing.T) {
			verified(t, harness, "add context", postEvent)
			if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("CTX-POST-TOOL") }) {
				t.Errorf("post-tool context never reached the model (%d requests)", len(llm.Requests()))
				for _, q := range llm.Requests() {
					t.Logf("%s", q.Body)
				}
			}
		})
	}
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
		case sidePrefix(harness) != "" && e.Session.ID == sidePrefix(harness)+session:
			// the harness's own side session (checkEvents): not the turn's
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

// replyTurn runs one turn with the replier plugin (a recording handler on
// every phase that answers from reply files) after writing replies (file
// name → content) into its record dir. install is nil when the runner
// loads the bundle itself. The turn must succeed.
func replyTurn(t *testing.T, harness string, replies map[string]string, script llmscript.Script, prompt string, install func(project, home string), run runner) (llm *llmscript.Server, project string, evs []event) {
	t.Helper()
	llm, project, evs, r := replyRun(t, harness, replies, script, prompt, install, run)
	if r.err != nil {
		t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	return llm, project, evs
}

// replyRun is replyTurn for a turn that may fail (a handler stopped it):
// only a timeout fails the test.
func replyRun(t *testing.T, harness string, replies map[string]string, script llmscript.Script, prompt string, install func(project, home string), run runner) (llm *llmscript.Server, project string, evs []event, r runResult) {
	t.Helper()
	project, home, rec := probeCase(t, "")
	for name, body := range replies {
		os.WriteFile(filepath.Join(rec, name), []byte(body), 0o644)
	}
	if install != nil {
		install(project, home)
	}
	llm = startLLM(t, script)
	r = run(t, llm, project, home, []string{"E2E_DIR=" + rec}, prompt)
	if r.err != nil && strings.Contains(r.err.Error(), "timed out") {
		t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	if r.err != nil {
		t.Logf("%s exited with %v", harness, r.err)
	}
	return llm, project, events(t, rec), r
}

// nativeEvents returns the recorded events of one native event after
// checking their canonical form: the phase, the session of the turn (that
// of the first recorded event that names one), the project as cwd when
// they carry one and, on tool phases, the shell kind. It fails the test
// when none was recorded.
func nativeEvents(t *testing.T, harness, project string, evs []event, nativeEvent, phase string) []event {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("no hook call reached the replier")
	}
	var session string
	for _, e := range evs {
		if e.Session.ID != "" {
			session = e.Session.ID
			break
		}
	}
	var out []event
	for _, e := range evs {
		if e.NativeEvent != nativeEvent {
			continue
		}
		out = append(out, e)
		switch {
		case e.Harness != harness:
			t.Errorf("%s: harness %q", e.NativeEvent, e.Harness)
		case e.Phase != phase:
			t.Errorf("%s: phase %q, want %q", e.NativeEvent, e.Phase, phase)
		case e.Session.ID == "" || e.Session.ID != session:
			t.Errorf("%s: session id %q, want %q", e.NativeEvent, e.Session.ID, session)
		case e.Session.Cwd != "" && e.Session.Cwd != project:
			t.Errorf("%s: cwd %q, want %q", e.NativeEvent, e.Session.Cwd, project)
		case phase == "preToolUse" || phase == "postToolUse" || phase == "postToolUseFailure":
			if e.Tool == nil || e.Tool.Kind != "shell" {
				t.Errorf("%s: tool %+v, want kind shell", e.NativeEvent, e.Tool)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s event recorded; got %v", nativeEvent, nativeNames(evs))
	}
	return out
}

func nativeNames(evs []event) map[string]int {
	m := map[string]int{}
	for _, e := range evs {
		m[e.NativeEvent]++
	}
	return m
}

// logRequests logs every model request (on a failure, to see what the
// harness sent).
func logRequests(t *testing.T, llm *llmscript.Server) {
	t.Helper()
	for _, q := range llm.Requests() {
		t.Logf("%s", q.Body)
	}
}

// failingCommand prints a line and exits 3: a shell call that fails where
// the harness counts a non-zero exit as a tool failure.
const failingCommand = "printf 'FAIL-%s\\n' OUTPUT-9d2e; exit 3"

// toolFailure is the probe case for the tool-failure event: the model makes
// a shell tool call that fails (script), the harness must call the failure
// event (observe: phase postToolUseFailure, shell kind, the turn's session,
// the project as cwd) and, when context is set, the context its handler
// adds must reach the model with the failed tool's result.
func toolFailure(t *testing.T, harness, nativeEvent string, context bool, script llmscript.Script, install func(project, home string), run runner) {
	replies := map[string]string{}
	if context {
		verified(t, harness, "add context", nativeEvent)
		replies["postToolUseFailure-reply"] = `{"additionalContext":"CTX-TOOL-FAILURE"}`
	}
	llm, project, evs := replyTurn(t, harness, replies, script, "run the failing command", install, run)
	fails := nativeEvents(t, harness, project, evs, nativeEvent, "postToolUseFailure")
	observed(t, harness, fails)
	if context && !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("CTX-TOOL-FAILURE") }) {
		t.Errorf("the tool-failure context never reached the model (%d requests)", len(llm.Requests()))
		logRequests(t, llm)
	}
}

// addContext is the probe case for context added on one native event: its
// handler answers additionalContext (once, with onceOnly: a stop phase
// whose context makes the harness go on), and the context must reach the
// model in a later request.
func addContext(t *testing.T, harness, phase, nativeEvent string, onceOnly bool, script llmscript.Script, install func(project, home string), run runner) {
	verified(t, harness, "add context", nativeEvent)
	marker := "CTX-REPLY-" + strings.ToUpper(nativeEvent)
	file := phase + "-reply"
	if onceOnly {
		file += "-once"
	}
	llm, project, evs := replyTurn(t, harness, map[string]string{file: `{"additionalContext":"` + marker + `"}`}, script, "write a file", install, run)
	got := nativeEvents(t, harness, project, evs, nativeEvent, phase)
	observed(t, harness, got)
	if !llm.Any(func(q *llmscript.Request) bool { return q.Contains(marker) }) {
		t.Errorf("the %s context never reached the model (%d requests)", nativeEvent, len(llm.Requests()))
		logRequests(t, llm)
	}
}

// subagentTask is the task a parent gives its subagent: the subagent's own
// conversation starts with it.
const subagentTask = "SUBAGENT-TASK-7a31: report back"

// subagentScript has the parent call the subagent tool (the first of tools
// the request offers) with input, the subagent answer SUBAGENT-RESULT, and
// the parent answer "done" once the tool result is in.
func subagentScript(tools string, input map[string]any) llmscript.Script {
	return func(q *llmscript.Request) llmscript.Turn {
		switch {
		case q.UserTextContains(subagentTask):
			return llmscript.Turn{Text: "SUBAGENT-RESULT"}
		case q.HasToolResult():
			return llmscript.Turn{Text: "done"}
		}
		return llmscript.Turn{Tool: tools, Input: input}
	}
}

// subagent is the probe case for the subagent events: the parent hands a
// task to a subagent (script), whose own requests reach the fake LLM too.
// Both events must reach the handler with the parent's session. With
// context, the SubagentStart context must be in the subagent's first
// request; with block, a block once on SubagentStop must send its reason to
// the subagent, which answers again, and the next SubagentStop must say
// stop_hook_active.
func subagent(t *testing.T, harness, startEvent, stopEvent string, context, block bool, script llmscript.Script, install func(project, home string), run runner) {
	replies := map[string]string{}
	if context {
		verified(t, harness, "add context", startEvent)
		replies["subagentStart-reply"] = `{"additionalContext":"CTX-SUBAGENT-START"}`
	}
	if block {
		verified(t, harness, "continue", stopEvent)
		replies["subagentStop-reply-once"] = `{"decision":"block","reason":"REASON-SUBAGENT-GO-ON"}`
	}
	llm, project, evs := replyTurn(t, harness, replies, script, "delegate the task", install, run)
	starts := nativeEvents(t, harness, project, evs, startEvent, "subagentStart")
	stops := nativeEvents(t, harness, project, evs, stopEvent, "subagentStop")
	observed(t, harness, append(starts, stops...))
	var sub []*llmscript.Request
	for _, q := range llm.Requests() {
		if q.UserTextContains(subagentTask) {
			sub = append(sub, q)
		}
	}
	if len(sub) == 0 {
		t.Fatalf("the subagent never called the model")
	}
	if context && !sub[0].Contains("CTX-SUBAGENT-START") {
		t.Errorf("the %s context is not in the subagent's first request", startEvent)
		logRequests(t, llm)
	}
	if block {
		var reason bool
		for _, q := range sub {
			reason = reason || q.Contains("REASON-SUBAGENT-GO-ON")
		}
		if !reason || len(sub) != 2 {
			t.Errorf("want 2 subagent requests, the second carrying the %s reason; got %d (reason seen: %v)", stopEvent, len(sub), reason)
		}
		if len(stops) != 2 || stops[1].StopHookActive == nil || !*stops[1].StopHookActive {
			t.Errorf("want two %s calls, the second with stopHookActive; got %d", stopEvent, len(stops))
		}
	}
	if !llm.Any(func(q *llmscript.Request) bool {
		return !q.UserTextContains(subagentTask) && q.HasToolResult() && q.Contains("SUBAGENT-RESULT")
	}) {
		t.Errorf("the parent never got the subagent's result")
	}
}

// permissionDeny is the probe case for a deny on the permission-request
// event: the model's tool call needs an approval (script), the handler
// denies it with a reason; the command must not run and the reason must
// reach the model with the tool result (without the handler the harness
// refuses too, with its own message).
func permissionDeny(t *testing.T, harness, nativeEvent string, script llmscript.Script, install func(project, home string), run runner) {
	verified(t, harness, "deny", nativeEvent)
	llm, project, evs := replyTurn(t, harness, map[string]string{
		"permissionRequest-reply": `{"decision":"deny","reason":"REASON-PERMISSION-DENIED"}`,
	}, script, "write a file", install, run)
	observed(t, harness, nativeEvents(t, harness, project, evs, nativeEvent, "permissionRequest"))
	if exists(filepath.Join(project, "leaked.txt")) {
		t.Errorf("the denied command ran: leaked.txt exists")
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("REASON-PERMISSION-DENIED") }) {
		t.Errorf("the deny reason never reached the model (%d requests)", len(llm.Requests()))
		logRequests(t, llm)
	}
}

// compactScript makes the harness compact its context: answer i (for i <
// len(steps)) is a shell call whose usage reports steps[i] prompt tokens,
// growing past the harness's auto-compact limit; the next answer is "done"
// reporting final tokens (for a harness that checks at the end of a run);
// every later answer, and every request without tools (a title or summary
// request), is a small "done".
func compactScript(final int, steps ...int) llmscript.Script {
	var n atomic.Int32
	return func(q *llmscript.Request) llmscript.Turn {
		if len(q.ToolNames()) == 0 { // a title or summary request
			return llmscript.Turn{Text: "done"}
		}
		i := int(n.Add(1)) - 1
		switch {
		case i < len(steps):
			return llmscript.Turn{Shell: fmt.Sprintf("echo step%d", i), InputTokens: steps[i]}
		case i == len(steps):
			return llmscript.Turn{Text: "done", InputTokens: final}
		}
		return llmscript.Turn{Text: "done"}
	}
}

// compaction is the probe case for the compaction events: the harness
// compacts (script), and the events must reach the handler with the turn's
// session (postEvent "" when it cannot be observed). summary is a text only
// the compaction's summary request carries ("" to skip that check). With
// deny, the pre-compaction handler denies: the compaction must not happen
// (no summary request, no post-compaction event), where without the answer
// it does.
func compaction(t *testing.T, harness, preEvent, postEvent, summary string, deny bool, script llmscript.Script, install func(project, home string), run runner) {
	replies := map[string]string{}
	if deny {
		verified(t, harness, "deny", preEvent)
		replies["preCompact-reply"] = `{"decision":"deny","reason":"REASON-NO-COMPACT"}`
	}
	llm, project, evs := replyTurn(t, harness, replies, script, "work in steps", install, run)
	pre := nativeEvents(t, harness, project, evs, preEvent, "preCompact")
	summarized := summary != "" && llm.Any(func(q *llmscript.Request) bool { return q.Contains(summary) })
	if deny {
		observed(t, harness, pre)
		for _, e := range evs {
			if postEvent != "" && e.NativeEvent == postEvent {
				t.Errorf("the context was compacted (%s fired) despite the deny", postEvent)
				break
			}
		}
		if summarized {
			t.Errorf("the harness asked the model for a compaction summary despite the deny")
		}
		return
	}
	if summary != "" && !summarized {
		t.Errorf("no compaction summary request (%d requests)", len(llm.Requests()))
	}
	if postEvent != "" {
		pre = append(pre, nativeEvents(t, harness, project, evs, postEvent, "postCompact")...)
	}
	observed(t, harness, pre)
}

// beforeModelDeny is the probe case for a deny on the event before each
// model call: the handler denies, so no request may reach the model and
// the model's answer (a shell call writing leaked.txt) never comes.
func beforeModelDeny(t *testing.T, harness, nativeEvent string, install func(project, home string), run runner) {
	verified(t, harness, "deny", nativeEvent)
	llm, project, evs, r := replyRun(t, harness, map[string]string{
		"beforeModel-reply": `{"decision":"deny","reason":"REASON-MODEL-BLOCKED"}`,
	}, llmscript.ShellThenText("echo leaked > leaked.txt", "done"), "write a file", install, run)
	observed(t, harness, nativeEvents(t, harness, project, evs, nativeEvent, "beforeModel"))
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("%d model requests despite the %s deny\n%s\n%s", n, nativeEvent, r.stdout, r.stderr)
	}
	if exists(filepath.Join(project, "leaked.txt")) {
		t.Errorf("the model's shell call ran despite the %s deny", nativeEvent)
	}
}

// apiErrorScript answers every model request with HTTP 400 (an error a
// harness does not retry).
func apiErrorScript(q *llmscript.Request) llmscript.Turn {
	return llmscript.Turn{Status: 400, Text: "E2E-API-ERROR: this request is refused"}
}

// apiFailure is the probe case for the error event: every model request
// fails with HTTP 400, and the harness must call the error event with the
// turn's session.
func apiFailure(t *testing.T, harness, nativeEvent string, install func(project, home string), run runner) {
	_, project, evs, _ := replyRun(t, harness, nil, apiErrorScript, "say hi", install, run)
	observed(t, harness, nativeEvents(t, harness, project, evs, nativeEvent, "error"))
}
