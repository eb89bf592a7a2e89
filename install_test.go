package sitter_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstallSaysPath: `make install PREFIX=…` into a folder that is not
// on PATH says how to put it there (the README's hook example then runs
// sitter by name); one on PATH says nothing more, unless another sitter
// comes first.
func TestMakeInstallSaysPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the three binaries")
	}
	for _, tool := range []string{"make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	prefix := t.TempDir()
	bin := filepath.Join(prefix, "bin")
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "sitter"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	install := func(pathEnv string) string {
		t.Helper()
		cmd := exec.Command("make", "install", "PREFIX="+prefix)
		cmd.Env = append(os.Environ(), "PATH="+pathEnv)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make install: %v\n%s", err, out)
		}
		return string(out)
	}

	hint := `make install: ` + bin + ` is not on your PATH; to run sitter by name: export PATH="` + bin + `:$PATH"`
	if out := install(path); !strings.Contains(out, hint) {
		t.Errorf("PREFIX/bin not on PATH: the output lacks\n%s\ngot:\n%s", hint, out)
	}
	if out := install(bin + ":" + path); strings.Contains(out, "PATH") {
		t.Errorf("PREFIX/bin first on PATH: nothing to say about PATH, got:\n%s", out)
	}
	shadow := `make install: ` + filepath.Join(other, "sitter") + ` comes before ` + filepath.Join(bin, "sitter") + ` on your PATH: put ` + bin + ` first`
	if out := install(other + ":" + bin + ":" + path); !strings.Contains(out, shadow) {
		t.Errorf("another sitter first on PATH: the output lacks\n%s\ngot:\n%s", shadow, out)
	}
}
