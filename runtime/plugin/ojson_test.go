package plugin

import (
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOrderedRoundTrip(t *testing.T) {
	// Already in the 2-space form: re-encoding gives the same bytes, with
	// key order, number spelling, unicode and "&&" as they were.
	in := `{
  "zeta": 1.50,
  "alpha": [],
  "obj": {},
  "cmd": "a && b <c> 'd' \"e\" é \u2028",
  "list": [
    1e3,
    true,
    null,
    {
      "b": 2,
      "a": 1
    }
  ]
}
`
	v, err := decodeOrdered([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "zeta": 1.50,
  "alpha": [],
  "obj": {},
  "cmd": "a && b <c> 'd' \"e\" é \u2028",
  "list": [
    1e3,
    true,
    null,
    {
      "b": 2,
      "a": 1
    }
  ]
}
`
	if diff := cmp.Diff(want, string(encodeOrdered(v))); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if !equalOrdered(v, cloneOrdered(v)) {
		t.Error("a clone differs from its original")
	}
	o := v.(*object)
	o.set("alpha", "x")
	if got := o.keys(); !cmp.Equal(got, []string{"zeta", "alpha", "obj", "cmd", "list"}) {
		t.Errorf("set moved a key: %v", got)
	}
	o.setFirst("version", json1)
	o.del("zeta")
	if got := o.keys(); !cmp.Equal(got, []string{"version", "alpha", "obj", "cmd", "list"}) {
		t.Errorf("keys after setFirst/del: %v", got)
	}
}

func TestOrderedDecodeErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a" 1}`, `{} []`, `[1,]`} {
		if _, err := decodeOrdered([]byte(in)); err == nil {
			t.Errorf("decodeOrdered(%q) = nil error", in)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"plain", "with space", `it's`, `"dq"`, `$HOME $(echo no) ` + "`echo no`", `back\slash`, `'`, `''`, "new\nline", ""} {
		out, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil {
			t.Fatalf("sh: %v", err)
		}
		if string(out) != s {
			t.Errorf("sh read %s as %q, want %q", ShellQuote(s), out, s)
		}
	}
	if got := shellWord("PreToolUse"); got != "PreToolUse" {
		t.Errorf("shellWord quoted a plain word: %s", got)
	}
	if got := shellWord("a b"); got != "'a b'" {
		t.Errorf("shellWord(a b) = %s", got)
	}
}

func TestLauncherCommand(t *testing.T) {
	tests := []struct {
		cmd  string
		root string
		args []string
		ok   bool
	}{
		{`"${CLAUDE_PLUGIN_ROOT}/bin/sitter-hook" claude-code PreToolUse`, "${CLAUDE_PLUGIN_ROOT}", []string{"claude-code", "PreToolUse"}, true},
		{`"./bin/sitter-hook" copilot preToolUse`, ".", []string{"copilot", "preToolUse"}, true},
		{`"${X}/bin/other" a b`, "", nil, false},
		{`${X}/bin/sitter-hook a b`, "", nil, false},
		{`"${X}/bin/sitter-hook"; rm -rf / a`, "", nil, false},
	}
	for _, tt := range tests {
		root, args, ok := launcherCommand(tt.cmd)
		if ok != tt.ok || root != tt.root || !cmp.Equal(args, tt.args) {
			t.Errorf("launcherCommand(%s) = %q %q %v", tt.cmd, root, args, ok)
		}
	}
}
