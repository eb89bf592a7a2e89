package session

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/transcript"
)

// Rows of the stop decision table.
const (
	RowNoSession     = "no-active-session"
	RowMaxIterations = "max-iterations"
	RowCompleted     = "run-completed"
	RowProof         = "completion-proof"
	RowEnded         = "run-ended" // failed or halted: nothing left to do
	RowUnreadable    = "run-unreadable"
	RowProcessError  = "process-error" // the process file cannot run
	RowBreakpoints   = "breakpoints-only"
	RowPending       = "effects-pending"
	RowIterate       = "iterate"
	RowTaken         = "run-taken" // another session drives the run now
)

// Decision is the answer to one stop.
type Decision struct {
	Block      bool   `json:"block"`
	Row        string `json:"row"`
	Reason     string `json:"reason"`
	Deactivate bool   `json:"deactivate,omitempty"`
	Iteration  int    `json:"iteration"`
	// Say is, for a stop allowed with the run unfinished for a reason the
	// user must act on, what to tell them (the result's userMessage):
	// without it the agent stops and nobody learns why.
	Say string `json:"say,omitempty"`
}

// Result is the canonical hook result of a decision: a block with its
// reason, or a noop (the agent may stop).
func (d Decision) Result() hook.Result {
	if d.Block {
		return hook.Result{Decision: hook.Block, Reason: d.Reason}
	}
	return hook.Result{Decision: hook.Noop, UserMessage: d.Say}
}

// Promise returns the text of the last <promise>…</promise> of a message,
// without the white space around it: what the regular expression
// (?s)<promise>\s*(.*?)\s*</promise> finds last, scanned by hand because a
// stop check runs at every turn and compiling the expression costs more
// than the scan.
func Promise(msg string) string {
	const open, close = "<promise>", "</promise>"
	last := ""
	for {
		i := strings.Index(msg, open)
		if i < 0 {
			return last
		}
		msg = msg[i+len(open):]
		j := strings.Index(msg, close)
		if j < 0 {
			return last
		}
		last = strings.Trim(msg[:j], " \t\n\f\r")
		msg = msg[j+len(close):]
	}
}

// StopCheck decides a stop of the session that ev belongs to, records the
// decision in the session and journals it in the run as STOP_HOOK_INVOKED.
//
//	no active session                          → allow
//	iteration ≥ max                            → allow, deactivate
//	<promise>PROOF</promise> equal to the run's  → allow, deactivate
//	  completion proof
//	run completed without the proof            → block: give the proof
//	run failed or halted                       → allow, deactivate
//	only breakpoints pending                   → allow (a human must act)
//	otherwise                                  → block: the pending effects,
//	                                             or "call sitter run iterate"
func StopCheck(ctx context.Context, ev hook.Event) (Decision, error) {
	st, _, err := Read(ev.Harness, ev.Session.ID)
	return StopCheckState(ctx, ev, st, err)
}

// StopCheckState is StopCheck for a caller that has read the session's
// state already (st and readErr: Read's answer), so that the hook
// binary, which looks at the state first, reads it once.
func StopCheckState(ctx context.Context, ev hook.Event, st *State, readErr error) (Decision, error) {
	if readErr != nil {
		return Decision{Row: RowNoSession, Reason: readErr.Error()}, readErr
	}
	if st == nil || !st.Active || st.RunDir == "" {
		return Decision{Row: RowNoSession, Reason: "no babysitter run is bound to this session"}, nil
	}
	orig := *st
	// The run is read and the decision journaled under the run lock: the
	// journal is listed once (the replay cache gives the rest), and the
	// STOP_HOOK_INVOKED follows the state it was decided on. A hook must
	// answer quickly: wait for the lock (an iteration in progress) only
	// briefly, and without it decide all the same.
	held, lockErr := run.LockWithin(ctx, st.RunDir, "sitter:stop-check", 20*time.Second)
	load := run.LoadSummary
	if lockErr == nil {
		defer held.Release()
		load = func(string) (*run.Summary, error) { return held.Summary() }
	}
	d := decide(st, ev, load)
	if d.Block {
		st.Iteration++
	}
	d.Iteration = st.Iteration
	if d.Deactivate {
		st.Active = false
		st.EndedBecause = d.Row
	}
	// The decision is journaled first: the journal file's fsync then
	// commits no other file's data with it (on ext4, a file written and
	// renamed before an fsync is flushed by it), and the session's state,
	// written after without fsync, is on its way when the hook answers.
	var journalErr error
	if d.Row != RowUnreadable && lockErr == nil {
		decision := "allow"
		if d.Block {
			decision = "block"
		}
		_, journalErr = held.Append(journal.StopHookInvoked, map[string]any{
			"harness": ev.Harness, "sessionId": ev.Session.ID, "decision": decision, "row": d.Row,
			"reason": d.Reason, "iteration": st.Iteration, "maxIterations": st.MaxIterations,
		})
	}
	// Only the counter moved: the journal has the decision, so the state
	// is replaced without fsync. A power loss may take the counter back by
	// the checks since the last durable write, and on some file systems
	// leave the file empty: the stop check then lets the agent stop with
	// the error, and `sitter session start --run-id` binds the run again.
	replace := journal.ReplaceFile
	if d.Deactivate {
		replace = journal.WriteFileAtomic
	}
	if err := saveUnchanged(orig, st, replace); err != nil {
		return d, err
	}
	if d.Row != RowUnreadable && lockErr != nil {
		return d, lockErr
	}
	return d, journalErr
}

