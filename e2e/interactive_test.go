//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/runtime/launch"
)

// interactiveKey is the upstream key: longer than the 20 characters by
// which Claude Code remembers an approved key.
const interactiveKey = "sk-upstream-e2e-0123456789-abcdefghij"

// screenOf is the last screen a bridge-interactive run reported (idle or
// terminate event), for failure messages.
func screenOf(evs []launchEvent) string {
	s := ""
	for _, e := range evs {
		if v, ok := e["screen"].(string); ok {
			s = v
		}
	}
	return s
}

func outputOf(evs []launchEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e["type"] == "output" {
			b.WriteString(fmt.Sprint(e["text"]))
		}
	}
	return b.String()
}

func withoutOutput(evs []launchEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e["type"] != "output" {
			j, _ := json.Marshal(e)
			b.Write(j)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// turnEndHook is the native stop event a harness's turn-end hook runs on,
// a field of its payload and what that field holds: want, or the model's
// last message where want is "" (Copilot's agentStop and OpenCode's
// session.idle carry no message).
type turnEndHook struct{ native, field, want string }

var (
	claudeStop   = turnEndHook{"Stop", "last_assistant_message", ""}
	codexStop    = turnEndHook{"Stop", "last_assistant_message", ""}
	geminiAfter  = turnEndHook{"AfterAgent", "prompt_response", ""}
	copilotStop  = turnEndHook{"agentStop", "stopReason", "end_turn"}
	openCodeIdle = turnEndHook{"session.idle", "type", "session.idle"}
	piTurnEnd    = turnEndHook{"turn_end", "message", ""}
)

// checkInteractiveTurn asserts one completed tool-call turn of a
// bridge-interactive run: every stdout line an event with a time and a
// type, the tool call ran, the model's text in the output, one turn_end
// from the harness's own stop hook, and the exit after sitter ended the
// harness.
func checkInteractiveTurn(t *testing.T, evs []launchEvent, project, answer, protocol string, llm *llmscript.Server, hook turnEndHook) {
	t.Helper()
	diag := func() string {
		return fmt.Sprintf("events:\n%s\nlast screen:\n%s", withoutOutput(evs), screenOf(evs))
	}
	for _, e := range evs {
		ts, _ := e["time"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || e["type"] == nil {
			t.Errorf("not an event with a time and a type: %v", e)
		}
	}
	if b, err := os.ReadFile(filepath.Join(project, "turn.txt")); err != nil || string(b) != "interactive\n" {
		t.Errorf("the shell tool call did not run: %q %v\n%s", b, err, diag())
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Protocol == protocol }) {
		t.Errorf("the fake LLM never got the tool result in %s\n%s", protocol, diag())
	}
	out := outputOf(evs)
	if !strings.Contains(out, answer) {
		t.Errorf("output events lack the model's text %q\n%s", answer, diag())
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("output events hold escape sequences")
	}
	if n := countEvents(evs, "turn_end"); n != 1 {
		t.Fatalf("%d turn_end events, want 1\n%s", n, diag())
	}
	te := eventOf(evs, "turn_end")
	p, _ := te["payload"].(map[string]any)
	if hook.want == "" {
		if te["source"] != "hook" || te["native"] != hook.native || !strings.Contains(fmt.Sprint(p[hook.field]), answer) {
			t.Errorf("turn_end %v: want the %s payload with the model's last message in %s", te, hook.native, hook.field)
		}
	} else if te["source"] != "hook" || te["native"] != hook.native || p[hook.field] != hook.want {
		t.Errorf("turn_end %v: want the %s payload with %s %q", te, hook.native, hook.field, hook.want)
	}
	if countEvents(evs, "idle") != 0 {
		t.Errorf("the run went idle\n%s", diag())
	}
	ex := eventOf(evs, "exit")
	if ex == nil || ex["code"] != float64(0) || ex["endedBy"] != "sitter" {
		t.Errorf("exit event %v: want code 0, ended by sitter after the turn\n%s", ex, diag())
	}
	ov := eventOf(evs, "overlay")
	if ov == nil || exists(fmt.Sprint(ov["dir"])) {
		t.Errorf("overlay %v not removed", ov)
	}
}

// TestInteractiveClaude: `sitter launch claude-code --mode
// bridge-interactive` runs the real Claude Code TUI in a pseudo-terminal
// against the fake LLM to the end of one turn (a shell tool call, then
// text), on an Anthropic upstream directly and on an OpenAI one through
// sitter-proxy (whose token is then the key Claude must accept). The
// overlay's pre-seeded state leaves no onboarding prompt to answer; the
// user's HOME is unchanged.
func TestInteractiveClaude(t *testing.T) {
	bin := install(t, clis["claude-code"])
	for _, c := range []struct {
		name, provider, path, keyEnv, protocol string
		proxied                                bool
	}{
		{"anthropic", "anthropic", "", "ANTHROPIC_API_KEY", "anthropic", false},
		{"openai-proxy", "openai", "/v1", "OPENAI_API_KEY", "chat", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, project := userHome(t), t.TempDir()
			before := snapshot(t, home)
			const answer = "INTERACTIVE-TURN-DONE: the file is written"
			llm := startLLM(t, llmscript.ShellThenText("echo interactive > turn.txt", answer))
			evs, r := runLaunch(t, home, []string{c.keyEnv + "=" + interactiveKey},
				"claude-code", "--mode", "bridge-interactive", "--bin", bin, "--workspace", project,
				"--provider", c.provider, "--upstream", llm.URL+c.path, "--prompt", "write turn.txt", "--idle-timeout", "60s")
			if r.err != nil {
				t.Errorf("sitter launch: %v\nstderr: %s\nlast screen:\n%s", r.err, r.stderr, screenOf(evs))
			}
			checkInteractiveTurn(t, evs, project, answer, c.protocol, llm, claudeStop)
			if got := countEvents(evs, "proxy_started") == 1; got != c.proxied {
				t.Errorf("proxy started = %v, want %v", got, c.proxied)
			}
			if n := countEvents(evs, "onboarding"); n != 0 {
				t.Errorf("%d onboarding prompts answered: the overlay's state should leave none\n%s", n, withoutOutput(evs))
			}
			sameTree(t, "user HOME", before, snapshot(t, home))
		})
	}
}

// runSpec runs a bridge-interactive launch of a modified spec in process
// (prompt "write turn.txt", idle timeout one minute) and returns its
// events; it must exit 0.
func runSpec(t *testing.T, o launch.Options) []launchEvent {
	t.Helper()
	var out, errOut bytes.Buffer
	o.Mode, o.Prompt, o.StateDir, o.IdleTimeout = launch.BridgeInteractive, "write turn.txt", t.TempDir(), time.Minute
	o.Stdout, o.Stderr = &out, &errOut
	code, err := launch.Run(context.Background(), o)
	var evs []launchEvent
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var e launchEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stdout is not NDJSON: %q", sc.Text())
		}
		evs = append(evs, e)
	}
	if err != nil || code != 0 {
		t.Errorf("launch: %d %v\nstderr: %s", code, err, errOut.String())
	}
	return evs
}

