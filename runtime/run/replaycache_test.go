package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/runtime/journal"
)

// rcRun is a run with requested effects, the first resolved of them
// resolved; no Node needed.
func rcRun(t *testing.T, requested, resolved int) (string, []*Effect) {
	t.Helper()
	ws := t.TempDir()
	entry := filepath.Join(ws, "p.mjs")
	if err := os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir, _, err := Create(ctx, CreateOptions{RunsDir: filepath.Join(ws, "runs"), ProcessID: "p", Entry: entry})
	if err != nil {
		t.Fatal(err)
	}
	var ne []NewEffect
	for i := range requested {
		ne = append(ne, NewEffect{Key: fmt.Sprintf("k%d", i), TaskID: "t", Kind: []string{"shell", "agent", "breakpoint"}[i%3], Label: fmt.Sprintf("step %d", i)})
	}
	es, err := RequestEffects(ctx, dir, ne)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es[:resolved] {
		if _, err := Post(ctx, dir, e.EffectID, PostOptions{Status: "ok", Value: json.RawMessage(`1`)}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, es
}

// rcCheck compares LoadSummary with a full Load and returns where the
// summary came from ("cache", "tail" or "replay").
func rcCheck(t *testing.T, dir string) string {
	t.Helper()
	want, werr := Load(dir)
	got, gerr := LoadSummary(dir)
	if werr != nil || gerr != nil {
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			t.Fatalf("Load error %v, LoadSummary error %v", werr, gerr)
		}
		return ""
	}
	if got.Driver != want.Driver {
		t.Errorf("summary driver %+v; replay: %+v", got.Driver, want.Driver)
	}
	if got.Status != want.Status || got.StopChecks != want.StopChecks || got.Meta.RunID != want.Meta.RunID {
		t.Errorf("summary status %s, stop checks %d, run %s; replay: %s, %d, %s",
			got.Status, got.StopChecks, got.Meta.RunID, want.Status, want.StopChecks, want.Meta.RunID)
	}
	if diff := cmp.Diff(want.Pending(), got.Pending()); diff != "" {
		t.Errorf("pending effects (-replay +summary):\n%s", diff)
	}
	return got.from
}

func rcAppend(t *testing.T, dir, typ string, data any) journal.Event {
	t.Helper()
	ev, err := Append(context.Background(), dir, typ, data)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// behind appends an event the way another writer (the SDK, an older
// sitter) does: straight into the journal, without the cache.
func behind(t *testing.T, dir, typ string, data any) {
	t.Helper()
	jdir := filepath.Join(dir, JournalDir)
	j, err := journal.Load(jdir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Append(jdir, j.Head(), typ, data); err != nil {
		t.Fatal(err)
	}
}

// The cache answers while the journal is unchanged, replays only the new
// files when it grew, and stays current through Append.
func TestReplayCacheFollowsTheJournal(t *testing.T) {
	dir, es := rcRun(t, 6, 3)
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"first read (the posts kept the cache)", func() {}, "cache"},
		{"cache removed", func() { os.Remove(filepath.Join(dir, StateDir, ReplayCacheFile)) }, "replay"},
		{"unchanged", func() {}, "cache"},
		{"stop check through Append", func() { rcAppend(t, dir, journal.StopHookInvoked, map[string]any{"decision": "block"}) }, "cache"},
		{"session bound through Append", func() {
			rcAppend(t, dir, journal.SessionBound, map[string]any{"harness": "claude-code", "sessionId": "s1"})
		}, "cache"},
		{"session bound behind the cache", func() {
			behind(t, dir, journal.SessionBound, map[string]any{"harness": "codex", "sessionId": "s2"})
		}, "tail"},
		{"cache removed again", func() { os.Remove(filepath.Join(dir, StateDir, ReplayCacheFile)) }, "replay"},
		{"the driver from the cache", func() {}, "cache"},
		{"result posted (through the cache)", func() {
			if _, err := Post(context.Background(), dir, es[3].EffectID, PostOptions{Status: "error"}); err != nil {
				t.Fatal(err)
			}
		}, "cache"},
		{"read again", func() {}, "cache"},
		{"effects requested behind the cache", func() {
			if _, err := RequestEffects(context.Background(), dir, []NewEffect{{Key: "new", TaskID: "t", Kind: "agent", Label: "new"}}); err != nil {
				t.Fatal(err)
			}
		}, "tail"},
		{"stop checks behind the cache", func() {
			behind(t, dir, journal.StopHookInvoked, map[string]any{})
			behind(t, dir, journal.StopHookInvoked, map[string]any{})
		}, "tail"},
		{"effect event through Append", func() {
			rcAppend(t, dir, journal.EffectResolved, map[string]any{"effectId": es[4].EffectID, "status": "ok"})
		}, "cache"},
		{"run completed behind the cache", func() { behind(t, dir, journal.RunCompleted, map[string]any{}) }, "tail"},
	}
	for _, st := range steps {
		st.do()
		if got := rcCheck(t, dir); got != st.want {
			t.Errorf("%s: summary from %s, want %s", st.name, got, st.want)
		}
	}
	s, err := LoadSummary(dir)
	if err != nil || s.Status != StatusCompleted || s.StopChecks != 3 || s.Driver != (Binding{"codex", "s2"}) {
		t.Errorf("final summary %+v, %v", s, err)
	}
	// Only the cache is left in state/, one effect table: no temp files,
	// no older tables.
	ents, _ := os.ReadDir(filepath.Join(dir, StateDir))
	tables := 0
	for _, e := range ents {
		if ok, _ := filepath.Match(replayEffectsGlob, e.Name()); ok {
			tables++
		} else if e.Name() != ReplayCacheFile && e.Name() != "state.json" {
			t.Errorf("state/ holds %s", e.Name())
		}
	}
	if tables != 1 {
		t.Errorf("state/ holds %d effect tables", tables)
	}
}

// Whatever happened to the cache or under it, the summary is the replay's:
// a cache that cannot answer is replaced by a full replay, never trusted.
func TestReplayCacheNeverStale(t *testing.T) {
	cachePath := func(dir string) string { return filepath.Join(dir, StateDir, ReplayCacheFile) }
	for _, tc := range []struct {
		name string
		harm func(t *testing.T, dir string)
		want string // where the next summary comes from
	}{
		{"garbage cache", func(t *testing.T, dir string) { os.WriteFile(cachePath(dir), []byte("\x00{not json"), 0o644) }, "replay"},
		{"empty cache", func(t *testing.T, dir string) { os.WriteFile(cachePath(dir), nil, 0o644) }, "replay"},
		{"effect table lost, then an effect event", func(t *testing.T, dir string) {
			tables, _ := filepath.Glob(filepath.Join(dir, StateDir, replayEffectsGlob))
			for _, f := range tables {
				os.Remove(f)
			}
			behind(t, dir, journal.EffectRequested, map[string]any{"effectId": journal.NewULID(""), "invocationKey": "late", "kind": "shell"})
		}, "replay"},
		{"cache of another version", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(cachePath(dir))
			os.WriteFile(cachePath(dir), []byte(strings.Replace(string(b), replayCacheVersion, "sitter.replay-cache.v0", 1)), 0o644)
		}, "replay"},
		{"cache of another run", func(t *testing.T, dir string) {
			other, _ := rcRun(t, 6, 3)
			if _, err := LoadSummary(other); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(cachePath(other))
			os.WriteFile(cachePath(dir), b, 0o644)
		}, "replay"},
		{"run.json rewritten", func(t *testing.T, dir string) {
			m, _ := ReadMetadata(dir)
			m.Prompt = "changed"
			b, _ := json.Marshal(m)
			os.WriteFile(filepath.Join(dir, MetadataFile), b, 0o644)
		}, "replay"},
		{"last event removed", func(t *testing.T, dir string) {
			names, _, _ := journal.Names(filepath.Join(dir, JournalDir))
			os.Remove(filepath.Join(dir, JournalDir, names[len(names)-1]))
		}, "replay"},
		{"last event replaced by another of the same sequence", func(t *testing.T, dir string) {
			jdir := filepath.Join(dir, JournalDir)
			names, _, _ := journal.Names(jdir)
			os.Remove(filepath.Join(jdir, names[len(names)-1]))
			j, err := journal.Load(jdir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := journal.Append(jdir, j.Head(), journal.RunHalted, map[string]any{"reason": "replaced"}); err != nil {
				t.Fatal(err)
			}
		}, "replay"},
		{"an earlier event renamed", func(t *testing.T, dir string) {
			// Same count, same head: only the names' hash tells.
			jdir := filepath.Join(dir, JournalDir)
			names, _, _ := journal.Names(jdir)
			seq, ulid, _ := strings.Cut(strings.TrimSuffix(names[1], ".json"), ".")
			const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
			i := strings.IndexByte(crockford, ulid[len(ulid)-1])
			if i < 0 || i == len(crockford)-1 {
				t.Skip("no room for a ULID in between")
			}
			bumped := ulid[:len(ulid)-1] + crockford[i+1:i+2]
			if bumped >= strings.Split(names[2], ".")[1] {
				t.Skip("no room for a ULID in between")
			}
			if err := os.Rename(filepath.Join(jdir, names[1]), filepath.Join(jdir, seq+"."+bumped+".json")); err != nil {
				t.Fatal(err)
			}
		}, ""}, // Load's error: the event's link names its old name
		{"effect table tampered, then an effect event", func(t *testing.T, dir string) {
			tables, _ := filepath.Glob(filepath.Join(dir, StateDir, replayEffectsGlob))
			for _, f := range tables {
				os.WriteFile(f, []byte("[]"), 0o644)
			}
			behind(t, dir, journal.EffectRequested, map[string]any{"effectId": journal.NewULID(""), "invocationKey": "late", "kind": "shell"})
		}, "replay"},
		{"cache naming a file outside state/", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(cachePath(dir))
			var h map[string]any
			json.Unmarshal(b, &h)
			h["effectsFile"] = "../run.json"
			b, _ = json.Marshal(h)
			os.WriteFile(cachePath(dir), b, 0o644)
		}, "replay"},
		{"misnamed journal file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, JournalDir, "stray.json"), []byte("{}"), 0o644)
		}, ""}, // Load's error
		{"corrupt event after the cache", func(t *testing.T, dir string) {
			jdir := filepath.Join(dir, JournalDir)
			names, _, _ := journal.Names(jdir)
			last := names[len(names)-1]
			next := fmt.Sprintf("%06d.%s.json", len(names)+1, journal.NewULID(strings.Split(last, ".")[1]))
			os.WriteFile(filepath.Join(jdir, next), []byte(`{"type":"RUN_COMPLETED","checksum":"bad"}`), 0o644)
		}, ""}, // Load's error
		{"undecodable event after the cache", func(t *testing.T, dir string) {
			behind(t, dir, journal.EffectResolved, map[string]any{"effectId": "nope", "status": "ok"})
		}, ""}, // Load's error
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := rcRun(t, 6, 3)
			rcAppend(t, dir, journal.StopHookInvoked, map[string]any{})
			if got := rcCheck(t, dir); got != "cache" {
				t.Fatalf("warm cache: summary from %s", got)
			}
			tc.harm(t, dir)
			if got := rcCheck(t, dir); got != tc.want {
				t.Errorf("summary from %q, want %q", got, tc.want)
			}
			if tc.want != "" {
				if got := rcCheck(t, dir); got != "cache" {
					t.Errorf("after the replay: summary from %q, want the rewritten cache", got)
				}
			}
		})
	}
}

