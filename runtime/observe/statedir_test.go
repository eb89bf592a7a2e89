package observe

import (
	"os"
	"path/filepath"
	"testing"
)

// The dashboard reads sitter's state dir without following links planted
// there: an audit log or a session state that is a link to a file
// elsewhere is left unread.
func TestChaosStateDirLinksNotFollowed(t *testing.T) {
	state, elsewhere := t.TempDir(), t.TempDir()
	log := filepath.Join(elsewhere, "audit.jsonl")
	os.WriteFile(log, []byte(`{"time":"2026-01-01T00:00:00Z","harness":"claude-code","session":"s1","stopCap":20}`+"\n"), 0o644)
	st := filepath.Join(elsewhere, "s.json")
	os.WriteFile(st, []byte(`{"version":"1","harness":"claude-code","sessionId":"s1","active":true}`), 0o644)
	if err := os.Symlink(log, filepath.Join(state, "audit.jsonl")); err != nil {
		t.Skip(err)
	}
	os.MkdirAll(filepath.Join(state, "sessions"), 0o755)
	os.Symlink(st, filepath.Join(state, "sessions", "s.json"))

	// Both files read, as plain files, show what the links would.
	var plain auditTail
	if caps := plain.read(log); len(caps) != 1 {
		t.Fatalf("the plain log: %v", caps)
	}
	var tail auditTail
	if caps := tail.read(filepath.Join(state, "audit.jsonl")); len(caps) != 0 {
		t.Errorf("read the audit log through a link: %v", caps)
	}
	if ss := listSessions(state); len(ss) != 0 {
		t.Errorf("read a session state through a link: %+v", ss[0])
	}
}
