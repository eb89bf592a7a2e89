package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/journal"
)

// DefaultMaxIterations caps the stop-hook iterations of a session.
const DefaultMaxIterations = 256

// Version tags session state files.
const Version = "sitter.session.v1"

// State is one session's state file.
type State struct {
	Version       string `json:"version"`
	Harness       string `json:"harness"`
	SessionID     string `json:"sessionId"`
	Active        bool   `json:"active"`
	RunID         string `json:"runId,omitempty"`
	RunDir        string `json:"runDir,omitempty"`
	Iteration     int    `json:"iteration"`
	MaxIterations int    `json:"maxIterations"`
	Cwd           string `json:"cwd,omitempty"`
	StartedAt     string `json:"startedAt"`
	UpdatedAt     string `json:"updatedAt"`
	// EndedBecause says why the session was deactivated.
	EndedBecause string `json:"endedBecause,omitempty"`
	// Told: the agent was told its harness and session.
	Told bool `json:"told,omitempty"`
	// Store is the shared run store (a URL) the run lives in; RunDir is
	// then this machine's copy of it, and the stop check is sitter-host's
	// (the hook binary has no network client).
	Store string `json:"store,omitempty"`
}

// RunRef is how a command line names the bound run: its directory, or
// for a run of a shared store its id and the store.
func (st *State) RunRef() string {
	if st.Store == "" {
		return st.RunDir
	}
	return st.RunID + " --store '" + strings.ReplaceAll(st.Store, "'", `'\''`) + "'"
}

// Path is the state file of (harness, session id) under the user's state
// dir (hook.StateDir): sessions/<sha256>.json, the hash keeping any id a
// safe file name.
func Path(harness, sessionID string) (string, error) {
	if harness == "" || sessionID == "" {
		return "", errors.New("a harness and a session id are needed (from the hook event, or --harness and --session-id)")
	}
	d, err := hook.StateDir()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(harness + "\x00" + sessionID))
	return filepath.Join(d, "sessions", hex.EncodeToString(h[:16])+".json"), nil
}

// Read returns the state of a session, nil when it has none.
func Read(harness, sessionID string) (*State, string, error) {
	p, err := Path(harness, sessionID)
	if err != nil {
		return nil, "", err
	}
	st, err := readAt(p)
	return st, p, err
}

// readAt reads the state file at p, nil when there is none.
func readAt(p string) (*State, error) {
	b, err := audit.ReadNoFollow(p) // a link planted in the state dir is refused
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("session state %s is corrupt: %w", p, err)
	}
	return &st, nil
}

// writeAt makes st the content of the state file at p with replace:
// journal.WriteFileAtomic (durable), or journal.ReplaceFile for the stop
// check's counter alone (see StopCheckState). Only update calls it, under
// the session's lock, which made p's directory.
func writeAt(p string, st *State, replace func(string, []byte) error) error {
	st.Version = Version
	st.UpdatedAt = now()
	if st.StartedAt == "" {
		st.StartedAt = st.UpdatedAt
	}
	return replace(p, append(marshalState(st), '\n'))
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// New is the state of a session that has none yet.
func New(harness, sessionID, cwd string) *State {
	return &State{Harness: harness, SessionID: sessionID, MaxIterations: DefaultMaxIterations, Cwd: cwd}
}

// lockWait bounds the wait for a session's lock: its holders read and
// write one small file.
const lockWait = 10 * time.Second

// lockState takes the lock of the session state file at path: path plus
// ".lock", opened without following a link as every file of the state
// dir is, and removed when released (so List never sees it).
func lockState(path string) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	l, err := audit.LockState(path+".lock", lockWait)
	if err != nil {
		return nil, err
	}
	return func() {
		l.Remove()
		l.Close()
	}, nil
}

// Update changes a session's state under the session's lock, so that two
// handlers of one session that run at once never write over each other's
// change (Copilot CLI runs a resumed session's prompt and session-start
// hooks together: one marks the agent told while the other binds a run).
// fn gets the state as it is (nil when the session has none) and returns
// the state to write, or nil to leave the file as it is; Update returns
// what the file holds after.
func Update(harness, sessionID string, fn func(cur *State) (*State, error)) (*State, string, error) {
	p, err := Path(harness, sessionID)
	if err != nil {
		return nil, "", err
	}
	st, err := update(p, harness, sessionID, journal.WriteFileAtomic, fn)
	return st, p, err
}

