package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
)

func TestParseHookArgs(t *testing.T) {
	tests := []struct {
		args    []string
		want    hookArgs
		wantErr string
	}{
		{
			args: []string{"claude-code", "PreToolUse"},
			want: hookArgs{harness: "claude-code", event: "PreToolUse", onError: hook.FailOpen},
		},
		{
			args: []string{"--handler", "a", "claude", "--timeout=5s", "Stop", "-handler", "b c", "--on-error", "closed", "--stop-cap", "3", "--plugin=p"},
			want: hookArgs{harness: "claude", event: "Stop", handlers: []string{"a", "b c"}, timeout: 5 * time.Second, onError: hook.FailClosed, stopCap: "3", plugin: "p"},
		},
		{
			args: []string{"codex", "-"},
			want: hookArgs{harness: "codex", onError: hook.FailOpen},
		},
		{
			args: []string{"codex", "--", "--odd-event"},
			want: hookArgs{harness: "codex", event: "--odd-event", onError: hook.FailOpen},
		},
		{
			args:    nil,
			want:    hookArgs{onError: hook.FailOpen},
			wantErr: "missing <harness>",
		},
		{
			// Parsing goes on after an error: --on-error closed still counts.
			args:    []string{"--bogus", "claude", "PreToolUse", "--on-error", "closed"},
			want:    hookArgs{harness: "claude", event: "PreToolUse", onError: hook.FailClosed, badFlag: true},
			wantErr: "unknown flag --bogus",
		},
		{
			args: []string{"claude", "-h", "PreToolUse"},
			want: hookArgs{harness: "claude", event: "PreToolUse", onError: hook.FailOpen, help: true},
		},
		{
			args:    []string{"claude", "PreToolUse", "extra"},
			want:    hookArgs{harness: "claude", event: "PreToolUse", onError: hook.FailOpen},
			wantErr: "unexpected arguments",
		},
		{
			args:    []string{"claude", "PreToolUse", "--on-error", "maybe"},
			want:    hookArgs{harness: "claude", event: "PreToolUse", onError: hook.FailOpen},
			wantErr: "unknown error policy",
		},
		{
			args:    []string{"claude", "PreToolUse", "--timeout", "1441m"},
			want:    hookArgs{harness: "claude", event: "PreToolUse", onError: hook.FailOpen},
			wantErr: `--timeout "1441m" is longer than 24h`,
		},
		{
			args:    []string{"claude", "PreToolUse", "--stop-cap", "-1"},
			want:    hookArgs{harness: "claude", event: "PreToolUse", onError: hook.FailOpen},
			wantErr: "--stop-cap",
		},
	}
	for _, tt := range tests {
		got, err := parseHookArgs(tt.args)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(hookArgs{})); diff != "" {
			t.Errorf("parseHookArgs(%q) (-want +got):\n%s", tt.args, diff)
		}
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("parseHookArgs(%q) error = %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}

// A panic anywhere in a hook call still answers the harness.
func TestHookPanic(t *testing.T) {
	claude, _, err := registry.Registry().Resolve("claude-code")
	if err != nil {
		t.Fatal(err)
	}
	broken := *claude
	broken.Normalize = func([]byte, string) (hook.Event, error) { panic("boom") }
	reg := func() *adapter.Registry { return &adapter.Registry{Descriptors: []*adapter.Descriptor{&broken}} }
	payload := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash"}`

	tests := []struct {
		name       string
		args       []string
		reg        func() *adapter.Registry
		wantStdout string
	}{
		{
			name: "panic in the registry",
			args: []string{"claude-code", "PreToolUse"},
			reg:  func() *adapter.Registry { panic("no registry") },
		},
		{
			name: "panic in the normalizer",
			args: []string{"claude-code", "PreToolUse"},
			reg:  reg,
		},
		{
			name:       "panic in the normalizer, fail-closed",
			args:       []string{"claude-code", "PreToolUse", "--on-error", "closed"},
			reg:        reg,
			wantStdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"sitter: internal error: boom"}}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"hook"}, tt.args...), strings.NewReader(payload), &stdout, &stderr, tt.reg)
			if code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			if diff := cmp.Diff(tt.wantStdout, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if s := stderr.String(); !strings.HasPrefix(s, "sitter: internal error: ") || strings.Count(s, "\n") != 1 {
				t.Errorf("stderr = %q, want one line about the internal error", s)
			}
		})
	}
}

