package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --token-file never writes through a symlink (live or dangling): the
// proxy refuses to start (a usage error, before it listens), and the link's target is untouched (not
// created, not truncated). An earlier run's token file is replaced.
func TestChaosTokenFileRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	live := filepath.Join(dir, "live")
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(victim, live); err != nil {
		t.Skip(err)
	}
	os.Symlink(filepath.Join(dir, "created-through-link"), dangling)
	env := map[string]string{"OPENAI_API_KEY": "sk-upstream"}
	for _, path := range []string{live, dangling} {
		var stderr strings.Builder
		// A proxy that starts anyway is stopped after a while (and fails).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		code := run(ctx, []string{"--provider", "openai", "--upstream", "http://127.0.0.1:9/v1", "--token-file", path},
			func(k string) string { return env[k] }, io.Discard, &stderr)
		cancel()
		if code != 2 || !strings.HasPrefix(stderr.String(), "sitter proxy: --token-file "+path+": is a symlink") {
			t.Errorf("--token-file %s: exit %d, %s", filepath.Base(path), code, stderr.String())
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); !os.IsNotExist(err) {
		t.Errorf("a dangling link's target was created: %v", err)
	}

	// A new file is 0600 whatever the umask let through.
	fresh := filepath.Join(dir, "fresh")
	if err := writeTokenFile(fresh, "tok"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(fresh); err != nil || fi.Mode() != 0o600 {
		t.Errorf("token file: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(fresh); string(b) != "tok\n" {
		t.Errorf("token file holds %q", b)
	}
	// A second run replaces it, 0600 even if the old file was opened up.
	os.Chmod(fresh, 0o644)
	if err := writeTokenFile(fresh, "tok2"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(fresh); err != nil || fi.Mode() != 0o600 {
		t.Errorf("replaced token file: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(fresh); string(b) != "tok2\n" {
		t.Errorf("replaced token file holds %q", b)
	}
}
