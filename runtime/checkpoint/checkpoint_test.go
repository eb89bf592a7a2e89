package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, dir, name, s string) {
	t.Helper()
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// userState is what must not change: branch, HEAD, index (bytes and
// staged changes), stash, refs other than sitter's.
func userState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	head, _ := exec.Command("git", "-C", dir, "symbolic-ref", "-q", "HEAD").Output()
	b.WriteString("branch " + string(head))
	rev, _ := exec.Command("git", "-C", dir, "rev-parse", "-q", "--verify", "HEAD").Output()
	b.WriteString("head " + string(rev))
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	sum := sha256.Sum256(idx)
	b.WriteString("index " + hex.EncodeToString(sum[:]) + "\n")
	b.WriteString(run(t, dir, "diff", "--cached", "--name-status"))
	b.WriteString("stash " + run(t, dir, "stash", "list"))
	refs, _ := exec.Command("git", "-C", dir, "for-each-ref", "--format=%(refname) %(objectname)").Output()
	for _, l := range strings.Split(string(refs), "\n") {
		if !strings.HasPrefix(l, RefPrefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func newRepo(t *testing.T, commit bool) string {
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, ".gitignore", "*.log\n")
	writeFile(t, dir, "keep.txt", "keep\n")
	writeFile(t, dir, "edit.txt", "v1\n")
	writeFile(t, dir, "gone.txt", "bye\n")
	if commit {
		run(t, dir, "add", "-A")
		run(t, dir, "commit", "-q", "-m", "first")
		// a stash and a staged change the checkpoints must not touch
		writeFile(t, dir, "keep.txt", "stashed\n")
		run(t, dir, "stash", "-q")
		writeFile(t, dir, "staged.txt", "staged\n")
		run(t, dir, "add", "staged.txt")
	}
	writeFile(t, dir, "debug.log", "ignored\n")
	return dir
}

func TestTurnCheckpointAndRestore(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(map[bool]string{true: "with commits", false: "no commits yet"}[commit], func(t *testing.T) {
			dir := newRepo(t, commit)
			before := userState(t, dir)
			r, err := Open(filepath.Join(dir))
			if err != nil {
				t.Fatal(err)
			}
			base, created, err := r.Create(Meta{Kind: "base", Harness: "claude-code", Session: "s-1"})
			if err != nil || !created {
				t.Fatalf("base: %v %v", created, err)
			}
			// The turn: edit, add, delete; an ignored file changes too.
			writeFile(t, dir, "edit.txt", "v2\n")
			writeFile(t, dir, "sub/new.txt", "new\n")
			os.Remove(filepath.Join(dir, "gone.txt"))
			writeFile(t, dir, "debug.log", "still ignored\n")
			turn, _, err := r.Create(Meta{Kind: "turn", Harness: "claude-code", Session: "s-1", Prompts: []string{"do it"}, TranscriptPos: 7, Usage: &Usage{Input: 5}})
			if err != nil {
				t.Fatal(err)
			}
			if turn.Parent != base.ID || turn.Prompts[0] != "do it" || turn.TranscriptPos != 7 || turn.Usage.Input != 5 {
				t.Errorf("turn checkpoint %+v", turn)
			}
			ch, err := r.Changes(turn)
			if want := []string{"M\tedit.txt", "D\tgone.txt", "A\tsub/new.txt"}; err != nil || !reflect.DeepEqual(ch, want) {
				t.Errorf("changes = %q, %v; want %q", ch, err, want)
			}
			d, _ := r.Diff(turn)
			if !strings.Contains(d, "-v1\n+v2") || strings.Contains(d, "debug.log") {
				t.Errorf("diff:\n%s", d)
			}
			// A base with nothing changed since the tip is skipped.
			if again, created, _ := r.Create(Meta{Kind: "base", Session: "s-1"}); created || again.ID != turn.ID {
				t.Errorf("unchanged base created a checkpoint")
			}
			if got := userState(t, dir); got != before {
				t.Errorf("user state changed:\n%s\nwant\n%s", got, before)
			}
			// Restore the base: the turn's changes are undone.
			written, deleted, err := r.Restore(base, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if read(t, dir, "edit.txt") != "v1\n" || read(t, dir, "gone.txt") != "bye\n" || read(t, dir, "sub/new.txt") != "<missing>" || read(t, dir, "debug.log") != "still ignored\n" {
				t.Errorf("after restore: written %q deleted %q", written, deleted)
			}
			// And the turn back, for one path only (what is there now is
			// in the base checkpoint: nothing to lose, no --force needed).
			if _, _, err := r.Restore(turn, []string{"edit.txt"}, false); err != nil {
				t.Fatal(err)
			}
			if read(t, dir, "edit.txt") != "v2\n" || read(t, dir, "gone.txt") != "bye\n" {
				t.Errorf("path restore: edit %q gone %q", read(t, dir, "edit.txt"), read(t, dir, "gone.txt"))
			}
			if got := userState(t, dir); got != before {
				t.Errorf("user state changed by restore:\n%s\nwant\n%s", got, before)
			}
			list, err := r.List("s-1")
			if err != nil || len(list) != 2 || list[0].ID != turn.ID {
				t.Errorf("list: %d, %v", len(list), err)
			}
			ss, _ := r.Sessions()
			if !reflect.DeepEqual(ss, []string{"s-1"}) {
				t.Errorf("sessions %q", ss)
			}
		})
	}
}

func TestRestoreRefusesUserChanges(t *testing.T) {
	dir := newRepo(t, true)
	r, _ := Open(dir)
	base, _, _ := r.Create(Meta{Kind: "base", Session: "s"})
	writeFile(t, dir, "edit.txt", "agent\n")
	r.Create(Meta{Kind: "turn", Session: "s"})
	writeFile(t, dir, "edit.txt", "user edit after the turn\n")
	_, _, err := r.Restore(base, nil, false)
	var dirty *ErrDirty
	if !errors.As(err, &dirty) || !reflect.DeepEqual(dirty.Paths, []string{"edit.txt"}) {
		t.Fatalf("err = %v", err)
	}
	if read(t, dir, "edit.txt") != "user edit after the turn\n" {
		t.Error("a refused restore wrote files")
	}
}

func TestSubmodule(t *testing.T) {
	sub := t.TempDir()
	run(t, sub, "init", "-q", "-b", "main")
	writeFile(t, sub, "s.txt", "s\n")
	run(t, sub, "add", "-A")
	run(t, sub, "commit", "-q", "-m", "s")
	dir := newRepo(t, true)
	run(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")
	run(t, dir, "commit", "-q", "-m", "mod")
	before := userState(t, dir)
	r, _ := Open(dir)
	base, _, err := r.Create(Meta{Kind: "base", Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "mod/s.txt", "changed inside the submodule\n")
	writeFile(t, dir, "top.txt", "top\n")
	turn, _, err := r.Create(Meta{Kind: "turn", Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := r.Changes(turn)
	if want := []string{"A\ttop.txt"}; !reflect.DeepEqual(ch, want) {
		t.Errorf("changes %q, want %q (a submodule is recorded at its commit)", ch, want)
	}
	if _, _, err := r.Restore(base, nil, false); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "top.txt") != "<missing>" {
		t.Error("top.txt not removed")
	}
	if userState(t, dir) != before {
		t.Error("user state changed")
	}
}

func TestOutsideGit(t *testing.T) {
	t.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("err = %v", err)
	}
}

func TestValidSession(t *testing.T) {
	for s, ok := range map[string]bool{"abc-123_x.y": true, "": false, "a/b": false, "..": false, "a..b": false, ".a": false, "a.lock": false, "a b": false} {
		if ValidSession(s) != ok {
			t.Errorf("ValidSession(%q) = %v", s, !ok)
		}
	}
}

// TestRel: paths are taken as git takes them, relative to the folder
// they were given in (through a symbolic link too), and made relative to
// the top; one outside the repository is an error naming it.
func TestRel(t *testing.T) {
	dir := newRepo(t, true)
	writeFile(t, dir, "src/x.go", "x\n")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(dir, "src"), link); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	for _, c := range []struct{ dir, path, want string }{
		{src, "x.go", "src/x.go"},
		{src, "new/y.go", "src/new/y.go"}, // need not exist
		{src, "../edit.txt", "edit.txt"},
		{src, ".", "src"},
		{src, "*.go", "src/*.go"}, // a glob stays a glob
		{dir, "src/", "src"},
		{dir, ".", "."},
		{link, "x.go", "src/x.go"},
		{link, "../edit.txt", "edit.txt"}, // ".." from where git is, not the link's folder
		{"/", filepath.Join(src, "x.go"), "src/x.go"},
		{"/", filepath.Join(link, "gone", "z.go"), "src/gone/z.go"},
	} {
		if got, err := r.Rel(c.dir, c.path); err != nil || got != c.want {
			t.Errorf("Rel(%s, %s) = %q, %v; want %q", c.dir, c.path, got, err, c.want)
		}
	}
	for _, c := range []struct{ dir, path string }{
		{dir, "../x"}, {src, "../../x"}, {src, "/etc/passwd"}, {dir, ""},
	} {
		if got, err := r.Rel(c.dir, c.path); err == nil || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Rel(%s, %q) = %q, %v; want an error naming it", c.dir, c.path, got, err)
		}
	}
}

// TestPathMatchesNothing: a path that names no file is an error naming
// it, not an empty diff or "0 written"; one that names a file the turn
// did not change is an empty diff. Errors say what was wrong, not the git
// command line.
func TestPathMatchesNothing(t *testing.T) {
	dir := newRepo(t, true)
	r, _ := Open(dir)
	base, _, _ := r.Create(Meta{Kind: "base", Session: "s"})
	writeFile(t, dir, "edit.txt", "v2\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	turn, _, _ := r.Create(Meta{Kind: "turn", Session: "s"})
	writeFile(t, dir, "later.txt", "made after the turn\n")

	for _, paths := range [][]string{{"nosuch.txt"}, {"edit.txt", "nosuch.txt"}, {"no/such/dir"}} {
		_, err := r.Diff(turn, paths...)
		var nm *ErrNoMatch
		if !errors.As(err, &nm) || nm.Path != paths[len(paths)-1] || !strings.Contains(err.Error(), turn.ID[:12]) {
			t.Errorf("Diff(%q) err = %v; want no match for %s", paths, err, paths[len(paths)-1])
		}
		written, deleted, err := r.Restore(base, paths, false)
		if !errors.As(err, &nm) || nm.Path != paths[len(paths)-1] || strings.Contains(err.Error(), "diff-tree") {
			t.Errorf("Restore(%q) err = %v; want no match for %s", paths, err, paths[len(paths)-1])
		}
		if len(written)+len(deleted) > 0 || read(t, dir, "edit.txt") != "v2\n" {
			t.Errorf("Restore(%q) wrote %q, deleted %q", paths, written, deleted)
		}
	}
	// In the parent only (the turn deleted it), unchanged, a glob: fine.
	if d, err := r.Diff(turn, "gone.txt"); err != nil || !strings.Contains(d, "-bye") {
		t.Errorf("Diff(gone.txt) = %q, %v", d, err)
	}
	if d, err := r.Diff(turn, "keep.txt"); err != nil || d != "" {
		t.Errorf("Diff(keep.txt) = %q, %v; want empty", d, err)
	}
	if d, err := r.Diff(turn, "*.txt"); err != nil || !strings.Contains(d, "+v2") {
		t.Errorf("Diff(*.txt) = %q, %v", d, err)
	}
	// later.txt is in the working tree only: restoring the turn deletes it.
	if _, deleted, err := r.Restore(turn, []string{"later.txt"}, true); err != nil || !reflect.DeepEqual(deleted, []string{"later.txt"}) {
		t.Errorf("Restore(later.txt) deleted %q, %v", deleted, err)
	}
	// gone.txt is in the base only: restoring it writes it back.
	if written, _, err := r.Restore(base, []string{"gone.txt"}, false); err != nil || !reflect.DeepEqual(written, []string{"gone.txt"}) || read(t, dir, "gone.txt") != "bye\n" {
		t.Errorf("Restore(gone.txt) wrote %q, %v", written, err)
	}
}

// TestGitErrorIsShort: a failed git command names its subcommand and
// what git said, not its arguments.
func TestGitErrorIsShort(t *testing.T) {
	dir := newRepo(t, true)
	_, err := git(dir, nil, nil, "diff-tree", "-r", emptyTree, "HEAD", "--", "../outside", ":(exclude).sitter")
	if err == nil || !strings.HasPrefix(err.Error(), "git diff-tree: ") || strings.Contains(err.Error(), ":(exclude)") || strings.Contains(err.Error(), emptyTree) {
		t.Errorf("err = %v", err)
	}
}
