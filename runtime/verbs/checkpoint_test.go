package verbs

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/checkpoint"
)

// TestCheckpointOutsideGit: outside a git working tree a question about
// checkpoints has no answer, so show, diff, restore and list fail (exit 1,
// the folder named, nothing on stdout, even with --json); record, a hook
// handler, still never fails its hook.
func TestCheckpointOutsideGit(t *testing.T) {
	t.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
	dir := t.TempDir()
	for _, args := range [][]string{
		{"list"}, {"list", "--json"},
		{"show", "3f2a9c81d0e4"}, {"show", "3f2a9c81d0e4", "--json"},
		{"diff", "3f2a9c81d0e4"}, {"diff", "3f2a9c81d0e4", "--json"},
		{"restore", "3f2a9c81d0e4"}, {"restore", "3f2a9c81d0e4", "--json"},
	} {
		var out, errb bytes.Buffer
		code := Run(append(append([]string{"checkpoint"}, args...), "--dir", dir), nil, &out, &errb, registry.Registry)
		want := "sitter: checkpoint: " + dir + " is not inside a git working tree"
		if code != 1 || out.Len() > 0 || !strings.HasPrefix(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("sitter checkpoint %s outside git: exit %d, stdout %q, stderr %q; want exit 1 and %q", strings.Join(args, " "), code, out.String(), errb.String(), want)
		}
	}
	// Without --dir the folder is the current one, named in full.
	t.Chdir(dir)
	var out, errb bytes.Buffer
	if code := Run([]string{"checkpoint", "list"}, nil, &out, &errb, registry.Registry); code != 1 || !strings.Contains(errb.String(), dir+" is not inside") {
		t.Errorf("sitter checkpoint list in %s: exit %d, stderr %q", dir, code, errb.String())
	}
	ev := `{"harness":"claude-code","phase":"stop","session":{"id":"s-1","cwd":` + jsonString(dir) + `}}`
	out.Reset()
	errb.Reset()
	if code := Run([]string{"checkpoint", "record"}, strings.NewReader(ev), &out, &errb, registry.Registry); code != 0 || out.Len() > 0 {
		t.Errorf("sitter checkpoint record outside git: exit %d, stdout %q, stderr %q; want exit 0, silent", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Error("record made a repository")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCheckpointPaths: paths after <id> or --paths are relative to the
// current folder (or --dir), as git takes them; one outside the
// repository is a usage error (exit 2), one that matches no file an error
// naming it (exit 1); neither prints git's command line.
func TestCheckpointPaths(t *testing.T) {
	dir := t.TempDir()
	gitRun := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun("init", "-q", "-b", "main")
	write("src/x.go", "v1\n")
	write("top.txt", "top\n")
	gitRun("add", "-A")
	gitRun("commit", "-q", "-m", "first")
	r, err := checkpoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	base, _, err := r.Create(checkpoint.Meta{Kind: "base", Session: "s-1"})
	if err != nil {
		t.Fatal(err)
	}
	write("src/x.go", "v2\n")
	turn, _, err := r.Create(checkpoint.Meta{Kind: "turn", Session: "s-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "src"))
	sitter := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(append([]string{"checkpoint"}, args...), nil, &out, &errb, registry.Registry)
		return code, out.String(), errb.String()
	}

	if code, out, errb := sitter("diff", turn.ID, "x.go"); code != 0 || !strings.Contains(out, "+v2") {
		t.Errorf("diff <turn> x.go in src: exit %d, stdout %q, stderr %q; want the diff of src/x.go", code, out, errb)
	}
	if code, out, errb := sitter("restore", base.ID, "x.go", "--json"); code != 0 || !strings.Contains(out, `"src/x.go"`) {
		t.Errorf("restore <base> x.go in src: exit %d, stdout %q, stderr %q; want src/x.go written", code, out, errb)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "x.go")); string(b) != "v1\n" {
		t.Errorf("src/x.go = %q after restore, want v1", b)
	}
	if code, out, errb := sitter("restore", turn.ID, "--paths", "../src/x.go", "--dir", "."); code != 0 || !strings.Contains(out, "wrote   src/x.go") {
		t.Errorf("restore <turn> --paths ../src/x.go: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	for _, args := range [][]string{
		{"restore", base.ID, "nosuchfile"},
		{"restore", base.ID, "--paths", "nosuchfile"},
		{"restore", base.ID, "x.go", "nosuchfile", "--json"},
		{"diff", turn.ID, "nosuchfile"},
		{"diff", turn.ID, "--paths", "nosuchfile", "--json"},
	} {
		code, out, errb := sitter(args...)
		if code != 1 || out != "" || !strings.HasPrefix(errb, "sitter: checkpoint: src/nosuchfile matches no file in checkpoint ") || strings.Contains(errb, "git ") {
			t.Errorf("%q in src: exit %d, stdout %q, stderr %q; want exit 1 naming src/nosuchfile", args, code, out, errb)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "x.go")); string(b) != "v2\n" {
		t.Errorf("src/x.go = %q after refused restores, want v2", b)
	}
	for _, args := range [][]string{
		{"restore", base.ID, "../../x"},
		{"restore", base.ID, "--paths", "../../x"},
		{"diff", turn.ID, "../../x"},
	} {
		code, out, errb := sitter(args...)
		if code != 2 || out != "" || !strings.Contains(errb, "../../x is outside the repository") || !strings.Contains(errb, "Usage:") || strings.Contains(errb, "diff-tree") {
			t.Errorf("%q in src: exit %d, stdout %q, stderr %q; want a usage error naming ../../x", args, code, out, errb)
		}
	}
}