// checkOnboarding asserts which onboarding prompts a run answered.
func checkOnboarding(t *testing.T, evs []launchEvent, want ...string) {
	t.Helper()
	var got []string
	for _, e := range evs {
		if e["type"] == "onboarding" {
			got = append(got, fmt.Sprint(e["id"]))
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answered %q, want %q\nevents:\n%s\nlast screen:\n%s", got, want, withoutOutput(evs), screenOf(evs))
	}
}

// gitProject is an empty git repository: Codex asks whether to trust a
// repository unless the config does.
func gitProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

// TestInteractiveClaudeOnboarding: without the overlay's pre-seeded state,
// the real Claude Code shows its onboarding prompts, and the answers the
// atlas declares (generated/launch) get it to the end of the turn.
func TestInteractiveClaudeOnboarding(t *testing.T) {
	bin := install(t, clis["claude-code"])
	spec, _ := launch.Find(genlaunch.Specs, "claude-code")
	for _, c := range []struct {
		name, claudeJSON string
		want             []string
	}{
		// A first run with the key approved (an unapproved key on a first
		// run means a connectivity check of api.anthropic.com: offline, Claude exits).
		{"first-run", `{"customApiKeyResponses":{"approved":["{keyLast20}"],"rejected":[]}}`, []string{"security-notes", "theme", "trust-folder"}},
		{"unapproved-key", `{"hasCompletedOnboarding":true}`, []string{"custom-api-key", "trust-folder"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := spec
			s.Files = []launch.File{{Path: "{home}/.claude.json", Content: c.claudeJSON}}
			home, project := userHome(t), t.TempDir()
			before := snapshot(t, home)
			const answer = "ONBOARDED-TURN-DONE"
			llm := startLLM(t, llmscript.ShellThenText("echo interactive > turn.txt", answer))
			evs := runSpec(t, launch.Options{
				Spec:     s,
				Provider: launch.Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "ANTHROPIC_API_KEY", DefaultModel: "claude-sonnet-4-5"},
				Upstream: llm.URL, Workspace: project, Bin: bin,
				Env: append(baseEnv(t, home), "ANTHROPIC_API_KEY="+interactiveKey),
			})
			checkOnboarding(t, evs, c.want...)
			checkInteractiveTurn(t, evs, project, answer, "anthropic", llm, claudeStop)
			sameTree(t, "user HOME", before, snapshot(t, home))
		})
	}
}