// update is Update on the state file p, writing with replace.
func update(p, harness, sessionID string, replace func(string, []byte) error, fn func(cur *State) (*State, error)) (*State, error) {
	release, err := lockState(p)
	if err != nil {
		return nil, err
	}
	defer release()
	cur, err := readAt(p)
	if err != nil {
		return nil, err
	}
	next, err := fn(cur)
	if err != nil || next == nil {
		return cur, err
	}
	next.Harness, next.SessionID = harness, sessionID
	return next, writeAt(p, next, replace)
}

// Start begins or resumes a session; resumed is true when it had state.
func Start(harness, sessionID, cwd string) (st *State, resumed bool, path string, err error) {
	st, path, err = Update(harness, sessionID, func(cur *State) (*State, error) {
		resumed = cur != nil
		if cur == nil {
			return New(harness, sessionID, cwd), nil
		}
		if cwd != "" {
			cur.Cwd = cwd
		}
		return cur, nil
	})
	return st, resumed, path, err
}

// Bind is Rebind without the sessions it took the run from.
func Bind(harness, sessionID, runID, runDir string, max int) (*State, string, error) {
	st, _, p, err := Rebind(harness, sessionID, "", runID, runDir, max)
	return st, p, err
}

// Rebind makes a session drive a run, from iteration 0 (the same run it
// drove keeps its count, unless the cap had ended it). max <= 0 keeps the
// session's cap (default DefaultMaxIterations). A run has one driver: any
// other session bound to it stops driving it (EndedBecause "rebound"), so
// a run resumed from a new session, in this harness or another, is not
// also driven by the one that crashed; the sessions it took the run from
// are returned. cwd, the session's project when known, is recorded for a
// session that has none.
func Rebind(harness, sessionID, cwd, runID, runDir string, max int) (*State, []*State, string, error) {
	return RebindStore(harness, sessionID, cwd, runID, runDir, "", max)
}

// RebindStore is Rebind for a run of a shared store (store, its URL; ""
// for a local run), runDir being this machine's copy of it.
func RebindStore(harness, sessionID, cwd, runID, runDir, store string, max int) (*State, []*State, string, error) {
	// Rebinds take turns: two at once would each end the other's binding
	// and leave the run with no driver. Only rebinds take this lock, and
	// before any session's, so nothing waits on it holding one.
	d, err := hook.StateDir()
	if err != nil {
		return nil, nil, "", err
	}
	release, err := lockState(filepath.Join(d, "sessions", "rebind"))
	if err != nil {
		return nil, nil, "", err
	}
	defer release()
	st, p, err := Update(harness, sessionID, func(st *State) (*State, error) {
		if st == nil {
			st = New(harness, sessionID, cwd)
		}
		if st.Cwd == "" {
			st.Cwd = cwd
		}
		if max > 0 {
			st.MaxIterations = max
		}
		if st.MaxIterations <= 0 {
			st.MaxIterations = DefaultMaxIterations
		}
		if st.RunDir != runDir || st.EndedBecause == RowMaxIterations {
			// A new run, or the same one taken on again after the
			// session's cap stopped it (what the cap's message tells
			// the user to do): counted from 0. A session resumed
			// after its end keeps its count.
			st.Iteration = 0
		}
		st.Active, st.RunID, st.RunDir, st.EndedBecause, st.Store = true, runID, runDir, "", store
		return st, nil
	})
	if err != nil {
		return nil, nil, p, err
	}
	// One session lock at a time: two sessions rebinding at once never
	// wait for each other's.
	var took []*State
	all, _ := List()
	for _, o := range all {
		if !o.Active || o.RunDir != runDir || o.Harness == harness && o.SessionID == sessionID {
			continue
		}
		changed := false
		ended, _, err := Update(o.Harness, o.SessionID, func(cur *State) (*State, error) {
			if cur == nil || !cur.Active || cur.RunDir != runDir {
				return nil, nil // let go meanwhile
			}
			cur.Active, cur.EndedBecause, changed = false, "rebound to "+harness+" session "+sessionID, true
			return cur, nil
		})
		if err != nil {
			return nil, nil, p, err
		}
		if changed {
			took = append(took, ended)
		}
	}
	return st, took, p, nil
}

// List returns every session's state, most recently updated first;
// unreadable files are skipped.
func List() ([]*State, error) {
	d, err := hook.StateDir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(d, "sessions"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := audit.ReadNoFollow(filepath.Join(d, "sessions", e.Name()))
		if err != nil {
			continue
		}
		if st, err := decodeState(b); err == nil && st.SessionID != "" {
			out = append(out, &st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpdatedAt > out[j].UpdatedAt })
	return out, nil
}

// DriverOf is the active session bound to a run directory, nil if none.
func DriverOf(all []*State, runDir string) *State {
	for _, st := range all {
		if st.Active && st.RunDir == runDir {
			return st
		}
	}
	return nil
}