// A valid 5 MB payload (a large file write) is handled normally: the
// handler gets all of it and its deny is rendered.
func TestHookLargePayload(t *testing.T) {
	content := strings.Repeat("0123456789abcdef", 5<<20/16)
	in, err := json.Marshal(map[string]any{
		"session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Write",
		"tool_input": map[string]any{"file_path": "/w/big.txt", "content": content},
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := filepath.Join(t.TempDir(), "seen.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"hook", "claude-code", "PreToolUse", "--handler",
		"cat > " + seen + `; echo '{"decision":"deny","reason":"too big"}'`},
		bytes.NewReader(in), &stdout, &stderr, registry.Registry)
	if code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"too big"}}` + "\n"
	if stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	}
	var ev hook.Event
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	var input struct{ Content string }
	json.Unmarshal(ev.Tool.Input, &input)
	if ev.Tool.Kind != "write" || input.Content != content || len(ev.Raw) != len(in) {
		t.Errorf("handler got kind %q, %d content bytes, %d raw bytes; want write, %d, %d", ev.Tool.Kind, len(input.Content), len(ev.Raw), len(content), len(in))
	}
}

func TestShellCommand(t *testing.T) {
	for in, want := range map[string]string{
		`{"command":"git push","timeout":5}`:         "git push",
		`{"description":"x","command":["ls","-la"]}`: "ls -la",
		`{"command":null}`:                           "",
		`{"cmd":"ls"}`:                               "",
		`{"command":"a\"b \u00e9"}`:                  `a"b é`,
		`{"command":{"nested":"x"},"command2":"y"}`:  "",
		`not json`: "",
	} {
		if got := shellCommand([]byte(in)); got != want {
			t.Errorf("shellCommand(%s) = %q, want %q", in, got, want)
		}
	}
}

// A host verb without sitter-host next to sitter or on PATH says how to get it.
func TestExecHostMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stderr strings.Builder
	if code := execHost([]string{"run", "status"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "sitter run: sitter-host not found") || !strings.Contains(stderr.String(), "make build") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// An unknown flag on the hook command line is a registration mistake that
// must show without breaking the harness (docs/contract.md, error
// policy): never exit 2, which Claude Code, Codex and Gemini CLI read as
// "block". The policy's answer, the error and the usage line on stderr,
// exit 1; a fail-closed deny keeps its own exit code; --help exits 0.
func TestHookUnknownFlag(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	payload := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	for _, tt := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string
	}{
		{
			name:       "fail-open",
			args:       []string{"claude-code", "PreToolUse", "--bogus", "--handler", "echo '{\"decision\":\"deny\"}'"},
			wantCode:   1,
			wantStderr: []string{"sitter: hook: unknown flag --bogus", "usage: sitter hook <harness> <native-event>"},
		},
		{
			name:       "no harness either",
			args:       []string{"--bogus"},
			wantCode:   1,
			wantStderr: []string{"sitter: hook: unknown flag --bogus", "usage: sitter hook"},
		},
		{
			name:       "fail-closed",
			args:       []string{"claude-code", "PreToolUse", "--bogus", "--on-error", "closed"},
			wantCode:   0,
			wantStdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"sitter: hook: unknown flag --bogus"}}` + "\n",
			wantStderr: []string{"(refused: fail-closed)", "usage: sitter hook"},
		},
		{
			name:       "fail-closed where the event cannot deny",
			args:       []string{"claude-code", "SessionEnd", "--bogus", "--on-error", "closed"},
			wantCode:   1,
			wantStderr: []string{"sitter: hook: unknown flag --bogus", "not refused"},
		},
		{
			name:       "help",
			args:       []string{"claude-code", "PreToolUse", "--bogus", "--help"},
			wantCode:   0,
			wantStdout: "",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"hook"}, tt.args...), strings.NewReader(payload), &stdout, &stderr, registry.Registry)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if tt.name == "help" {
				if !strings.Contains(stdout.String(), "Usage:\n  sitter hook") {
					t.Errorf("stdout %q, want the usage", stdout.String())
				}
				return
			}
			if diff := cmp.Diff(tt.wantStdout, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q lacks %q", stderr.String(), w)
				}
			}
		})
	}
}

// A stop the guard lets through at its cap is recorded as such in the
// audit log (stopCap), the block before it is not: `sitter observe` reads
// it to show the session's run as needing its user.
func TestHookAuditsStopCap(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", state)
	t.Setenv("SITTER_AUDIT", "")
	var caps []int
	for i, active := range []bool{false, true} {
		in := `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":` + map[bool]string{false: "false", true: "true"}[active] + `}`
		var stdout, stderr bytes.Buffer
		code := run([]string{"hook", "claude-code", "Stop", "--stop-cap", "1", "--handler", `echo '{"decision":"block","reason":"keep going"}'`},
			strings.NewReader(in), &stdout, &stderr, registry.Registry)
		if code != 0 {
			t.Fatalf("stop %d: exit %d, stderr %q", i, code, stderr.String())
		}
		if blocked := strings.Contains(stdout.String(), `"block"`); blocked != (i == 0) {
			t.Fatalf("stop %d: stdout %q", i, stdout.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			StopCap  int    `json:"stopCap"`
			Decision string `json:"decision"`
		}
		json.Unmarshal([]byte(l), &e)
		caps = append(caps, e.StopCap)
	}
	if diff := cmp.Diff([]int{0, 1}, caps); diff != "" {
		t.Logf("%s", b)
		t.Errorf("stopCap of the audit entries (-want +got):\n%s", diff)
	}
}

