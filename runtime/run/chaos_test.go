package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/runtime/journal"
)

// A result file edited after sitter posted it no longer matches the digest
// its EFFECT_RESOLVED recorded: reading it (State.Result, and so every
// iteration) fails, naming the file.
func TestChaosEditedResultDetected(t *testing.T) {
	dir, es := rcRun(t, 2, 1)
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Effect(es[0].EffectID)
	if e.ResultDigest == "" {
		t.Fatal("EFFECT_RESOLVED recorded no result digest")
	}
	if r, err := s.Result(e); err != nil || string(r["value"]) != "1" {
		t.Fatalf("posted result: %v %v", r, err)
	}
	path := filepath.Join(dir, TasksDir, e.EffectID, "result.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"value": 1`, `"value": 2`, 1)
	if edited == string(b) {
		t.Fatalf("no value to edit in %s", b)
	}
	os.WriteFile(path, []byte(edited), 0o644)
	s, err = Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Result(s.Effect(e.EffectID)); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed") {
		t.Errorf("edited result: %v", err)
	}
	// An iteration replays with every result: it stops there too.
	needNode(t)
	_, err = Iterate(context.Background(), dir, IterateOptions{Stderr: os.Stderr, Timeout: 30 * time.Second})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("iterate over an edited result: %v", err)
	}
	// Put back byte for byte, it reads again.
	os.WriteFile(path, b, 0o644)
	if _, err := s.Result(s.Effect(e.EffectID)); err != nil {
		t.Errorf("restored result: %v", err)
	}
}

// A result the SDK posted (its EFFECT_RESOLVED has no digest) is read as
// it is.
func TestChaosSDKPostedResultAccepted(t *testing.T) {
	dir, es := rcRun(t, 1, 0)
	id := es[0].EffectID
	ref := TasksDir + "/" + id + "/result.json"
	res := `{"schemaVersion":"2026.01.results-v1","effectId":"` + id + `","status":"ok","value":{"from":"sdk"}}` + "\n"
	if err := journal.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(ref)), []byte(res)); err != nil {
		t.Fatal(err)
	}
	behind(t, dir, journal.EffectResolved, map[string]any{"effectId": id, "status": "ok", "resultRef": ref})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Result(s.Effect(id))
	if err != nil || string(r["value"]) != `{"from":"sdk"}` {
		t.Errorf("SDK result: %s %v", r["value"], err)
	}
}

// Two journal files of a run with their contents swapped: the run does not
// load, and the error names the file.
func TestChaosSwappedRunJournal(t *testing.T) {
	dir, _ := rcRun(t, 3, 2)
	jdir := filepath.Join(dir, JournalDir)
	names, _, _ := journal.Names(jdir)
	a, b := filepath.Join(jdir, names[2]), filepath.Join(jdir, names[3])
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	os.WriteFile(a, bb, 0o644)
	os.WriteFile(b, ba, 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), names[2]) {
		t.Errorf("Load of a swapped journal: %v", err)
	}
}
