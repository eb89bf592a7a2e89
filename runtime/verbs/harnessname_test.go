package verbs

import (
	"bytes"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// A harness name sitter does not know is a mistake on the command line in
// every verb that takes one: one "sitter: <verb>: unknown harness …" line,
// with a suggestion where the name is another spelling of a harness (its
// display name, a typo), then the usage, on stderr; nothing on stdout;
// exit 2.
func TestUnknownHarnessIsUsageError(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	for _, c := range []struct {
		args       []string
		line, hint string
	}{
		{[]string{"plugin", "install", "guard", "--harness", "Claude Code", "--dir", dir}, `sitter: plugin install: unknown harness "Claude Code"`, "did you mean claude-code?"},
		{[]string{"plugin", "uninstall", "guard", "--harness", "gemini cli", "--dir", dir}, `sitter: plugin uninstall: unknown harness "gemini cli"`, "did you mean gemini-cli?"},
		{[]string{"plugin", "install", "guard", "--harness", "nope", "--dir", dir}, `sitter: plugin install: unknown harness "nope"`, ""},
		{[]string{"atlas", "show", "claud"}, `sitter: atlas show: unknown harness "claud"`, "did you mean claude-code?"},
		{[]string{"atlas", "show", "Gemini_CLI"}, `sitter: atlas show: unknown harness "Gemini_CLI"`, "did you mean gemini-cli?"},
		{[]string{"instructions", "babysit", "--harness", "Claude Code"}, `sitter: instructions babysit: unknown harness "Claude Code"`, "did you mean claude-code?"},
		{[]string{"doctor", "--harness", "codx"}, `sitter: doctor: unknown harness "codx"`, "did you mean codex?"},
		{[]string{"session", "start", "--harness", "claud", "--session-id", "x"}, `sitter: session start: --harness: unknown harness "claud"`, "did you mean claude-code?"},
		{[]string{"session", "state", "--harness", "nope", "--session-id", "x"}, `sitter: session state: --harness: unknown harness "nope"`, ""},
	} {
		var out, errb bytes.Buffer
		code := Run(c.args, nil, &out, &errb, registry.Registry)
		first, rest, _ := strings.Cut(errb.String(), "\n")
		if code != 2 || out.Len() > 0 || !strings.HasPrefix(first, c.line) || !strings.Contains(rest, "Usage:\n  ") {
			t.Errorf("sitter %s: exit %d, stdout %q, stderr %q; want 2, %q and the usage on stderr", strings.Join(c.args, " "), code, out.String(), errb.String(), c.line)
		}
		if c.hint != "" && !strings.Contains(first, c.hint) {
			t.Errorf("sitter %s: %q, want it to say %q", strings.Join(c.args, " "), first, c.hint)
		}
		if c.hint == "" && strings.Contains(first, "did you mean") {
			t.Errorf("sitter %s: %q suggests a harness for a name like none", strings.Join(c.args, " "), first)
		}
	}
}

// A --scope that is neither project nor user is a usage error, as any flag
// value a verb does not take (audit query --decision, launch --mode):
// said before a bundle is looked up.
func TestPluginScopeIsUsageError(t *testing.T) {
	dir := t.TempDir()
	for _, verb := range []string{"install", "uninstall"} {
		args := []string{"plugin", verb, "guard", "--harness", "codex", "--scope", "global", "--dir", dir}
		var out, errb bytes.Buffer
		code := Run(args, nil, &out, &errb, registry.Registry)
		first, rest, _ := strings.Cut(errb.String(), "\n")
		want := `sitter: plugin ` + verb + `: --scope "global": want project or user`
		if code != 2 || out.Len() > 0 || first != want || !strings.Contains(rest, "Usage:\n  ") {
			t.Errorf("sitter %s: exit %d, stdout %q, stderr %q; want 2, %q and the usage on stderr", strings.Join(args, " "), code, out.String(), errb.String(), want)
		}
	}
}
