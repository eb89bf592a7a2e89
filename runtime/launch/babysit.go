package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// A babysit launch (`sitter launch <harness> --babysit FILE` or --run-id)
// runs the harness on a babysitter run until the run completes, fails or
// hits its cap. The harness gets SITTER_BABYSIT_RUN (the run directory), so
// that the babysitter plugin's session-start handler binds its session to
// the run and its stop hook drives the loop, and a prompt that tells the
// agent to continue the run. The exit code says how the run ended:
const (
	// ExitCompleted: the run completed.
	ExitCompleted = 0
	// ExitFailed: the run failed or halted (also: sitter could not launch).
	ExitFailed = 1
	// ExitCap: the run is unfinished because a cap ended the loop:
	// --max-iterations harness runs (bridge-hooks), or the stop hook's
	// cap of blocks in a row (agent-driven; --max-iterations sets it), or
	// the session's own iteration cap.
	ExitCap = 3
	// ExitUnfinished: the harness ended and left the run unfinished with
	// no cap reached: only breakpoints are pending (a human must answer),
	// the harness failed, or nothing drove the loop.
	ExitUnfinished = 4
	// ExitTimeout: --timeout ended the harness (as timeout(1) exits).
	ExitTimeout = exitIdle
)

// BabysitEnv names the run directory in the harness's environment: the
// babysitter plugin's `sitter session start` binds the new session to it.
const BabysitEnv = "SITTER_BABYSIT_RUN"

// launchSessionPrefix starts the session ids a launch makes up for the
// lifecycle it emulates (bridge-hooks): no harness knows them, so they are
// never resumed.
const launchSessionPrefix = "sitter-launch-"

// Babysit asks a launch to drive a babysitter run: a new one of Entry's
// process, or the existing RunID.
type Babysit struct {
	Entry   string // FILE[#export] (--babysit)
	Inputs  []byte // JSON (--inputs), new runs only
	RunID   string // a run id or run directory (--run-id)
	RunsDir string // where runs live ("" = <workspace>/.a5c/runs)
	// Interactive (--interactive, new runs only): the run is created
	// interactive, so that its breakpoints wait for a human; the launch
	// waits for the answers and then resumes the harness. A --run-id run
	// keeps its own mode (run.json's nonInteractive).
	Interactive bool
}

// Validate checks a babysit request before anything is prepared: one of
// Entry and RunID; a run to resume exists and has not ended; a process
// file exists.
func (b *Babysit) Validate(workspace string) error {
	switch {
	case b.Entry == "" && b.RunID == "":
		return errors.New("--babysit FILE[#export] or --run-id ID is needed")
	case b.Entry != "" && b.RunID != "":
		return errors.New("--babysit and --run-id exclude each other (--babysit creates a run, --run-id resumes one)")
	case b.RunID != "" && len(b.Inputs) > 0:
		return errors.New("--inputs goes with --babysit: a resumed run keeps its inputs")
	case b.RunID != "" && b.Interactive:
		return errors.New("--interactive goes with --babysit: a --run-id run keeps its own mode")
	}
	if len(b.Inputs) > 0 && !json.Valid(b.Inputs) {
		return errors.New("--inputs is not JSON")
	}
	if b.Entry != "" {
		file, _ := run.ParseEntry(b.Entry)
		if st, err := os.Stat(file); err != nil || st.IsDir() {
			return fmt.Errorf("--babysit %s: no process file %s", b.Entry, file)
		}
		return nil
	}
	_, err := b.existing(workspace)
	return err
}

func (b *Babysit) runsDir(workspace string) string {
	if b.RunsDir != "" {
		return b.RunsDir
	}
	return filepath.Join(workspace, ".a5c", "runs")
}

// existing loads the run --run-id names and checks that it can go on.
func (b *Babysit) existing(workspace string) (*run.State, error) {
	runs := b.runsDir(workspace)
	dir, err := run.ResolveDir(b.RunID, runs)
	if err != nil {
		return nil, fmt.Errorf("--run-id %s: no such run in %s", b.RunID, runs)
	}
	st, err := run.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("--run-id %s: %v", b.RunID, err)
	}
	if st.Terminal() {
		return nil, fmt.Errorf("--run-id %s: the run is already %s; nothing to resume", st.Meta.RunID, st.Status)
	}
	return st, nil
}

