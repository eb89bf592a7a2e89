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

func claudeRun(t *testing.T, llm *llmscript.Server, project, home, prompt string, extra ...string) runResult {
	return claudeRunEnv(t, llm, project, home, nil, prompt, extra...)
}

func claudeRunEnv(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string, extra ...string) runResult {
	bin := install(t, clis["claude-code"])
	env := append(append(baseEnv(t, home), more...),
		"ANTHROPIC_BASE_URL="+llm.URL,
		"ANTHROPIC_API_KEY=sk-fake",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	args := append([]string{"-p", prompt, "--output-format", "json", "--allowedTools", "Bash"}, extra...)
	return runCLI(t, project, env, 2*time.Minute, bin, args...)
}

func TestClaudeGuard(t *testing.T) {
	tmp := t.TempDir()
	project, outside := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside")
	for _, d := range []string{project, outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	bundle := filepath.Join(repo(t), "artifacts", "guard", "claude-code")

	t.Run("deny", func(t *testing.T) {
		verified(t, "claude-code", "observe", "PreToolUse")
		verified(t, "claude-code", "deny", "PreToolUse")
		home := t.TempDir()
		llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
		r := claudeRun(t, llm, project, home, "clean up", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if !exists(filepath.Join(outside, "keep.txt")) {
			t.Fatalf("the guard did not stop rm -rf %s", outside)
		}
		if !llm.Any(func(r *llmscript.Request) bool { return r.HasToolResult() && r.Contains("guard: recursive-delete") }) {
			t.Errorf("the model never received the guard's reason; requests: %d", len(llm.Requests()))
			for _, q := range llm.Requests() {
				t.Logf("%s", q.Body)
			}
		}
	})
	t.Run("allow", func(t *testing.T) {
		home := t.TempDir()
		llm := startLLM(t, llmscript.ShellThenText("echo hi > ok.txt", "done"))
		r := claudeRun(t, llm, project, home, "write ok.txt", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(project, "ok.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "hi" {
			t.Fatalf("ok.txt = %q, %v; stdout %s stderr %s", b, err, r.stdout, r.stderr)
		}
	})
}

// probeCase prepares a probe case: project, home and the probe's record dir.
func probeCase(t *testing.T, stopMode string) (project, home, rec string) {
	tmp := t.TempDir()
	project, home, rec = filepath.Join(tmp, "project"), filepath.Join(tmp, "home"), filepath.Join(tmp, "rec")
	for _, d := range []string{project, home, rec} {
		os.MkdirAll(d, 0o755)
	}
	if stopMode != "" {
		os.WriteFile(filepath.Join(rec, "stop-mode"), []byte(stopMode), 0o644)
	}
	return project, home, rec
}

func TestClaudeProbe(t *testing.T) {
	bundle := probeBundle(t, "claude-code")
	t.Run("context-events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := claudeRunEnv(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		// Context from SessionStart and UserPromptSubmit reaches the model.
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-SESSION-START") }) {
			t.Errorf("session-start context never reached the model")
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-SUBMIT") }) {
			t.Errorf("prompt-submit context never reached the model")
		}
		// The stop block's reason is sent to the model, which answers once more.
		last := reqs[len(reqs)-1]
		if !last.Contains("REASON-CONTINUE") {
			t.Errorf("the last request does not carry the stop reason (%d requests)", len(reqs))
		}
		evs := events(t, rec)
		observed(t, "claude-code", evs)
		verified(t, "claude-code", "add context", "SessionStart", "UserPromptSubmit")
		verified(t, "claude-code", "continue", "Stop")
		checkEvents(t, "claude-code", project, evs, "sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
		var stops []event
		for _, e := range evs {
			if e.Phase == "stop" {
				stops = append(stops, e)
			}
		}
		if len(stops) != 2 || stops[1].StopHookActive == nil || !*stops[1].StopHookActive {
			t.Errorf("want two stops, the second with stopHookActive; got %d", len(stops))
		}
		capture(t, "claude-code", clis["claude-code"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-cap", func(t *testing.T) {
		project, home, rec := probeCase(t, "always")
		verified(t, "claude-code", "continue", "Stop")
		llm := startLLM(t, llmscript.Text("done"))
		r := claudeRunEnv(t, llm, project, home, []string{"E2E_DIR=" + rec, "SITTER_STOP_CAP=3"}, "finish", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		// One answer, then one more per block until sitter's cap of 3 lets it stop.
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("model requests = %d, want 4 (1 + 3 blocks before the cap)", n)
		}
		if n := phases(events(t, rec))["stop"]; n != 4 {
			t.Errorf("stop hook calls = %d, want 4", n)
		}
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "claude-code", "PreToolUse", "PostToolUse", nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", bundle)
			})
	})
	t.Run("prompt-deny", func(t *testing.T) {
		promptDeny(t, "claude-code", "UserPromptSubmit", "REASON-PROMPT-BLOCKED", nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", bundle)
			})
	})
	t.Run("post-tool-deny", func(t *testing.T) {
		postToolDeny(t, "claude-code", "PostToolUse", false, nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", bundle)
			})
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "claude-code")
		observeAll(t, "claude-code", nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", observer)
			})
	})
}

// The generated marketplace and bundles pass Claude Code's own checks:
// `claude plugin validate` on every Claude bundle, and a marketplace add
// plus install of each plugin.
func TestClaudeMarketplaceAndValidate(t *testing.T) {
	bin := install(t, clis["claude-code"])
	home := t.TempDir()
	env := append(baseEnv(t, home), "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	for _, p := range []string{"guard", "babysitter"} {
		bundle := filepath.Join(repo(t), "artifacts", p, "claude-code")
		r := runCLI(t, home, env, time.Minute, bin, "plugin", "validate", bundle)
		if r.err != nil || !strings.Contains(r.stdout+r.stderr, "Validation passed") {
			t.Errorf("claude plugin validate %s: %v\n%s%s", p, r.err, r.stdout, r.stderr)
		}
		market := filepath.Join(repo(t), "artifacts", p, "marketplaces", "claude")
		if r := runCLI(t, home, env, time.Minute, bin, "plugin", "marketplace", "add", market); r.err != nil {
			t.Fatalf("marketplace add %s: %v\n%s%s", p, r.err, r.stdout, r.stderr)
		}
		r = runCLI(t, home, env, time.Minute, bin, "plugin", "install", p+"@"+p+"-marketplace")
		if r.err != nil || !strings.Contains(r.stdout+r.stderr, "Successfully installed") {
			t.Errorf("plugin install %s: %v\n%s%s", p, r.err, r.stdout, r.stderr)
		}
	}
}
