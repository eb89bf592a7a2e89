package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

func appendN(t *testing.T, dir string, n int) []Event {
	t.Helper()
	var head *Event
	var evs []Event
	for i := 0; i < n; i++ {
		ev, err := Append(dir, head, EffectRequested, map[string]any{"i": i, "html": "<a&b>"})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		head = &evs[len(evs)-1]
	}
	return evs
}

func types(evs []Event) []string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e.Type)
	}
	return ts
}

func TestAppendLoadChecksum(t *testing.T) {
	dir := t.TempDir()
	appendN(t, dir, 3)
	j, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Events) != 3 {
		t.Fatalf("loaded %d events, want 3", len(j.Events))
	}
	for i, ev := range j.Events {
		if ev.Seq != i+1 || !strings.HasPrefix(ev.File, []string{"000001.", "000002.", "000003."}[i]) {
			t.Errorf("event %d: seq %d file %s", i, ev.Seq, ev.File)
		}
		b, _ := os.ReadFile(filepath.Join(dir, ev.File))
		// The checksum is sha256 of the same 2-space JSON without the
		// checksum key, plus a newline: rebuild that text independently.
		// sitter's link comes last: its own seq and ULID, and the
		// previous event's checksum.
		link := "  \"sitter\": {\n    \"seq\": " + string(rune('1'+i)) + ",\n    \"ulid\": \"" + ev.ULID + "\""
		if i > 0 {
			link += ",\n    \"prev\": \"" + j.Events[i-1].Checksum + "\""
		}
		link += "\n  }\n"
		want := "{\n  \"type\": \"EFFECT_REQUESTED\",\n  \"recordedAt\": \"" + ev.RecordedAt + "\",\n  \"data\": {\n    \"html\": \"<a&b>\",\n    \"i\": " + string(rune('0'+i)) + "\n  },\n" + link + "}\n"
		h := sha256.Sum256([]byte(want))
		if ev.Checksum != hex.EncodeToString(h[:]) {
			t.Errorf("event %d: checksum %s does not hash %q", i, ev.Checksum, want)
		}
		if got := strings.Replace(string(b), ",\n  \"checksum\": \""+ev.Checksum+"\"", "", 1); got != want {
			t.Errorf("event %d file:\n%s\nwant (plus checksum):\n%s", i, b, want)
		}
	}
}

// Files written by the npm SDK (testdata/sdk-journal, from a real run)
// verify: sitter reads the SDK's journals.
func TestLoadSDKJournal(t *testing.T) {
	j, err := Load("testdata/sdk-journal")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{RunCreated, EffectRequested, EffectResolved, EffectRequested, EffectResolved, RunCompleted}
	if diff := cmp.Diff(want, types(j.Events)); diff != "" {
		t.Fatalf("types (-want +got):\n%s", diff)
	}
}

func corrupt(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptTailRepair(t *testing.T) {
	dir := t.TempDir()
	evs := appendN(t, dir, 3)
	corrupt(t, filepath.Join(dir, evs[2].File))
	j, err := Load(dir)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != evs[2].File || !ce.Tail {
		t.Fatalf("Load error = %v, want a corrupt tail at %s", err, evs[2].File)
	}
	if !strings.Contains(err.Error(), evs[2].File) {
		t.Errorf("error %q does not name the file", err)
	}
	if len(j.Events) != 2 {
		t.Errorf("good events before the tail: %d, want 2", len(j.Events))
	}
	q := filepath.Join(t.TempDir(), "q")
	moved, err := Repair(dir, q)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{evs[2].File}, moved); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(q, evs[2].File)); err != nil {
		t.Errorf("quarantined file missing: %v", err)
	}
	j, err = Load(dir)
	if err != nil || len(j.Events) != 2 {
		t.Fatalf("after repair: %d events, %v", len(j.Events), err)
	}
	// The journal continues where the good events end.
	if ev, err := Append(dir, j.Head(), RunCompleted, map[string]any{}); err != nil || ev.Seq != 3 {
		t.Fatalf("append after repair: seq %d, %v", ev.Seq, err)
	}
}

