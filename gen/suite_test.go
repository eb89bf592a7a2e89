package gen_test

import (
	"bytes"
	"crypto/sha256"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// innerEnv marks the test suite run inside the copy, so that it does not
// start another copy.
const innerEnv = "SITTER_SUITE_IN_COPY"

// TestAddedHarnessPassesTheSuite is the contributor's path: a copy of the
// repository gets one more harness file (testdata/synth/synth.cue, with
// packaging, a deny and a stop that continues), `make generate` runs, and
// the whole test suite passes with no edit anywhere else. Generation may
// touch only atlas/, generated/, artifacts/ and docs/fidelity.md.
func TestAddedHarnessPassesTheSuite(t *testing.T) {
	if testing.Short() || os.Getenv(innerEnv) != "" {
		t.Skip("copies the repository and runs the whole suite in it")
	}
	src := repoRoot(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git to list the repository's files")
	}
	out, err := exec.Command("git", "-C", src, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	tmp := t.TempDir()
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(src, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		copyFile(t, filepath.Join(src, f), filepath.Join(tmp, f))
		if err := os.Chmod(filepath.Join(tmp, f), fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	before := digests(t, tmp)
	synth, err := os.ReadFile("testdata/synth/synth.cue")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "atlas", "harnesses", "synth.cue"), synth, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, tmp, "go", "run", "./gen/cmd/sitter-gen")
	for path, sum := range digests(t, tmp) {
		if before[path] == sum || allowed(path) {
			continue
		}
		t.Errorf("generating for a new harness changed %s, outside atlas/, generated/, artifacts/ and docs/fidelity.md", path)
	}
	if _, err := os.Stat(filepath.Join(tmp, "artifacts", "guard", "synth", "hooks", "hooks.json")); err != nil {
		t.Errorf("no guard bundle for the new harness: %v", err)
	}
	run(t, tmp, "go", "vet", "./...")
	run(t, tmp, "go", "test", "-count=1", "./...")
}

func allowed(path string) bool {
	for _, p := range []string{"atlas/", "generated/", "artifacts/", "docs/fidelity.md"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// digests maps every file under root to its content hash.
func digests(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return nil
	})
	return m
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), innerEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in the copy: %v\n%s", name, strings.Join(args, " "), err, tail(out.String(), 8000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
