package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/host"
	"sitter.dev/sitter/runtime/plugin"
)

// artifactsDir is the repository's generated bundles, seen from here.
const artifactsDir = "../../../artifacts"

// denyPayloads are PreToolUse-like payloads asking for `rm -rf /`, per
// harness and native event, in each harness's own dialect (the payload
// goldens under gen/golden/testdata/normalize show each dialect).
var denyPayloads = map[string]map[string]string{
	"claude-code": {"PreToolUse": `{"session_id":"s1","cwd":"/home/dev/acme","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"t1"}`},
	"codex":       {"PreToolUse": `{"session_id":"s1","cwd":"/home/dev/acme","hook_event_name":"PreToolUse","model":"gpt-5.1-codex","turn_id":"u1","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"t1"}`},
	"gemini-cli":  {"BeforeTool": `{"session_id":"s1","cwd":"/home/dev/acme","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}`},
	"cursor": {
		"preToolUse":           `{"conversation_id":"c1","hook_event_name":"preToolUse","workspace_roots":["/home/dev/acme"],"cwd":"/home/dev/acme","tool_name":"Shell","tool_input":{"command":"rm -rf /","working_directory":"/home/dev/acme"}}`,
		"beforeShellExecution": `{"conversation_id":"c1","hook_event_name":"beforeShellExecution","workspace_roots":["/home/dev/acme"],"cwd":"/home/dev/acme","command":"rm -rf /"}`,
	},
	"copilot":  {"preToolUse": `{"sessionId":"s1","timestamp":1796030067940,"cwd":"/home/dev/acme","toolName":"bash","toolArgs":"{\"command\":\"rm -rf /\"}"}`},
	"opencode": {"tool.execute.before": `{"input":{"tool":"bash","sessionID":"s1","callID":"t1"},"output":{"args":{"command":"rm -rf /"}},"directory":"/home/dev/acme"}`},
	"pi":       {"tool_call": `{"type":"tool_call","toolCallId":"t1","toolName":"bash","input":{"command":"rm -rf /"},"ctx":{"cwd":"/home/dev/acme"}}`},
}

// denied reads a harness's native deny from stdout.
var denied = map[string]func(out map[string]any) bool{
	"claude-code": hookSpecificDeny,
	"codex":       hookSpecificDeny,
	"gemini-cli":  func(o map[string]any) bool { return o["decision"] == "deny" && o["reason"] != "" },
	"cursor":      func(o map[string]any) bool { return o["permission"] == "deny" },
	"copilot":     func(o map[string]any) bool { return o["permissionDecision"] == "deny" },
	"opencode":    func(o map[string]any) bool { s, _ := o["error"].(string); return s != "" },
	"pi":          func(o map[string]any) bool { return o["block"] == true },
}

func hookSpecificDeny(o map[string]any) bool {
	h, _ := o["hookSpecificOutput"].(map[string]any)
	return h["hookEventName"] == "PreToolUse" && h["permissionDecision"] == "deny" && h["permissionDecisionReason"] != ""
}

// installedCommands lists the (event, command) pairs an install wrote,
// read back from the harness's config file the way the harness reads it.
func installedCommands(t *testing.T, rep *plugin.Report, commandKey string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(rep.Target)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for event, items := range cfg.Hooks {
		for _, it := range items {
			if hs, ok := it["hooks"].([]any); ok {
				for _, h := range hs {
					out[event] = h.(map[string]any)[commandKey].(string)
				}
				continue
			}
			out[event] = it[commandKey].(string)
		}
	}
	return out
}

// runShell runs a hook command as a harness does: sh -c, payload on stdin.
// It runs in dir, where a stray command substitution would leave its mark.
func runShell(t *testing.T, dir, command, payload string, env []string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(payload)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Errorf("sh -c %s: %v (stderr %s)", command, err, e.String())
	}
	return o.String(), e.String()
}