// TestInteractiveClaudePlugin: --plugin loads the guard bundle into the
// interactive session (--plugin-dir) without a prompt: its PreToolUse
// hook refuses a recursive delete outside the project, the reason reaches
// the model, and the turn still ends through the turn-end hook.
func TestInteractiveClaudePlugin(t *testing.T) {
	bin := install(t, clis["claude-code"])
	tmp := t.TempDir()
	project, outside := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside")
	os.MkdirAll(project, 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	home := userHome(t)
	before := snapshot(t, home)
	llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "GUARDED-TURN-DONE"))
	evs, r := runLaunch(t, home, []string{"ANTHROPIC_API_KEY=" + interactiveKey},
		"claude-code", "--mode", "bridge-interactive", "--bin", bin, "--workspace", project, "--upstream", llm.URL,
		"--plugin", filepath.Join(repo(t), "artifacts", "guard", "claude-code"), "--prompt", "clean up", "--idle-timeout", "60s")
	diag := fmt.Sprintf("events:\n%s\nlast screen:\n%s", withoutOutput(evs), screenOf(evs))
	if r.err != nil {
		t.Errorf("sitter launch: %v\nstderr: %s\n%s", r.err, r.stderr, diag)
	}
	if !exists(filepath.Join(outside, "keep.txt")) {
		t.Errorf("the guard did not stop rm -rf outside the project\n%s", diag)
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("guard: recursive-delete") }) {
		t.Errorf("the guard's reason never reached the model\n%s", diag)
	}
	if countEvents(evs, "turn_end") != 1 || countEvents(evs, "onboarding") != 0 || !strings.Contains(outputOf(evs), "GUARDED-TURN-DONE") {
		t.Errorf("want one turn ended by the hook, no prompt, the model's text in the output\n%s", diag)
	}
	sameTree(t, "user HOME", before, snapshot(t, home))
}

// interactiveCase is one bridge-interactive launch of a harness on a
// provider: the fake LLM's protocol, and whether sitter-proxy sits between.
type interactiveCase struct {
	name, provider, path, keyEnv, protocol string
	proxied                                bool
}

// runInteractive runs `sitter launch <harness> --mode bridge-interactive`
// to the end of one tool-call turn against the fake LLM and checks the
// turn, the proxy, that no onboarding prompt was answered and that the
// user's HOME is unchanged.
func runInteractive(t *testing.T, harness string, c interactiveCase, project string, hook turnEndHook, extra ...string) {
	t.Helper()
	runInteractiveWith(t, harness, c, project, hook, interactiveRun{args: extra})
}

// interactiveRun varies runInteractive: more launch args, more env, and a
// shell command run after the one that writes turn.txt.
type interactiveRun struct {
	args, env []string
	alsoRun   string
}

