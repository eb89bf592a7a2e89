package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/plugin"
	"sitter.dev/sitter/runtime/verbs"
)

// artifactsDir is the repository's generated bundles, seen from here.
const artifactsDir = "../../../artifacts"

// samplesDir holds each harness's sample payloads, one txtar per native
// event (payload.json and the canonical event.json), as the normalizer
// goldens keep them: a harness added to the atlas brings its own.
const samplesDir = "../../../gen/golden/testdata/normalize"

// denyCases are, per pre-tool event of the harness that can deny, a sample
// payload of it whose shell command is replaced by `rm -rf /`. A harness
// without such a sample has none: it is tested on its install alone.
func denyCases(t *testing.T, d *adapter.Descriptor) map[string]string {
	t.Helper()
	cases := map[string]string{}
	for _, e := range d.Events {
		if e.Phase != "preToolUse" || !slices.Contains(e.Can, "deny") {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(samplesDir, d.ID, e.Name+"*.txtar"))
		for _, p := range paths {
			if payload, ok := shellSample(t, p); ok {
				cases[e.Name] = payload
				break
			}
		}
	}
	return cases
}

// shellSample reads a sample and returns its payload with the shell
// command (as the canonical event has it) replaced by `rm -rf /`, however
// the payload escapes it (a JSON string, or JSON inside a JSON string).
func shellSample(t *testing.T, path string) (string, bool) {
	payload, ev, ok := readSample(t, path)
	if !ok || ev.Tool == nil || ev.Tool.Kind != "shell" {
		return "", false
	}
	var in struct{ Command string }
	if json.Unmarshal(ev.Tool.Input, &in) != nil || in.Command == "" {
		return "", false
	}
	escaped := in.Command
	for range 3 {
		if strings.Contains(string(payload), escaped) {
			// Every copy: a payload may carry the command twice
			// (Cline: tool_call.input and preToolUse.parameters).
			return strings.ReplaceAll(string(payload), escaped, "rm -rf /"), true
		}
		b, _ := json.Marshal(escaped)
		escaped = string(b[1 : len(b)-1])
	}
	return "", false
}

// readSample reads a sample: its payload, and the canonical event it
// normalizes to (ok false when that does not parse).
func readSample(t *testing.T, path string) (payload []byte, ev hook.Event, ok bool) {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var event []byte
	for _, f := range ar.Files {
		switch f.Name {
		case "payload.json":
			payload = f.Data
		case "event.json":
			event = f.Data
		}
	}
	return payload, ev, json.Unmarshal(event, &ev) == nil
}

// isDeny reports whether a hook's answer is the harness's deny as the
// atlas renders it: the same exit code, and the same JSON with every
// reason slot non-empty (or, for a deny written as an exit code and a
// reason on stderr, no stdout and a non-empty stderr).
func isDeny(d *adapter.Descriptor, event string, got shellRun) bool {
	return isDecision(d, event, hook.Deny, got)
}

// isDecision is isDeny for any decision with a reason (a stop's block).
func isDecision(d *adapter.Descriptor, event string, decision hook.Decision, got shellRun) bool {
	spec, ok := d.Event(event)
	if !ok {
		return false
	}
	want := d.Render(hook.Event{Harness: d.ID, NativeEvent: event, Phase: spec.Phase}, hook.Result{Decision: decision, Reason: "REASON"})
	if got.exit != want.Exit {
		return false
	}
	// A harness that reads the deny from the exit code and stderr (exit 2
	// and the reason) prints nothing on stdout.
	if len(want.Stdout) == 0 {
		return got.stdout == "" && (len(want.Stderr) == 0 || strings.TrimSpace(got.stderr) != "")
	}
	var w, g any
	if json.Unmarshal(want.Stdout, &w) != nil || json.Unmarshal([]byte(got.stdout), &g) != nil {
		return false
	}
	return sameShape(w, g)
}

// sameShape compares an expected answer with an actual one: equal but
// for the reason, which may be any non-empty string.
func sameShape(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			if !sameShape(v, g[k]) {
				return false
			}
		}
		return true
	case string:
		g, ok := got.(string)
		if w == "REASON" {
			return ok && g != ""
		}
		return ok && g == w
	}
	return cmp.Equal(want, got)
}

// installedCommands lists the (event, command) pairs of a hooks config
// file (the one an install wrote, or a bundle's own), read the way the
// harness reads it.
func installedCommands(t *testing.T, file, commandKey string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
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
// shellRun is what a hook command did: its output and exit code.
type shellRun struct {
	stdout, stderr string
	exit           int
}

func runShell(t *testing.T, dir, command, payload string, env []string) shellRun {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(payload)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Errorf("sh -c %s: %v (stderr %s)", command, err, e.String())
	}
	return shellRun{o.String(), e.String(), cmd.ProcessState.ExitCode()}
}

