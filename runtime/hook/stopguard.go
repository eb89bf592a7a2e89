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
	"time"

	"sitter.dev/sitter/runtime/audit"
)

// DefaultStopCap is how many stop blocks in a row a session gets before
// sitter lets it stop.
const DefaultStopCap = 20

// StopGuard keeps handlers that always block a stop from looping the
// agent forever: it counts the blocks of a session's chain of stops in a
// small file under Dir/stop and lets the session stop once they pass Cap.
//
// The count is per (harness, session), whatever plugin's call blocked:
// the harness runs every plugin's stop hook at each stop, and a cap per
// plugin or per call could be dodged by the others (with two plugins
// blocking, the call that reached the cap let the stop through while the
// other blocked it, so the session never stopped). Once the cap is
// reached every block of the session is let through until the chain ends:
//   - where the harness says whether a stop hook is already active
//     (stop_hook_active: Claude Code, Codex, Gemini CLI, Copilot), at a
//     stop it says is not (a stop it says is active goes on counting,
//     even when no sitter call blocked the one before: another hook did);
//   - elsewhere (Cursor, OpenCode, Pi), at a stop after one where no call
//     blocked. The calls of one stop are told apart from the next stop's
//     by their start: all within StopRound of the first.
//
// The counter file is read and written under its flock, so concurrent
// calls never lose a count; a lock that cannot be had within StopLockWait
// lets the stop through with a diagnostic rather than wait or guess. A
// symbolic link at the counter's path is refused, never followed.
//
// The guard never breaks a hook: its own errors are diagnostics only.
type StopGuard struct {
	Dir string // state dir; "" = no persistence
	Cap int    // blocks allowed in a chain; <= 0 = no cap
	// Start is when this stop's hook call began; zero = this process's
	// start (a hook call is one process).
	Start time.Time
	// LockWait bounds the wait for the counter's lock; zero = StopLockWait.
	LockWait time.Duration
}

// StopRound is how far apart the calls of one stop may start;
// StopLockWait bounds the wait for a counter's lock, which others hold
// for a read and a write.
const (
	StopRound    = time.Second
	StopLockWait = 2 * time.Second
)

// processStart approximates when the harness ran this hook call.
var processStart = time.Now()

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
	Count   int    `json:"count"`             // blocks counted in this chain, all plugins
	Spent   bool   `json:"spent,omitempty"`   // the cap is reached: blocks pass until the chain ends
	Round   int64  `json:"round,omitempty"`   // start (Unix ns) of the latest stop's first call
	Blocked bool   `json:"blocked,omitempty"` // a call of that stop blocked
}

// Apply counts r against the guard when ev is on a stop phase and returns
// the result to render.
func (g StopGuard) Apply(ev Event, r Result) (Result, []string) {
	r, diags, _ := g.ApplyCapped(ev, r)
	return r, diags
}

// ApplyCapped is Apply, also saying whether the cap let this stop through
// (a block turned into the no-op because the chain passed Cap): the audit
// log records it, and `sitter observe` shows the session's run as needing
// its user.
func (g StopGuard) ApplyCapped(ev Event, r Result) (_ Result, _ []string, capped bool) {
	if !IsStopPhase(ev.Phase) || g.Cap <= 0 || ev.Session.ID == "" || g.Dir == "" {
		return r, nil, false
	}
	path := g.path(ev.Harness, ev.Session.ID)
	block := Canonical(ev.Phase, r.Decision) == Block
	if !block {
		// No counter, nothing to end: the common stop costs one lstat.
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return r, nil, false
		}
	}
	wait := g.LockWait
	if wait <= 0 {
		wait = StopLockWait
	}
	f, err := audit.LockState(path, wait)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			f, err = audit.LockState(path, wait)
		}
	}
	if err != nil {
		// Without the counter the cap cannot hold: a stop let through
		// is better than a loop nothing ends.
		msg := "sitter: stop guard: " + oneLine(err.Error())
		if block {
			r.Decision, r.Reason = Noop, ""
			msg += "; letting the session stop"
		}
		return r, []string{msg}, false
	}
	defer f.Close()

	var diags []string
	c, err := readCount(f)
	if err != nil {
		diags = append(diags, "sitter: stop guard: "+oneLine(err.Error())+"; counting from zero")
	}
	was := c
	start := g.Start
	if start.IsZero() {
		start = processStart
	}
	at := start.UnixNano()
	newStop := c.Round == 0 || at-c.Round > int64(StopRound) || c.Round-at > int64(StopRound)
	switch {
	case ev.StopHookActive != nil && !*ev.StopHookActive:
		// The harness says this stop starts a chain. Each plugin's call
		// of that stop starts it again: the first stop counts one block
		// however many plugins block it, never more.
		c = stopCount{}
	case ev.StopHookActive == nil && newStop && !c.Blocked:
		// No call blocked the last stop: it ended the chain.
		c = stopCount{}
	}
	if newStop || c.Round == 0 {
		c.Round, c.Blocked = at, false
	}
	c.Harness, c.Session = ev.Harness, ev.Session.ID
	if block {
		if !c.Spent {
			c.Count++
			c.Spent = c.Count > g.Cap
		}
		if c.Spent {
			times := "times"
			if g.Cap == 1 {
				times = "time"
			}
			diags = append(diags, fmt.Sprintf("sitter: stop blocked %d %s in a row for session %s; letting it stop", g.Cap, times, ev.Session.ID))
			r.Decision, r.Reason = Noop, ""
			capped = true
		} else {
			c.Blocked = true
		}
	}
	var werr error
	switch {
	case c.Count == 0:
		werr = f.Remove() // nothing counted: no file to leave behind
	case c != was:
		b, _ := json.Marshal(c) // plain fields always encode
		werr = f.Replace(append(b, '\n'))
	}
	if werr != nil {
		diags = append(diags, "sitter: stop guard: "+oneLine(werr.Error()))
	}
	return r, diags, capped
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

// readCount reads a held counter file; an empty one is a zero count, a
// corrupt one (a torn write of a killed call) an error and a zero count.
func readCount(f *audit.StateFile) (stopCount, error) {
	b, err := f.ReadAll()
	if err != nil {
		return stopCount{}, err
	}
	var c stopCount
	if len(b) == 0 {
		return c, nil
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Count < 0 {
		return stopCount{}, errors.New("counter " + f.Name() + " is corrupt")
	}
	return c, nil
}