// Append still journals into a run whose journal loads but does not
// replay, as it did before the cache, and then leaves no cache.
func TestAppendToUnreplayableRun(t *testing.T) {
	dir, _ := rcRun(t, 2, 0)
	behind(t, dir, journal.EffectResolved, map[string]any{"effectId": "nope", "status": "ok"})
	ev := rcAppend(t, dir, journal.StopHookInvoked, map[string]any{})
	if ev.Seq != 5 {
		t.Errorf("appended seq %d, want 5", ev.Seq)
	}
	if _, err := os.Stat(filepath.Join(dir, StateDir, ReplayCacheFile)); err == nil {
		t.Error("a cache was written for a run that does not replay")
	}
	if _, err := LoadSummary(dir); err == nil || !strings.Contains(err.Error(), "unknown effect nope") {
		t.Errorf("LoadSummary: %v", err)
	}
}

// summaryListed is LoadSummary's answer and whether it listed journal/.
func summaryListed(t *testing.T, dir string) (from string, listed bool) {
	t.Helper()
	r, err := loadReplayed(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return r.from, r.listed
}

// On a file system whose timestamps move at every change that follows a
// stat, a reader trusts the journal's stamp and does not list it; any
// change to journal/ (another writer's event, a removal) makes it list
// again, and where the file system cannot tell, it always lists.
func TestReplayCacheStamp(t *testing.T) {
	if !probeFine(t.TempDir()) {
		t.Skip("this file system's timestamps do not move at every change (Linux before 6.13, or another system): every reader lists")
	}
	dir, es := rcRun(t, 6, 3)
	rcCheck(t, dir) // the first replay writes the cache
	steps := []struct {
		name   string
		do     func()
		listed bool
	}{
		{"unchanged after the replay", func() {}, false},
		{"stop check through Append", func() { rcAppend(t, dir, journal.StopHookInvoked, map[string]any{}) }, false},
		{"effects requested, then a result posted (a loop's turn)", func() {
			ctx := context.Background()
			if _, err := RequestEffects(ctx, dir, []NewEffect{{Key: "turn", TaskID: "t", Kind: "shell", Label: "turn"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := Post(ctx, dir, es[3].EffectID, PostOptions{Status: "ok", Value: json.RawMessage(`2`)}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"another writer's event", func() { behind(t, dir, journal.StopHookInvoked, map[string]any{}) }, true},
		{"read again", func() {}, false},
		{"a temp file left in journal/", func() {
			os.WriteFile(filepath.Join(dir, JournalDir, ".tmp-x"), nil, 0o644)
		}, true},
		{"read again", func() {}, false},
		{"an event removed", func() {
			names, _, _ := journal.Names(filepath.Join(dir, JournalDir))
			os.Remove(filepath.Join(dir, JournalDir, names[len(names)-1]))
		}, true},
	}
	for _, st := range steps {
		st.do()
		if _, listed := summaryListed(t, dir); listed != st.listed {
			t.Errorf("%s: listed %v, want %v", st.name, listed, st.listed)
		}
		rcCheck(t, dir) // and the summary is the replay's
	}

	// Where the probe says no, every read lists.
	fineTimestamps = func(string) bool { return false }
	t.Cleanup(func() { fineTimestamps = probeFine })
	other, _ := rcRun(t, 4, 2)
	for i := range 3 {
		rcCheck(t, other)
		if _, listed := summaryListed(t, other); !listed {
			t.Errorf("read %d of a run on a coarse file system: not listed", i+1)
		}
	}
}
