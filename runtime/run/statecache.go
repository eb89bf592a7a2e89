package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StateCache is state/state.json, the SDK's state-cache snapshot (written
// by State.Snapshot). The SDK derives `run iterate`'s iterationCount and
// `run status`'s metadata from it, so sitter rewrites it when the SDK
// does: when an iteration starts on a missing, corrupt or stale snapshot,
// and after a run completes or fails.
type StateCache struct {
	JournalHead          *CacheHead     `json:"journalHead"`
	StateVersion         int            `json:"stateVersion"`
	PendingEffectsByKind map[string]int `json:"pendingEffectsByKind"`
	RebuildReason        *string        `json:"rebuildReason"`
}

// CacheHead is the journal head a snapshot was taken at.
type CacheHead struct {
	Seq      int    `json:"seq"`
	ULID     string `json:"ulid"`
	Checksum string `json:"checksum,omitempty"`
}

// Why a snapshot was rewritten: the SDK's reasons, plus sitter's for a
// halted run (the SDK cannot halt).
const (
	RebuildMissing    = "missing_cache"
	RebuildCorrupt    = "corrupt_cache"
	RebuildMismatch   = "journal_mismatch"
	RebuildCompletion = "post_completion"
	RebuildFailure    = "post_failure"
	RebuildHalt       = "post_halt"
	RebuildManual     = "cli_manual"
)

// ReadStateCache reads a run's state/state.json; no snapshot is nil
// without an error.
func ReadStateCache(dir string) (*StateCache, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateDir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c StateCache
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("state cache of %s: %w", dir, err)
	}
	return &c, nil
}

// staleReason says why the snapshot has to be rewritten before an
// iteration, "" when it is current.
func (s *State) staleReason(c *StateCache, err error) string {
	switch {
	case err != nil:
		return RebuildCorrupt
	case c == nil:
		return RebuildMissing
	}
	h := s.Journal.Head()
	if h == nil || c.JournalHead == nil {
		if h == nil && c.JournalHead == nil {
			return ""
		}
		return RebuildMismatch
	}
	if h.Seq != c.JournalHead.Seq || h.ULID != c.JournalHead.ULID {
		return RebuildMismatch
	}
	return ""
}

// iterationCount is the SDK's count of completed iterations: the
// RUN_ITERATION events if any, else half the snapshot's state version (its
// journal head when it was taken), 0 without a snapshot.
func (s *State) iterationCount(c *StateCache) int {
	n := 0
	for _, ev := range s.Journal.Events {
		if ev.Type == "RUN_ITERATION" {
			n++
		}
	}
	if n > 0 || c == nil || c.StateVersion <= 0 {
		return n
	}
	return c.StateVersion / 2
}
