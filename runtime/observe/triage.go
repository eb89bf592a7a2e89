package observe

import (
	"fmt"
	"strings"
	"time"

	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// Triage buckets, in board order.
const (
	NeedsYou  = "needs-you"
	Working   = "working"
	Stale     = "stale"
	Orphaned  = "orphaned"
	Failed    = "failed"
	Completed = "completed"
)

// Buckets are the board's columns in order, with their titles.
var Buckets = []struct{ ID, Title string }{
	{NeedsYou, "Needs you"}, {Working, "Working"}, {Stale, "Stale"},
	{Orphaned, "Orphaned"}, {Failed, "Failed"}, {Completed, "Completed"},
}

// Classify puts a run in its triage bucket, first rule that holds:
//
//	the journal does not load                   → failed (an error card)
//	RUN_COMPLETED                               → completed
//	RUN_FAILED or RUN_HALTED                    → failed
//	a breakpoint is pending                     → needs you
//	a session that drove it was let stop at the
//	  stop guard's cap, and the journal has not
//	  moved since                               → needs you
//	the last stop check ended the session at its
//	  cap and nothing but stop checks followed  → needs you
//	the process file cannot run                 → needs you
//	a session drove it and none drives it now
//	  (it ended or was deactivated mid-run):
//	  a live sitter launch drives it            → working
//	  otherwise                                 → orphaned
//	no activity for stale:
//	  every effect resolved, no RUN_COMPLETED   → orphaned
//	  otherwise                                 → stale
//	otherwise                                   → working
//
// caps are the stops the audit log says the stop guard let through at its
// cap (the loop gave up: the agent kept stopping while the stop hook kept
// blocking), by session.
func Classify(v *RunView, sessions []*session.State, caps map[Driver]StopCapped, now time.Time, stale time.Duration) (bucket, why string) {
	if v.Err != "" {
		return Failed, withLine("unreadable", cutLine(v.Err))
	}
	switch v.Status {
	case runs.StatusCompleted:
		return Completed, "completed"
	case runs.StatusFailed:
		return Failed, withLine("failed", v.Failure)
	case runs.StatusHalted:
		return Failed, withLine("halted", v.Failure)
	}
	var bps []string
	for _, p := range v.Pending {
		if p.Kind == "breakpoint" {
			bps = append(bps, orID(p.Label, p.ID))
		}
	}
	if len(bps) > 0 {
		return NeedsYou, "breakpoint waits: " + strings.Join(bps, ", ")
	}
	for _, d := range v.Drivers {
		if c, ok := caps[d]; ok && !v.Last.After(c.At) {
			blocks := "blocks"
			if c.Cap == 1 {
				blocks = "block"
			}
			return NeedsYou, fmt.Sprintf("the stop hook gave up at its cap (%d %s in a row) and let %s session %s stop: see why, then resume the session", c.Cap, blocks, d.Harness, d.Session)
		}
	}
	if v.LastStop == session.RowMaxIterations && v.LastStopAfter {
		return NeedsYou, "the stop hook gave up at the session's cap"
	}
	if v.RuntimeError != "" {
		return NeedsYou, "the process cannot run: " + v.RuntimeError
	}
	var driver, ended *session.State
	for _, s := range sessions {
		if s.RunDir != v.Dir {
			continue
		}
		if s.Active {
			driver = s
			break
		}
		if ended == nil {
			ended = s
		}
	}
	if driver == nil && ended != nil {
		if ended.EndedBecause == session.RowMaxIterations {
			return NeedsYou, "the stop hook gave up at the session's cap"
		}
		if v.Launched {
			if pid := runs.LaunchPID(v.Dir); pid != 0 {
				return Working, fmt.Sprintf("sitter launch (pid %d) drives it: its %s session %s ended, the launch goes on", pid, ended.Harness, ended.SessionID)
			}
		}
		why := ended.EndedBecause
		if why == "" {
			why = "ended"
		}
		return Orphaned, fmt.Sprintf("its %s session %s stopped driving it mid-run (%s)", ended.Harness, ended.SessionID, why)
	}
	idle := now.Sub(v.Last)
	if idle >= stale {
		if len(v.Pending) == 0 && v.Events > 1 {
			return Orphaned, "every effect resolved but no RUN_COMPLETED for " + roundAge(idle)
		}
		return Stale, "no journal activity for " + roundAge(idle)
	}
	if len(v.Pending) > 0 {
		return Working, fmt.Sprintf("%d effect(s) pending", len(v.Pending))
	}
	return Working, "to iterate"
}

func orID(label, id string) string {
	if label != "" {
		return label
	}
	return id
}

// roundAge prints a duration the way the board does: 45s, 12m, 3h, 2d.
func roundAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// withLine is "what: line", or what alone when there is no line.
func withLine(what, line string) string {
	if line == "" {
		return what
	}
	return what + ": " + line
}
