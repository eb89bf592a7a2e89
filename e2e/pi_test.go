//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// piRun runs one headless Pi turn (pi -p) against the fake LLM, reached
// through a custom OpenAI Chat Completions provider in the fresh home's
// ~/.pi/agent/models.json.
func piRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	return piRunWindow(t, llm, project, home, more, prompt, 0)
}

// piRunWindow is piRun with the fake model's context window set (0: Pi's
// default).
func piRunWindow(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string, window int) runResult {
	t.Helper()
	model := `{"id": "fake-model", "reasoning": false}`
	if window > 0 {
		model = fmt.Sprintf(`{"id": "fake-model", "reasoning": false, "contextWindow": %d}`, window)
	}
	bin, env := piSetup(t, llm, home, more, []string{model})
	return runCLI(t, project, env, 2*time.Minute, bin,
		"--offline", "--provider", "fake", "--model", "fake-model", "-p", prompt)
}

// piSetup writes the fake LLM as the provider "fake" with models (JSON
// objects) into the fresh home's ~/.pi/agent/models.json and returns the
// binary and environment.
func piSetup(t *testing.T, llm *llmscript.Server, home string, more, models []string) (string, []string) {
	t.Helper()
	bin := install(t, clis["pi"])
	dir := filepath.Join(home, ".pi", "agent")
	os.MkdirAll(dir, 0o755)
	config := fmt.Sprintf(`{
  "providers": {
    "fake": {
      "baseUrl": %q,
      "api": "openai-completions",
      "apiKey": "sk-fake",
      "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
      "models": [%s]
    }
  }
}
`, llm.URL+"/v1", strings.Join(models, ", "))
	if err := os.WriteFile(filepath.Join(dir, "models.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, append(append(baseEnv(t, home), more...), "PI_OFFLINE=1")
}

func TestPiGuard(t *testing.T) { guardCase(t, "pi", "tool_call", piRun) }

func TestPiProbe(t *testing.T) {
	bundle := probeBundle(t, "pi")
	t.Run("context-events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		pluginInstall(t, bundle, "pi", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := piRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("pi: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		if len(reqs) == 0 {
			t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
		}
		// Pi's session_start context is queued for the next prompt and its
		// before_agent_start (beforePromptBuild) context is sent with it; its
		// input event (userPromptSubmit) cannot add context.
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-SESSION-START") }) {
			t.Errorf("session-start context never reached the model")
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-BUILD") }) {
			t.Errorf("before-agent-start context never reached the model")
		}
		if last := reqs[len(reqs)-1]; !last.Contains("REASON-CONTINUE") {
			t.Errorf("the last request does not carry the stop reason (%d requests)\n%s", len(reqs), r.stderr)
		}
		evs := events(t, rec)
		observed(t, "pi", evs)
		verified(t, "pi", "add context", "session_start", "before_agent_start")
		verified(t, "pi", "continue", "turn_end")
		checkEvents(t, "pi", project, evs, "sessionStart", "userPromptSubmit", "beforePromptBuild", "preToolUse", "postToolUse", "stop")
		if n := len(stopEvents(evs)); n != 2 {
			t.Errorf("want two stops (the block, then the end of the continued run); got %d", n)
		}
		capture(t, "pi", clis["pi"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-cap", func(t *testing.T) {
		project, home, rec := probeCase(t, "always")
		verified(t, "pi", "continue", "turn_end")
		pluginInstall(t, bundle, "pi", project, home)
		llm := startLLM(t, llmscript.Text("done"))
		r := piRun(t, llm, project, home, []string{"E2E_DIR=" + rec, "SITTER_STOP_CAP=3"}, "finish")
		if r.err != nil {
			t.Fatalf("pi: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("model requests = %d, want 4 (1 + 3 blocks before the cap)", n)
		}
		if n := phases(events(t, rec))["stop"]; n != 4 {
			t.Errorf("stop hook calls = %d, want 4", n)
		}
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "pi", "tool_call", "tool_result",
			func(project, home string) { pluginInstall(t, bundle, "pi", project, home) }, piRun)
	})
	t.Run("prompt-deny", func(t *testing.T) {
		promptDeny(t, "pi", "input", "",
			func(project, home string) { pluginInstall(t, bundle, "pi", project, home) }, piRun)
	})
	replier := replierBundle(t, "pi")
	withReplier := func(project, home string) { pluginInstall(t, replier, "pi", project, home) }
	// Pi checks for compaction when a run ends: with a 20k context window,
	// 1k reserved and a last answer reporting 30k prompt tokens, it
	// summarizes. session_compact fires after the session reload, with a
	// stale ctx: the bridge keeps the session it last read.
	compacting := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		os.MkdirAll(filepath.Join(project, ".pi"), 0o755)
		os.WriteFile(filepath.Join(project, ".pi", "settings.json"), []byte(`{"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}}`), 0o644)
		return piRunWindow(t, llm, project, home, more, prompt, 20000)
	}
	t.Run("compact", func(t *testing.T) {
		compaction(t, "pi", "session_before_compact", "session_compact", piSummary, false, compactScript(30000, 30000), withReplier, compacting)
	})
	t.Run("compact-deny", func(t *testing.T) {
		compaction(t, "pi", "session_before_compact", "session_compact", piSummary, true, compactScript(30000, 30000), withReplier, compacting)
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "pi")
		observeAll(t, "pi", func(project, home string) { pluginInstall(t, observer, "pi", project, home) }, piRun)
	})
}

// piSummary is in Pi's compaction summary request only.
const piSummary = "You are a context summarization assistant"
