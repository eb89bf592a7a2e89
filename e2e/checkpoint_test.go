//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
)

// One real Claude Code turn with the babysitter plugin, in a git project,
// with the audit log on (the default): the turn leaves one checkpoint whose changes
// are the file it wrote, and one audit line per hook call; the user's
// branch and index are untouched.
func TestClaudeCheckpointAndAudit(t *testing.T) {
	_, project, home := projectHome(t)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", project, "-c", "user.name=u", "-c", "user.email=u@x"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(project, "README.md"), []byte("hi\n"), 0o644)
	git("add", "-A")
	git("commit", "-q", "-m", "first")
	head := git("rev-parse", "HEAD")

	bundle := filepath.Join(repo(t), "artifacts", "babysitter", "claude-code")
	llm := startLLM(t, llmscript.ShellThenText("echo hi > note.txt", "done"))
	r := claudeRunEnv(t, llm, project, home, nil, "write note.txt", "--plugin-dir", bundle)
	if r.err != nil {
		t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if !exists(filepath.Join(project, "note.txt")) {
		t.Fatal("the turn did not write note.txt")
	}
	// Checkpoints.
	refs := strings.Fields(git("for-each-ref", "--format=%(refname)", "refs/sitter/checkpoints/"))
	if len(refs) != 1 {
		t.Fatalf("checkpoint refs %q, want one session", refs)
	}
	out, err := exec.Command(sitter(t), "checkpoint", "list", "--dir", project, "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var cps []struct {
		ID, Kind, Harness, Session string
		Prompts                    []string
	}
	json.Unmarshal(out, &cps)
	if len(cps) != 1 {
		t.Errorf("%d checkpoints listed, want 1: %s", len(cps), out)
	}
	turns := 0
	for _, c := range cps {
		if c.Kind == "turn" {
			turns++
			show, _ := exec.Command(sitter(t), "checkpoint", "show", c.ID, "--dir", project).Output()
			if !strings.Contains(string(show), "A\tnote.txt") || strings.Contains(string(show), "README") {
				t.Errorf("turn checkpoint changes:\n%s", show)
			}
			if c.Harness != "claude-code" || len(c.Prompts) != 1 || c.Prompts[0] != "write note.txt" {
				t.Errorf("turn checkpoint %+v", c)
			}
		}
	}
	if turns != 1 {
		t.Errorf("%d turn checkpoints, want 1: %s", turns, out)
	}
	if git("rev-parse", "HEAD") != head || git("symbolic-ref", "HEAD") != "refs/heads/main" || git("diff", "--cached", "--name-only") != "" {
		t.Error("the user's branch or index changed")
	}
	// Audit: one line per hook call, each with the babysitter's handlers.
	f, err := os.Open(filepath.Join(home, ".sitter-state", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	phases := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			Harness, Phase, Decision, Verdict string
			Handlers                          []struct{ Command, Decision string }
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if e.Harness != "claude-code" || e.Verdict == "" || len(e.Handlers) == 0 {
			t.Errorf("audit line %s", sc.Text())
		}
		phases[e.Phase]++
	}
	if phases["userPromptSubmit"] != 1 || phases["stop"] != 1 || phases["sessionStart"] != 1 {
		t.Errorf("audit lines per phase %v, want one userPromptSubmit, stop and sessionStart", phases)
	}
	t.Logf("audit lines per phase: %v", phases)
}