// A fail-closed handler error on an event that cannot refuse (Claude
// Code's SessionStart has no deny) claims no refusal: one line says
// fail-closed could not refuse there, and the audit records no deny.
func TestHookFailClosedCannotRefuse(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", state)
	t.Setenv("SITTER_AUDIT", "")
	var stdout, stderr bytes.Buffer
	code := run([]string{"hook", "claude-code", "SessionStart", "--handler", "exit 7", "--on-error", "closed"},
		strings.NewReader(`{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`), &stdout, &stderr, registry.Registry)
	if code != 0 || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q; want 0 and the no-op", code, stdout.String())
	}
	want := `sitter: handler "exit 7" failed: exit status 7 (fail-closed, not refused: claude-code SessionStart cannot deny)` + "\n"
	if diff := cmp.Diff(want, stderr.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Decision, Verdict string }
	if err := json.Unmarshal(b, &e); err != nil || e.Decision != "noop" || e.Verdict != "allow" {
		t.Errorf("audit entry %s: want decision noop, verdict allow", b)
	}
}

// A --plugin folder that does not exist, or holds no sitter-handlers.json,
// is a configuration problem, handled as a broken table is: one sitter:
// line, the audit entry's error, and the --on-error policy's answer.
func TestHookPluginWithoutTable(t *testing.T) {
	empty := t.TempDir()
	for _, tt := range []struct {
		name, plugin, event string
		closed              bool
		wantStdout, wantErr string
	}{
		{name: "missing folder", plugin: filepath.Join(empty, "nonexistent"), event: "PreToolUse", wantErr: "no such folder"},
		{name: "missing folder, fail-closed", plugin: filepath.Join(empty, "nonexistent"), event: "PreToolUse", closed: true, wantErr: "no such folder",
			wantStdout: `"permissionDecision":"deny"`},
		{name: "no table", plugin: empty, event: "PreToolUse", wantErr: "no sitter-handlers.json"},
		{name: "no table, fail-closed", plugin: empty, event: "PreToolUse", closed: true, wantErr: "no sitter-handlers.json",
			wantStdout: `"permissionDecision":"deny"`},
		{name: "no table, fail-closed where the event cannot deny", plugin: empty, event: "SessionStart", closed: true, wantErr: "no sitter-handlers.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			t.Setenv("SITTER_STATE_DIR", state)
			t.Setenv("SITTER_AUDIT", "")
			args := []string{"hook", "claude-code", tt.event, "--plugin", tt.plugin}
			if tt.closed {
				args = append(args, "--on-error", "closed")
			}
			in := `{"session_id":"s","hook_event_name":"` + tt.event + `","tool_name":"Bash","tool_input":{"command":"ls"}}`
			var stdout, stderr bytes.Buffer
			if code := run(args, strings.NewReader(in), &stdout, &stderr, registry.Registry); code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			if tt.wantStdout == "" && stdout.Len() != 0 || !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.wantStdout)
			}
			if s := stderr.String(); !strings.HasPrefix(s, "sitter: ") || strings.Count(s, "\n") != 1 || !strings.Contains(s, tt.plugin) || !strings.Contains(s, tt.wantErr) {
				t.Errorf("stderr %q, want one sitter: line naming %s: %s", s, tt.plugin, tt.wantErr)
			}
			b, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var e struct{ Error string }
			if err := json.Unmarshal(b, &e); err != nil || !strings.Contains(e.Error, tt.wantErr) {
				t.Errorf("audit entry %s: want the error %q", b, tt.wantErr)
			}
		})
	}
}

