package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Two handlers of one session that run at once each keep their change:
// Copilot CLI runs a resumed session's prompt hook (which marks the agent
// told) and its session-start hook (which binds the launch's run)
// together, and the bind was lost when the prompt handler wrote back the
// state it had read before it.
func TestUpdateKeepsConcurrentChanges(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	dir, m := makeRun(t, fixture{pending: []string{"agent"}})
	for i := 0; i < 40; i++ {
		id := "s" + string(rune('A'+i))
		// A session that drove the run and ended, as after a first launch.
		if _, _, err := Bind("copilot", id, m.RunID, dir, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Update("copilot", id, func(st *State) (*State, error) {
			st.Active, st.EndedBecause = false, "session-end"
			return st, nil
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			if _, _, err := Bind("copilot", id, m.RunID, dir, 0); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if _, _, err := Update("copilot", id, func(st *State) (*State, error) {
				st.Told = true
				return st, nil
			}); err != nil {
				t.Error(err)
			}
		}()
		close(start)
		wg.Wait()
		st, _, err := Read("copilot", id)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Active || !st.Told {
			t.Fatalf("round %d: active %t, told %t: a change was lost", i, st.Active, st.Told)
		}
	}
}

// A stop check does not write back the state it read when the session
// was bound to another run before it saved: the rebind stands.
func TestStopCheckKeepsConcurrentChanges(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	dir, m := makeRun(t, fixture{pending: []string{"agent"}})
	other, om := makeRun(t, fixture{pending: []string{"agent"}})
	ev := stopEvent("", "")
	if _, _, err := Bind("claude-code", ev.Session.ID, m.RunID, dir, 0); err != nil {
		t.Fatal(err)
	}
	st, _, err := Read("claude-code", ev.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The check has read the state; the rebind lands before it saves.
	if _, _, err := Bind("claude-code", ev.Session.ID, om.RunID, other, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := StopCheckState(context.Background(), ev, st, nil); err != nil {
		t.Fatal(err)
	}
	now, _, err := Read("claude-code", ev.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if now.RunDir != other || !now.Active || now.Iteration != 0 {
		t.Fatalf("after the stop check: run %s, active %t, iteration %d; want the rebind to %s to stand", now.RunDir, now.Active, now.Iteration, other)
	}
}

// A session's lock file planted as a link in the state dir is not opened
// through: the update fails naming it, and the link's target is untouched.
func TestChaosSessionLockRefusesSymlink(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	elsewhere := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(elsewhere, []byte("keep me\n"), 0o644)
	p, err := Path("claude-code", "s1")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(elsewhere, p+".lock"); err != nil {
		t.Skip(err)
	}
	_, _, _, err = Start("claude-code", "s1", "")
	if err == nil || !strings.Contains(err.Error(), p+".lock") {
		t.Errorf("Start with a planted lock link: %v; want an error naming %s.lock", err, p)
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != "keep me\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}

// Sessions that take one run at once (two terminals resuming it with
// sitter session start --run-id) leave exactly one of them driving it:
// each rebind used to end every other session bound to the run, so two at
// once could end each other and leave the run with no driver.
func TestChaosConcurrentRebindOneDriver(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	dir, m := makeRun(t, fixture{pending: []string{"agent"}})
	for round := range 30 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, _, _, err := Rebind("codex", fmt.Sprintf("r%d-s%d", round, i), "", m.RunID, dir, 0); err != nil {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		all, err := List()
		if err != nil {
			t.Fatal(err)
		}
		var driving []string
		for _, st := range all {
			if st.Active && st.RunDir == dir {
				driving = append(driving, st.SessionID)
			}
		}
		if len(driving) != 1 {
			t.Fatalf("round %d: %d sessions drive the run after concurrent rebinds: %v", round, len(driving), driving)
		}
	}
}