func runInteractiveWith(t *testing.T, harness string, c interactiveCase, project string, hook turnEndHook, x interactiveRun) {
	t.Helper()
	bin := install(t, clis[harness])
	home := userHome(t)
	before := snapshot(t, home)
	const answer = "INTERACTIVE-TURN-DONE: the file is written"
	cmd := "echo interactive > turn.txt"
	if x.alsoRun != "" {
		cmd += " && " + x.alsoRun
	}
	llm := startLLM(t, llmscript.ShellThenText(cmd, answer))
	start := time.Now()
	evs, r := runLaunch(t, home, append([]string{c.keyEnv + "=" + interactiveKey}, x.env...),
		append([]string{harness, "--mode", "bridge-interactive", "--bin", bin, "--workspace", project,
			"--provider", c.provider, "--upstream", llm.URL + c.path, "--prompt", "write turn.txt", "--idle-timeout", "60s"}, x.args...)...)
	t.Logf("%s %s: %s", harness, c.name, time.Since(start).Round(time.Millisecond))
	if r.err != nil {
		t.Errorf("sitter launch: %v\nstderr: %s\nlast screen:\n%s", r.err, r.stderr, screenOf(evs))
	}
	checkInteractiveTurn(t, evs, project, answer, c.protocol, llm, hook)
	if got := countEvents(evs, "proxy_started") == 1; got != c.proxied {
		t.Errorf("proxy started = %v, want %v", got, c.proxied)
	}
	checkOnboarding(t, evs)
	sameTree(t, "user HOME", before, snapshot(t, home))
}

// TestInteractiveCodex: `sitter launch codex --mode bridge-interactive`
// runs the real Codex TUI in a pseudo-terminal to the end of one turn (a
// shell tool call, then text) on an OpenAI Responses upstream directly and
// on an Anthropic one through sitter-proxy. The turn ends through the Stop
// hook in the overlay's hooks.json; the overlay's config trusts the git
// workspace, so no prompt is answered.
func TestInteractiveCodex(t *testing.T) {
	for _, c := range []interactiveCase{
		{"openai-responses", "openai-responses", "/v1", "OPENAI_API_KEY", "responses", false},
		{"anthropic-proxy", "anthropic", "", "ANTHROPIC_API_KEY", "anthropic", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			runInteractive(t, "codex", c, gitProject(t), codexStop)
		})
	}
}

// TestInteractiveCodexOnboarding: without the workspace's trust in the
// overlay's config.toml, the real Codex asks whether to trust the git
// repository, and the answer the atlas declares gets it to the end of
// the turn.
func TestInteractiveCodexOnboarding(t *testing.T) {
	bin := install(t, clis["codex"])
	spec, _ := launch.Find(genlaunch.Specs, "codex")
	s := spec
	s.Connect = []launch.Connect{spec.Connect[0]}
	s.Connect[0].Files = []launch.File{{Path: "{home}/.codex/config.toml", Content: "model = \"{model}\"\nmodel_provider = \"sitter\"\n\n" +
		"[model_providers.sitter]\nname = \"sitter launch\"\nbase_url = \"{baseURL}\"\nenv_key = \"SITTER_LAUNCH_KEY\"\nwire_api = \"responses\"\n"}}
	onboardingTurn(t, bin, s, gitProject(t), launch.Provider{ID: "openai-responses", Protocol: "openai-responses", KeyEnv: "OPENAI_API_KEY", DefaultModel: "gpt-5"},
		"responses", codexStop)
}

// onboardingTurn runs spec (whose pre-seeded trust was taken out) in
// bridge-interactive mode against the fake LLM on the provider's protocol
// (OpenAI ones at /v1): the trust-folder answer the atlas declares must
// get the harness through one tool-call turn, and the user's HOME stays
// as it was.
func onboardingTurn(t *testing.T, bin string, spec launch.Spec, project string, p launch.Provider, protocol string, stop turnEndHook) {
	t.Helper()
	home := userHome(t)
	before := snapshot(t, home)
	const answer = "ONBOARDED-TURN-DONE"
	llm := startLLM(t, llmscript.ShellThenText("echo interactive > turn.txt", answer))
	evs := runSpec(t, launch.Options{
		Spec: spec, Provider: p, Upstream: llm.URL + "/v1", Workspace: project, Bin: bin,
		Env: append(baseEnv(t, home), p.KeyEnv+"="+interactiveKey),
	})
	checkOnboarding(t, evs, "trust-folder")
	checkInteractiveTurn(t, evs, project, answer, protocol, llm, stop)
	sameTree(t, "user HOME", before, snapshot(t, home))
}

