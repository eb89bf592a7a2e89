package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func swapFiles(t *testing.T, a, b string) {
	t.Helper()
	ba, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(a, bb, 0o644)
	os.WriteFile(b, ba, 0o644)
}

// Swapping the contents of two journal files leaves each checksum valid;
// the link of each event to its name shows it, by Load (naming the file,
// as damage Repair does not touch) and by LoadAfter (the replay cache's
// tail read).
func TestChaosSwappedJournalFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b int // indexes of the swapped events among 4
	}{{"middle", 1, 2}, {"tail", 2, 3}, {"first", 0, 1}, {"far", 0, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			evs := appendN(t, dir, 4)
			swapFiles(t, filepath.Join(dir, evs[tc.a].File), filepath.Join(dir, evs[tc.b].File))
			j, err := Load(dir)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.File != evs[tc.a].File || ce.Tail || !strings.Contains(err.Error(), "swapped") {
				t.Fatalf("Load after a swap: %v, want damage at %s", err, evs[tc.a].File)
			}
			if len(j.Events) != tc.a {
				t.Errorf("good events before the swap: %d, want %d", len(j.Events), tc.a)
			}
			if _, err := Repair(dir, filepath.Join(t.TempDir(), "q")); err == nil {
				t.Error("Repair quarantined a swapped journal")
			}
			var prev *Event
			var names []string
			for i, ev := range evs {
				if i < tc.a {
					prev = &evs[i]
					continue
				}
				names = append(names, ev.File)
			}
			if _, err := LoadAfter(dir, prev, names); err == nil {
				t.Error("LoadAfter read a swapped journal")
			}
		})
	}
}

// An event replaced by another valid one, written without sitter's link
// (as the SDK writes), passes its own checks; the next event, chained to
// the checksum of the one it followed, shows it.
func TestChaosReplacedJournalEvent(t *testing.T) {
	dir := t.TempDir()
	evs := appendN(t, dir, 3)
	forged, _, err := encode(EffectResolved, evs[1].RecordedAt, map[string]any{"effectId": "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, evs[1].File), forged, 0o644)
	_, err = Load(dir)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != evs[2].File || ce.Tail || !strings.Contains(ce.Reason, evs[1].File) {
		t.Fatalf("Load after a replaced event: %v, want damage at %s naming %s", err, evs[2].File, evs[1].File)
	}
	if _, err := LoadAfter(dir, &evs[0], []string{evs[1].File, evs[2].File}); err == nil {
		t.Error("LoadAfter read a chain with a replaced event")
	}
	// A head known by name only (the replay cache's) is chained to by
	// its file's checksum.
	dir2 := t.TempDir()
	evs = appendN(t, dir2, 2)
	if _, err := Append(dir2, &Event{Seq: evs[1].Seq, ULID: evs[1].ULID, File: evs[1].File}, RunCompleted, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir2); err != nil {
		t.Errorf("append after a head known by name: %v", err)
	}
}

// Events the SDK wrote (no link) load, and sitter's events continue them:
// a journal of both, in any order, verifies.
func TestChaosMixedSDKAndSitterEvents(t *testing.T) {
	dir := t.TempDir()
	src := "testdata/sdk-journal"
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries[:3] {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	j, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Append(dir, j.Head(), EffectRequested, map[string]any{"i": 1})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Link == nil || ev.Link.Prev != j.Head().Checksum {
		t.Errorf("link after an SDK event: %+v", ev.Link)
	}
	// An SDK event (no link) after sitter's.
	sdk, _, err := encode(EffectResolved, "2026-01-01T00:00:00.000Z", map[string]any{"effectId": "e"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "000005."+NewULID(ev.ULID)+".json"), sdk, 0o644)
	j, err = Load(dir)
	if err != nil || len(j.Events) != 5 {
		t.Fatalf("mixed journal: %d events, %v", len(j.Events), err)
	}
	if _, err := Append(dir, j.Head(), RunCompleted, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if j, err = Load(dir); err != nil || len(j.Events) != 6 {
		t.Fatalf("mixed journal: %d events, %v", len(j.Events), err)
	}
}
