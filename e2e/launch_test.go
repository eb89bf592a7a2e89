//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// userHome is a HOME with config files of every harness in it, which no
// launch may change.
func userHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	files := map[string]string{
		".claude.json":                   `{"hasCompletedOnboarding":false,"userID":"mine"}`,
		".claude/settings.json":          `{"theme":"dark"}`,
		".codex/config.toml":             "model = \"my-own-model\"\n",
		".gemini/settings.json":          `{"theme":"mine"}`,
		".config/opencode/opencode.json": `{"model":"mine/mine"}`,
		".pi/agent/models.json":          `{"providers":{}}`,
		".copilot/settings.json":         `{}`,
	}
	for p, c := range files {
		p = filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// snapshot reads every file under dir (paths and bytes).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			m[p] = string(b)
		}
		return nil
	})
	return m
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		} else if a != b {
			t.Errorf("%s: %s changed:\n%s\n→\n%s", what, p, b, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s was created", what, p)
		}
	}
}

type launchEvent map[string]any

// runLaunch runs `sitter launch <args> --json` with home as the user's
// HOME and returns the NDJSON events.
func runLaunch(t *testing.T, home string, extraEnv []string, args ...string) ([]launchEvent, runResult) {
	t.Helper()
	env := append(baseEnv(t, home), extraEnv...)
	r := runCLI(t, t.TempDir(), env, 3*time.Minute, sitter(t), append([]string{"launch"}, append(args, "--json")...)...)
	var evs []launchEvent
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var e launchEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("launch stdout is not NDJSON: %q: %v\n%s", sc.Text(), err, r.stdout)
		}
		evs = append(evs, e)
	}
	return evs, r
}

func countEvents(evs []launchEvent, name string) int {
	n := 0
	for _, e := range evs {
		if e["type"] == name {
			n++
		}
	}
	return n
}

func eventOf(evs []launchEvent, name string) launchEvent {
	for _, e := range evs {
		if e["type"] == name {
			return e
		}
	}
	return nil
}

// launchCase runs one headless launch that must complete a shell tool
// call in the workspace, leave the user's HOME alone and remove its overlay.
func launchCase(t *testing.T, harness string, proxied bool, upstreamProto string, extraEnv []string, args ...string) (*llmscript.Server, []launchEvent) {
	t.Helper()
	bin := install(t, clis[harness])
	home, project := userHome(t), t.TempDir()
	before := snapshot(t, home)
	llm := startLLM(t, llmscript.ShellThenText("echo launched > launched.txt", "done"))
	base := append([]string{harness, "--bin", bin, "--workspace", project, "--prompt", "write the file"}, args...)
	for i, a := range base {
		base[i] = strings.ReplaceAll(a, "{llm}", llm.URL)
	}
	evs, r := runLaunch(t, home, extraEnv, base...)
	if r.err != nil {
		t.Fatalf("sitter launch %s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(project, "launched.txt")); err != nil || string(b) != "launched\n" {
		t.Errorf("the tool call did not run: %q %v\n%s\n%s", b, err, r.stdout, r.stderr)
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Protocol == upstreamProto }) {
		t.Errorf("the %s upstream never received the tool result", upstreamProto)
	}
	if got := countEvents(evs, "proxy_started") == 1; got != proxied {
		t.Errorf("proxy started = %v, want %v\n%s", got, proxied, r.stdout)
	}
	if proxied && countEvents(evs, "proxy_stopped") != 1 {
		t.Errorf("the proxy was not stopped\n%s", r.stdout)
	}
	ex := eventOf(evs, "exit")
	if ex == nil || ex["code"] != float64(0) {
		t.Errorf("no exit event with code 0\n%s", r.stdout)
	}
	ov := eventOf(evs, "overlay")
	if ov == nil {
		t.Fatalf("no overlay event\n%s", r.stdout)
	}
	if dir, _ := ov["dir"].(string); dir == "" || exists(dir) {
		t.Errorf("overlay %v was not removed", ov["dir"])
	}
	sameTree(t, "user HOME", before, snapshot(t, home))
	return llm, evs
}

