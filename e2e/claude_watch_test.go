//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// TestClaudeWatch walks a plugin author's fileChanged journey on the real
// Claude Code: a plugin.yaml whose fileChanged handlers name the project
// files they watch (watch:), built into a bundle by the generator and
// loaded with --plugin-dir, and nothing in the project's settings. Claude
// starts no watcher for a plugin's own FileChanged hooks; the bundle's
// SessionStart hook announces the files (hookSpecificOutput.watchPaths),
// so a change to either raises FileChanged, and each handler gets the
// changes to its own file only, with the project's root as the event's
// session.projectDir. A change to a file no handler names reaches
// neither.
func TestClaudeWatch(t *testing.T) {
	bundle := watcherBundle(t, "claude-code")
	project, home, rec := probeCase(t, "")
	notes, todo, other := filepath.Join(project, "notes.txt"), filepath.Join(project, "docs", "todo.md"), filepath.Join(project, "other.txt")
	os.MkdirAll(filepath.Join(project, "docs"), 0o755)
	for _, d := range []string{"notes", "todo"} {
		os.MkdirAll(filepath.Join(rec, d), 0o755)
	}
	for _, f := range []string{notes, todo, other} {
		os.WriteFile(f, []byte("v0\n"), 0o644)
	}
	var n atomic.Int32
	llm := startLLM(t, func(q *llmscript.Request) llmscript.Turn {
		if len(q.ToolNames()) == 0 {
			return llmscript.Turn{Text: "title"}
		}
		// Hold the answer until both handlers have run, changing the
		// three files every 5 s (the watcher may still be starting).
		poke := func() {
			v := []byte(fmt.Sprintf("v%d\n", n.Add(1)))
			for _, f := range []string{other, notes, todo} {
				os.WriteFile(f, v, 0o644)
			}
		}
		recorded(filepath.Join(rec, "notes"), "FileChanged", 30*time.Second, poke)
		recorded(filepath.Join(rec, "todo"), "FileChanged", 30*time.Second, poke)
		return llmscript.Turn{Text: "done"}
	})
	r := claudeRunEnv(t, llm, project, home, []string{"E2E_DIR=" + rec}, "wait for the files", "--plugin-dir", bundle)
	if r.err != nil {
		t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	for _, c := range []struct{ dir, file string }{{"notes", notes}, {"todo", todo}} {
		evs := events(t, filepath.Join(rec, c.dir))
		if len(evs) == 0 {
			t.Errorf("the %s handler never ran: Claude raised no FileChanged for %s (stderr: %s)", c.dir, c.file, r.stderr)
			continue
		}
		for _, e := range evs {
			if e.NativeEvent != "FileChanged" || e.File != c.file {
				t.Errorf("the %s handler got %s about %q, want FileChanged about %s only", c.dir, e.NativeEvent, e.File, c.file)
			}
			// The project's root comes from CLAUDE_PROJECT_DIR, which
			// Claude sets for every command hook.
			if e.Session.ProjectDir != project {
				t.Errorf("the %s handler's event names project %q, want %s", c.dir, e.Session.ProjectDir, project)
			}
		}
	}
	verified(t, "claude-code", "observe", "FileChanged")
}
