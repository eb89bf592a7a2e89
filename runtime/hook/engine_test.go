package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMerge(t *testing.T) {
	h := func(cmd string, p Policy) Handler { return Handler{Command: cmd, OnError: p} }
	ok := func(cmd string, r Result) Outcome { return Outcome{Handler: h(cmd, FailOpen), Result: r} }
	okP := func(cmd string, p Policy, r Result) Outcome { return Outcome{Handler: h(cmd, p), Result: r} }
	fail := func(cmd string, p Policy, kind ErrorKind, why string) Outcome {
		return Outcome{Handler: h(cmd, p), Err: &HandlerError{kind, why}}
	}
	in1 := json.RawMessage(`{"command":"npm test --ci"}`)
	in2 := json.RawMessage(`{"command":"rm -rf /"}`)

	tests := []struct {
		name      string
		phase     string
		outs      []Outcome
		want      Result
		wantDiags []string
	}{
		{
			name:  "no handlers is a noop",
			phase: "preToolUse",
			want:  Result{Decision: Noop},
		},
		{
			name:  "deny beats allow; the reason explains the deny only",
			phase: "preToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Allow, Reason: "read-only"}),
				ok("b", Result{Decision: Deny, Reason: "git push is blocked"}),
				ok("c", Result{Decision: Ask, Reason: "touches prod"}),
			},
			want: Result{Decision: Deny, Reason: "git push is blocked"},
		},
		{
			name:  "watch paths join in handler order, each once",
			phase: "sessionStart",
			outs: []Outcome{
				ok("a", Result{WatchPaths: []string{"/p/a", "/p/b"}}),
				ok("b", Result{AdditionalContext: "hi", WatchPaths: []string{"/p/b", "/p/c"}}),
			},
			want: Result{Decision: Noop, AdditionalContext: "hi", WatchPaths: []string{"/p/a", "/p/b", "/p/c"}},
		},
		{
			name:  "reasons of the winning decision concatenate in handler order",
			phase: "preToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Deny, Reason: "first"}),
				ok("b", Result{Decision: Noop}),
				ok("c", Result{Decision: Block, Reason: "second"}), // block means deny here
			},
			want: Result{Decision: Deny, Reason: "first\nsecond"},
		},
		{
			name:  "on stop a deny is a block and beats ask",
			phase: "stop",
			outs: []Outcome{
				ok("a", Result{Decision: Ask, Reason: "hm"}),
				ok("b", Result{Decision: Deny, Reason: "tests fail"}),
			},
			want: Result{Decision: Block, Reason: "tests fail"},
		},
		{
			name:  "ask beats allow",
			phase: "preToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Allow}),
				ok("b", Result{Decision: Ask, Reason: "sure?"}),
				ok("c", Result{Decision: Noop}),
			},
			want: Result{Decision: Ask, Reason: "sure?"},
		},
		{
			name:  "userMessage and additionalContext concatenate from every handler",
			phase: "userPromptSubmit",
			outs: []Outcome{
				ok("a", Result{Decision: Allow, AdditionalContext: "use pnpm", UserMessage: "m1"}),
				ok("b", Result{AdditionalContext: "tests live in src/"}),
				ok("c", Result{Decision: Noop, UserMessage: "m2"}),
			},
			want: Result{Decision: Allow, AdditionalContext: "use pnpm\ntests live in src/", UserMessage: "m1\nm2"},
		},
		{
			name:  "any halt wins and keeps its reason",
			phase: "postToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Allow, Reason: "fine"}),
				ok("b", Result{Decision: Noop, Halt: true, Reason: "budget exhausted"}),
			},
			want: Result{Decision: Allow, Reason: "fine\nbudget exhausted", Halt: true},
		},
		{
			name:  "a deny without a reason gets the default reason",
			phase: "preToolUse",
			outs:  []Outcome{ok("a", Result{Decision: Deny})},
			want:  Result{Decision: Deny, Reason: DefaultReason},
		},
		{
			name:  "a block without a reason gets the default reason",
			phase: "subagentStop",
			outs:  []Outcome{ok("a", Result{Decision: Block})},
			want:  Result{Decision: Block, Reason: DefaultReason},
		},
		{
			name:  "skipped handlers do not count",
			phase: "preToolUse",
			outs: []Outcome{
				{Handler: h("a", FailClosed), Skipped: true},
				ok("b", Result{Decision: Allow}),
			},
			want: Result{Decision: Allow},
		},
		{
			name:  "fail-open error is ignored with a diagnostic",
			phase: "preToolUse",
			outs: []Outcome{
				fail("a", FailOpen, ErrExit, "exit status 3: boom"),
				ok("b", Result{Decision: Allow}),
			},
			want:      Result{Decision: Allow},
			wantDiags: []string{`sitter: handler "a" failed: exit status 3: boom (ignored: fail-open)`},
		},
		{
			name:  "fail-closed error denies with its reason",
			phase: "preToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Allow, Reason: "fine"}),
				fail("b", FailClosed, ErrTimeout, "timed out after 1s"),
			},
			want:      Result{Decision: Deny, Reason: `sitter: handler "b" failed: timed out after 1s`},
			wantDiags: []string{`sitter: handler "b" failed: timed out after 1s (refused: fail-closed)`},
		},
		{
			name:      "fail-closed error on stop blocks",
			phase:     "stop",
			outs:      []Outcome{fail("a", FailClosed, ErrOutput, "not json")},
			want:      Result{Decision: Block, Reason: `sitter: handler "a" failed: not json`},
			wantDiags: []string{`sitter: handler "a" failed: not json (refused: fail-closed)`},
		},
		{
			name:  "a multi-line error becomes one diagnostic line",
			phase: "preToolUse",
			outs:  []Outcome{fail("a", FailOpen, ErrExit, "exit status 1:\nline one\nline two")},
			want:  Result{Decision: Noop},
			wantDiags: []string{
				`sitter: handler "a" failed: exit status 1: line one line two (ignored: fail-open)`,
			},
		},
		{
			name:  "a secret in a failed handler's command is masked in the diagnostic",
			phase: "preToolUse",
			outs:  []Outcome{fail("/no/such/check --token=supersecretvalue1", FailOpen, ErrExit, "exit status 127")},
			want:  Result{Decision: Noop},
			wantDiags: []string{
				`sitter: handler "/no/such/check --token=[REDACTED]" failed: exit status 127 (ignored: fail-open)`,
			},
		},
		{
			name:  "and in the reason a fail-closed handler's failure gives the model",
			phase: "preToolUse",
			outs:  []Outcome{fail("sleep 2 # DB_PASSWORD=hunter2xyz", FailClosed, ErrTimeout, "timed out after 1s")},
			want:  Result{Decision: Deny, Reason: `sitter: handler "sleep 2 # DB_PASSWORD=[REDACTED]" failed: timed out after 1s`},
			wantDiags: []string{
				`sitter: handler "sleep 2 # DB_PASSWORD=[REDACTED]" failed: timed out after 1s (refused: fail-closed)`,
			},
		},
		{
			name:  "one updatedInput writer",
			phase: "preToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Noop}),
				ok("b", Result{Decision: Allow, UpdatedInput: in1}),
			},
			want: Result{Decision: Allow, UpdatedInput: in1},
		},
		{
			name:  "second updatedInput writer, fail-open: ignored, the rest of its result counts",
			phase: "preToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Allow, UpdatedInput: in1}),
				okP("b", FailOpen, Result{Decision: Allow, UpdatedInput: in2, AdditionalContext: "ctx"}),
			},
			want: Result{Decision: Allow, UpdatedInput: in1, AdditionalContext: "ctx"},
			wantDiags: []string{
				`sitter: handler "b" failed: updatedInput conflicts with handler "a", which already rewrote the input (ignored: fail-open)`,
			},
		},
		{
			name:  "second updatedInput writer, fail-closed: deny",
			phase: "preToolUse",
			outs: []Outcome{
				ok("a", Result{Decision: Allow, UpdatedInput: in1}),
				okP("b", FailClosed, Result{Decision: Allow, UpdatedInput: in2}),
			},
			want: Result{
				Decision:     Deny,
				Reason:       `sitter: handler "b" failed: updatedInput conflicts with handler "a", which already rewrote the input`,
				UpdatedInput: in1,
			},
			wantDiags: []string{
				`sitter: handler "b" failed: updatedInput conflicts with handler "a", which already rewrote the input (refused: fail-closed)`,
			},
		},
		{
			name:  "a failed handler is no updatedInput writer",
			phase: "preToolUse",
			outs: []Outcome{
				fail("a", FailOpen, ErrOutput, "bad"),
				ok("b", Result{Decision: Allow, UpdatedInput: in2}),
			},
			want:      Result{Decision: Allow, UpdatedInput: in2},
			wantDiags: []string{`sitter: handler "a" failed: bad (ignored: fail-open)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := Merge(tt.phase, tt.outs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Merge result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDiags, diags); diff != "" {
				t.Errorf("Merge diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func shellEvent(phase string) Event {
	return Event{
		Version:     Version,
		Harness:     "claude-code",
		NativeEvent: "PreToolUse",
		Phase:       phase,
		Support:     "native",
		Session:     Session{ID: "s-1", Cwd: "/tmp"},
		Tool:        &Tool{Name: "Bash", Kind: KindShell, Input: json.RawMessage(`{"command":"ls && pwd"}`)},
		Raw:         json.RawMessage(`{"tool_name":"Bash","hook_event_name":"PreToolUse"}`),
	}
}

// testCtx is generous: a handler that hangs shows up as ErrCanceled, not
// as a slow test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRunHandlers(t *testing.T) {
	tests := []struct {
		name  string
		ev    Event
		h     Handler
		want  Result
		kind  ErrorKind // expected error kind, "" = none
		skips bool
	}{
		{
			name: "exit 0 with empty stdout is a noop",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: "true"},
			want: Result{Decision: Noop},
		},
		{
			name: "exit 0 stdout is parsed",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: `echo '{"decision":"deny","reason":"R"}'`},
			want: Result{Decision: Deny, Reason: "R"},
		},
		{
			name: "environment names the call",
			ev:   shellEvent("preToolUse"),
			h: Handler{Command: `printf '{"decision":"allow","reason":"%s %s %s %s"}' ` +
				`"$SITTER_HARNESS" "$SITTER_PHASE" "$SITTER_SESSION_ID" "$SITTER_NATIVE_EVENT"`},
			want: Result{Decision: Allow, Reason: "claude-code preToolUse s-1 PreToolUse"},
		},
		{
			name: "exit 2 denies with trimmed stderr",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: `echo '{"decision":"allow"}'; printf '  no pushes \n\n' >&2; exit 2`},
			want: Result{Decision: Deny, Reason: "no pushes"},
		},
		{
			name: "exit 2 on stop blocks",
			ev:   shellEvent("stop"),
			h:    Handler{Command: `echo keep going >&2; exit 2`},
			want: Result{Decision: Block, Reason: "keep going"},
		},
		{
			name: "other exit is an error",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: `echo boom >&2; exit 3`},
			kind: ErrExit,
		},
		{
			name: "unparsable stdout is an error",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: `echo not json`},
			kind: ErrOutput,
		},
		{
			name: "unknown decision is an error",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: `echo '{"decision":"maybe"}'`},
			kind: ErrOutput,
		},
		{
			name: "a missing command is an error",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: `/nonexistent/handler`},
			kind: ErrExit,
		},
		{
			name:  "kinds that miss the tool skip the handler",
			ev:    shellEvent("preToolUse"),
			h:     Handler{Command: `exit 2`, Kinds: []string{KindRead, KindEdit}},
			skips: true,
		},
		{
			name: "kinds that match the tool run the handler",
			ev:   shellEvent("preToolUse"),
			h:    Handler{Command: `echo '{"decision":"ask"}'`, Kinds: []string{KindRead, KindShell}},
			want: Result{Decision: Ask},
		},
		{
			name: "kinds do not apply to events without a tool",
			ev:   func() Event { e := shellEvent("stop"); e.Tool = nil; return e }(),
			h:    Handler{Command: `echo '{"decision":"block","reason":"again"}'`, Kinds: []string{KindRead}},
			want: Result{Decision: Block, Reason: "again"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			outs := RunHandlers(testCtx(t), tt.ev, []Handler{tt.h})
			o := outs[0]
			if o.Skipped != tt.skips {
				t.Fatalf("Skipped = %v, want %v", o.Skipped, tt.skips)
			}
			var kind ErrorKind
			if o.Err != nil {
				kind = o.Err.Kind
			}
			if kind != tt.kind {
				t.Fatalf("error kind = %q (%v), want %q", kind, o.Err, tt.kind)
			}
			if tt.kind != "" || tt.skips {
				return
			}
			if diff := cmp.Diff(tt.want, o.Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunHandlerStdin(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "event.json")
	ev := shellEvent("preToolUse")
	RunHandlers(testCtx(t), ev, []Handler{{Command: "cat > " + shellQuote(file)}})
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"command":"ls && pwd"`) {
		t.Errorf("the event on stdin escapes the command: %s", b)
	}
	var got Event
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("handler stdin is not an event: %v\n%s", err, b)
	}
	if diff := cmp.Diff(ev, got); diff != "" {
		t.Errorf("event on stdin (-want +got):\n%s", diff)
	}
}

