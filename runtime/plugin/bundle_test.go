package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// fakeExecutable makes the running binary exe for the test.
func fakeExecutable(t *testing.T, exe string) {
	t.Helper()
	old := executable
	executable = func() (string, error) { return exe, nil }
	t.Cleanup(func() { executable = old })
}

// A checkout's bin/ on PATH (README, "Use it as a hook": make build &&
// export PATH="$PWD/bin:$PATH") finds the checkout's artifacts/<name>
// from any folder, as an install finds share/sitter/artifacts; a name
// found nowhere lists every place looked in as an absolute path, the
// ones that do not exist too.
func TestFindBundleBesideBin(t *testing.T) {
	reg := registry.Registry()
	guard, err := filepath.Abs(filepath.Join(artifacts, "guard", "codex"))
	if err != nil {
		t.Fatal(err)
	}
	checkout := t.TempDir()
	copyDir(t, guard, filepath.Join(checkout, "artifacts", "guard", "codex"))
	if err := os.MkdirAll(filepath.Join(checkout, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeExecutable(t, filepath.Join(checkout, "bin", "sitter-host"))
	project := t.TempDir()
	t.Chdir(project)
	b, err := FindBundle("guard", desc(t, "codex"), reg)
	if err != nil {
		t.Fatalf("FindBundle(guard) from a project, sitter in a checkout's bin/: %v", err)
	}
	if want := filepath.Join(checkout, "artifacts", "guard", "codex"); b.Dir != want || b.Marker.Plugin != "guard" {
		t.Errorf("FindBundle(guard) = %s %+v, want %s", b.Dir, b.Marker, want)
	}

	_, err = FindBundle("no-such-plugin", desc(t, "codex"), reg)
	if err == nil {
		t.Fatal("FindBundle(no-such-plugin) found a bundle")
	}
	for _, want := range []string{
		filepath.Join(project, "no-such-plugin"),
		filepath.Join(project, "no-such-plugin", "codex"),
		filepath.Join(project, "artifacts", "no-such-plugin", "codex"),
		filepath.Join(checkout, "share", "sitter", "artifacts", "no-such-plugin", "codex"),
		filepath.Join(checkout, "artifacts", "no-such-plugin", "codex"),
	} {
		if !strings.Contains(err.Error(), want+",") && !strings.Contains(err.Error(), want+";") && !strings.HasSuffix(err.Error(), want+")") {
			t.Errorf("the error does not name %s: %v", want, err)
		}
	}

	// An install prefix's share/sitter/artifacts comes before a folder
	// named artifacts beside its bin/.
	prefix := t.TempDir()
	copyDir(t, guard, filepath.Join(prefix, "share", "sitter", "artifacts", "guard", "codex"))
	copyDir(t, guard, filepath.Join(prefix, "artifacts", "guard", "codex"))
	fakeExecutable(t, filepath.Join(prefix, "bin", "sitter-host"))
	if b, err := FindBundle("guard", desc(t, "codex"), reg); err != nil || b.Dir != filepath.Join(prefix, "share", "sitter", "artifacts", "guard", "codex") {
		t.Errorf("FindBundle(guard) with an install prefix: %v, %v", b, err)
	}
}