// TestLaunchClaudeOnOpenAI: Claude Code (Anthropic Messages) on an
// OpenAI-protocol provider: the proxy is started and a tool-call turn completes.
func TestLaunchClaudeOnOpenAI(t *testing.T) {
	launchCase(t, "claude-code", true, "chat", []string{"OPENAI_API_KEY=sk-upstream"},
		"--provider", "openai", "--upstream", "{llm}/v1")
}

// TestLaunchCodexOnAnthropic: Codex (Responses) on an Anthropic provider.
func TestLaunchCodexOnAnthropic(t *testing.T) {
	launchCase(t, "codex", true, "anthropic", []string{"ANTHROPIC_API_KEY=sk-upstream"},
		"--provider", "anthropic", "--upstream", "{llm}")
}

// TestLaunchGeminiPassThrough: Gemini CLI on a Gemini upstream talks to it
// directly: no proxy.
func TestLaunchGeminiPassThrough(t *testing.T) {
	llm, evs := launchCase(t, "gemini-cli", false, "gemini", []string{"GEMINI_API_KEY=sk-upstream"},
		"--provider", "gemini", "--upstream", "{llm}", "--model", geminiModel)
	if countEvents(evs, "pass_through") != 1 {
		t.Errorf("no pass_through event: %v", evs)
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.Protocol == "gemini" && q.Contains("write the file") }) {
		t.Errorf("the prompt did not reach the Gemini upstream directly")
	}
}

