package verbs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyExecs: `sitter proxy` hands its arguments, output and exit code
// to the sitter-proxy binary, and says how to get it when it is missing.
func TestProxyExecs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	var out, errb strings.Builder
	if code := runProxy([]string{"--provider", "openai"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "make build") {
		t.Errorf("missing binary: %d %q", code, errb.String())
	}
	script := "#!/bin/sh\necho \"SITTER_PROXY_URL=http://127.0.0.1:1 $*\"\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "sitter-proxy"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runProxy([]string{"--provider", "openai", "--json"}, &out, &errb); code != 3 || out.String() != "SITTER_PROXY_URL=http://127.0.0.1:1 --provider openai --json\n" {
		t.Errorf("exec: %d %q", code, out.String())
	}
}