// runName is the bound run's id, else its directory.
func runName(st *State) string {
	if st.RunID != "" {
		return st.RunID
	}
	return st.RunDir
}

// saveUnchanged writes st, what a stop check made of the state orig,
// under the session's lock, unless another handler changed the state
// since the check read it (a rebind to another run, a session end): that
// change stands.
func saveUnchanged(orig State, st *State, replace func(string, []byte) error) error {
	p, err := Path(st.Harness, st.SessionID)
	if err != nil {
		return err
	}
	_, err = update(p, st.Harness, st.SessionID, replace, func(cur *State) (*State, error) {
		if cur == nil || *cur != orig {
			return nil, nil
		}
		return st, nil
	})
	return err
}

// settleWait is the pause between two reads of such a transcript.
var settleWait = func() { time.Sleep(25 * time.Millisecond) }

// hasProof says whether msg ends with the run's completion proof.
func hasProof(msg string, rs *run.Summary) bool {
	p := Promise(msg)
	return p != "" && rs.Meta.CompletionProof != "" && p == rs.Meta.CompletionProof
}

// decide is the decision table; load reads the bound run.
func decide(st *State, ev hook.Event, load func(dir string) (*run.Summary, error)) Decision {
	if st.MaxIterations > 0 && st.Iteration >= st.MaxIterations {
		return Decision{Row: RowMaxIterations, Deactivate: true,
			Reason: fmt.Sprintf("the session reached its cap of %d stop-hook iterations", st.MaxIterations),
			Say: fmt.Sprintf("Babysitter run %s is no longer driven: this session reached its cap of %d stop-hook iterations. To go on with it: `sitter session start --run-id %s`.",
				runName(st), st.MaxIterations, runName(st))}
	}
	rs, err := load(st.RunDir)
	if err != nil {
		say := fmt.Sprintf("Babysitter run %s cannot be read, so the agent was let stop: %v. `sitter run repair %s` quarantines damaged journal files; then tell the agent to continue (this session still drives the run).",
			runName(st), err, st.RunRef())
		if text, advised := journal.Advice(err, st.RunRef()); advised {
			// Its own advice says whether a repair helps, and is the
			// only advice given.
			say = fmt.Sprintf("Babysitter run %s cannot be read, so the agent was let stop: %s. Once it reads again, tell the agent to continue (this session still drives the run).",
				runName(st), text)
		}
		return Decision{Row: RowUnreadable, Reason: "the bound run cannot be read: " + err.Error(), Say: say}
	}
	if d := rs.Driver; d.SessionID != "" && (d.Harness != st.Harness || d.SessionID != st.SessionID) {
		// Another session took the run (session start --run-id) where
		// this machine could not release this one: from another
		// machine, on a run of a shared store. It drives the run now.
		reason := fmt.Sprintf("run %s is driven by session %s/%s now: this session lets it go", rs.Meta.RunID, d.Harness, d.SessionID)
		return Decision{Row: RowTaken, Deactivate: true, Reason: reason, Say: "Babysitter " + reason + "."}
	}
	msg := ev.LastAssistantMessage
	var reread func() string // the transcript's last message, read again
	var lag time.Duration    // how long the harness may still be writing it
	if msg == "" && ev.Session.TranscriptPath != "" {
		// The atlas's record shapes for the harness (runtime/transcript);
		// a harness the atlas cannot read gives no message.
		if spec, ok := transcript.Lookup(ev.Harness); ok && spec.TranscriptAnalysis {
			reread = func() string {
				m, _ := transcript.LastAssistant(spec, ev.Session.TranscriptPath)
				return m
			}
			msg = reread()
			lag = time.Duration(spec.WriteLagMs) * time.Millisecond
		}
	}
	if rs.Status == run.StatusCompleted && lag > 0 && !hasProof(msg, rs) {
		// A harness may write its transcript after the stop hook fires
		// (the atlas's writeLagMs: Copilot CLI's session writer is
		// debounced), so the message that carries the proof can reach it
		// a moment later. Only here (a completed run, no proof read yet:
		// once per run) is it worth waiting for.
		for deadline := time.Now().Add(lag); !hasProof(msg, rs) && time.Now().Before(deadline); {
			settleWait()
			msg = reread()
		}
	}
	if hasProof(msg, rs) {
		return Decision{Row: RowProof, Deactivate: true, Reason: "the agent gave run " + rs.Meta.RunID + "'s completion proof"}
	}
	if rs.Status == run.StatusCompleted {
		// As the SDK's stop hook: a completed run still needs the agent's
		// proof that it saw the completion, taken from the run itself.
		return Decision{Block: true, Row: RowCompleted, Reason: fmt.Sprintf(
			"Babysitter run %s completed. To finish: run `sitter run status %s --json`, take `completionProof` from its output, summarize the result for the user and end your reply with <promise>COMPLETION_PROOF</promise> holding that proof.",
			rs.Meta.RunID, st.RunRef())}
	}
	if rs.RuntimeError != "" && rs.Status != run.StatusCompleted && rs.Status != run.StatusFailed && rs.Status != run.StatusHalted {
		// Iterating again gives the same error: do not trap the agent in
		// a loop it cannot advance.
		msg := rs.RuntimeError
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		reason := fmt.Sprintf("run %s cannot advance: its process fails to run (%s). Fix the process (entry %s, or a module it imports), then resume the run (`sitter run iterate %s --json`).",
			rs.Meta.RunID, msg, rs.Meta.EntryPath(st.RunDir), st.RunRef())
		return Decision{Row: RowProcessError, Reason: reason, Say: "Babysitter " + reason}
	}
	if rs.Status == run.StatusFailed || rs.Status == run.StatusHalted {
		// The event that ended it holds why (run status names only the
		// journal's last event, which is this decision once journaled).
		ended := journal.RunFailed
		if rs.Status == run.StatusHalted {
			ended = journal.RunHalted
		}
		return Decision{Row: RowEnded, Deactivate: true, Reason: "run " + rs.Meta.RunID + " " + rs.Status,
			Say: fmt.Sprintf("Babysitter run %s %s: `sitter run events %s --type %s` shows why.", rs.Meta.RunID, rs.Status, st.RunRef(), ended)}
	}
	pending := rs.Pending()
	breakpoints := 0
	for _, e := range pending {
		if e.Kind == "breakpoint" {
			breakpoints++
		}
	}
	if len(pending) > 0 && breakpoints == len(pending) {
		return Decision{Row: RowBreakpoints, Reason: fmt.Sprintf("run %s waits for %d breakpoint(s): a human must answer", rs.Meta.RunID, breakpoints),
			Say: fmt.Sprintf("Babysitter run %s waits for %d breakpoint(s): a human must answer. Answer the agent in this session, or yourself: `sitter task list %s --pending --kind breakpoint` shows them (`sitter task show %s <effectId> --json`, the question), `sitter task post %s <effectId> --status ok --value-inline '{\"approved\": true, \"response\": \"…\"}'` answers one (approved false to decline); then tell the agent to continue the run.",
				rs.Meta.RunID, breakpoints, st.RunRef(), st.RunRef(), st.RunRef())}
	}
	// Built without fmt: these two rows answer most stop checks.
	ref := st.RunRef()
	var b strings.Builder
	b.Grow(768 + 4*len(ref) + 96*len(pending)) // one allocation, not a chain of them
	b.WriteString("Babysitter run " + rs.Meta.RunID + " is not finished (stop-hook iteration " + strconv.Itoa(st.Iteration+1) + " of " + strconv.Itoa(st.MaxIterations) + "). ")
	if len(pending) == 0 {
		b.WriteString("Call `sitter run iterate " + ref + " --json` and carry out the effects it lists.")
		return Decision{Block: true, Row: RowIterate, Reason: b.String() + proofHint}
	}
	b.WriteString("It waits for " + strconv.Itoa(len(pending)) + " effect(s):\n")
	for _, e := range pending {
		b.WriteString("- " + e.EffectID + " [" + e.Kind + "] " + e.Label + "\n")
	}
	b.WriteString("Execute each (`sitter task show " + ref + " <effectId> --json` gives its definition, in its task field), post its result with `sitter task post " + ref + " <effectId> --status ok --value-inline '<json>'` (or --status error), then call `sitter run iterate " + ref + " --json`.")
	return Decision{Block: true, Row: RowPending, Reason: b.String() + proofHint}
}

const proofHint = " When iterate reports status completed, end your reply with <promise>COMPLETION_PROOF</promise> using the completionProof it prints."
