package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/launch"
)

// parseLaunchArgs reads a launch command line as the launch command does.
func parseLaunchArgs(args []string) (launchArgs, error) {
	var got launchArgs
	c := launchCmd(&env{reg: registry.Registry, stdout: io.Discard, stderr: io.Discard}, func(_ context.Context, a launchArgs) int { got = a; return 0 })
	c.SetArgs(args)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	c.SilenceErrors, c.SilenceUsage = true, true
	err := c.Execute()
	return got, err
}

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
		{"codex", "--prompt", "x", "--prompt-file", "y"}, {"codex", "--json=maybe"}, {"codex", "--nope"},
		{"codex", "--upstream", "localhost:8080"}, {"codex", "--upstream", "api.openai.com/v1"},
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
	// --max-turns names the harnesses that take it: the others ignore it.
	for _, s := range genlaunch.Specs {
		line := out.String()[strings.Index(out.String(), "--max-turns"):]
		line = line[:strings.Index(line, "\n")]
		if got := strings.Contains(line, s.Harness); got != (len(s.MaxTurns) > 0) {
			t.Errorf("--max-turns help %q names %s: %v, but its launch settings pass %v", line, s.Harness, got, s.MaxTurns)
		}
	}
	for args, want := range map[string]string{
		"launch nope --prompt x":                  "unknown harness",
		"launch cursor --prompt x":                "no launch settings",
		"launch amp --prompt x":                   "sitter launch runs claude-code, codex, copilot, gemini-cli, opencode, pi",
		"launch":                                  "missing <harness> (sitter launch runs claude-code, codex, copilot, gemini-cli, opencode, pi)",
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

func TestParseLaunchBabysitArgs(t *testing.T) {
	a, err := parseLaunchArgs([]string{"claude", "--babysit", "p.mjs#main", "--inputs=in.json", "--max-iterations", "5", "--timeout", "1h"})
	if err != nil || a.babysit != "p.mjs#main" || a.inputs != "in.json" || a.runID != "" || a.modeSet || a.timeout != time.Hour {
		t.Errorf("parsed %+v %v", a, err)
	}
	if a, err := parseLaunchArgs([]string{"pi", "--run-id", "01J", "--mode", "bridge-hooks"}); err != nil || a.runID != "01J" || !a.modeSet || a.mode != launch.BridgeHooks {
		t.Errorf("--run-id: %+v %v", a, err)
	}
	for args, want := range map[string]string{
		"claude --babysit p.mjs --run-id 01J":              "exclude",
		"claude --run-id 01J --inputs in.json":             "--inputs goes with --babysit",
		"claude --inputs in.json":                          "--inputs goes with --babysit",
		"claude --run-id 01J --interactive":                "--interactive goes with --babysit",
		"claude --interactive --prompt hi":                 "--interactive goes with --babysit",
		"claude --babysit p.mjs --mode hook-driven":        "unattended",
		"claude --babysit p.mjs --mode bridge-interactive": "unattended",
		"claude --babysit":                                 "needs an argument",
	} {
		if _, err := parseLaunchArgs(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// TestBabysitMode: the atlas decides the mode of a babysit launch: the
// harnesses whose stop hook is native run agent-driven, the others
// (their stop event emulated by a bridge) bridge-hooks.
func TestBabysitMode(t *testing.T) {
	for h, want := range map[string]string{
		"claude-code": launch.AgentDriven, "codex": launch.AgentDriven, "gemini-cli": launch.AgentDriven, "copilot": launch.AgentDriven,
		"opencode": launch.BridgeHooks, "pi": launch.BridgeHooks,
	} {
		d, _, err := registry.Registry().Resolve(h)
		if err != nil {
			t.Fatal(err)
		}
		if got, why := babysitMode(d); got != want || why == "" {
			t.Errorf("%s: mode %s (%s), want %s", h, got, why, want)
		}
	}
}

func TestLaunchBabysitErrors(t *testing.T) {
	dir := t.TempDir()
	proc := dir + "/p.mjs"
	os.WriteFile(proc, []byte("export async function process() {}\n"), 0o644)
	bundle, err := filepath.Abs("../../artifacts/babysitter/claude-code")
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		// No babysitter bundle in ./artifacts and none given.
		"launch claude --babysit " + proc + " --upstream http://127.0.0.1:1 --bin /bin/true":                                   "needs the babysitter plugin",
		"launch pi --babysit " + proc + " --mode agent-driven --plugin " + filepath.Dir(bundle) + "/pi":                        "use --mode bridge-hooks",
		"launch claude --babysit " + proc + " --inputs " + proc + " --plugin " + bundle:                                        "not JSON",
		"launch claude --run-id nope --workspace " + dir + " --upstream http://127.0.0.1:1 --bin /bin/true --plugin " + bundle: "no such run",
	} {
		var out, errOut bytes.Buffer
		code := Run(strings.Fields(args), nil, &out, &errOut, registry.Registry)
		if code != 2 || !strings.Contains(errOut.String(), want) {
			t.Errorf("%s: code %d, stderr %q, want 2 and %q", args, code, errOut.String(), want)
		}
	}
}

// TestLaunchJSONSaysWhyItFailed: with --json (and in bridge-interactive
// mode, whose stdout is always the event stream) a launch that cannot
// start says why on stdout too, as one error event with the exit code,
// whether its command line or what it names is wrong; without, stdout
// stays empty.
func TestLaunchJSONSaysWhyItFailed(t *testing.T) {
	for _, c := range []struct {
		args, harness, want string
	}{
		{"launch nope --prompt x --json", "nope", "unknown harness"},
		{"launch claude --provider mars --prompt x --json", "claude-code", "unknown provider"},
		{"launch codex --routes /no/such/routes.json --prompt x --json", "codex", "--routes: "},
		{"launch codex --prompt-file /no/such/prompt --json", "codex", "/no/such/prompt"},
		{"launch codex --max-iterations 0 --prompt x --json", "codex", "--max-iterations 0: want a positive number"},
		{"launch codex --upstream localhost:8080 --prompt x --json", "codex", "--upstream: "},
		{"launch claude --mode bridge-interactive --provider mars --prompt x", "claude-code", "unknown provider"},
		// Flag errors, found before the command runs: wherever --json is.
		{"launch codex --json --bogus", "codex", "unknown flag: --bogus"},
		{"launch codex --bogus --prompt x --json", "codex", "unknown flag: --bogus"},
		{"launch --json=true --bogus codex", "codex", "unknown flag: --bogus"},
		{"launch codex --max-turns x --json", "codex", `invalid argument "x" for "--max-turns"`},
		{"launch codex --json --prompt", "codex", "flag needs an argument: --prompt"},
		{"launch codex --mode=bridge-interactive -z", "codex", "unknown shorthand flag: 'z'"},
	} {
		var out, errOut bytes.Buffer
		code := Run(strings.Fields(c.args), nil, &out, &errOut, registry.Registry)
		var ev map[string]any
		if err := json.Unmarshal(out.Bytes(), &ev); err != nil || code != 2 {
			t.Errorf("%s: exit %d, stdout %q (%v); want exit 2 and one JSON event", c.args, code, out.String(), err)
			continue
		}
		msg, _ := ev["error"].(string)
		if ev["type"] != "error" || !strings.Contains(msg, c.want) || ev["code"] != float64(2) || ev["harness"] != c.harness || ev["time"] == nil ||
			!strings.HasPrefix(errOut.String(), "sitter: launch: "+msg+"\n\n") || !strings.Contains(errOut.String(), "Usage:") {
			t.Errorf("%s: event %v; want type error, an error with %q (as on stderr %q), code 2, harness %s", c.args, ev, c.want, errOut.String(), c.harness)
		}
	}
	// A failure launch.Run finds (the harness cannot be started) ends the
	// stream of its events the same way, once.
	var out, errOut bytes.Buffer
	args := strings.Fields("launch codex --provider openai-responses --upstream http://127.0.0.1:1 --bin /no/such/codex --prompt x --json --workspace " + t.TempDir())
	code := Run(args, nil, &out, &errOut, registry.Registry)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last map[string]any
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if code != 1 || strings.Count(out.String(), `"type":"error"`) != 1 || last["type"] != "error" || last["code"] != float64(1) ||
		!strings.Contains(fmt.Sprint(last["error"]), "/no/such/codex") {
		t.Errorf("harness not startable: exit %d, stdout %q; want 1 and one error event, last", code, out.String())
	}
	for _, args := range []string{"launch claude --provider mars --prompt x", "launch codex --bogus", "launch codex --json=false --bogus", "launch codex --prompt"} {
		out.Reset()
		if code := Run(strings.Fields(args), nil, &out, &errOut, registry.Registry); code != 2 || out.Len() > 0 {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing on stdout", args, code, out.String())
		}
	}
}

// A harness that is not on PATH: the error says the command that installs
// it (as doctor's fix does), besides --bin.
func TestLaunchHarnessNotOnPathSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errOut bytes.Buffer
	args := []string{"launch", "codex", "--provider", "openai-responses", "--upstream", "http://127.0.0.1:1", "--prompt", "x", "--workspace", t.TempDir()}
	code := Run(args, nil, &out, &errOut, registry.Registry)
	want := `sitter: launch: codex: "codex" not found on PATH; install it (npm install -g @openai/codex@`
	if code != 1 || !strings.HasPrefix(errOut.String(), want) || !strings.Contains(errOut.String(), ") or pass --bin PATH (the npm package's binary is node_modules/.bin/codex)") {
		t.Errorf("exit %d, stderr %q; want 1 and %q…, the npm package's binary and --bin", code, errOut.String(), want)
	}
}