// Every guard bundle, installed into a project whose path has a space, a
// $, a single and a double quote, answers `rm -rf /` with the harness's
// own deny when its installed command runs exactly as the harness runs it;
// so does a shell-hook harness whose target is a plugin folder, which no
// harness of the atlas is yet (a synthetic descriptor stands in).
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
	check := func(t *testing.T, d *adapter.Descriptor, reg func() *adapter.Registry) {
		payloads := denyCases(t, d)
		runEnv := env
		if d.Packaging.Format == "" {
			// The atlas's packaging block is optional: such a
			// harness gets no bundle to install.
			t.Skipf("%s has no packaging in the atlas: no bundle to install", d.ID)
		}
		var out, errOut bytes.Buffer
		if code := verbs.Run([]string{"plugin", "install", filepath.Join(artifactsDir, "guard"), "--harness", d.ID, "--dir", project, "--json"}, nil, &out, &errOut, reg); code != 0 {
			t.Fatalf("install: exit %d: %s", code, errOut.String())
		}
		var rep plugin.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		commands := map[string]string{}
		switch d.Packaging.Target.Kind {
		case "hooks-config":
			commands = installedCommands(t, rep.Target, d.Packaging.Target.CommandKey)
			for event, c := range commands {
				want := plugin.ShellQuote(rep.Launcher) + " " + d.ID + " " + event
				if c != want {
					t.Errorf("%s command = %s, want %s", event, c, want)
				}
			}
		case "hooks-folder":
			// One script per event in the target folder, run as the
			// harness runs it: sh <folder>/<file>.
			for _, e := range rep.Entries {
				want := plugin.ShellQuote(rep.Launcher) + " " + d.ID + " " + e.Event
				if e.Command != want {
					t.Errorf("%s command = %s, want %s", e.Event, e.Command, want)
				}
				name := strings.ReplaceAll(path.Base(d.Packaging.Bundle.Hooks), "{event}", e.Event)
				commands[e.Event] = "sh " + plugin.ShellQuote(filepath.Join(rep.Target, name))
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
		case "folder":
			// The copy is the plugin folder the harness loads.
			if rep.Copy != rep.Target {
				t.Errorf("copy %s, want it at the target %s", rep.Copy, rep.Target)
			}
			if _, err := os.Stat(rep.Launcher); err != nil {
				t.Error(err)
			}
			if d.Family.Delivery == "shell-hook" {
				// A shell-hook harness reads the copy's own hooks
				// file and runs each command with sh -c, its root
				// variable set to the copy (under the project's
				// path): the commands as the bundle has them.
				root := regexp.MustCompile(`^\$\{([A-Z_][A-Z0-9_]*)\}$`).FindStringSubmatch(d.Packaging.RootVar)
				if root == nil {
					t.Fatalf("root %q is no variable a hook process gets", d.Packaging.RootVar)
				}
				commands = installedCommands(t, filepath.Join(rep.Copy, filepath.FromSlash(d.Packaging.Bundle.Hooks)), d.Packaging.Bundle.CommandKey)
				for event, c := range commands {
					if !strings.Contains(c, d.Packaging.RootVar) {
						t.Errorf("%s command = %s: does not run the copy's launcher through %s", event, c, d.Packaging.RootVar)
					}
				}
				runEnv = append(slices.Clip(env), root[1]+"="+rep.Copy)
				break
			}
			// A bridge spawns ROOT/bin/sitter-hook <harness> <event>
			// without a shell, which is this:
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
			if got := runShell(t, project, c, payload, runEnv); !isDeny(d, event, got) {
				t.Errorf("%s: exit %d, stdout %q (stderr %q), want %s's deny", event, got.exit, got.stdout, got.stderr, d.ID)
			}
			// Something harmless passes: the no-op.
			if got := runShell(t, project, c, strings.ReplaceAll(payload, "rm -rf /", "ls -la"), runEnv); got.stdout != "" || got.exit != 0 {
				t.Errorf("%s: ls -la answered exit %d, %q (stderr %q), want the no-op", event, got.exit, got.stdout, got.stderr)
			}
		}
		if ran == 0 && len(payloads) > 0 {
			t.Errorf("no installed command of %s had a payload here: %v", d.ID, commands)
		}
		if len(payloads) == 0 {
			// Adding a harness is CUE alone, so a sample is not
			// required; sitter-gen refuses a harness whose tool
			// events name no shell tool (check.Atlas), the cause
			// of a guard that never fires.
			t.Logf("%s: no sample pre-tool payload of a shell tool (kind \"shell\" in its event.json) under %s/%s: install checked, deny not run", d.ID, samplesDir, d.ID)
		}
	}
	for _, d := range registry.Registry().Descriptors {
		t.Run(d.ID, func(t *testing.T) { check(t, d, registry.Registry) })
	}
	// No harness of the atlas combines a shell-hook family with a folder
	// target today (OpenClaw's folder plugin is a bridge module), but one
	// may: Claude Code's descriptor with its plugin folder as the target
	// stands in for it.
	t.Run("shell-hook-folder", func(t *testing.T) {
		base, _, err := registry.Registry().Resolve("claude-code")
		if err != nil {
			t.Fatal(err)
		}
		synth := *base
		synth.Packaging.Target = adapter.Target{Kind: "folder", Project: ".claude/plugins/{plugin}", User: ".claude/plugins/{plugin}"}
		check(t, &synth, func() *adapter.Registry { return &adapter.Registry{Descriptors: []*adapter.Descriptor{&synth}} })
	})
	if _, err := os.Stat(filepath.Join(project, "pwned")); err == nil {
		t.Error("a command substitution in the project path ran")
	}
}

