package host

import (
	"bytes"
	"strings"
	"testing"
	"time"

	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/launch"
)

func TestParseLaunchArgs(t *testing.T) {
	a, err := parseLaunchArgs([]string{"claude", "--provider", "openai", "--model=m", "--upstream", "http://u/v1",
		"--plugin", "guard", "--plugin=./b", "--prompt", "do it", "--mode", "bridge-hooks", "--max-iterations", "3",
		"--max-turns=4", "--workspace", "/w", "--bin", "/b/claude", "--keep-state", "--json"})
	if err != nil {
		t.Fatal(err)
	}
	want := launchArgs{harness: "claude", provider: "openai", model: "m", upstream: "http://u/v1", plugins: []string{"guard", "./b"},
		prompt: "do it", mode: "bridge-hooks", maxIterations: 3, maxTurns: 4, workspace: "/w", bin: "/b/claude", keepState: true, json: true}
	if a.harness != want.harness || a.provider != want.provider || a.model != want.model || a.upstream != want.upstream ||
		strings.Join(a.plugins, ",") != "guard,./b" || a.prompt != want.prompt || a.mode != want.mode || a.maxIterations != 3 ||
		a.maxTurns != 4 || a.workspace != "/w" || a.bin != "/b/claude" || !a.keepState || !a.json {
		t.Errorf("parsed %+v", a)
	}
	if a, _ := parseLaunchArgs([]string{"codex", "--prompt-file", "p.md"}); a.mode != launch.AgentDriven || a.promptFile != "p.md" || a.idleTimeout != 0 {
		t.Errorf("defaults: %+v", a)
	}
	if a, err := parseLaunchArgs([]string{"claude", "--mode", "bridge-interactive", "--idle-timeout", "1m30s", "--prompt", "x"}); err != nil ||
		a.mode != launch.BridgeInteractive || a.idleTimeout != 90*time.Second {
		t.Errorf("bridge-interactive: %+v %v", a, err)
	}
	for _, bad := range [][]string{
		{}, {"a", "b"}, {"codex", "--mode", "autopilot"}, {"codex", "--max-iterations", "0"}, {"codex", "--prompt"},
		{"codex", "--idle-timeout", "30"}, {"codex", "--idle-timeout", "-1s"},
		{"codex", "--prompt", "x", "--prompt-file", "y"}, {"codex", "--json=1"}, {"codex", "--nope"},
	} {
		if _, err := parseLaunchArgs(bad); err == nil {
			t.Errorf("parseLaunchArgs(%q): want an error", bad)
		}
	}
}

func TestLaunchHelpAndErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run([]string{"launch", "--help"}, nil, &out, &errOut, registry.Registry); code != 0 {
		t.Fatalf("launch --help: %d", code)
	}
	for _, s := range genlaunch.Specs {
		if !strings.Contains(out.String(), "sitter launch "+s.Harness+" ") {
			t.Errorf("help has no example for %s", s.Harness)
		}
	}
	for args, want := range map[string]string{
		"launch nope --prompt x":                  "unknown harness",
		"launch cursor --prompt x":                "no launch settings",
		"launch codex --provider mars --prompt x": "unknown provider",
		"launch codex --mode bridge-interactive --provider openai-responses --upstream http://127.0.0.1:1 --bin /bin/true": "needs --prompt",
	} {
		out.Reset()
		errOut.Reset()
		code := Run(strings.Fields(args), nil, &out, &errOut, registry.Registry)
		if code == 0 || !strings.Contains(errOut.String(), want) {
			t.Errorf("%s: code %d, stderr %q, want %q", args, code, errOut.String(), want)
		}
	}
}

func TestDefaultProvider(t *testing.T) {
	for h, want := range map[string]string{"claude-code": "anthropic", "codex": "openai-responses", "gemini-cli": "gemini", "copilot": "openai"} {
		s, _ := launch.Find(genlaunch.Specs, h)
		if got := defaultProvider(s); got != want {
			t.Errorf("%s: default provider %q, want %q", h, got, want)
		}
	}
}
