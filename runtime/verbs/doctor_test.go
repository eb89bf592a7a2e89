package verbs

import (
	"bytes"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// A usage error of doctor and agents (an unknown harness, an argument a
// subcommand does not take) is one "sitter: …" line that says what is
// wrong, then the usage, on stderr, and exit 2 (README, "The command line").
func TestDoctorAgentsUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args      []string
		line, use string
	}{
		{[]string{"doctor", "--harness", "nosuch"}, `sitter: doctor: unknown harness "nosuch"`, "sitter doctor [flags]"},
		{[]string{"doctor", "--harness", "claude", "--harness", "nosuch"}, `sitter: doctor: unknown harness "nosuch"`, "sitter doctor [flags]"},
		{[]string{"doctor", "extra"}, `sitter: doctor: unexpected arguments ["extra"]`, "sitter doctor [flags]"},
		{[]string{"agents", "list", "extra"}, `sitter: agents list: unexpected arguments ["extra"]`, "sitter agents list [flags]"},
		{[]string{"agents", "detect", "a", "b"}, `sitter: agents detect: unexpected arguments ["a" "b"]`, "sitter agents detect [flags]"},
	} {
		var out, errb bytes.Buffer
		code := Run(c.args, nil, &out, &errb, registry.Registry)
		first, rest, _ := strings.Cut(errb.String(), "\n")
		if code != 2 || out.Len() > 0 || !strings.HasPrefix(first, c.line) || !strings.Contains(rest, "Usage:\n  "+c.use) {
			t.Errorf("sitter %s: exit %d, stdout %q, stderr %q; want 2, %q and the usage on stderr", strings.Join(c.args, " "), code, out.String(), errb.String(), c.line)
		}
	}
}