// stopBundle is a copy of the guard bundle for Codex whose only handler
// is a stop handler running cmd.
func stopBundle(t *testing.T, cmd string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "stopper")
	src := filepath.Join(repo(t), "artifacts", "guard", "codex")
	if out, err := exec.Command("cp", "-R", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	h, _ := json.Marshal(map[string]any{"handlers": []map[string]string{{"phase": "stop", "command": cmd}}})
	if err := os.WriteFile(filepath.Join(dst, "sitter-handlers.json"), h, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// bridgeCodex runs Codex in bridge-hooks mode with a stop handler.
func bridgeCodex(t *testing.T, handler string, maxIter int) (*llmscript.Server, []launchEvent, string) {
	t.Helper()
	bin := install(t, clis["codex"])
	home, project := userHome(t), t.TempDir()
	before := snapshot(t, home)
	llm := startLLM(t, llmscript.ShellThenText("echo one >> log.txt", "done"))
	evs, r := runLaunch(t, home, []string{"OPENAI_API_KEY=sk-upstream"},
		"codex", "--bin", bin, "--workspace", project, "--provider", "openai-responses", "--upstream", llm.URL+"/v1",
		"--mode", "bridge-hooks", "--max-iterations", fmt.Sprint(maxIter), "--plugin", stopBundle(t, handler), "--prompt", "write the log")
	if r.err != nil {
		t.Fatalf("sitter launch: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if countEvents(evs, "proxy_started") != 0 {
		t.Errorf("Codex speaks Responses: no proxy wanted\n%s", r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(project, "log.txt")); !bytes.HasPrefix(b, []byte("one\n")) {
		t.Errorf("the first run's tool call did not run: %q", b)
	}
	sameTree(t, "user HOME", before, snapshot(t, home))
	return llm, evs, r.stdout
}

func hookCalls(evs []launchEvent) []string {
	var hooks []string
	for _, e := range evs {
		if e["type"] == "hook" {
			s := fmt.Sprint(e["native"])
			if strings.Contains(fmt.Sprint(e["stdout"]), `"block"`) {
				s += ":block"
			}
			hooks = append(hooks, s)
		}
	}
	return hooks
}

const keepGoing = "keep going: check log.txt once more"

// TestLaunchBridgeHooksCodex: in bridge-hooks mode a stop handler that
// blocks once makes sitter resume the Codex session with the reason as
// the next prompt; at the next stop it lets the session end.
func TestLaunchBridgeHooksCodex(t *testing.T) {
	handler := `grep -q '"stopHookActive":true' || echo '{"decision":"block","reason":"` + keepGoing + `"}'`
	llm, evs, out := bridgeCodex(t, handler, 5)
	if n := countEvents(evs, "spawn"); n != 2 {
		t.Errorf("spawned codex %d times, want 2\n%s", n, out)
	}
	if countEvents(evs, "max_iterations") != 0 {
		t.Errorf("stopped by the cap, not by the handler\n%s", out)
	}
	// The second run resumed the first session: its request carries the
	// first prompt and the stop reason.
	if !llm.Any(func(q *llmscript.Request) bool { return q.Contains(keepGoing) && q.Contains("write the log") }) {
		t.Errorf("the stop reason did not reach the model in the resumed session")
	}
	want := []string{"SessionStart", "Stop:block", "Stop", "SessionEnd"}
	if got := hookCalls(evs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hook calls = %q, want %q", got, want)
	}
}

// TestLaunchBridgeHooksCodexMaxIterations: a stop handler that always
// blocks is stopped by --max-iterations.
func TestLaunchBridgeHooksCodexMaxIterations(t *testing.T) {
	_, evs, out := bridgeCodex(t, `echo '{"decision":"block","reason":"`+keepGoing+`"}'`, 3)
	if n := countEvents(evs, "spawn"); n != 3 {
		t.Errorf("spawned codex %d times, want 3 (--max-iterations 3)\n%s", n, out)
	}
	if countEvents(evs, "max_iterations") != 1 {
		t.Errorf("no max_iterations event\n%s", out)
	}
	want := []string{"SessionStart", "Stop:block", "Stop:block", "Stop:block", "SessionEnd"}
	if got := hookCalls(evs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hook calls = %q, want %q", got, want)
	}
}

// TestLaunchPluginGuard: --plugin loads the guard bundle for one run
// (Claude Code by --plugin-dir, Codex by sitter plugin install into the
// workspace): a recursive delete outside the project is refused, and the
// workspace holds no trace of the install afterwards.
func TestLaunchPluginGuard(t *testing.T) {
	for _, c := range []struct{ harness, provider, upstream string }{
		{"claude-code", "anthropic", ""},
		{"codex", "openai-responses", "/v1"},
	} {
		t.Run(c.harness, func(t *testing.T) {
			bin := install(t, clis[c.harness])
			tmp := t.TempDir()
			project, outside := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside")
			os.MkdirAll(project, 0o755)
			os.MkdirAll(outside, 0o755)
			os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
			home := userHome(t)
			before, beforeWS := snapshot(t, home), snapshot(t, project)
			llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
			evs, r := runLaunch(t, home, []string{"ANTHROPIC_API_KEY=sk", "OPENAI_API_KEY=sk"},
				c.harness, "--bin", bin, "--workspace", project, "--provider", c.provider, "--upstream", llm.URL+c.upstream,
				"--plugin", filepath.Join(repo(t), "artifacts", "guard", c.harness), "--prompt", "clean up")
			if r.err != nil {
				t.Fatalf("sitter launch: %v\n%s\n%s", r.err, r.stdout, r.stderr)
			}
			if !exists(filepath.Join(outside, "keep.txt")) {
				t.Errorf("the guard did not stop rm -rf outside the project\n%s\n%s", r.stdout, r.stderr)
			}
			if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("guard: recursive-delete") }) {
				t.Errorf("the guard's reason never reached the model")
			}
			if c.harness == "codex" && countEvents(evs, "plugin_installed") != 1 {
				t.Errorf("no plugin_installed event\n%s", r.stdout)
			}
			sameTree(t, "workspace", beforeWS, snapshot(t, project))
			sameTree(t, "user HOME", before, snapshot(t, home))
		})
	}
}