// A handler whose timeout breaks the shared rule (hook.ParseTimeout)
// fails alone: one sitter: line naming the handler and the rule, and the
// other handler's answer (the no-op) stands. The generator and sitter
// plugin verify refuse such a table first; this is the hand-edited bundle
// (testdata/script/hook_plugin_badentry.txtar has the rest).
func TestHookPluginBadTimeout(t *testing.T) {
	for timeout, want := range map[string]string{
		"0s":    `handler 1: timeout: "0s" is not above zero`,
		"1441m": `handler 1: timeout: "1441m" is longer than 24h`,
		"soon":  `handler 1: timeout: "soon" is not a duration`,
	} {
		t.Run(timeout, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("SITTER_STATE_DIR", t.TempDir())
			t.Setenv("SITTER_AUDIT", "")
			table := `{"handlers":[{"phase":"preToolUse","command":"true","timeout":"10s"},{"phase":"preToolUse","command":"true","timeout":"` + timeout + `"}]}`
			if err := os.WriteFile(filepath.Join(dir, "sitter-handlers.json"), []byte(table), 0o644); err != nil {
				t.Fatal(err)
			}
			in := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
			var stdout, stderr bytes.Buffer
			if code := run([]string{"hook", "claude-code", "PreToolUse", "--plugin", dir}, strings.NewReader(in), &stdout, &stderr, registry.Registry); code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want the no-op", stdout.String())
			}
			if s := stderr.String(); !strings.HasPrefix(s, "sitter: ") || !strings.Contains(s, want) {
				t.Errorf("stderr %q, want a sitter: line saying %s", s, want)
			}
		})
	}
}

// Every hook call appends one audit line, one that names no harness too
// (its harness is empty, its error says why); --help is no call and
// appends none (docs/contract.md).
func TestHookAuditsCallWithoutHarness(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", state)
	t.Setenv("SITTER_AUDIT", "")
	for _, args := range [][]string{{"hook"}, {"hook", "--help"}, {"hook", "--on-error", "closed"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, strings.NewReader("{}"), &stdout, &stderr, registry.Registry); code != 0 {
			t.Errorf("%q: exit %d", args, code)
		}
	}
	b, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want 2:\n%s", len(lines), b)
	}
	for _, l := range lines {
		var e struct{ Harness, Decision, Error string }
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Harness != "" || e.Decision != "noop" || !strings.Contains(e.Error, "missing <harness>") {
			t.Errorf("audit line %s: want no harness, noop and the error", l)
		}
	}
}

// The hook path's registry (registry.Hooks, no descriptors) says the same
// about an unknown harness as the verbs' (registry.Registry): the same
// did-you-mean, from ids, aliases and display names.
func TestHookRegistrySuggestsAsVerbs(t *testing.T) {
	for _, name := range []string{"gemni", "claud", "Claude Code", "gemini cli", "GitHub Copilot CLI", "codx", "Gemini_CLI", "kilocod", "no-such-harness", "px"} {
		_, _, hookErr := registry.Hooks().Resolve(name)
		_, _, verbErr := registry.Registry().Resolve(name)
		if hookErr == nil || verbErr == nil {
			t.Fatalf("%q resolves: hook %v, verbs %v", name, hookErr, verbErr)
		}
		if hookErr.Error() != verbErr.Error() {
			t.Errorf("%q:\nhook:  %v\nverbs: %v", name, hookErr, verbErr)
		}
	}
}