func TestCorruptMiddleIsNotRepaired(t *testing.T) {
	for _, tc := range []struct {
		name string
		hurt func(t *testing.T, path string)
		why  string
		hint string // what the message tells the user to do
	}{
		{"torn", corrupt, "not valid JSON", "good events follow it"},
		// The last file is out of order: nothing follows it, and no torn
		// write renames a file.
		{"missing", func(t *testing.T, p string) { os.Remove(p) }, "sequence gap", "its name breaks the journal's order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			evs := appendN(t, dir, 3)
			tc.hurt(t, filepath.Join(dir, evs[1].File))
			_, err := Load(dir)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Tail || !strings.Contains(ce.Reason, tc.why) {
				t.Fatalf("Load error = %v, want a non-tail corruption (%s)", err, tc.why)
			}
			if !strings.Contains(err.Error(), tc.hint) {
				t.Errorf("Load error = %v, want it to say %q", err, tc.hint)
			}
			if _, err := Repair(dir, filepath.Join(t.TempDir(), "q")); err == nil {
				t.Fatal("Repair quarantined good events after a corrupt one")
			}
			if n, _ := os.ReadDir(dir); len(n) != 3-boolInt(tc.name == "missing") {
				t.Errorf("Repair touched the journal: %d files", len(n))
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestTempFilesArePartialWrites(t *testing.T) {
	dir := t.TempDir()
	appendN(t, dir, 2)
	tmp := tempPrefix + "000003.X.json-1-1"
	os.WriteFile(filepath.Join(dir, tmp), []byte(`{"type": "EFF`), 0o644)
	j, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Events) != 2 || len(j.Partial) != 1 || j.Partial[0] != tmp {
		t.Fatalf("events %d, partial %v", len(j.Events), j.Partial)
	}
	moved, err := Repair(dir, filepath.Join(t.TempDir(), "q"))
	if err != nil || len(moved) != 1 || moved[0] != tmp {
		t.Fatalf("Repair = %v, %v", moved, err)
	}
	if j, _ := Load(dir); len(j.Partial) != 0 {
		t.Errorf("temp file still there: %v", j.Partial)
	}
}

// Many writers, each holding the lock for load + append: no sequence
// number is used twice, none is skipped.
func TestLockSerializesAppends(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, "journal")
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Acquire(context.Background(), filepath.Join(dir, LockFile), "test")
			if err != nil {
				errs <- err
				return
			}
			defer l.Release()
			j, err := Load(jdir)
			if err != nil {
				errs <- err
				return
			}
			_, err = Append(jdir, j.Head(), EffectResolved, map[string]any{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	j, err := Load(jdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Events) != writers {
		t.Fatalf("%d events, want %d", len(j.Events), writers)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left behind: %v", err)
	}
}

func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func TestLockStaleAndLive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LockFile)
	// A lock file left by a dead process (as the SDK leaves one) is taken.
	os.WriteFile(path, []byte(`{"pid": `+itoa(deadPID(t))+`, "owner": "crashed"}`), 0o644)
	l, err := Acquire(context.Background(), path, "test")
	if err != nil {
		t.Fatalf("stale lock not reclaimed: %v", err)
	}
	l.Release()
	// A lock file of a live process that does not flock (the SDK) holds.
	os.WriteFile(path, []byte(`{"pid": `+itoa(os.Getppid())+`, "owner": "sdk"}`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, path, "test"); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("Acquire over a live holder = %v, want ErrLockTimeout", err)
	}
}

func TestULID(t *testing.T) {
	prev := ""
	for i := 0; i < 1000; i++ {
		u := NewULID(prev)
		if len(u) != 26 || u <= prev {
			t.Fatalf("ULID %q does not follow %q", u, prev)
		}
		p, ok := ParseULID(u)
		if !ok || p.String() != u {
			t.Fatalf("ParseULID(%q) = %v, %v", u, p, ok)
		}
		prev = u
	}
	// An id from the future (another process's clock) is still followed.
	future := "7ZZZZZZZZZ0000000000000000"
	if u := NewULID(future); u <= future {
		t.Fatalf("NewULID(%s) = %s", future, u)
	}
}

// ParseULID takes Crockford's digits in either case and nothing else
// (no I, L, O or U, no other byte), in the last position as in any.
func TestParseULIDAlphabet(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := "0000000000000000000000000" + string([]byte{byte(c)})
		u, ok := ParseULID(s)
		want := strings.IndexByte(crockford, byte(unicode.ToUpper(rune(c)))) >= 0 && c < 0x80
		if ok != want {
			t.Fatalf("ParseULID(...%q) ok = %v, want %v", string([]byte{byte(c)}), ok, want)
		}
		if ok && !strings.EqualFold(u.String(), s) {
			t.Fatalf("ParseULID(%q).String() = %q", s, u)
		}
	}
}

// TestAcquireWithin: a busy lock is waited for at most max when the
// context has no deadline, the context's deadline otherwise, and a lock
// freed during the wait is taken.
func TestAcquireWithin(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	held, err := Acquire(context.Background(), path, "holder")
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file description: a second one in this process
	// is refused as another process would be.
	start := time.Now()
	if _, err := AcquireWithin(context.Background(), path, "waiter", 60*time.Millisecond); !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), "holder") {
		t.Fatalf("AcquireWithin over a held lock = %v, want ErrLockTimeout naming the holder", err)
	}
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Fatalf("gave up after %s, before max", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := AcquireWithin(ctx, path, "waiter", time.Hour); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("AcquireWithin with a deadline = %v, want ErrLockTimeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("waited %s: max replaced the context's deadline", d)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		held.Release()
	}()
	l, err := AcquireWithin(context.Background(), path, "waiter", 10*time.Second)
	if err != nil {
		t.Fatalf("a lock freed during the wait: %v", err)
	}
	l.Release()
}