func TestRunHandlersConcurrent(t *testing.T) {
	t.Parallel()
	// The first handler cannot finish before the second has started: run
	// one after the other, they would hit their timeout.
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no fifo:", err)
	}
	q := shellQuote(fifo)
	hs := []Handler{
		{Command: "echo hi > " + q + `; echo '{"decision":"allow","reason":"a"}'`, Timeout: 20 * time.Second},
		{Command: "cat " + q + ` >/dev/null; echo '{"decision":"allow","reason":"b"}'`, Timeout: 20 * time.Second},
	}
	got, diags := Run(testCtx(t), shellEvent("preToolUse"), hs)
	if diff := cmp.Diff(Result{Decision: Allow, Reason: "a\nb"}, got); diff != "" || diags != nil {
		t.Errorf("result (-want +got):\n%s\ndiags: %q", diff, diags)
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	// Not parallel: it changes waitDelay. With the wait delay this long, a
	// sleeper left alive would hold the handler's stdout open until the
	// test's context ends, and the error kind would be ErrCanceled.
	defer func(d time.Duration) { waitDelay = d }(waitDelay)
	waitDelay = time.Hour
	h := Handler{Command: "sleep 100 & sleep 100", Timeout: 200 * time.Millisecond, OnError: FailClosed}
	outs := RunHandlers(testCtx(t), shellEvent("preToolUse"), []Handler{h})
	if outs[0].Err == nil || outs[0].Err.Kind != ErrTimeout {
		t.Fatalf("error = %v, want a timeout", outs[0].Err)
	}
	got, diags := Merge("preToolUse", outs)
	want := Result{Decision: Deny, Reason: `sitter: handler "sleep 100 & sleep 100" failed: timed out after 200ms`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	if len(diags) != 1 {
		t.Errorf("diags = %q, want one", diags)
	}
}

func TestRunStrayChildAfterExit(t *testing.T) {
	// Not parallel: it changes waitDelay. The handler answers and exits,
	// but a child keeps its stdout open: the answer still counts.
	defer func(d time.Duration) { waitDelay = d }(waitDelay)
	waitDelay = 50 * time.Millisecond
	h := Handler{Command: `(sleep 2) & echo '{"decision":"allow"}'`}
	outs := RunHandlers(testCtx(t), shellEvent("preToolUse"), []Handler{h})
	if outs[0].Err != nil {
		t.Fatalf("error = %v", outs[0].Err)
	}
	if diff := cmp.Diff(Result{Decision: Allow}, outs[0].Result); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestRunCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	outs := RunHandlers(ctx, shellEvent("preToolUse"), []Handler{{Command: "sleep 100"}})
	if outs[0].Err == nil || (outs[0].Err.Kind != ErrCanceled && outs[0].Err.Kind != ErrStart) {
		t.Fatalf("error = %v, want canceled", outs[0].Err)
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{"": FailOpen, "open": FailOpen, "closed": FailClosed} {
		if got, err := ParsePolicy(in); err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParsePolicy("shut"); err == nil {
		t.Error("ParsePolicy(shut) succeeded")
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestWatchMatches(t *testing.T) {
	watch := []string{"notes.txt", "docs/todo.md", "/etc/hosts"}
	for _, c := range []struct {
		file, cwd string
		want      bool
	}{
		{"/p/notes.txt", "/p", true},
		{"/p/docs/todo.md", "/p", true},
		{"/p/notes.txt", "/p/docs", true},    // the agent moved into a folder
		{"/p/sub/notes.txt", "/p", false},    // another folder's notes.txt
		{"/p/sub/notes.txt", "/p/sub", true}, // the cwd's, once the agent moved there
		{"/notes.txt", "/p", true},           // a folder above the cwd: no project root to stop at
		{"/p/docs/todo.md", "/p/docs", true}, // still the project's docs/todo.md
		{"/p/notes.txt.bak", "/p", false},
		{"/p/xnotes.txt", "/p", false},
		{"/etc/hosts", "/p", true},
		{"/q/etc/hosts", "/p", false},
		{"/p/notes.txt", "", true}, // no cwd: any folder
		{"notes.txt", "/p", true},  // a relative file is the entry it equals
		{"sub/notes.txt", "/p", false},
		{"", "/p", false},
	} {
		if got := WatchMatches(watch, c.file, Session{Cwd: c.cwd}); got != c.want {
			t.Errorf("WatchMatches(%q, cwd %q) = %v, want %v", c.file, c.cwd, got, c.want)
		}
	}
	// Where the harness names the project, a relative entry is the file
	// under it, wherever the agent is.
	for _, c := range []struct {
		file, cwd string
		want      bool
	}{
		{"/p/notes.txt", "/p", true},
		{"/p/notes.txt", "/p/sub", true},
		{"/p/sub/notes.txt", "/p/sub", false},
		{"/notes.txt", "/p", false},
		{"/p/docs/todo.md", "/elsewhere", true},
		{"/etc/hosts", "/p/sub", true},
	} {
		if got := WatchMatches(watch, c.file, Session{Cwd: c.cwd, ProjectDir: "/p"}); got != c.want {
			t.Errorf("WatchMatches(%q, cwd %q, project /p) = %v, want %v", c.file, c.cwd, got, c.want)
		}
	}
}

// A handler with a watch list runs on fileChanged events about its files
// only; on other phases the list is no filter.
func TestHandlerWatch(t *testing.T) {
	h := Handler{Command: "x", Watch: []string{"notes.txt"}}
	ev := func(phase, file string) Event {
		return Event{Phase: phase, File: file, Session: Session{Cwd: "/p"}}
	}
	for _, c := range []struct {
		ev   Event
		want bool
	}{
		{ev("fileChanged", "/p/notes.txt"), true},
		{ev("fileChanged", "/p/other.txt"), false},
		{ev("fileChanged", ""), false},
		{ev("sessionStart", ""), true},
	} {
		if got := h.matches(c.ev); got != c.want {
			t.Errorf("%s %q: matches = %v, want %v", c.ev.Phase, c.ev.File, got, c.want)
		}
	}
}

// On an event that cannot refuse (Claude Code's SessionStart has no deny,
// a stop event without block), a fail-closed handler error refuses
// nothing: one line says the policy could not refuse there, and the
// merged result is not a deny that the render would then drop.
func TestMergeForEventThatCannotRefuse(t *testing.T) {
	failed := Outcome{Handler: Handler{Command: "exit 7", OnError: FailClosed}, Err: &HandlerError{ErrExit, "exit status 7"}}
	ctx := Outcome{Handler: Handler{Command: "ctx"}, Result: Result{AdditionalContext: "hello"}}
	ev := Event{Harness: "claude-code", NativeEvent: "SessionStart", Phase: "sessionStart"}
	got, diags := MergeFor(ev, &Rules{Context: &Rule{}}, []Outcome{failed, ctx})
	if diff := cmp.Diff(Result{Decision: Noop, AdditionalContext: "hello"}, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	want := []string{`sitter: handler "exit 7" failed: exit status 7 (fail-closed, not refused: claude-code SessionStart cannot deny)`}
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	stop := Event{Harness: "x", NativeEvent: "Done", Phase: "stop"}
	got, diags = MergeFor(stop, &Rules{Deny: &Rule{}}, []Outcome{failed})
	if got.Decision != Noop || len(diags) != 1 || !strings.HasSuffix(diags[0], "(fail-closed, not refused: x Done cannot block)") {
		t.Errorf("stop without block: %+v %q", got, diags)
	}

	// Where the event can refuse, MergeFor is Merge.
	pre := Event{Harness: "claude-code", NativeEvent: "PreToolUse", Phase: "preToolUse"}
	got, diags = MergeFor(pre, &Rules{Deny: &Rule{}}, []Outcome{failed})
	wantRes, wantDiags := Merge("preToolUse", []Outcome{failed})
	if diff := cmp.Diff(wantRes, got); diff != "" || !cmp.Equal(wantDiags, diags) || got.Decision != Deny {
		t.Errorf("refusable event: %+v %q, want %+v %q", got, diags, wantRes, wantDiags)
	}
}

// A failed handler of a plugin bundle is named with its plugin, so that
// a user with several plugins installed can tell which one broke; a name
// that is no plain word is quoted.
func TestMergeNamesPlugin(t *testing.T) {
	failed := func(cmd, plugin string, p Policy) Outcome {
		return Outcome{Handler: Handler{Command: cmd, Plugin: plugin, OnError: p}, Err: &HandlerError{ErrExit, "exit status 3"}}
	}
	_, diags := Merge("preToolUse", []Outcome{
		failed("exit 3", "acme-guard", FailOpen),
		failed("exit 3", "", FailOpen),
		failed("exit 3", "bad name\n", FailOpen),
	})
	want := []string{
		`sitter: handler "exit 3" (plugin acme-guard) failed: exit status 3 (ignored: fail-open)`,
		`sitter: handler "exit 3" failed: exit status 3 (ignored: fail-open)`,
		`sitter: handler "exit 3" (plugin "bad name\n") failed: exit status 3 (ignored: fail-open)`,
	}
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	// The fail-closed reason names it too.
	got, _ := Merge("preToolUse", []Outcome{failed("exit 3", "acme-guard", FailClosed)})
	if !strings.Contains(got.Reason, `handler "exit 3" (plugin acme-guard) failed`) {
		t.Errorf("fail-closed reason = %q, want the plugin named", got.Reason)
	}

	// So does a conflict, on both sides.
	in := json.RawMessage(`{"command":"ls"}`)
	w := func(cmd, plugin string) Outcome {
		return Outcome{Handler: Handler{Command: cmd, Plugin: plugin}, Result: Result{UpdatedInput: in}}
	}
	_, diags = Merge("preToolUse", []Outcome{w("a", "one"), w("b", "two")})
	if len(diags) != 1 || !strings.HasPrefix(diags[0], `sitter: handler "b" (plugin two) failed: updatedInput conflicts with handler "a" (plugin one),`) {
		t.Errorf("conflict diagnostics = %q", diags)
	}
}

// A result with keys the contract does not know is accepted as it is
// (forward compatibility), with one warning naming the keys and the
// handler's plugin.
func TestMergeWarnsUnknownKeys(t *testing.T) {
	o := Outcome{Handler: Handler{Command: "typo", Plugin: "acme-guard"}, Result: Result{Decision: Noop}, Unknown: []string{"decison", "x\ny"}}
	got, diags := Merge("preToolUse", []Outcome{o})
	if got.Decision != Noop {
		t.Errorf("decision = %q, want the result as decoded (noop)", got.Decision)
	}
	want := []string{`sitter: handler "typo" (plugin acme-guard) answered unknown result keys "decison", "x\ny" (ignored; known: decision, reason, userMessage, additionalContext, updatedInput, halt, watchPaths)`}
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

// runOne reports the unknown keys of an answer it accepts.
func TestRunHandlersUnknownKeys(t *testing.T) {
	outs := RunHandlers(context.Background(), Event{Phase: "preToolUse"}, []Handler{{Command: `echo '{"decison":"block","reason":"r"}'`}})
	o := outs[0]
	if o.Err != nil || o.Result.Decision != Noop || o.Result.Reason != "r" || !cmp.Equal(o.Unknown, []string{"decison"}) {
		t.Errorf("outcome = %+v, want the noop with reason r and unknown [decison]", o)
	}
}

// The warning's keys come from the handler's output: masked like the
// rest of sitter's lines.
func TestWarningMasksKeys(t *testing.T) {
	o := Outcome{Handler: Handler{Command: "x"}, Unknown: []string{"sk-ant-abcdefghijklmnopqrstuvwxyz0123"}}
	if w := o.Warning(); strings.Contains(w, "sk-ant-") || !strings.Contains(w, "REDACTED") {
		t.Errorf("Warning() = %q, want the key masked", w)
	}
}

// One rule for a handler's timeout, shared by plugin.yaml (gen/plugin),
// sitter plugin verify and the hook: a Go duration, above zero, at most
// MaxTimeout.
func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"10s": 10 * time.Second, "1500ms": 1500 * time.Millisecond, "2m": 2 * time.Minute, "24h": 24 * time.Hour, "007s": 7 * time.Second} {
		if got, err := ParseTimeout(in); err != nil || got != want {
			t.Errorf("ParseTimeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                      "not a duration",
		"soon":                  "not a duration",
		"10":                    "not a duration",
		"0s":                    "not above zero",
		"0ms":                   "not above zero",
		"-1s":                   "not above zero",
		"99999999999999999999m": "longer than 24h",
		"1441m":                 "longer than 24h",
	} {
		got, err := ParseTimeout(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("ParseTimeout(%q) = %v, %v; want an error naming it: %s", in, got, err, want)
		}
	}
}
