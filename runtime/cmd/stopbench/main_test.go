package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// The fixture is what the bench says it is: a run of exactly the events
// asked for, bound to the session, whose stop check blocks on the one
// pending effect; the preparations between runs do what they say.
func TestFixture(t *testing.T) {
	base := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", filepath.Join(base, "state"))
	for _, events := range []int{20, 21} {
		dir, in, err := fixture(base, "s"+string(rune('a'+events)), events)
		if err != nil {
			t.Fatal(err)
		}
		if got := countEvents(dir); got != events {
			t.Fatalf("fixture of %d events has %d", events, got)
		}
		b, _ := os.ReadFile(in)
		var ev hook.Event
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		d, err := session.StopCheck(context.Background(), ev)
		if err != nil || !d.Block || d.Row != session.RowPending {
			t.Fatalf("stop check of the fixture: %+v, %v", d, err)
		}
		if err := postBehind(dir); err != nil {
			t.Fatal(err)
		}
		if got := countEvents(dir); got != events+3 {
			t.Errorf("after a stop check and a post: %d events, want %d", got, events+3)
		}
		h, err := head(filepath.Join(dir, run.JournalDir))
		j, _ := journal.Load(filepath.Join(dir, run.JournalDir))
		if err != nil || h.Seq != j.Head().Seq || h.ULID != j.Head().ULID {
			t.Errorf("head %+v, %v; journal's %+v", h, err, j.Head())
		}
		if err := dropCache(dir); err != nil {
			t.Fatal(err)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, run.StateDir, "replay-*")); len(m) > 0 {
			t.Errorf("cache left: %v", m)
		}
	}
}

// The start-up variant's event is the bound session's Stop event for a
// session with no state: its check lets the agent stop, deciding nothing.
func TestUnboundEvent(t *testing.T) {
	base := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", filepath.Join(base, "state"))
	_, in, err := fixture(base, "bound", 20)
	if err != nil {
		t.Fatal(err)
	}
	un, err := unboundEvent(in, base)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(un)
	ev, err := hook.DecodeEvent(b)
	if err != nil || ev.Session.ID == "bound" || ev.Harness != "claude-code" || ev.NativeEvent != "Stop" {
		t.Fatalf("unbound event %+v, %v", ev, err)
	}
	if st, _, err := session.Read(ev.Harness, ev.Session.ID); st != nil || err != nil {
		t.Fatalf("the unbound session has a state: %+v, %v", st, err)
	}
	d, err := session.StopCheck(context.Background(), ev)
	if err != nil || d.Block || d.Row != session.RowNoSession {
		t.Fatalf("stop check of the unbound session: %+v, %v", d, err)
	}
}
