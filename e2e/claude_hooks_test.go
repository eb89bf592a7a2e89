//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
)

// claudeSettingsHooks registers `sitter hook claude-code <event>` with
// handler in the project's .claude/settings.json for each event, by hand:
// the generated bundles leave out events whose mere registration changes
// what Claude does (a WorktreeCreate hook replaces worktree creation).
func claudeSettingsHooks(t *testing.T, project, handler string, events ...string) {
	t.Helper()
	hooks := map[string]any{}
	for _, e := range events {
		hooks[e] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": fmt.Sprintf(`"$SITTER_BIN" hook claude-code %s --handler '%s'`, e, handler)}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	os.MkdirAll(filepath.Join(project, ".claude"), 0o755)
	if err := os.WriteFile(filepath.Join(project, ".claude", "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// claudeRecorder records the canonical event and answers $E2E_DIR/<phase>-reply.
const claudeRecorder = `cat >> "$E2E_DIR/events.jsonl"; cat "$E2E_DIR/$SITTER_PHASE-reply" 2>/dev/null; true`

// gitRepo makes dir a git repository with one commit.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// toolSteps answers the tools of steps in order, one per request that
// offers tools, then "done".
func toolSteps(steps ...llmscript.Turn) llmscript.Script {
	var n atomic.Int32
	return func(q *llmscript.Request) llmscript.Turn {
		if len(q.ToolNames()) == 0 {
			return llmscript.Turn{Text: "title"}
		}
		i := int(n.Add(1)) - 1
		if i < len(steps) {
			return steps[i]
		}
		return llmscript.Turn{Text: "done"}
	}
}

// TestClaudeHooks proves Claude Code events the generated bundles do not
// register, with hooks written into the project's settings by hand.
func TestClaudeHooks(t *testing.T) {
	run := func(events ...string) runner {
		return func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			gitRepo(t, project)
			claudeSettingsHooks(t, project, claudeRecorder, events...)
			return claudeRunEnv(t, llm, project, home, more, prompt)
		}
	}
	// The model's EnterWorktree raises WorktreeCreate (whose hook would
	// have to print the new worktree's path: the canonical result cannot,
	// so the creation fails, which the atlas's note says).
	t.Run("worktree-create", func(t *testing.T) {
		_, project, evs, _ := replyRun(t, "claude-code", nil, toolSteps(llmscript.Turn{Tool: "EnterWorktree", Input: map[string]any{"name": "e2e"}}), "work in a worktree", nil, run("WorktreeCreate"))
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, "WorktreeCreate", "worktreeCreate"))
	})
	// claude --init runs the Setup hooks (trigger init) before the turn.
	// (Setup hooks of a --plugin-dir bundle do not run: Claude runs Setup
	// before it loads such plugins. Under -p the context a Setup hook adds
	// does not reach the model.)
	t.Run("setup", func(t *testing.T) {
		initRun := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			claudeSettingsHooks(t, project, claudeRecorder, "Setup")
			return claudeRunEnv(t, llm, project, home, more, prompt, "--init")
		}
		_, project, evs := replyTurn(t, "claude-code", nil, llmscript.Text("done"), "hello", nil, initRun)
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, "Setup", "setup"))
	})
}
