//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// lettaRun runs one headless Letta Code turn on its local backend (agents
// stored on this machine, no Letta account) against the fake LLM as an
// OpenAI-compatible provider, which is what `letta backend local` and
// `letta connect openai-compatible --base-url …` write into the home. The
// model is the one the provider's /v1/models lists (fake-model).
func lettaRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin, env := lettaSetup(t, llm, home, more)
	return runCLI(t, project, env, 2*time.Minute, bin, "-p", prompt, "--backend", "local", "--output-format", "json")
}

// lettaRunStandard is lettaRun in the standard permission mode, where a
// shell command that writes needs an approval (PermissionRequest).
func lettaRunStandard(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin, env := lettaSetup(t, llm, home, more)
	return runCLI(t, project, env, 2*time.Minute, bin, "-p", prompt, "--backend", "local", "--output-format", "json", "--permission-mode", "standard")
}

// lettaSetup writes the home's local-backend settings and provider for the
// fake LLM and returns the binary and the environment to run it with.
func lettaSetup(t *testing.T, llm *llmscript.Server, home string, more []string) (string, []string) {
	t.Helper()
	bin := install(t, clis["letta-code"])
	providers := filepath.Join(home, ".letta", "lc-local-backend", "providers")
	os.MkdirAll(providers, 0o755)
	if err := os.WriteFile(filepath.Join(home, ".letta", "settings.json"), []byte(`{"preferredBackendMode": "local"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auth := fmt.Sprintf(`{"version": 1, "providers": {"openai-compatible": {
  "id": "local-provider-openai-compatible", "name": "openai-compatible",
  "provider_type": "openai-compatible", "provider_category": "byok",
  "auth": {"type": "api", "key": "sk-fake"}, "base_url": %q}}}
`, llm.URL+"/v1")
	if err := os.WriteFile(filepath.Join(providers, "auth.json"), []byte(auth), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(append(baseEnv(t, home), more...),
		"LETTA_CODE_OFFLINE=1",
		"LETTA_CODE_TELEM=0",
		"DO_NOT_TRACK=1",
	)
	return bin, env
}

func TestLettaGuard(t *testing.T) { guardCase(t, "letta-code", "PreToolUse", lettaRun) }

// Headless Letta runs the tool hooks only (UserPromptSubmit, Stop,
// SessionStart and SessionEnd belong to its terminal UI: TestLettaTUI), so
// the probe cases are the tool phases'.
func TestLettaProbe(t *testing.T) {
	bundle := probeBundle(t, "letta-code")
	withProbe := func(project, home string) { pluginInstall(t, bundle, "letta-code", project, home) }
	t.Run("events", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		withProbe(project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := lettaRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("letta: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		evs := events(t, rec)
		checkEvents(t, "letta-code", project, evs, "preToolUse", "postToolUse")
		capture(t, "letta-code", clis["letta-code"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "letta-code", "PreToolUse", "PostToolUse", withProbe, lettaRun)
	})
	t.Run("post-tool-deny", func(t *testing.T) {
		postToolDeny(t, "letta-code", "PostToolUse", false, withProbe, lettaRun)
	})
	replier := replierBundle(t, "letta-code")
	withReplier := func(project, home string) { pluginInstall(t, replier, "letta-code", project, home) }
	t.Run("tool-failure", func(t *testing.T) {
		toolFailure(t, "letta-code", "PostToolUseFailure", true, llmscript.ShellThenText(failingCommand, "done"), withReplier, lettaRun)
	})
	// In the standard permission mode a command that writes asks: the
	// PermissionRequest deny refuses it and its reason reaches the model.
	t.Run("permission-deny", func(t *testing.T) {
		permissionDeny(t, "letta-code", "PermissionRequest", llmscript.ShellThenText("echo leaked > leaked.txt", "done"), withReplier, lettaRunStandard)
	})
	// The parent's Task call starts a background subagent (an agent of its
	// own, which calls the model with the task); its end raises
	// SubagentStop, whose agent_id is the subagent's: the id the Task
	// result names.
	t.Run("subagent-stop", func(t *testing.T) {
		verified(t, "letta-code", "observe", "SubagentStop")
		fidelityNote("letta-code", "`SubagentStop` carries the subagent's own agent id (the one the parent's Task result names), so its canonical session is the subagent's; the case checks that id.")
		project, home, rec := probeCase(t, "")
		withReplier(project, home)
		// The subagent runs in the background: the parent's last answer
		// waits (up to a minute) until the subagent has had its answer and
		// a moment to end, or letta -p could exit first.
		script := subagentScript("Task|Agent", map[string]any{"subagent_type": "general-purpose", "description": "e2e task", "prompt": subagentTask})
		var answered atomic.Bool
		llm := startLLM(t, func(q *llmscript.Request) llmscript.Turn {
			if q.UserTextContains(subagentTask) {
				answered.Store(true)
			} else if q.HasToolResult() {
				for i := 0; i < 300 && !answered.Load(); i++ {
					time.Sleep(200 * time.Millisecond)
				}
				time.Sleep(5 * time.Second)
			}
			return script(q)
		})
		r := lettaRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "delegate the task")
		if r.err != nil {
			t.Fatalf("letta: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		evs := waitRecorded(t, rec, time.Minute, "SubagentStop")
		var sub string
		for _, e := range evs {
			if e.NativeEvent == "PostToolUse" {
				if _, after, ok := strings.Cut(string(e.Raw), "Agent ID: "); ok {
					sub, _, _ = strings.Cut(after, `\n`)
				}
			}
		}
		if sub == "" {
			t.Fatalf("the Task result names no subagent id; events %v", nativeNames(evs))
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.UserTextContains(subagentTask) }) {
			t.Errorf("the subagent never called the model")
		}
		for _, e := range evs {
			if e.NativeEvent != "SubagentStop" {
				continue
			}
			if e.Phase != "subagentStop" || e.Session.ID != sub || e.Session.Cwd != project || !strings.Contains(string(e.Raw), `"success":true`) {
				t.Errorf("SubagentStop %+v: want phase subagentStop, session %q (the subagent), the project as cwd, success", e, sub)
			}
		}
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "letta-code")
		observeAll(t, "letta-code", func(project, home string) { pluginInstall(t, observer, "letta-code", project, home) }, lettaRun)
	})
	fidelityNote("letta-code", "Headless `letta -p` calls only the tool hooks; `UserPromptSubmit`, `Stop`, `SessionStart`, `Notification` and `SessionEnd` are called by its terminal UI, which TestLettaTUI drives in a pseudo-terminal.")
}