// open creates the run (--babysit) or loads it (--run-id).
func (b *Babysit) open(ctx context.Context, harness, workspace string) (*run.State, error) {
	if b.RunID != "" {
		return b.existing(workspace)
	}
	file, _ := run.ParseEntry(b.Entry)
	id := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	dir, _, err := run.Create(ctx, run.CreateOptions{
		RunsDir: b.runsDir(workspace), ProcessID: id, Entry: b.Entry, Inputs: b.Inputs,
		Harness: harness, NonInteractive: !b.Interactive,
	})
	if err != nil {
		return nil, fmt.Errorf("--babysit %s: %v", b.Entry, err)
	}
	return run.Load(dir)
}

// BabysitPrompt is what the agent is told: continue the run with the
// babysit skill, step by step, and end with the completion proof. sitter
// is the command the agent's shell runs sitter with.
func BabysitPrompt(runID, runDir, sitter string) string {
	d := shellQuote(runDir)
	return fmt.Sprintf("Continue babysitter run %s (%s) with the babysit skill: run `%s run iterate %s --json`, "+
		"execute each effect in its nextActions (`%s task show %s <effectId> --json` gives an effect's definition), "+
		"post each result with `%s task post %s <effectId> --status ok --value-inline '<json>'` (or --status error), "+
		"and iterate again, until iterate reports status completed; then end your reply with <promise>COMPLETION_PROOF</promise>, "+
		"using the completionProof that iterate prints.",
		runID, runDir, sitter, d, sitter, d, sitter, d)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// harnessSession is a session of a harness that drove a run.
type harnessSession struct {
	Harness, ID, At string // At: RFC 3339, for ordering
}

// LastSession finds the harness session that drove a run last, from the
// events the stop hook journals (harness and sessionId in their data) and
// the session states in stateDir bound to the run. Ids a launch made up
// for an emulated lifecycle are skipped: no harness can resume them.
func LastSession(st *run.State, stateDir string) (harness, id string) {
	var all []harnessSession
	for _, ev := range st.Journal.Events {
		var d struct {
			Harness   string `json:"harness"`
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Harness != "" && d.SessionID != "" {
			all = append(all, harnessSession{d.Harness, d.SessionID, ev.RecordedAt})
		}
	}
	if stateDir != "" {
		files, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var s session.State
			if json.Unmarshal(b, &s) == nil && s.RunID == st.Meta.RunID && s.Harness != "" && s.SessionID != "" &&
				(s.RunDir == "" || sameDir(s.RunDir, st.Dir)) {
				all = append(all, harnessSession{s.Harness, s.SessionID, s.UpdatedAt})
			}
		}
	}
	if st.Meta.Harness != "" && st.Meta.SessionID != "" {
		all = append(all, harnessSession{st.Meta.Harness, st.Meta.SessionID, st.Meta.CreatedAt})
	}
	all = slices.DeleteFunc(all, func(s harnessSession) bool { return strings.HasPrefix(s.ID, launchSessionPrefix) })
	if len(all) == 0 {
		return "", ""
	}
	// Journal times are milliseconds, session times nanoseconds, both UTC
	// RFC 3339 with a Z: compared as times, not strings. Of equal times the
	// later in journal order wins (two events in one millisecond).
	last := all[0]
	for _, s := range all[1:] {
		if compareTimes(s.At, last.At) >= 0 {
			last = s
		}
	}
	return last.Harness, last.ID
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// outcome maps a babysit launch's end to its exit code: the run's status
// first, then what ended the loop.
func outcome(status string, capped bool) int {
	switch status {
	case run.StatusCompleted:
		return ExitCompleted
	case run.StatusFailed, run.StatusHalted:
		return ExitFailed
	}
	if capped {
		return ExitCap
	}
	return ExitUnfinished
}

// stopChecks returns the STOP_HOOK_INVOKED events of a run after the
// first skip events.
func stopChecks(st *run.State, skip int) []journal.Event {
	var out []journal.Event
	for i, ev := range st.Journal.Events {
		if i >= skip && ev.Type == journal.StopHookInvoked {
			out = append(out, ev)
		}
	}
	return out
}

// stopCapped says whether the last stop check of a launch ended the loop
// by a cap: the session's iteration cap (row max-iterations), or a block
// the harness did not obey (the stop hook's cap of blocks in a row turned
// it into a stop, or the harness's own turn limit ended the session).
func stopCapped(checks []journal.Event) bool {
	if len(checks) == 0 {
		return false
	}
	decision, row := stopDecision(checks[len(checks)-1])
	return row == session.RowMaxIterations || decision == "block"
}

// stopDecision is a STOP_HOOK_INVOKED event's decision and row.
func stopDecision(ev journal.Event) (decision, row string) {
	var d struct {
		Decision string `json:"decision"`
		Row      string `json:"row"`
	}
	json.Unmarshal(ev.Data, &d)
	return d.Decision, d.Row
}

// onlyBreakpoints says whether every pending effect of the run is a breakpoint.
func onlyBreakpoints(st *run.State) bool {
	p := st.Pending()
	for _, e := range p {
		if e.Kind != "breakpoint" {
			return false
		}
	}
	return len(p) > 0
}

// compareTimes orders two RFC 3339 times; unparsable ones come first.
func compareTimes(a, b string) int {
	ta, ea := time.Parse(time.RFC3339Nano, a)
	tb, eb := time.Parse(time.RFC3339Nano, b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	return ta.Compare(tb)
}

// openRun creates or loads the launch's run and sets what the harness
// gets: the run directory in BabysitEnv, the prompt, and the session to
// resume when the run's last session is this harness's.
func (l *launcher) openRun() error {
	o := l.o
	st, err := o.Babysit.open(context.Background(), o.Spec.Harness, l.vals.Workspace)
	if err != nil {
		return err
	}
	l.run, l.journalStart = st, len(st.Journal.Events)
	// While this launch lives it drives the run, also between two harness
	// sessions (sitter observe shows it working, not orphaned).
	unmark, err := run.MarkLaunch(st.Dir, os.Getpid())
	if err != nil {
		return err
	}
	l.undo = append(l.undo, unmark)
	verb := "created"
	if o.Babysit.RunID != "" {
		verb = "resumed"
		if id := l.resumable(st); id != "" {
			l.harnessSession = id
			if o.Mode == BridgeHooks {
				// The emulated lifecycle speaks for the resumed session.
				l.vals.Session = id
			}
		}
	}
	l.emit("babysit_run", "event", verb, "runId", st.Meta.RunID, "runDir", st.Dir, "status", st.Status, "resumeSession", l.harnessSession)
	l.sitterCmd = "sitter"
	if o.SitterBin != "" {
		l.sitterCmd = shellQuote(o.SitterBin)
	}
	prompt := BabysitPrompt(st.Meta.RunID, st.Dir, l.sitterCmd)
	if o.Prompt != "" {
		prompt += "\n\n" + o.Prompt
	}
	l.vals.Prompt = prompt
	l.env = append(slices.DeleteFunc(l.env, func(kv string) bool { return strings.HasPrefix(kv, BabysitEnv+"=") }), BabysitEnv+"="+st.Dir)
	if o.Mode == AgentDriven && o.MaxIterations > 0 && l.maxExplicit {
		// The stop hook's cap of blocks in a row is the loop's cap. It
		// counts a chain by the harness's stop_hook_active, which not
		// every harness reports on each continuation (Gemini CLI's
		// retried turns did not), so sitter also ends the harness once
		// the run's journal shows more blocks than the cap.
		l.env = append(slices.DeleteFunc(l.env, func(kv string) bool { return strings.HasPrefix(kv, "SITTER_STOP_CAP=") }),
			fmt.Sprintf("SITTER_STOP_CAP=%d", o.MaxIterations))
		l.watch = l.watchBlocks
	}
	return nil
}

// watchBlocks says that the harness must be ended when the stop hook has
// blocked more than --max-iterations times since the launch began.
func (l *launcher) watchBlocks() string {
	j, err := journal.Load(filepath.Join(l.run.Dir, run.JournalDir))
	if err != nil {
		return ""
	}
	n := 0
	for i, ev := range j.Events {
		if i >= l.journalStart && ev.Type == journal.StopHookInvoked && stopBlocked(ev) {
			n++
		}
	}
	if n <= l.o.MaxIterations {
		return ""
	}
	l.capped = true
	return fmt.Sprintf("the stop hook blocked %d times, more than --max-iterations %d", n, l.o.MaxIterations)
}

func stopBlocked(ev journal.Event) bool {
	decision, _ := stopDecision(ev)
	return decision == "block"
}

// agentDriven runs the harness once on the run: its own stop hook (the
// babysitter plugin's) drives the loop. A session that cannot be resumed
// is replaced by a new one.
func (l *launcher) agentDriven() (int, error) {
	which := Headless
	if l.harnessSession != "" {
		which = ResumeID
	}
	code, err := l.spawn(which, 1)
	if err == nil && which == ResumeID && code != 0 && !l.timedOut && l.resumeFailed(code) {
		code, err = l.spawn(Headless, 2)
	}
	return code, err
}

// resumable is the session of this harness that drove run st last, if
// the harness can resume a session by id; "" otherwise.
func (l *launcher) resumable(st *run.State) string {
	if h, id := LastSession(st, UserStateDir(l.o.Env)); h == l.o.Spec.Harness && len(l.o.Spec.ResumeID) > 0 {
		return id
	}
	return ""
}

// babysitAgentDriven drives the run in agent-driven mode: the harness
// once, and again each time an interactive run's breakpoints, which ended
// its session, have been answered (resuming the session that drove the
// run, as --run-id does).
func (l *launcher) babysitAgentDriven() (int, error) {
	from := l.journalStart
	code, err := l.agentDriven()
	for err == nil && !l.timedOut && l.awaitBreakpoints(from) {
		from = len(l.run.Journal.Events)
		l.harnessSession = l.resumable(l.run)
		l.emit("babysit_resume", "runId", l.run.Meta.RunID, "resumeSession", l.harnessSession)
		code, err = l.agentDriven()
	}
	return code, err
}

// awaitBreakpoints is asked when the harness has stopped. When the run is
// interactive and only breakpoints are pending, it says once what waits
// and how to answer, then waits (reading the run's journal every
// breakpointPoll) until no breakpoint is pending, and reports true: the
// launch goes on. So it does, without waiting, when the session's last
// stop check (journal events from index from on) let it stop for
// breakpoints that a human has answered since, before the harness exited.
// A non-interactive run, a run with other work or none, --timeout
// (l.timedOut) and a signal give false.
func (l *launcher) awaitBreakpoints(from int) bool {
	st, err := run.Load(l.run.Dir)
	if err != nil {
		return false
	}
	l.run = st
	if st.Meta.NonInteractive || st.Terminal() {
		return false
	}
	if !onlyBreakpoints(st) {
		if checks := stopChecks(st, from); len(st.Pending()) == 0 && len(checks) > 0 && stoppedForBreakpoints(checks[len(checks)-1]) {
			l.emit("breakpoint_answered", "runId", st.Meta.RunID)
			return true
		}
		return false
	}
	var waiting []map[string]string
	for _, e := range st.Pending() {
		label := e.Label
		if label == "" {
			label = e.TaskID
		}
		waiting = append(waiting, map[string]string{"effectId": e.EffectID, "label": label})
		fmt.Fprintf(l.o.Stderr, "sitter launch: run %s waits for breakpoint %s (%s): answer it in `sitter observe` or with `sitter task post %s %s …`\n",
			st.Meta.RunID, e.EffectID, label, shellQuote(st.Dir), e.EffectID)
	}
	l.emit("breakpoint_wait", "runId", st.Meta.RunID, "runDir", st.Dir, "breakpoints", waiting)
	var timeout <-chan time.Time
	if !l.deadline.IsZero() {
		t := time.NewTimer(time.Until(l.deadline))
		defer t.Stop()
		timeout = t.C
	}
	tick := time.NewTicker(breakpointPoll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			st, err := run.Load(l.run.Dir)
			if err != nil {
				continue // a write in progress: read again
			}
			l.run = st
			if st.Terminal() {
				return false
			}
			if !slices.ContainsFunc(st.Pending(), func(e *run.Effect) bool { return e.Kind == "breakpoint" }) {
				l.emit("breakpoint_answered", "runId", st.Meta.RunID)
				return true
			}
		case s := <-l.sigs:
			l.emit("signal", "signal", s.String())
			return false
		case <-timeout:
			l.timedOut = true
			l.emit("timeout", "after", l.o.Timeout.String(), "waiting", "breakpoint")
			return false
		}
	}
}

// stoppedForBreakpoints says whether a stop check let the session stop
// because only breakpoints were pending.
func stoppedForBreakpoints(check journal.Event) bool {
	decision, row := stopDecision(check)
	return decision == "allow" && row == session.RowBreakpoints
}

// breakpointPoll is how often a launch waiting for a breakpoint's answer
// reads the run's journal.
var breakpointPoll = 250 * time.Millisecond

// resumeFailed is called when the harness exited with an error resuming
// the run's last session (gone from its store, say): the launch goes on
// in a new session.
func (l *launcher) resumeFailed(code int) bool {
	l.emit("resume_failed", "session", l.harnessSession, "code", code)
	fmt.Fprintf(l.o.Stderr, "sitter launch: %s exited %d resuming session %s; continuing the run in a new session\n", l.o.Spec.Harness, code, l.harnessSession)
	l.harnessSession = ""
	return true
}

// babysitContinue decides, in bridge-hooks mode, whether the harness is
// run again: while the run is unfinished and has work the agent can do,
// with the stop hook's reason, or the babysit prompt when the hook let
// the session stop (no binding, its cap of blocks in a row).
func (l *launcher) babysitContinue(cont bool, reason string) (bool, string) {
	st, err := run.Load(l.run.Dir)
	if err != nil {
		l.emit("babysit_unreadable", "error", err.Error())
		return false, ""
	}
	l.run = st
	if !st.Terminal() && onlyBreakpoints(st) && l.awaitBreakpoints(l.journalStart) {
		return true, BabysitPrompt(st.Meta.RunID, st.Dir, l.sitterCmd)
	}
	if st.Terminal() || onlyBreakpoints(st) {
		return false, ""
	}
	if cont && reason != "" {
		return true, reason
	}
	return true, BabysitPrompt(st.Meta.RunID, st.Dir, l.sitterCmd)
}

// babysitEnd reads the run once the harness is done and turns its status
// into the exit code.
func (l *launcher) babysitEnd(code int) (int, error) {
	st, err := run.Load(l.run.Dir)
	if err != nil {
		return ExitFailed, fmt.Errorf("run %s: %v", l.run.Meta.RunID, err)
	}
	checks := stopChecks(st, l.journalStart)
	if l.o.Mode == AgentDriven && stopCapped(checks) {
		l.capped = true
	}
	session := l.harnessSession
	for i := len(checks) - 1; i >= 0 && session == ""; i-- {
		var d struct{ Harness, SessionID string }
		if json.Unmarshal(checks[i].Data, &d) == nil && d.Harness == l.o.Spec.Harness && !strings.HasPrefix(d.SessionID, launchSessionPrefix) {
			session = d.SessionID
		}
	}
	out := outcome(st.Status, l.capped)
	why := st.Status
	switch {
	case l.timedOut:
		out, why = ExitTimeout, "timed out after "+l.o.Timeout.String()
	case out == ExitCap:
		why = "stopped by the iteration cap"
	case out == ExitUnfinished && onlyBreakpoints(st):
		why = "waiting for a breakpoint (a human must answer)"
	case out == ExitUnfinished:
		why = fmt.Sprintf("unfinished (status %s) after the harness exited %d", st.Status, code)
	}
	resume := l.o.Sessions.ResumeCommand(session)
	l.emit("babysit", "runId", st.Meta.RunID, "runDir", st.Dir, "status", st.Status, "code", out, "why", why,
		"harnessCode", code, "stopChecks", len(checks), "harnessSession", session, "resume", resume)
	msg := fmt.Sprintf("sitter launch: run %s %s (exit %d)", st.Meta.RunID, why, out)
	if session != "" {
		msg += "; harness session " + session
		if resume != "" {
			msg += " (" + resume + ")"
		}
	}
	if out == ExitCap || out == ExitUnfinished || out == ExitTimeout {
		msg += fmt.Sprintf("; continue with: sitter launch %s --run-id %s", l.o.Spec.Harness, st.Meta.RunID)
	}
	fmt.Fprintln(l.o.Stderr, msg)
	return out, nil
}