// TestInteractiveGemini: `sitter launch gemini-cli --mode
// bridge-interactive` runs the real Gemini CLI TUI in a pseudo-terminal
// to the end of one turn on a Gemini upstream directly and on an OpenAI
// one through sitter-proxy. The turn ends through the AfterAgent hook
// merged into the overlay's settings.json; no prompt is answered.
func TestInteractiveGemini(t *testing.T) {
	for _, c := range []interactiveCase{
		{"gemini", "gemini", "", "GEMINI_API_KEY", "gemini", false},
		{"openai-proxy", "openai", "/v1", "OPENAI_API_KEY", "chat", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			runInteractive(t, "gemini-cli", c, t.TempDir(), geminiAfter, "--model", geminiModel)
		})
	}
}

// TestInteractiveCopilot: `sitter launch copilot --mode bridge-interactive`
// runs the real Copilot CLI TUI in a pseudo-terminal to the end of one
// turn on an OpenAI Chat upstream directly and on a Gemini one through
// sitter-proxy (--stream off makes Copilot ask for whole answers, which
// the fake LLM gives in every protocol but Responses). The workspace is
// trusted in the overlay's config.json, so no prompt is answered; the
// turn ends through the agentStop hook in the overlay's user
// settings.json. The shell call also writes outside the workspace and the
// temp dir (TMPDIR moved away from it), which --allow-all-tools alone
// would stop at a path dialog.
func TestInteractiveCopilot(t *testing.T) {
	for _, c := range []interactiveCase{
		{"openai", "openai", "/v1", "OPENAI_API_KEY", "chat", false},
		{"gemini-proxy", "gemini", "", "GEMINI_API_KEY", "gemini", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp, outside := t.TempDir(), t.TempDir()
			runInteractiveWith(t, "copilot", c, t.TempDir(), copilotStop, interactiveRun{
				env:     []string{"TMPDIR=" + tmp},
				alsoRun: "echo outside > " + filepath.Join(outside, "out.txt"),
			})
			if b, err := os.ReadFile(filepath.Join(outside, "out.txt")); err != nil || string(b) != "outside\n" {
				t.Errorf("the write outside the workspace did not run: %q %v", b, err)
			}
		})
	}
}

// TestInteractiveCopilotOnboarding: without the workspace's trust in the
// overlay's config.json, the real Copilot CLI asks whether to trust the
// folder, and the answer the atlas declares gets it to the end of the turn.
func TestInteractiveCopilotOnboarding(t *testing.T) {
	bin := install(t, clis["copilot"])
	spec, _ := launch.Find(genlaunch.Specs, "copilot")
	s := spec
	s.Files = nil
	onboardingTurn(t, bin, s, t.TempDir(), launch.Provider{ID: "openai", Protocol: "openai-chat", KeyEnv: "OPENAI_API_KEY", DefaultModel: "gpt-4.1"},
		"chat", copilotStop)
}

// TestInteractiveOpenCode: `sitter launch opencode --mode
// bridge-interactive` runs the real OpenCode TUI in a pseudo-terminal to
// the end of one turn on an OpenAI Chat and an Anthropic upstream (both
// direct: OpenCode speaks every protocol). The turn ends through the
// overlay's global plugin, which hands session.idle to sitter; no prompt
// is answered.
func TestInteractiveOpenCode(t *testing.T) {
	for _, c := range []interactiveCase{
		{"openai", "openai", "/v1", "OPENAI_API_KEY", "chat", false},
		{"anthropic", "anthropic", "", "ANTHROPIC_API_KEY", "anthropic", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			runInteractive(t, "opencode", c, t.TempDir(), openCodeIdle)
		})
	}
}

// TestInteractivePi: `sitter launch pi --mode bridge-interactive` runs the
// real Pi TUI in a pseudo-terminal to the end of one turn on an OpenAI
// Chat and an Anthropic upstream (both direct). The turn ends through the
// overlay's extension, which hands the run's last turn_end (the model's
// final message) to sitter; no prompt is answered.
func TestInteractivePi(t *testing.T) {
	for _, c := range []interactiveCase{
		{"openai", "openai", "/v1", "OPENAI_API_KEY", "chat", false},
		{"anthropic", "anthropic", "", "ANTHROPIC_API_KEY", "anthropic", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			runInteractive(t, "pi", c, t.TempDir(), piTurnEnd)
		})
	}
}
