package verbs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line over the reader's 4 MiB in the audit log no longer makes `sitter
// audit tail|query` fail: the others print, stderr says one was skipped.
func TestChaosAuditTailOversizedLine(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", dir)
	t.Setenv("SITTER_AUDIT_MAX_BYTES", "")
	t.Setenv("SITTER_AUDIT_KEEP", "")
	entry := func(session string) string {
		return `{"time":"2026-01-01T00:00:00Z","harness":"claude-code","nativeEvent":"Stop","phase":"stop","session":"` + session +
			`","handlers":[],"decision":"block","verdict":"deny","latencyMs":1}` + "\n"
	}
	log := entry("before") + `{"reason":"` + strings.Repeat("x", 5<<20) + `"}` + "\n" + entry("after")
	if err := os.WriteFile(filepath.Join(dir, "audit.jsonl"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tail"}, {"query", "--decision", "block", "--json"}} {
		var out, errb bytes.Buffer
		if code := Run(append([]string{"audit"}, args...), nil, &out, &errb, nil); code != 0 {
			t.Fatalf("audit %q exit %d: %s", args, code, errb.String())
		}
		if !strings.Contains(out.String(), "before") || !strings.Contains(out.String(), "after") {
			t.Errorf("audit %q printed %q", args, out.String())
		}
		if got := errb.String(); got != "sitter: audit: skipped 1 line longer than 4 MiB\n" {
			t.Errorf("audit %q stderr %q", args, got)
		}
	}
}
