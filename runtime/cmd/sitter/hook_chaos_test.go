package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// Fault tests of `sitter hook`: large payloads, many handlers, signals,
// unknown events under --on-error closed. `make chaos` runs every
// TestChaos* test.

// allocated returns the bytes f allocates (the whole process's: the
// tests that use it are not parallel).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bigPayload is a Claude Code PreToolUse payload of about size bytes, most
// of them a shell command; pretty-printed or compact.
func bigPayload(t *testing.T, size int, pretty bool) []byte {
	t.Helper()
	v := map[string]any{
		"session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "echo " + strings.Repeat("x", size)},
	}
	in, err := json.Marshal(v)
	if pretty {
		in, err = json.MarshalIndent(v, "", "  ")
	}
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func hookQuiet(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	t.Setenv("SITTER_AUDIT", "0") // the audit log's own cost is not the hook path's
}

// The event is encoded once per call and shared by the handlers: 20
// handlers of a large payload allocate about what one does, not 20 copies
// of the event; and the event's raw values share the payload's bytes,
// compacted in place when the harness pretty-printed it.
func TestChaosEventSharedAmongHandlers(t *testing.T) {
	t.Run("compact", func(t *testing.T) { eventShared(t, false) })
	t.Run("pretty", func(t *testing.T) { eventShared(t, true) })
}

func eventShared(t *testing.T, pretty bool) {
	hookQuiet(t)
	in := bigPayload(t, 4<<20, pretty)
	call := func(handlers int) uint64 {
		args := []string{"hook", "claude-code", "PreToolUse"}
		for range handlers {
			args = append(args, "--handler", "cat >/dev/null")
		}
		var stdout, stderr bytes.Buffer
		n := allocated(func() { run(args, bytes.NewReader(in), &stdout, &stderr, registry.Registry) })
		if stdout.Len() != 0 || stderr.Len() != 0 {
			t.Fatalf("%d handlers: stdout %q, stderr %q", handlers, stdout.String(), stderr.String())
		}
		return n
	}
	one, twenty := call(1), call(20)
	size := uint64(len(in))
	t.Logf("payload %d MiB: 1 handler allocated %d MiB, 20 handlers %d MiB", size>>20, one>>20, twenty>>20)
	// Reading stdin of unknown length (about 2×); the event shares the
	// payload's bytes.
	if one > 3*size {
		t.Errorf("1 handler: allocated %d MiB for a %d MiB payload, want at most 3×", one>>20, size>>20)
	}
	if per := (int64(twenty) - int64(one)) / 19; per > 64<<10 {
		t.Errorf("each extra handler allocated %d KiB (1 handler: %d MiB, 20: %d MiB, payload %d MiB): the event copied per handler?",
			per>>10, one>>20, twenty>>20, size>>20)
	}
}

// With no handler a large payload is read once and not copied on the way:
// skipped values (a tool's input) are validated, not decoded.
func TestChaosLargePayloadNoHandler(t *testing.T) {
	hookQuiet(t)
	in := bigPayload(t, 16<<20, false)
	var stdout, stderr bytes.Buffer
	n := allocated(func() {
		run([]string{"hook", "claude-code", "PreToolUse"}, bytes.NewReader(in), &stdout, &stderr, registry.Registry)
	})
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	t.Logf("payload %d MiB: allocated %d MiB", len(in)>>20, n>>20)
	// Reading stdin of unknown length grows a buffer (about 2× the
	// payload in all); anything past 3× is a needless copy.
	if n > 3*uint64(len(in)) {
		t.Errorf("allocated %d MiB for a %d MiB payload with no handler, want at most 3×", n>>20, len(in)>>20)
	}
}

// --on-error closed refuses a call whose event sitter does not know when
// the payload names a pre-tool event the harness has (the answer format
// the harness reads), and says why it cannot otherwise.
func TestChaosClosedUnknownEvent(t *testing.T) {
	hookQuiet(t)
	const pre = `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	tests := []struct {
		name, event, payload, policy string
		wantStdout, wantStderr       string
	}{
		{
			name: "payload names a pre-tool event", event: "NoSuchEvent", payload: pre, policy: "closed",
			wantStdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"sitter: unknown event \"NoSuchEvent\" for claude-code; see 'sitter atlas show claude-code'"}}` + "\n",
			wantStderr: `sitter: unknown event "NoSuchEvent" for claude-code; see 'sitter atlas show claude-code' (refused: fail-closed)` + "\n",
		},
		{
			name: "fail-open keeps the no-op", event: "NoSuchEvent", payload: pre, policy: "open",
			wantStderr: `sitter: unknown event "NoSuchEvent" for claude-code; see 'sitter atlas show claude-code'` + "\n",
		},
		{
			name: "payload names an unknown event", event: "-", policy: "closed",
			payload:    `{"session_id":"s","hook_event_name":"Mystery","tool_name":"Bash"}`,
			wantStderr: `sitter: unknown event "Mystery" for claude-code; see 'sitter atlas show claude-code' (not refused: no known harness event to answer in)` + "\n",
		},
		{
			name: "payload names a stop event", event: "NoSuchEvent", policy: "closed",
			payload:    `{"session_id":"s","hook_event_name":"Stop"}`,
			wantStderr: `sitter: unknown event "NoSuchEvent" for claude-code; see 'sitter atlas show claude-code' (not refused: no known harness event to answer in)` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"hook", "claude-code", tt.event, "--on-error", tt.policy, "--handler", "echo '{}'"},
				strings.NewReader(tt.payload), &stdout, &stderr, registry.Registry)
			if code != 0 || stdout.String() != tt.wantStdout || stderr.String() != tt.wantStderr {
				t.Errorf("exit %d\nstdout %q\n  want %q\nstderr %q\n  want %q", code, stdout.String(), tt.wantStdout, stderr.String(), tt.wantStderr)
			}
		})
	}
}

// Invalid UTF-8 in the payload does not reach the handler or the answer.
func TestChaosInvalidUTF8Payload(t *testing.T) {
	hookQuiet(t)
	seen := filepath.Join(t.TempDir(), "seen.json")
	in := "{\"session_id\":\"s\xff\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm \xfe\xff\"}}"
	var stdout, stderr bytes.Buffer
	run([]string{"hook", "claude-code", "PreToolUse", "--handler",
		"cat > " + seen + `; printf '{"decision":"deny","reason":"no \377"}'`},
		strings.NewReader(in), &stdout, &stderr, registry.Registry)
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"handler stdin": b, "stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
		if !utf8Valid(out) {
			t.Errorf("%s is not valid UTF-8: %q", name, out)
		}
	}
	if !bytes.Contains(b, []byte("rm \uFFFD")) || !bytes.Contains(stdout.Bytes(), []byte(`"permissionDecision":"deny"`)) {
		t.Errorf("handler got %s; answer %s", b, stdout.Bytes())
	}
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }
