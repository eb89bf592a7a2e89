package checkpoint

import (
	"os"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/transcript"
)

// Phases of a session's checkpoint machine.
const (
	Idle   = "idle"   // no turn in progress (no chain, or its tip is a turn)
	Active = "active" // a turn started (the tip is its base)
	Ended  = "ended"  // the session ended
)

// Phase is where a session's machine stands, read from its chain's tip.
func (r *Repo) Phase(session string) string {
	tip, _ := r.Tip(session)
	switch {
	case tip == nil:
		return Idle
	case tip.Ended:
		return Ended // the session ended with changes after its last turn
	case tip.Kind == "base":
		return Active
	}
	return Idle
}

// OnEvent drives the machine with a canonical hook event: a turn starts
// at userPromptSubmit (a base checkpoint of the tree the turn found, with
// the transcript position) and ends at stop or sessionEnd (a turn
// checkpoint with the prompts, modified files and token usage the
// transcript recorded since the base). Other phases do nothing. It returns
// the checkpoint made, or nil.
func (r *Repo) OnEvent(ev hook.Event) (*Checkpoint, error) {
	if ev.Session.ID == "" {
		return nil, nil
	}
	m := Meta{Harness: ev.Harness, Session: ev.Session.ID}
	spec, _ := transcript.Lookup(ev.Harness)
	path := ""
	if spec != nil && spec.TranscriptAnalysis {
		home, _ := os.UserHomeDir()
		path, _, _ = transcript.Resolve(spec, ev.Session.TranscriptPath, ev.Session.ID, ev.Session.Cwd, home, os.Getenv)
	}
	switch ev.Phase {
	case "userPromptSubmit", "beforePromptBuild":
		if r.Phase(m.Session) == Active {
			return nil, nil // the turn's base exists
		}
		m.Kind = "base"
		if path != "" {
			m.TranscriptPos, _ = transcript.Position(spec, path, transcript.Options{})
		}
		cp, created, err := r.Create(m)
		if !created {
			return nil, err
		}
		return cp, err
	case "stop", "sessionEnd":
		tip, _ := r.Tip(m.Session)
		if tip != nil && tip.Ended {
			return nil, nil
		}
		if tip != nil && tip.Kind == "turn" {
			// A stop the babysitter blocked continues the turn, and a
			// session ends after its last turn was recorded: record again
			// only when the tree moved.
			if tree, err := r.Snapshot(); err != nil || tree == tip.Tree {
				return nil, err
			}
		}
		m.Kind = "turn"
		m.Ended = ev.Phase == "sessionEnd"
		if path != "" {
			from := int64(0)
			if tip != nil {
				from = tip.TranscriptPos
			}
			if s, err := transcript.ReadFile(spec, path, from, transcript.Options{}); err == nil {
				m.TranscriptPos = s.To
				m.Prompts = s.Prompts
				m.ModifiedFiles = s.ModifiedFiles
				m.Usage = &Usage{Input: s.Usage.Input, Output: s.Usage.Output, CacheRead: s.Usage.CacheRead, CacheWrite: s.Usage.CacheWrite}
			}
		} else if ev.Prompt != "" {
			m.Prompts = []string{ev.Prompt}
		}
		cp, _, err := r.Create(m)
		return cp, err
	}
	return nil, nil
}
