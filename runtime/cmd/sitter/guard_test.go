package main

import (
	"bytes"
	"strings"
	"testing"

	"sitter.dev/sitter/runtime/hook"
)

func TestRunGuard(t *testing.T) {
	event := func(command string) string {
		return `{"version":"sitter.hook.v1","harness":"claude-code","nativeEvent":"PreToolUse","phase":"preToolUse",` +
			`"session":{"cwd":"/home/dev/acme-api"},"tool":{"name":"Bash","kind":"shell","input":{"command":` + command + `}}}`
	}
	tests := []struct {
		name, args, stdin string
		code              int
		stdout, stderr    string // prefixes; "" = empty
	}{
		{"deny", "", event(`"sh -c 'rm -rf /'"`), 0, `{"decision":"deny","reason":"guard: recursive-delete: `, ""},
		{"force push", "", event(`"git push -f"`), 0, `{"decision":"deny","reason":"guard: force-push: `, ""},
		{"noop", "", event(`"rm -rf build && git push"`), 0, "", ""},
		{"not shell", "", `{"phase":"preToolUse","tool":{"kind":"read","input":{"command":"rm -rf /"}}}`, 0, "", ""},
		{"empty", "", "", 0, "", "sitter guard: empty stdin"},
		{"not json", "", "{", 0, "", "sitter guard: stdin is not a canonical event"},
		{"wrong shape", "", `{"tool":"x"}`, 0, "", "sitter guard: stdin is not a canonical event"},
		{"arguments", "x", event(`"rm -rf /"`), 1, "", "sitter guard: unexpected arguments"},
		// A mistyped registration is a handler error (exit 1), never exit
		// 2: a handler's exit 2 is a deny, of every tool call.
		{"unknown flag", "--bogus", event(`"ls"`), 1, "", "sitter guard: unknown flag --bogus"},
	}
	for _, tt := range tests {
		args := []string{"guard"}
		if tt.args != "" {
			args = append(args, strings.Fields(tt.args)...)
		}
		var stdout, stderr bytes.Buffer
		code := run(args, strings.NewReader(tt.stdin), &stdout, &stderr, nil)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d", tt.name, code, tt.code)
		}
		if !strings.HasPrefix(stdout.String(), tt.stdout) || (tt.stdout == "") != (stdout.Len() == 0) {
			t.Errorf("%s: stdout %q, want prefix %q", tt.name, stdout.String(), tt.stdout)
		}
		if !strings.HasPrefix(stderr.String(), tt.stderr) || (tt.stderr == "") != (stderr.Len() == 0) {
			t.Errorf("%s: stderr %q, want prefix %q", tt.name, stderr.String(), tt.stderr)
		}
		if n := strings.Count(stderr.String(), "\n"); n > 1 {
			t.Errorf("%s: %d stderr lines, want at most one", tt.name, n)
		}
		if stdout.Len() > 0 {
			// What the engine reads back is the same deny.
			res, err := hook.ParseResult(stdout.Bytes())
			if err != nil || res.Decision != hook.Deny {
				t.Errorf("%s: engine reads %+v, %v", tt.name, res, err)
			}
		}
	}
}
