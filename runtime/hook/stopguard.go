package hook

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// DefaultStopCap is how many stop blocks in a row a session gets before
// sitter lets it stop.
const DefaultStopCap = 20

// StopGuard keeps a handler that always blocks a stop from looping the
// agent forever: it counts consecutive blocks per (harness, session) in a
// small file under Dir/stop and turns the block that exceeds Cap into a noop.
//
// The guard never breaks a hook: its own errors are diagnostics only.
type StopGuard struct {
	Dir string // state dir; "" = no persistence
	Cap int    // blocks allowed in a row; <= 0 = no cap
}

// StopCap reads a stop cap as the flag or SITTER_STOP_CAP gives it.
func StopCap(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return DefaultStopCap, fmt.Errorf("stop cap %q is not a non-negative integer", s)
	}
	return n, nil
}

// StateDir is sitter's state directory: $SITTER_STATE_DIR, else
// $XDG_STATE_HOME/sitter, else ~/.local/state/sitter.
func StateDir() (string, error) {
	if d := os.Getenv("SITTER_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sitter"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state dir: set SITTER_STATE_DIR (%w)", err)
	}
	return filepath.Join(home, ".local", "state", "sitter"), nil
}

// stopCount is the content of a counter file. Harness and session are
// there for people reading the file; the name is their hash.
type stopCount struct {
	Harness string `json:"harness"`
	Session string `json:"session"`
	Count   int    `json:"count"`
}

// Apply counts r against the guard when ev is on a stop phase and returns
// the result to render.
func (g StopGuard) Apply(ev Event, r Result) (Result, []string) {
	if !IsStopPhase(ev.Phase) || g.Cap <= 0 || ev.Session.ID == "" || g.Dir == "" {
		return r, nil
	}
	path := g.path(ev.Harness, ev.Session.ID)
	if Canonical(ev.Phase, r.Decision) != Block {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return r, []string{"sitter: stop guard: " + oneLine(err.Error())}
		}
		return r, nil
	}
	var diags []string
	n := 0
	// stopHookActive false says this stop starts a new chain: whatever was
	// counted before (say the harness ended the turn on its own cap) is over.
	if ev.StopHookActive == nil || *ev.StopHookActive {
		var err error
		n, err = readCount(path)
		var corrupt *corruptError
		switch {
		case errors.As(err, &corrupt):
			diags = append(diags, "sitter: stop guard: "+oneLine(err.Error())+"; counting from zero")
		case err != nil:
			return r, []string{"sitter: stop guard: " + oneLine(err.Error())}
		}
	}
	n++
	if n > g.Cap {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			diags = append(diags, "sitter: stop guard: "+oneLine(err.Error()))
		}
		times := "times"
		if n-1 == 1 {
			times = "time"
		}
		diags = append(diags, fmt.Sprintf("sitter: stop blocked %d %s in a row for session %s; letting it stop", n-1, times, ev.Session.ID))
		r.Decision = Noop
		r.Reason = ""
		return r, diags
	}
	if err := writeCount(path, stopCount{ev.Harness, ev.Session.ID, n}); err != nil {
		diags = append(diags, "sitter: stop guard: "+oneLine(err.Error()))
	}
	return r, diags
}

// path is the counter file of a session: the hash keeps any harness or
// session id (slashes, dots, length) a safe file name. FNV-128a, not a
// cryptographic hash: crypto/sha256 would add its package init to every
// hook call, and a collision only shares a counter.
func (g StopGuard) path(harness, session string) string {
	h := fnv.New128a()
	h.Write([]byte(harness))
	h.Write([]byte{0})
	h.Write([]byte(session))
	return filepath.Join(g.Dir, "stop", hex.EncodeToString(h.Sum(nil))+".json")
}

func readCount(path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var c stopCount
	if err := json.Unmarshal(b, &c); err != nil || c.Count < 0 {
		return 0, &corruptError{path}
	}
	return c.Count, nil
}

type corruptError struct{ path string }

func (e *corruptError) Error() string { return "counter " + e.path + " is corrupt" }

// writeCount replaces the counter atomically: a concurrent reader sees the
// old count or the new one, never a torn file.
func writeCount(path string, c stopCount) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(c) // three plain fields always encode
	f, err := os.CreateTemp(dir, ".count-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
