package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/transcript"
)

// With the atlas's record shapes registered, the stop check reads the last
// assistant message of a Gemini CLI transcript ({"type":"gemini","content":…}),
// and without the shapes registered it reads nothing.
func TestStopCheckReadsTranscriptThroughAtlasShapes(t *testing.T) {
	gemini := transcript.Spec{Harness: "gemini-cli", Format: transcript.JSONL, TranscriptAnalysis: true,
		Assistant: []transcript.Record{{When: []transcript.Match{{Path: "type", Value: "gemini"}}, Text: "content"}}}
	for _, registered := range []bool{false, true} {
		t.Run(map[bool]string{false: "unregistered", true: "atlas"}[registered], func(t *testing.T) {
			old := transcript.Specs
			t.Cleanup(func() { transcript.Specs = old })
			transcript.Specs = nil
			if registered {
				transcript.Specs = []transcript.Spec{gemini}
			}
			t.Setenv("SITTER_STATE_DIR", t.TempDir())
			dir, m := makeRun(t, fixture{pending: []string{"agent"}})
			if _, _, err := Bind("gemini-cli", "s1", m.RunID, dir, 0); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), "session.jsonl")
			lines := []string{
				`{"sessionId":"s1","kind":"main"}`,
				`{"id":"u1","type":"user","content":[{"text":"go"}]}`,
				`{"id":"g1","type":"gemini","content":"done <promise>` + m.CompletionProof + `</promise>","tokens":{"input":1}}`,
				`{"$set":{"lastUpdated":"x"}}`,
			}
			os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
			ev := hook.Event{Version: hook.Version, Harness: "gemini-cli", NativeEvent: "AfterAgent", Phase: "stop",
				Session: hook.Session{ID: "s1", TranscriptPath: p}}
			d, err := StopCheck(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{false: RowPending, true: RowProof}[registered]; d.Row != want {
				t.Fatalf("row %s, want %s (%s)", d.Row, want, d.Reason)
			}
		})
	}
}

// completedRunStop binds session s1 of a harness whose transcript spec
// has writeLagMs lagMs to a completed run, writes a transcript whose last
// message has no proof, and returns the session's Stop event; late runs
// at every settleWait with the run's proof and the transcript's path.
func completedRunStop(t *testing.T, lagMs int, late func(proof, path string)) hook.Event {
	t.Helper()
	spec := transcript.Spec{Harness: "gemini-cli", Format: transcript.JSONL, TranscriptAnalysis: true, WriteLagMs: lagMs,
		Assistant: []transcript.Record{{When: []transcript.Match{{Path: "type", Value: "gemini"}}, Text: "content"}}}
	old, oldWait := transcript.Specs, settleWait
	t.Cleanup(func() { transcript.Specs, settleWait = old, oldWait })
	transcript.Specs = []transcript.Spec{spec}
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	dir, m := makeRun(t, fixture{end: "RUN_COMPLETED"})
	if _, _, err := Bind("gemini-cli", "s1", m.RunID, dir, 0); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "session.jsonl")
	os.WriteFile(p, []byte(`{"id":"g0","type":"gemini","content":"iterate says completed"}`+"\n"), 0o644)
	settleWait = func() { late(m.CompletionProof, p) }
	return hook.Event{Version: hook.Version, Harness: "gemini-cli", NativeEvent: "AfterAgent", Phase: "stop",
		Session: hook.Session{ID: "s1", TranscriptPath: p}}
}

// A harness that writes its transcript behind its hooks (Copilot CLI's
// debounced session writer, the atlas's writeLagMs): the message with the
// proof reaches the file only after the stop check first read it. The
// check of a completed run reads again until the proof is there, and the
// session ends on it.
func TestStopCheckWaitsForALateTranscript(t *testing.T) {
	waits := 0
	ev := completedRunStop(t, 1000, func(proof, p string) {
		if waits++; waits == 1 { // the harness's writer catches up
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"id":"g1","type":"gemini","content":"done <promise>` + proof + `</promise>"}` + "\n")
			f.Close()
		}
	})
	d, err := StopCheck(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if d.Row != RowProof || d.Block {
		t.Fatalf("decision %+v after %d waits, want the completion proof read from the late line", d, waits)
	}
}

// A harness whose transcript is written before its hooks fire (no
// writeLagMs in the atlas): the check of a completed run without the
// proof answers at once.
func TestStopCheckDoesNotWaitWithoutWriteLag(t *testing.T) {
	waits := 0
	ev := completedRunStop(t, 0, func(string, string) { waits++ })
	d, err := StopCheck(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if d.Row != RowCompleted || !d.Block || waits != 0 {
		t.Fatalf("decision %+v after %d waits, want a block at once", d, waits)
	}
}