// phaseSample is a sample payload of d's event of phase (the first
// sample file of such an event) with its session id and working directory
// replaced by session and cwd, and that event's name.
func phaseSample(t *testing.T, d *adapter.Descriptor, phase, session, cwd string) (payload, event string, ok bool) {
	t.Helper()
	for _, e := range d.Events {
		if e.Phase != phase {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(samplesDir, d.ID, e.Name+"*.txtar"))
		for _, p := range paths {
			raw, ev, ok := readSample(t, p)
			if !ok || ev.Session.ID == "" || ev.Session.Cwd == "" {
				continue
			}
			out := strings.ReplaceAll(string(raw), ev.Session.ID, session)
			return strings.ReplaceAll(out, ev.Session.Cwd, cwd), e.Name, true
		}
	}
	return "", "", false
}

// The babysitter loop for a harness that cannot run here, as the harness
// would drive it: the bundle installed into a project, its SessionStart
// hook run as the harness runs it (a shell command, the native payload on
// stdin, the environment the atlas names), the agent's own `sitter run
// create` from a shell of the same process (the harness), then its Stop
// hook: the run is bound to the session with no flag, and the stop is
// blocked with the next step in the harness's own block. A harness whose
// SessionStart hooks get an env file (Qoder's QODER_ENV_FILE) finds it
// untouched unless the atlas says the agent's shell sources it.
func TestBabysitterBundleLoopNotRunHere(t *testing.T) {
	sitter, err := exec.LookPath("sitter")
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.Registry()
	tested := 0
	for _, d := range reg.Descriptors {
		bundle := filepath.Join(artifactsDir, "babysitter", d.ID)
		if d.NotRunHere == "" || d.Packaging.Target.Kind != "hooks-config" {
			continue
		}
		if _, err := os.Stat(bundle); err != nil {
			continue
		}
		t.Run(d.ID, func(t *testing.T) {
			project := t.TempDir()
			state := t.TempDir()
			var out, errOut bytes.Buffer
			if code := verbs.Run([]string{"plugin", "install", bundle, "--harness", d.ID, "--dir", project, "--json"}, nil, &out, &errOut, registry.Registry); code != 0 {
				t.Fatalf("install: exit %d: %s", code, errOut.String())
			}
			var rep plugin.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			commands := installedCommands(t, rep.Target, d.Packaging.Target.CommandKey)
			envFile := filepath.Join(t.TempDir(), "session-env.sh")
			if err := os.WriteFile(envFile, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "SITTER_BIN="+sitter, "SITTER_STATE_DIR="+state, "QODER_ENV_FILE="+envFile, "QODER_PROJECT_DIR="+project, "CLAUDE_PROJECT_DIR="+project)
			session := "journey-" + d.ID
			start, startEvent, ok := phaseSample(t, d, "sessionStart", session, project)
			if !ok {
				t.Fatalf("no sessionStart sample of %s under %s", d.ID, samplesDir)
			}
			stop, stopEvent, ok := phaseSample(t, d, "stop", session, project)
			if !ok {
				t.Fatalf("no stop sample of %s under %s", d.ID, samplesDir)
			}
			if got := runShell(t, project, commands[startEvent], start, env); got.exit != 0 || !strings.Contains(got.stdout, "sitter run create") {
				t.Fatalf("%s: exit %d, stdout %q (stderr %q), want the babysitter's context", startEvent, got.exit, got.stdout, got.stderr)
			}
			if err := os.WriteFile(filepath.Join(project, "p.mjs"), []byte("export async function process() { return 1; }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The agent follows the skill: no session or harness flag.
			create := exec.Command("sh", "-c", "sitter run create --process-id demo --entry 'p.mjs#process' --json")
			create.Dir, create.Env = project, env
			b, err := create.CombinedOutput()
			if err != nil || !strings.Contains(string(b), `"sessionId": "`+session+`"`) {
				t.Fatalf("run create: %v\n%s\nwant the run bound to session %s", err, b, session)
			}
			got := runShell(t, project, commands[stopEvent], stop, env)
			if !isDecision(d, stopEvent, hook.Block, got) || !strings.Contains(got.stdout+got.stderr, "sitter run iterate") {
				t.Errorf("%s: exit %d, stdout %q (stderr %q), want %s's block with the next step", stopEvent, got.exit, got.stdout, got.stderr, d.ID)
			}
			if b, _ := os.ReadFile(envFile); len(b) > 0 && d.AgentEnv == nil {
				t.Errorf("the env file got %q, though the atlas gives %s no agentEnv", b, d.ID)
			}
		})
		tested++
	}
	if tested == 0 {
		t.Fatal("no babysitter bundle of a harness that cannot run here")
	}
}
