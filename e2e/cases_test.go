//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
)

// runner runs one headless turn of a harness with the probe plugin loaded.
type runner func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult

// rewriteAndToolContext is the probe case for the tool phases' answers:
// preToolUse rewrites the shell command (the rewritten command runs, the
// model's does not) and postToolUse adds context (it reaches the model with
// the tool result). install is nil when the runner loads the bundle itself.
func rewriteAndToolContext(t *testing.T, harness, preEvent, postEvent string, install func(project, home string), run runner) {
	project, home, rec := probeCase(t, "")
	os.WriteFile(filepath.Join(rec, "pre-tool-reply"), []byte(`{"updatedInput":{"command":"echo rewritten > rewritten.txt"}}`), 0o644)
	os.WriteFile(filepath.Join(rec, "post-tool-reply"), []byte(`{"additionalContext":"CTX-POST-TOOL"}`), 0o644)
	if install != nil {
		install(project, home)
	}
	llm := startLLM(t, llmscript.ShellThenText("echo original > original.txt", "done"))
	r := run(t, llm, project, home, []string{"E2E_DIR=" + rec}, "write a file")
	if r.err != nil {
		t.Fatalf("%s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	evs := events(t, rec)
	t.Run("rewrite", func(t *testing.T) {
		verified(t, harness, "rewrite input", preEvent)
		b, err := os.ReadFile(filepath.Join(project, "rewritten.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "rewritten" {
			t.Errorf("the rewritten command did not run: rewritten.txt = %q, %v\n%s\n%s", b, err, r.stdout, r.stderr)
		}
		if exists(filepath.Join(project, "original.txt")) {
			t.Errorf("the model's own command ran: original.txt exists")
		}
	})
	t.Run("tool-context", func(t *testing.T) {
		verified(t, harness, "add context", postEvent)
		if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("CTX-POST-TOOL") }) {
			t.Errorf("post-tool context never reached the model (%d requests)", len(llm.Requests()))
			for _, q := range llm.Requests() {
				t.Logf("%s", q.Body)
			}
		}
	})
	checkEvents(t, harness, project, evs, "preToolUse", "postToolUse")
}
