package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

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
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, p, nil
	}
	if err != nil {
		return nil, p, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, p, fmt.Errorf("session state %s is corrupt: %w", p, err)
	}
	return &st, p, nil
}

// Write saves a session's state atomically.
func Write(st *State) (string, error) {
	p, err := Path(st.Harness, st.SessionID)
	if err != nil {
		return "", err
	}
	st.Version = Version
	st.UpdatedAt = now()
	if st.StartedAt == "" {
		st.StartedAt = st.UpdatedAt
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	return p, journal.WriteFileAtomic(p, append(b, '\n'))
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// Start begins or resumes a session; resumed is true when it had state.
func Start(harness, sessionID, cwd string) (st *State, resumed bool, path string, err error) {
	st, _, err = Read(harness, sessionID)
	if err != nil {
		return nil, false, "", err
	}
	resumed = st != nil
	if st == nil {
		st = &State{Harness: harness, SessionID: sessionID, MaxIterations: DefaultMaxIterations}
	}
	if cwd != "" {
		st.Cwd = cwd
	}
	path, err = Write(st)
	return st, resumed, path, err
}

// Bind makes a session drive a run, from iteration 0. max <= 0 keeps the
// session's cap (default DefaultMaxIterations).
func Bind(harness, sessionID, runID, runDir string, max int) (*State, string, error) {
	st, _, err := Read(harness, sessionID)
	if err != nil {
		return nil, "", err
	}
	if st == nil {
		st = &State{Harness: harness, SessionID: sessionID, MaxIterations: DefaultMaxIterations}
	}
	if max > 0 {
		st.MaxIterations = max
	}
	if st.MaxIterations <= 0 {
		st.MaxIterations = DefaultMaxIterations
	}
	st.Active, st.RunID, st.RunDir, st.Iteration, st.EndedBecause = true, runID, runDir, 0, ""
	p, err := Write(st)
	return st, p, err
}
