//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// TestClaudeWorktree: a plugin bundle leaves Claude's worktrees working.
// The observer's bundle has a recording handler on every phase but those
// whose event replaces the harness's own work (atlas replaces: WorktreeCreate
// and WorktreeRemove, which the generator refuses to register). Loaded with
// --plugin-dir, the model's EnterWorktree still makes a git worktree while
// the bundle's hooks run; installed with `sitter plugin install`, so does
// `claude -p --worktree`. The controls register sitter on WorktreeCreate,
// as a bundle would without the atlas's replaces: both then fail, so the
// first cases can fail.
func TestClaudeWorktree(t *testing.T) {
	observer := observerBundle(t, "claude-code")
	if hooks, err := os.ReadFile(filepath.Join(observer, "hooks", "hooks.json")); err != nil || strings.Contains(string(hooks), "Worktree") {
		t.Fatalf("the observer bundle registers a worktree event (%v):\n%s", err, hooks)
	}
	withBundle := func(control bool, extra ...string) runner {
		return func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			gitRepo(t, project)
			if control {
				claudeSettings(t, project, settingsHook{event: "WorktreeCreate", command: sitterHook("WorktreeCreate", claudeRecorder)})
			}
			return claudeRunEnv(t, llm, project, home, more, prompt, append([]string{"--plugin-dir", observer}, extra...)...)
		}
	}
	enter := func() llmscript.Script {
		return toolSteps(llmscript.Turn{Tool: "EnterWorktree", Input: map[string]any{"name": "e2e"}})
	}
	const failed = "WorktreeCreate hook failed"
	t.Run("enter-worktree", func(t *testing.T) {
		llm, project, evs, r := replyRun(t, "claude-code", nil, enter(), "work in a worktree", nil, withBundle(false))
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if llm.Any(func(q *llmscript.Request) bool { return q.Contains(failed) }) {
			t.Errorf("EnterWorktree failed with the bundle loaded: a request carries %q", failed)
		}
		if wts := worktrees(t, project); len(wts) != 2 {
			t.Errorf("git worktrees %v: want the project and the one EnterWorktree made", wts)
		}
		hooksRan(t, evs, "sessionStart", "preToolUse", "stop")
	})
	// claude --worktree makes the worktree before it loads a --plugin-dir
	// bundle, so here the bundle is installed into the user's
	// ~/.claude/settings.json, which Claude reads first (the project's
	// settings are not in the new worktree: they are not committed).
	installed := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		gitRepo(t, project)
		if r := runCLI(t, project, baseEnv(t, home), time.Minute, sitter(t), "plugin", "install", observer, "--harness", "claude-code", "--scope", "user"); r.err != nil {
			t.Fatalf("sitter plugin install --scope user: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		return claudeRunEnv(t, llm, project, home, more, prompt, "--worktree", "e2e")
	}
	t.Run("worktree-flag", func(t *testing.T) {
		_, project, evs, r := replyRun(t, "claude-code", nil, llmscript.Text("done"), "hello", nil, installed)
		if r.err != nil {
			t.Fatalf("claude --worktree: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		wts := worktrees(t, project)
		if len(wts) != 2 {
			t.Fatalf("git worktrees %v: want the project and the one --worktree made", wts)
		}
		hooksRan(t, evs, "sessionStart", "stop")
		for _, e := range evs {
			if e.Phase == "stop" && e.Session.Cwd != wts[1] {
				t.Errorf("the stop hook ran in %s, want the session's worktree %s", e.Session.Cwd, wts[1])
			}
		}
	})
	t.Run("worktree-flag-control", func(t *testing.T) {
		ctl := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			gitRepo(t, project)
			claudeSettings(t, project, settingsHook{event: "WorktreeCreate", command: sitterHook("WorktreeCreate", claudeRecorder)})
			return claudeRunEnv(t, llm, project, home, more, prompt, "--worktree", "e2e")
		}
		_, project, _, r := replyRun(t, "claude-code", nil, llmscript.Text("done"), "hello", nil, ctl)
		if r.err == nil || !strings.Contains(r.stdout+r.stderr, failed) {
			t.Errorf("claude --worktree did not fail behind sitter's WorktreeCreate hook (%v): the atlas's replaces on WorktreeCreate may be stale\n%s%s", r.err, r.stdout, r.stderr)
		}
		if wts := worktrees(t, project); len(wts) != 1 {
			t.Errorf("git worktrees %v: want the project alone", wts)
		}
	})
	t.Run("control", func(t *testing.T) {
		llm, project, _, _ := replyRun(t, "claude-code", nil, enter(), "work in a worktree", nil, withBundle(true))
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains(failed) }) {
			t.Errorf("EnterWorktree did not fail behind sitter's WorktreeCreate hook: no request carries %q; the atlas's replaces on WorktreeCreate may be stale", failed)
		}
		if wts := worktrees(t, project); len(wts) != 1 {
			t.Errorf("git worktrees %v: want the project alone", wts)
		}
	})
}

// worktrees lists the git worktrees of the repository at dir, the main one
// first, each as its real path.
func worktrees(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatalf("git worktree list: %v", err)
	}
	var wts []string
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			wts = append(wts, p)
		}
	}
	return wts
}

// hooksRan fails t unless the bundle's handlers recorded each phase.
func hooksRan(t *testing.T, evs []event, phases ...string) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range evs {
		seen[e.Phase] = true
	}
	for _, p := range phases {
		if !seen[p] {
			t.Errorf("no %s event recorded: the bundle's hooks did not run (%d events)", p, len(evs))
		}
	}
}
