package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's first example ("Use it as a hook") runs as written: its
// shell block, from writing the handler to the hook call, run by sh in an
// empty folder (bin/sitter is the sitter under test), prints the answer
// the README shows on the comment line after it.
func TestReadmeHookExample(t *testing.T) {
	sitter, err := exec.LookPath("sitter") // testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "cat > deny-push.sh <<'SH'\n")
	if start < 0 {
		t.Fatal("README: the deny-push.sh example is gone")
	}
	block, rest, ok := strings.Cut(readme[start:], "\n# {")
	if !ok {
		t.Fatal("README: no expected answer after the example")
	}
	want, _, _ := strings.Cut("{"+rest, "\n")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sitter, filepath.Join(dir, "bin", "sitter")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-e", "-c", block)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SITTER_STATE_DIR="+filepath.Join(dir, "state"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README example failed: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("the README example printed %q, the README says %q", got, want)
	}
}
