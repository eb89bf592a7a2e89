//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// copilotRun runs one headless Copilot CLI turn in its documented offline
// BYOK mode against the fake LLM (OpenAI Chat Completions). The folder is
// trusted (repo hooks load only in a trusted folder). Copilot unpacks 235 MB
// into $XDG_CACHE_HOME on its first start: that cache is shared through the
// CLI cache dir, not the fresh HOME.
func copilotRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	c := clis["copilot"]
	bin := install(t, c)
	env := append(append(baseEnv(t, home), more...),
		"XDG_CACHE_HOME="+filepath.Join(cacheDir(), c.id+"@"+c.version, "xdg-cache"),
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL="+llm.URL+"/v1",
		"COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_API_KEY=sk-fake",
		"COPILOT_MODEL=fake-model",
		"COPILOT_AUTO_UPDATE=false",
	)
	return runCLI(t, project, env, 3*time.Minute, bin, "-p", prompt, "--trust-folder", "--allow-all-tools")
}

func TestCopilotGuard(t *testing.T) { guardCase(t, "copilot", "preToolUse", copilotRun) }

// Copilot's command hooks cannot add context at session start or prompt
// submit (the atlas: output ignored there), so its probe case checks the
// events and the stop block only.
func TestCopilotProbe(t *testing.T) {
	bundle := probeBundle(t, "copilot")
	t.Run("events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		pluginInstall(t, bundle, "copilot", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := copilotRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("copilot: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		if len(reqs) == 0 {
			t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
		}
		if last := reqs[len(reqs)-1]; !last.Contains("REASON-CONTINUE") {
			t.Errorf("the last request does not carry the stop reason (%d requests)", len(reqs))
		}
		evs := events(t, rec)
		observed(t, "copilot", evs)
		verified(t, "copilot", "continue", "agentStop")
		checkEvents(t, "copilot", project, evs, "sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
		stops := stopEvents(evs)
		if len(stops) != 2 || stops[1].StopHookActive == nil || !*stops[1].StopHookActive {
			t.Errorf("want two stops, the second with stopHookActive; got %d", len(stops))
		}
		capture(t, "copilot", clis["copilot"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-cap", func(t *testing.T) {
		project, home, rec := probeCase(t, "always")
		verified(t, "copilot", "continue", "agentStop")
		pluginInstall(t, bundle, "copilot", project, home)
		llm := startLLM(t, llmscript.Text("done"))
		r := copilotRun(t, llm, project, home, []string{"E2E_DIR=" + rec, "SITTER_STOP_CAP=3"}, "finish")
		if r.err != nil {
			t.Fatalf("copilot: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("model requests = %d, want 4 (1 + 3 blocks before the cap)", n)
		}
		if n := phases(events(t, rec))["stop"]; n != 4 {
			t.Errorf("stop hook calls = %d, want 4", n)
		}
	})
	t.Run("rewrite", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		verified(t, "copilot", "rewrite input", "preToolUse")
		os.WriteFile(filepath.Join(rec, "pre-tool-reply"), []byte(`{"updatedInput":{"command":"echo rewritten > rewritten.txt"}}`), 0o644)
		pluginInstall(t, bundle, "copilot", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo original > original.txt", "done"))
		r := copilotRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "write a file")
		if r.err != nil {
			t.Fatalf("copilot: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(project, "rewritten.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "rewritten" {
			t.Errorf("the rewritten command did not run: rewritten.txt = %q, %v\n%s\n%s", b, err, r.stdout, r.stderr)
		}
		if exists(filepath.Join(project, "original.txt")) {
			t.Errorf("the model's own command ran: original.txt exists")
		}
	})
	replier := replierBundle(t, "copilot")
	withReplier := func(project, home string) { pluginInstall(t, replier, "copilot", project, home) }
	t.Run("tool-failure", func(t *testing.T) {
		// A non-zero exit is a successful bash call here; a call the
		// tool refuses (read_bash without its required delay) fails.
		failing := func(q *llmscript.Request) llmscript.Turn {
			if q.HasToolResult() {
				return llmscript.Turn{Text: "done"}
			}
			return llmscript.Turn{Tool: "read_bash", Input: map[string]any{"shellId": "no-such-shell"}}
		}
		toolFailure(t, "copilot", "postToolUseFailure", true, failing, withReplier, copilotRun)
	})
	t.Run("pre-tool-context", func(t *testing.T) {
		addContext(t, "copilot", "preToolUse", "preToolUse", false, llmscript.ShellThenText("echo hi", "done"), withReplier, copilotRun)
	})
	t.Run("subagent", func(t *testing.T) {
		subagent(t, "copilot", "subagentStart", "subagentStop", true, true,
			subagentScript("task", map[string]any{"description": "sub task", "prompt": subagentTask, "agent_type": "general-purpose", "name": "sub"}),
			withReplier, copilotRun)
	})
	t.Run("permission-deny", func(t *testing.T) {
		// permissionRequest fires before the permission service, even
		// with --allow-all-tools.
		permissionDeny(t, "copilot", "permissionRequest", llmscript.ShellThenText("echo leaked > leaked.txt", "done"), withReplier, copilotRun)
	})
	t.Run("compact", func(t *testing.T) {
		// Tool calls reporting 100k, 126k and 190k prompt tokens make
		// Copilot compact in the background (preCompact); it cannot be
		// refused, and the turn may end before it finishes.
		compaction(t, "copilot", "preCompact", "", "", false, compactScript(0, 100000, 126000, 190000), withReplier, copilotRun)
	})
	t.Run("notification-context", func(t *testing.T) {
		// Viewing a path outside the project needs a permission nobody
		// can give under -p: Copilot raises a permission_prompt
		// notification.
		outside := func(q *llmscript.Request) llmscript.Turn {
			if q.HasToolResult() {
				return llmscript.Turn{Text: "done"}
			}
			return llmscript.Turn{Tool: "view", Input: map[string]any{"path": "/nonexistent-e2e/x.txt"}}
		}
		addContext(t, "copilot", "notification", "notification", false, outside, withReplier, copilotRun)
	})
	t.Run("api-error", func(t *testing.T) {
		apiFailure(t, "copilot", "errorOccurred", withReplier, copilotRun)
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "copilot")
		observeAll(t, "copilot", func(project, home string) { pluginInstall(t, observer, "copilot", project, home) }, copilotRun)
	})
}
