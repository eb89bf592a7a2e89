package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
)

// The stop check reads the run through its replay cache; events written
// behind the cache's back (a result posted, the run ended by another
// writer straight into the journal) must reach the next decision.
func TestStopCheckSeesEventsBehindTheCache(t *testing.T) {
	for _, tc := range []struct {
		name    string
		behind  func(t *testing.T, dir string, pending string)
		wantRow string
	}{
		{"result posted, run completed", func(t *testing.T, dir, pending string) {
			if _, err := run.Post(context.Background(), dir, pending, run.PostOptions{Status: "ok", Value: json.RawMessage(`1`)}); err != nil {
				t.Fatal(err)
			}
			appendBehind(t, dir, journal.RunCompleted, map[string]any{})
		}, RowCompleted},
		{"run failed", func(t *testing.T, dir, _ string) {
			appendBehind(t, dir, journal.RunFailed, map[string]any{"error": map[string]any{"message": "x"}})
		}, RowEnded},
		{"only a breakpoint left", func(t *testing.T, dir, pending string) {
			if _, err := run.Post(context.Background(), dir, pending, run.PostOptions{Status: "ok", Value: json.RawMessage(`1`)}); err != nil {
				t.Fatal(err)
			}
			appendBehind(t, dir, journal.EffectRequested, map[string]any{"effectId": journal.NewULID(""), "invocationKey": "bp", "kind": "breakpoint", "label": "approve"})
		}, RowBreakpoints},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SITTER_STATE_DIR", t.TempDir())
			dir, m := makeRun(t, fixture{pending: []string{"agent"}})
			if _, _, err := Bind("claude-code", "s1", m.RunID, dir, 0); err != nil {
				t.Fatal(err)
			}
			// Two checks: the first replays and caches, the second answers
			// from the cache its own STOP_HOOK_INVOKED kept current.
			for i := 0; i < 2; i++ {
				d, err := StopCheck(context.Background(), stopEvent("", ""))
				if err != nil || d.Row != RowPending {
					t.Fatalf("check %d: %+v, %v", i, d, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, run.StateDir, run.ReplayCacheFile)); err != nil {
				t.Fatalf("no replay cache after a stop check: %v", err)
			}
			rs, err := run.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.behind(t, dir, rs.Pending()[0].EffectID)
			d, err := StopCheck(context.Background(), stopEvent("", ""))
			if err != nil {
				t.Fatal(err)
			}
			if d.Row != tc.wantRow {
				t.Errorf("after the journal changed: row %s (%s), want %s", d.Row, d.Reason, tc.wantRow)
			}
		})
	}
}

// A corrupt cache costs a replay, never an error for the harness: the
// answer is the same block, nothing on stderr, and the decision is
// journaled.
func TestStopCheckCorruptCache(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	dir, m := makeRun(t, fixture{pending: []string{"shell"}})
	if _, _, err := Bind("claude-code", "s1", m.RunID, dir, 0); err != nil {
		t.Fatal(err)
	}
	answer := func() (int, string, string) {
		var stdout, stderr strings.Builder
		code := StopCheckAnswer(context.Background(), stopEvent("", ""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	_, want, _ := answer()
	cache := filepath.Join(dir, run.StateDir, run.ReplayCacheFile)
	for _, junk := range []string{"", "{\"version\":", "\x00\x01garbage\n[", `{"version":"sitter.replay-cache.v1","files":99}` + "\n[]\n"} {
		if err := os.WriteFile(cache, []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		code, got, stderr := answer()
		if code != 0 || stderr != "" {
			t.Errorf("cache %q: exit %d, stderr %q", junk, code, stderr)
		}
		// The reason counts the iteration: compare the rest.
		if !strings.Contains(got, `"decision":"block"`) || !strings.Contains(got, "[shell] shell step") {
			t.Errorf("cache %q: answer %s, want one like %s", junk, got, want)
		}
	}
	if n := strings.Count(strings.Join(events(t, dir), " "), journal.StopHookInvoked); n != 5 {
		t.Errorf("%d STOP_HOOK_INVOKED journaled, want 5", n)
	}
}

// appendBehind writes an event straight into the journal, as the SDK or
// an older sitter does, without the replay cache.
func appendBehind(t *testing.T, dir, typ string, data any) {
	t.Helper()
	jdir := filepath.Join(dir, run.JournalDir)
	j, err := journal.Load(jdir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Append(jdir, j.Head(), typ, data); err != nil {
		t.Fatal(err)
	}
}
