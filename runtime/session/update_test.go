package session

import (
	"context"
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
