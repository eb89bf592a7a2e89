package run

import (
	"encoding/json"
	"os"
	"path/filepath"

	"sitter.dev/sitter/runtime/journal"
)

// LaunchFile, in a run's state/, says that a `sitter launch --babysit`
// process drives the run: between two harness sessions (a breakpoint
// waiting for its answer, a session resumed) no session drives it, yet
// the launch goes on with it, so it is not orphaned. The launch writes it
// when it opens the run and removes it when it ends; a launch that was
// killed leaves it behind, which LaunchPID sees through (its pid is gone).
const LaunchFile = "launch.json"

// MarkLaunch records that process pid drives the run in dir; the returned
// func removes the mark.
func MarkLaunch(dir string, pid int) (func() error, error) {
	p := filepath.Join(dir, StateDir, LaunchFile)
	b, _ := json.Marshal(map[string]int{"pid": pid})
	// Written as every file of the run is: a link planted at the path is
	// replaced, never written through.
	if err := journal.WriteFileAtomic(p, append(b, '\n')); err != nil {
		return nil, err
	}
	return func() error {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}, nil
}

// LaunchPID is the pid of the live launch that drives the run in dir, 0
// for none (no mark, or its process is gone).
func LaunchPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, StateDir, LaunchFile))
	if err != nil {
		return 0
	}
	var m struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(b, &m) != nil || m.PID <= 0 || !journal.PIDAlive(m.PID) {
		return 0
	}
	return m.PID
}
