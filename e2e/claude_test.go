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
	bin := install(t, clis["claude-code"])
	env := append(baseEnv(t, home),
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
	project, outside, home := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside"), filepath.Join(tmp, "home")
	for _, d := range []string{project, outside, home} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	bundle := filepath.Join(repo(t), "artifacts", "guard", "claude-code")

	t.Run("deny", func(t *testing.T) {
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
