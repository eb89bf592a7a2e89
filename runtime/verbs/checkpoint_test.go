package verbs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
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
