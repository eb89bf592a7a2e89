package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
)

// fixture is a run in a given state, built without Node: effects are
// requested and resolved directly.
type fixture struct {
	pending  []string // kinds of pending effects
	resolved int
	end      string   // "", RUN_COMPLETED, RUN_FAILED, RUN_HALTED
	bound    []string // harness/session of SESSION_BOUND events journaled last, in order
}

func makeRun(t *testing.T, f fixture) (string, *run.Metadata) {
	t.Helper()
	ws := t.TempDir()
	entry := filepath.Join(ws, "p.mjs")
	os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644)
	ctx := context.Background()
	dir, m, err := run.Create(ctx, run.CreateOptions{RunsDir: filepath.Join(ws, "runs"), ProcessID: "p", Entry: entry})
	if err != nil {
		t.Fatal(err)
	}
	var effs []run.NewEffect
	for i := 0; i < f.resolved; i++ {
		effs = append(effs, run.NewEffect{Key: "done" + string(rune('a'+i)), TaskID: "t", Kind: "shell", Label: "done"})
	}
	for i, k := range f.pending {
		effs = append(effs, run.NewEffect{Key: "k" + string(rune('a'+i)), TaskID: "t", Kind: k, Label: k + " step"})
	}
	es, err := run.RequestEffects(ctx, dir, effs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es[:f.resolved] {
		if _, err := run.Post(ctx, dir, e.EffectID, run.PostOptions{Status: "ok", Value: json.RawMessage(`1`)}); err != nil {
			t.Fatal(err)
		}
	}
	if f.end == journal.ProcessRuntimeError {
		if _, err := run.Append(ctx, dir, f.end, map[string]any{"error": map[string]any{"name": "ProcessRuntimeError", "message": "SyntaxError: Unexpected token"}}); err != nil {
			t.Fatal(err)
		}
	} else if f.end != "" {
		if _, err := run.Append(ctx, dir, f.end, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range f.bound {
		h, sid, _ := strings.Cut(b, "/")
		if _, err := run.Append(ctx, dir, journal.SessionBound, map[string]any{"harness": h, "sessionId": sid, "via": "flags"}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, m
}

func stopEvent(msg, transcript string) hook.Event {
	return hook.Event{Version: hook.Version, Harness: "claude-code", NativeEvent: "Stop", Phase: "stop",
		Session: hook.Session{ID: "s1", TranscriptPath: transcript}, LastAssistantMessage: msg}
}

// The stop decision table, row by row.
func TestStopDecisionTable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		run        fixture
		bind       bool
		inactive   bool
		iteration  int
		max        int
		msg        string // last assistant message; "PROOF" is replaced by the run's proof
		transcript bool   // the message comes from the transcript instead
		wantBlock  bool
		wantRow    string
		wantOff    bool // session deactivated
		reasonHas  []string
		// sayHas: an allowed stop the user must act on tells them why
		// (the result's userMessage); nil: the stop says nothing.
		sayHas []string
	}{
		{name: "no session", wantRow: RowNoSession},
		{name: "inactive session", run: fixture{pending: []string{"shell"}}, bind: true, inactive: true, wantRow: RowNoSession},
		{name: "iteration at max", run: fixture{pending: []string{"shell"}}, bind: true, iteration: 3, max: 3, wantRow: RowMaxIterations, wantOff: true,
			sayHas: []string{"cap of 3", "sitter session start --run-id"}},
		{name: "run completed, no proof yet", run: fixture{resolved: 1, end: journal.RunCompleted}, bind: true, wantBlock: true, wantRow: RowCompleted,
			reasonHas: []string{"sitter run status", "completionProof", "<promise>"}},
		{name: "run completed with its proof", run: fixture{resolved: 1, end: journal.RunCompleted}, bind: true, msg: "done <promise>PROOF</promise>", wantRow: RowProof, wantOff: true},
		{name: "proof in last message", run: fixture{pending: []string{"agent"}}, bind: true, msg: "all done <promise>PROOF</promise>", wantRow: RowProof, wantOff: true},
		{name: "proof in transcript", run: fixture{pending: []string{"agent"}}, bind: true, msg: "done <promise>PROOF</promise>", transcript: true, wantRow: RowProof, wantOff: true},
		{name: "wrong proof", run: fixture{pending: []string{"agent"}}, bind: true, msg: "<promise>nope</promise>", wantBlock: true, wantRow: RowPending},
		{name: "run failed", run: fixture{end: journal.RunFailed}, bind: true, wantRow: RowEnded, wantOff: true, sayHas: []string{"failed"}},
		{name: "process cannot run", run: fixture{end: journal.ProcessRuntimeError}, bind: true, wantRow: RowProcessError,
			reasonHas: []string{"SyntaxError: Unexpected token", "p.mjs", "sitter run iterate"},
			sayHas:    []string{"cannot advance", "SyntaxError: Unexpected token", "p.mjs"}},
		{name: "only breakpoints", run: fixture{pending: []string{"breakpoint", "breakpoint"}}, bind: true, wantRow: RowBreakpoints, reasonHas: []string{"human"},
			sayHas: []string{"2 breakpoint(s)", "sitter task list", "--kind breakpoint", "sitter task post"}},
		{name: "pending effects", run: fixture{pending: []string{"shell", "breakpoint"}, resolved: 1}, bind: true, wantBlock: true, wantRow: RowPending,
			reasonHas: []string{"2 effect(s)", "[shell] shell step", "[breakpoint] breakpoint step", "sitter task post", "sitter run iterate"}},
		{name: "taken by a session elsewhere", run: fixture{pending: []string{"shell"}, bound: []string{"claude-code/s1", "codex/m2s"}}, bind: true,
			wantRow: RowTaken, wantOff: true, reasonHas: []string{"codex/m2s"}, sayHas: []string{"codex/m2s"}},
		{name: "taken back", run: fixture{pending: []string{"shell"}, bound: []string{"codex/m2s", "claude-code/s1"}}, bind: true, wantBlock: true, wantRow: RowPending},
		{name: "nothing pending", bind: true, wantBlock: true, wantRow: RowIterate, reasonHas: []string{"sitter run iterate", "<promise>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SITTER_STATE_DIR", t.TempDir())
			dir, m := makeRun(t, tc.run)
			if tc.bind {
				if _, _, err := Bind("claude-code", "s1", m.RunID, dir, tc.max); err != nil {
					t.Fatal(err)
				}
				if _, _, err := Update("claude-code", "s1", func(st *State) (*State, error) {
					st.Iteration, st.Active = tc.iteration, !tc.inactive
					return st, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			msg := strings.ReplaceAll(tc.msg, "PROOF", m.CompletionProof)
			transcript := ""
			if tc.transcript {
				transcript = filepath.Join(t.TempDir(), "t.jsonl")
				line, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": msg}}}})
				os.WriteFile(transcript, append([]byte(`{"type":"user","message":{"role":"user","content":"go"}}`+"\n"), append(line, '\n')...), 0o644)
				msg = ""
			}
			before := events(t, dir)
			d, err := StopCheck(context.Background(), stopEvent(msg, transcript))
			if err != nil {
				t.Fatal(err)
			}
			if d.Block != tc.wantBlock || d.Row != tc.wantRow {
				t.Fatalf("decision %+v, want block=%t row=%s", d, tc.wantBlock, tc.wantRow)
			}
			for _, s := range tc.reasonHas {
				if !strings.Contains(d.Reason, s) {
					t.Errorf("reason %q lacks %q", d.Reason, s)
				}
			}
			r := d.Result()
			if tc.wantBlock && (r.Decision != hook.Block || r.Reason == "") || !tc.wantBlock && r.Decision != hook.Noop {
				t.Errorf("result %+v", r)
			}
			if tc.sayHas == nil && r.UserMessage != "" {
				t.Errorf("userMessage %q, want none", r.UserMessage)
			}
			for _, s := range tc.sayHas {
				if !strings.Contains(r.UserMessage, s) {
					t.Errorf("userMessage %q lacks %q", r.UserMessage, s)
				}
			}
			st, _, _ := Read("claude-code", "s1")
			if !tc.bind {
				if st != nil {
					t.Errorf("a session without state got state: %+v", st)
				}
				return
			}
			if st.Active == tc.wantOff && !tc.inactive {
				t.Errorf("active = %t, want %t", st.Active, !tc.wantOff)
			}
			wantIter := tc.iteration
			if tc.wantBlock {
				wantIter++
			}
			if st.Iteration != wantIter {
				t.Errorf("iteration %d, want %d", st.Iteration, wantIter)
			}
			after := events(t, dir)
			if tc.inactive {
				if len(after) != len(before) {
					t.Errorf("an inactive session journaled %v", after[len(before):])
				}
				return
			}
			if diff := cmp.Diff(append(before, journal.StopHookInvoked), after); diff != "" {
				t.Errorf("journal (-want +got):\n%s", diff)
			}
		})
	}
}

func events(t *testing.T, dir string) []string {
	t.Helper()
	j, err := journal.Load(filepath.Join(dir, run.JournalDir))
	if err != nil {
		t.Fatal(err)
	}
	var ts []string
	for _, e := range j.Events {
		ts = append(ts, e.Type)
	}
	return ts
}

// Blocks count up to the cap; the stop after the cap releases the session.
func TestStopCapReleases(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	dir, m := makeRun(t, fixture{pending: []string{"agent"}})
	if _, _, err := Bind("codex", "s1", m.RunID, dir, 2); err != nil {
		t.Fatal(err)
	}
	ev := stopEvent("", "")
	ev.Harness = "codex"
	var got []bool
	for i := 0; i < 4; i++ {
		d, err := StopCheck(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Block)
	}
	if diff := cmp.Diff([]bool{true, true, false, false}, got); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
}

func TestPromise(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"<promise>abc</promise>": "abc",
		"x <promise> a </promise> <promise>b</promise>": "b",
		"<promise>\nmulti\n</promise>":                  "multi",
	} {
		if got := Promise(in); got != want {
			t.Errorf("Promise(%q) = %q, want %q", in, got, want)
		}
	}
	// The scan finds what the regular expression it replaced finds.
	re := regexp.MustCompile(`(?s)<promise>\s*(.*?)\s*</promise>`)
	for _, in := range []string{
		"<promise></promise>", "<promise> \t\n </promise>", "<promise><promise>x</promise>",
		"<promise>a</promise><promise>", "<promise>a</promise> </promise>", "</promise><promise>p</promise>",
		"<promise>\v a \u00a0</promise>", "<promise>a b\r\n</promise>tail", "<promise>a", "x</promise>",
		"<promise>one</promise> and <promise> two </promise> then <promise>", "<PROMISE>x</PROMISE>",
	} {
		want := ""
		if m := re.FindAllStringSubmatch(in, -1); len(m) > 0 {
			want = m[len(m)-1][1]
		}
		if got := Promise(in); got != want {
			t.Errorf("Promise(%q) = %q, the expression finds %q", in, got, want)
		}
	}
}

func FuzzPromise(f *testing.F) {
	re := regexp.MustCompile(`(?s)<promise>\s*(.*?)\s*</promise>`)
	f.Add("x <promise> a </promise> <promise>b</promise>")
	f.Add("<promise>\f</promise><promise>")
	f.Fuzz(func(t *testing.T, in string) {
		want := ""
		if m := re.FindAllStringSubmatch(in, -1); len(m) > 0 {
			want = m[len(m)-1][1]
		}
		if got := Promise(in); got != want {
			t.Errorf("Promise(%q) = %q, the expression finds %q", in, got, want)
		}
	})
}

// TestStopAnswerTellsWhyItLetsGo: the stop handler's answer, when it lets
// the agent stop with the run unfinished for a reason the user must act
// on (the journal is damaged, only breakpoints wait), is a canonical
// result whose userMessage says what to do: not silence.
func TestStopAnswerTellsWhyItLetsGo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		run     fixture
		damage  bool
		wantHas []string
	}{
		{name: "damaged journal", run: fixture{pending: []string{"shell"}}, damage: true, wantHas: []string{"cannot be read", "sitter run repair"}},
		{name: "only breakpoints", run: fixture{pending: []string{"breakpoint"}}, wantHas: []string{"1 breakpoint(s)", "sitter task post"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SITTER_STATE_DIR", t.TempDir())
			dir, m := makeRun(t, tc.run)
			if _, _, err := Bind("claude-code", "s1", m.RunID, dir, 0); err != nil {
				t.Fatal(err)
			}
			if tc.damage {
				jd := filepath.Join(dir, run.JournalDir)
				es, _ := os.ReadDir(jd)
				if err := os.WriteFile(filepath.Join(jd, es[len(es)-1].Name()), []byte(`{"torn`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out, errb strings.Builder
			if code := StopCheckAnswer(context.Background(), stopEvent("", ""), &out, &errb); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errb.String())
			}
			var r hook.Result
			if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
				t.Fatalf("stdout %q is no result: %v (stderr %q)", out.String(), err, errb.String())
			}
			if r.Decision == hook.Block {
				t.Errorf("result %+v blocks", r)
			}
			for _, s := range tc.wantHas {
				if !strings.Contains(r.UserMessage, s) {
					t.Errorf("userMessage %q lacks %q", r.UserMessage, s)
				}
			}
		})
	}
}
