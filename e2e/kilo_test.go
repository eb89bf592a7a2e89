//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// kiloSeed keeps Kilo from running `npm install @kilocode/plugin` in a
// config dir before it loads plugins (as opencodeSeed does for OpenCode).
func kiloSeed(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755)
	pkg := `{"dependencies":{"@kilocode/plugin":"7.3.1"}}` + "\n"
	lock := `{"name":"seed","lockfileVersion":3,"requires":true,"packages":{"":{"dependencies":{"@kilocode/plugin":"7.3.1"}},"node_modules/@kilocode/plugin":{"version":"7.3.1"}}}` + "\n"
	for name, body := range map[string]string{"package.json": pkg, "package-lock.json": lock} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// kiloRun runs one `kilo run` against the fake LLM (OpenAI Chat
// Completions through @ai-sdk/openai-compatible, configured in the
// project's kilo.json).
func kiloRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin := install(t, clis["kilo-code"])
	config := fmt.Sprintf(`{
  "model": "fake/fake-model",
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "options": {"baseURL": %q, "apiKey": "sk-fake"},
      "models": {"fake-model": {"tool_call": true}}
    }
  }
}
`, llm.URL+"/v1")
	if err := os.WriteFile(filepath.Join(project, "kilo.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	kiloSeed(t, filepath.Join(home, ".config", "kilo"))
	kiloSeed(t, filepath.Join(project, ".kilo"))
	env := append(append(baseEnv(t, home), more...),
		"KILO_DISABLE_MODELS_FETCH=1",
		"KILO_DISABLE_AUTOUPDATE=1",
	)
	return runCLI(t, project, env, 5*time.Minute, bin, "run", "-m", "fake/fake-model", prompt)
}

func TestKiloGuard(t *testing.T) { guardCase(t, "kilo-code", "tool.execute.before", kiloRun) }

// Kilo's plugin API is OpenCode's: chat.message (userPromptSubmit) and
// experimental.chat.system.transform (beforePromptBuild) add context,
// tool.execute.before rewrites, tool.execute.after adds context. The stop
// phase (session.idle) needs `kilo serve`; it is not run here.
func TestKiloProbe(t *testing.T) {
	bundle := probeBundle(t, "kilo-code")
	withProbe := func(project, home string) { pluginInstall(t, bundle, "kilo-code", project, home) }
	t.Run("context-events", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		withProbe(project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := kiloRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("kilo: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-SUBMIT") }) {
			t.Errorf("chat.message context never reached the model\n%s", r.stderr)
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-BUILD") }) {
			t.Errorf("system-transform context never reached the model\n%s", r.stderr)
		}
		evs := events(t, rec)
		observed(t, "kilo-code", evs)
		verified(t, "kilo-code", "add context", "chat.message", "experimental.chat.system.transform")
		checkEvents(t, "kilo-code", project, evs, "userPromptSubmit", "beforePromptBuild", "preToolUse", "postToolUse")
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "kilo-code", "tool.execute.before", "tool.execute.after", withProbe, kiloRun)
	})
}