// Every guard bundle, installed into a project whose path has a space, a
// $, a single and a double quote, answers `rm -rf /` with the harness's
// own deny when its installed command runs exactly as the harness runs it.
func TestPluginInstallEveryHarnessShellSafe(t *testing.T) {
	sitter, err := exec.LookPath("sitter") // testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	var guardErr bytes.Buffer
	if code := run([]string{"guard"}, strings.NewReader(`{"version":"sitter.hook.v1","phase":"preToolUse","tool":{"kind":"shell","input":{"command":"rm -rf /"}},"session":{"cwd":"/home/dev/acme"}}`), &bytes.Buffer{}, &guardErr, registry.Registry); strings.Contains(guardErr.String(), "unknown command") {
		t.Fatalf("sitter guard is not wired in yet (exit %d): this test needs it", code)
	}
	project := filepath.Join(t.TempDir(), `my proj $HOME 'it's' "q" $(touch pwned)`)
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SITTER_BIN="+sitter, "SITTER_STATE_DIR="+t.TempDir())
	reg := registry.Registry()
	for _, d := range reg.Descriptors {
		payloads, ok := denyPayloads[d.ID]
		if !ok {
			t.Errorf("no payload for harness %s: add one", d.ID)
			continue
		}
		t.Run(d.ID, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := host.Run([]string{"plugin", "install", filepath.Join(artifactsDir, "guard"), "--harness", d.ID, "--dir", project, "--json"}, nil, &out, &errOut, registry.Registry); code != 0 {
				t.Fatalf("install: exit %d: %s", code, errOut.String())
			}
			var rep plugin.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			commands := map[string]string{}
			switch d.Packaging.Target.Kind {
			case "hooks-config":
				commands = installedCommands(t, &rep, d.Packaging.Target.CommandKey)
				for event, c := range commands {
					want := plugin.ShellQuote(rep.Launcher) + " " + d.ID + " " + event
					if c != want {
						t.Errorf("%s command = %s, want %s", event, c, want)
					}
				}
			case "module":
				// The module re-exports the installed entry by its exact
				// path; the bridge in it spawns ROOT/bin/sitter-hook
				// <harness> <event> without a shell, which is this:
				src, err := os.ReadFile(rep.Target)
				if err != nil {
					t.Fatal(err)
				}
				lit := regexp.MustCompile(`from ("(?:[^"\\]|\\.)*");`).FindSubmatch(src)
				var entry string
				if lit == nil || json.Unmarshal(lit[1], &entry) != nil {
					t.Fatalf("no re-export in %s", src)
				}
				if entry != filepath.Join(rep.Copy, d.Packaging.Target.Entry) {
					t.Errorf("module re-exports %s", entry)
				}
				if _, err := os.Stat(entry); err != nil {
					t.Error(err)
				}
				for event := range payloads {
					commands[event] = plugin.ShellQuote(rep.Launcher) + " " + d.ID + " " + event
				}
			}
			ran := 0
			for event, c := range commands {
				payload, ok := payloads[event]
				if !ok {
					continue
				}
				ran++
				stdout, stderr := runShell(t, project, c, payload, env)
				var o map[string]any
				if err := json.Unmarshal([]byte(stdout), &o); err != nil || !denied[d.ID](o) {
					t.Errorf("%s: stdout %q (stderr %q), want %s's deny", event, stdout, stderr, d.ID)
				}
				// Something harmless passes: the no-op.
				stdout, stderr = runShell(t, project, c, strings.Replace(payload, "rm -rf /", "ls -la", 1), env)
				if stdout != "" {
					t.Errorf("%s: ls -la answered %q (stderr %q), want the no-op", event, stdout, stderr)
				}
			}
			if ran == 0 {
				t.Errorf("no installed command of %s had a payload here: %v", d.ID, commands)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(project, "pwned")); err == nil {
		t.Error("a command substitution in the project path ran")
	}
}
