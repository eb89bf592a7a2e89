package verbs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// A usage error a verb finds itself (a name it does not know, a required
// flag missing) reads as cobra's own: one "sitter: <verb>: …" line, a
// blank line and the usage on stderr, nothing on stdout, exit 2.
func TestVerbUsageErrorsReadAlike(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir()) // no session anchors: no harness session found
	t.Setenv("SITTER_SESSION_ID", "")
	t.Setenv("SITTER_HARNESS", "")
	t.Setenv("SITTER_STORE", "")
	t.Setenv("PATH", t.TempDir()) // no sitter-proxy: a check left to the gateway would say "make build"
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"launch", "nope", "--prompt", "x"}, `sitter: launch: unknown harness "nope"`},
		{[]string{"launch", "codex", "--provider", "mars", "--prompt", "x"}, `sitter: launch: unknown provider "mars"`},
		{[]string{"launch", "codex", "--routes", "/no/such/routes.json", "--prompt", "x"}, `sitter: launch: --routes: `},
		{[]string{"launch", "codex", "--mode", "bridge-hooks", "--provider", "openai-responses", "--upstream", "http://127.0.0.1:1", "--bin", "/bin/true"}, `sitter: launch: mode bridge-hooks needs --prompt`},
		{[]string{"proxy", "--provider", "mars"}, `sitter: proxy: unknown provider "mars"`},
		{[]string{"proxy", "--provider", "openai", "--harness", "codex"}, `sitter: proxy: --harness and --record go with --routes`},
		{[]string{"proxy", "--routes", "r.json", "--provider", "openai"}, `sitter: proxy: --routes names the providers and models: drop --provider, --model and --upstream`},
		{[]string{"proxy", "--routes", "r.json", "--harness", "claud"}, `sitter: proxy: --harness: unknown harness "claud"`},
		{[]string{"instructions", "babysit"}, `sitter: instructions babysit: which harness? pass --harness (one of: `},
		{[]string{"worker"}, `sitter: worker: --store (or $SITTER_STORE) names the store to work for`},
	} {
		var out, errb bytes.Buffer
		code := Run(c.args, nil, &out, &errb, registry.Registry)
		first, rest, _ := strings.Cut(errb.String(), "\n")
		if code != 2 || out.Len() > 0 || !strings.HasPrefix(first, c.line) || !strings.HasPrefix(rest, "\nUsage:\n  sitter "+c.args[0]) {
			t.Errorf("sitter %s: exit %d, stdout %q, stderr %q; want 2, %q, a blank line and the usage on stderr", strings.Join(c.args, " "), code, out.String(), errb.String(), c.line)
		}
	}
}

// With --json, launch's usage error is still the error event on stdout,
// and stderr has the line and the usage.
func TestLaunchJSONUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(strings.Fields("launch claude --provider mars --prompt x --json"), nil, &out, &errb, registry.Registry)
	var ev map[string]any
	first, rest, _ := strings.Cut(errb.String(), "\n")
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil || code != 2 || ev["type"] != "error" || ev["code"] != float64(2) ||
		!strings.HasPrefix(first, `sitter: launch: unknown provider "mars"`) || !strings.HasPrefix(rest, "\nUsage:\n  sitter launch") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, one error event, the line and the usage", code, out.String(), errb.String())
	}
}

// A launch failure that is no mistake on the command line (exit 1) is one
// "sitter: launch: …" line, without the usage.
func TestLaunchFailureHasNoUsage(t *testing.T) {
	var out, errb bytes.Buffer
	args := strings.Fields("launch codex --provider openai-responses --upstream http://127.0.0.1:1 --bin /no/such/codex --prompt x --workspace " + t.TempDir())
	code := Run(args, nil, &out, &errb, registry.Registry)
	if code != 1 || !strings.Contains(errb.String(), "sitter: launch: ") || !strings.Contains(errb.String(), "/no/such/codex") ||
		strings.Contains(errb.String(), "sitter launch: start") || strings.Contains(errb.String(), "Usage:") {
		t.Errorf("exit %d, stderr %q; want 1 and one sitter: launch: line without the usage", code, errb.String())
	}
}
