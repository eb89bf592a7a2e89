package run

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/journal"
)

// NewEffect is an effect requested without a process (tools, tests).
type NewEffect struct {
	Key     string
	TaskID  string
	Kind    string
	Label   string
	TaskDef json.RawMessage // nil = {"kind": Kind}
	Args    json.RawMessage
}

// RequestEffects journals effects directly, under the run lock.
func RequestEffects(ctx context.Context, dir string, effs []NewEffect) ([]*Effect, error) {
	lock, err := journal.Acquire(ctx, filepath.Join(dir, journal.LockFile), "sitter:request")
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := Load(dir)
	if err != nil {
		return nil, err
	}
	var out []*Effect
	for i, ne := range effs {
		def := ne.TaskDef
		if def == nil {
			def, _ = json.Marshal(map[string]string{"kind": ne.Kind, "title": ne.Label})
		}
		e, err := s.request(jsEffect{
			Key: ne.Key, StepID: fmt.Sprintf("S%06d", len(s.Effects)+i+1), TaskID: ne.TaskID,
			Kind: ne.Kind, Label: ne.Label, TaskDef: def, Args: ne.Args,
		})
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Repair quarantines what keeps the run's journal from loading (a corrupt
// tail, stray files) and temp files of interrupted writes into
// orphaned/journal-<time>/, and returns the moved names.
func Repair(ctx context.Context, dir string) ([]string, string, error) {
	lock, err := journal.Acquire(ctx, filepath.Join(dir, journal.LockFile), "sitter:run-repair")
	if err != nil {
		return nil, "", err
	}
	defer lock.Release()
	if _, err := ReadMetadata(dir); err != nil {
		return nil, "", err
	}
	q := filepath.Join(dir, OrphanedDir, "journal-"+strings.NewReplacer(":", "", ".", "").Replace(time.Now().UTC().Format("20060102T150405.000000000Z")))
	moved, err := journal.Repair(filepath.Join(dir, JournalDir), q)
	if err != nil {
		return nil, "", err
	}
	if len(moved) == 0 {
		q = ""
	}
	// Temp files of interrupted task writes are not events; leave them.
	return moved, q, nil
}
