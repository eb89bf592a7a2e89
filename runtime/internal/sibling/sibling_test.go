package sibling

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	if got := Find("sitter-nothing"); got != "" {
		t.Errorf("Find of a missing binary = %q", got)
	}
	// On PATH only when executable.
	p := filepath.Join(dir, "sitter-onpath")
	os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644)
	if got := Find("sitter-onpath"); got != "" {
		t.Errorf("Find of a non-executable = %q", got)
	}
	os.Chmod(p, 0o755)
	if got := Find("sitter-onpath"); got != p {
		t.Errorf("Find on PATH = %q, want %q", got, p)
	}
	// Next to the running binary first.
	next := filepath.Join(filepath.Dir(self), "sitter-onpath")
	if err := os.WriteFile(next, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Skip(err)
	}
	defer os.Remove(next)
	if got := Find("sitter-onpath"); got != next {
		t.Errorf("Find = %q, want the sibling %q", got, next)
	}
}
