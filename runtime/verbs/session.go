package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// sessionNote says how the event-reading session verbs find their session.
const sessionNote = `A hook handler: the canonical sitter event on stdin, a canonical result on
stdout. Without an event on stdin, --harness H --session-id S name the session;
without those, the session is the one the command runs in (SITTER_HARNESS and
SITTER_SESSION_ID, else the harness process above it that the babysitter plugin
saw start), so an agent can type these verbs in its own shell. Only an event
on stdin (a hook's call) records the process above it as its session's harness
process; piped by hand from a terminal, it would record the terminal, whose
later commands would then find that session: name a session by hand with
--harness and --session-id, which record nothing of the kind. A harness is an
id or alias that sitter atlas list names.`

// newSessionCmd is `sitter session …`. Each verb but list reads the
// canonical event (runtime/hook.Event) from stdin when there is one;
// --harness and --session-id override it. Output is a canonical
// hook.Result or nothing.
func newSessionCmd(e *env) *cobra.Command {
	ctx := context.Background()
	ev := func(use, short, example string, more []string, run func(ev hook.Event, f *cmdFlags, max int, via string) int) *cobra.Command {
		flags := append([]string{"harness=the session's `HARNESS` (overrides the event's)", "session-id=the session's `ID` (overrides the event's)",
			"transcript-path=the session's transcript `FILE` (overrides the event's)"}, more...)
		c := flagged(use, short, example, flags, func(c *cobra.Command, f *cmdFlags) int {
			verb := "session " + c.Name()
			ev, via, max, code := sessionEvent(e, f, verb)
			if code >= 0 {
				return code
			}
			return run(ev, f, max, via)
		})
		c.Long = short + ".\n\n" + sessionNote
		c.Args = nArgs(0, 0, "")
		return c
	}
	runFlags := []string{"run-id=the run to bind, `ID` (an id in the runs dir, or a run directory)", runsDirFlag,
		"max-iterations=at most `N` stop-hook iterations before the session may stop (default 256)", storeFlag}
	list := flagged("list", "List the sessions of this project (--all: every project)",
		"  sitter session list\n  sitter session list --all --json",
		[]string{"all?every project's sessions", "json?print the sessions as JSON"},
		func(_ *cobra.Command, f *cmdFlags) int { return sessionList(f, e.stdout, e.stderr) })
	list.Args = nArgs(0, 0, "")
	return group(&cobra.Command{
		Use:     "session",
		Short:   "Session loop handlers of the babysitter plugin, and the sessions' state",
		Long:    "The session verbs are the babysitter plugin's handlers.\n\n" + sessionNote,
		Example: "  sitter session start --run-id 01JB7ZK3Q8X4M2N5P6R7S8T9V0\n  sitter session list --all",
	},
		ev("start", "Begin or resume the event's session; with --run-id, bind it to that run",
			"  sitter session start < event.json\n  sitter session start --run-id 01JB7ZK3Q8X4M2N5P6R7S8T9V0", runFlags,
			func(ev hook.Event, f *cmdFlags, max int, via string) int {
				return sessionStart(ctx, ev, f, max, via, e.stdout, e.stderr, e.reg)
			}),
		ev("bind", "Make the session drive a run (resume a run)",
			"  sitter session bind --run-id 01JB7ZK3Q8X4M2N5P6R7S8T9V0\n  sitter session bind --run-id R1 --runs-dir runs --harness codex --session-id s-1", runFlags,
			func(ev hook.Event, f *cmdFlags, max int, via string) int {
				id := f.vals["run-id"]
				if id == "" {
					return fail(e.stderr, "session bind", fmt.Errorf("--run-id is required"))
				}
				return sessionBindResult(ctx, ev, id, f.vals["runs-dir"], f.storeURL(), max, via, e.stdout, e.stderr, "session bind")
			}),
		ev("stop-check", "Decide a stop: block with the next step, or let the agent stop (saying why when the run is left unfinished)",
			"  sitter session stop-check < stop-event.json\n  sitter session stop-check --harness claude-code --session-id s-1", nil,
			func(ev hook.Event, _ *cmdFlags, _ int, _ string) int {
				return stopCheck(ctx, ev, e.stdout, e.stderr)
			}),
		ev("prompt", "Remind the agent of the bound run (prompt submit)",
			"  sitter session prompt < prompt-event.json\n  sitter session prompt --harness claude-code --session-id s-1", nil,
			func(ev hook.Event, _ *cmdFlags, _ int, _ string) int {
				return sessionPrompt(ev, e.stdout, e.stderr, e.reg)
			}),
		ev("end", "Stop driving the run (session end; the run stays resumable)",
			"  sitter session end < end-event.json\n  sitter session end --harness claude-code --session-id s-1", nil,
			func(ev hook.Event, _ *cmdFlags, _ int, _ string) int { return sessionEnd(ev, e.stderr) }),
		ev("state", "Show the session's state",
			"  sitter session state\n  sitter session state --harness claude-code --session-id s-1 --json", []string{"json?print the state as JSON"},
			func(ev hook.Event, f *cmdFlags, _ int, _ string) int { return sessionShow(ev, f, e.stdout, e.stderr) }),
		list,
	)
}

// sessionEvent is the session a verb acts on: the event on stdin, the
// flags over it, else the session the command runs in; code is -1 when
// there is one, else the exit status of why not.
func sessionEvent(e *env, f *cmdFlags, verb string) (ev hook.Event, via string, max, code int) {
	ev, err := readEvent(e.stdin)
	if err != nil {
		return ev, "", 0, fail(e.stderr, verb, err)
	}
	// A hook's event names its session; flags alone are someone typing
	// (a person, an agent): they record no harness process (the nearest
	// one above a terminal is no harness).
	via = "flags"
	if ev.Harness != "" && ev.Session.ID != "" {
		via = "hook"
	}
	if h := f.vals["harness"]; h != "" {
		ev.Harness = h
	}
	if s := f.vals["session-id"]; s != "" {
		ev.Session.ID = s
	}
	if t := f.vals["transcript-path"]; t != "" {
		ev.Session.TranscriptPath = t
	}
	if ev.Harness == "" || ev.Session.ID == "" {
		// Typed by an agent in its shell: the session it runs in.
		c, err := session.Discover()
		if err != nil {
			return ev, "", 0, fail(e.stderr, verb, err)
		}
		ev.Harness, ev.Session.ID, via = c.Harness, c.SessionID, c.Via
		if ev.Session.Cwd == "" {
			ev.Session.Cwd = c.Cwd
		}
	}
	// The session is keyed by the harness's id: an alias names the same
	// session, a name the atlas does not know names none.
	d, _, err := e.reg().Resolve(ev.Harness)
	if err != nil {
		if f.vals["harness"] != "" {
			return ev, "", 0, flagFail(e.stderr, f, fmt.Errorf("--harness: %w", err))
		}
		return ev, "", 0, fail(e.stderr, verb, err) // the event's harness: no mistake of the command line
	}
	ev.Harness = d.ID
	if v := f.vals["max-iterations"]; v != "" {
		if max, err = strconv.Atoi(v); err != nil || max < 0 {
			return ev, "", 0, flagFail(e.stderr, f, fmt.Errorf("--max-iterations %q is not a count", v))
		}
	}
	return ev, via, max, -1
}

// sessionEnd: the session stops driving its run; the run itself stays
// resumable from another session or harness.
func sessionEnd(ev hook.Event, stderr io.Writer) int {
	const verb = "session end"
	if _, _, err := session.Update(ev.Harness, ev.Session.ID, func(st *session.State) (*session.State, error) {
		if st == nil || !st.Active {
			return nil, nil
		}
		st.Active, st.EndedBecause = false, "session-end"
		return st, nil
	}); err != nil {
		return fail(stderr, verb, err)
	}
	return 0
}

// sessionShow is `session state`.
func sessionShow(ev hook.Event, f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "session state"
	st, p, err := session.Read(ev.Harness, ev.Session.ID)
	if err != nil {
		return fail(stderr, verb, err)
	}
	if st == nil {
		fmt.Fprintf(stderr, "sitter: %s: no state for session %s of %s (%s)\n", verb, ev.Session.ID, ev.Harness, p)
		return 1
	}
	return out(stdout, stderr, f.bools["json"], st, fmt.Sprintf("[session] %s/%s active=%t run=%s iteration=%d/%d file=%s\n",
		st.Harness, st.SessionID, st.Active, st.RunID, st.Iteration, st.MaxIterations, p))
}

// sessionStart is the session-start handler: it records the harness
// process (so the agent's own commands find this session), hands the
// session to the agent's shell where the atlas says how (agentEnv), binds
// a run when asked (--run-id, or SITTER_BABYSIT_RUN from sitter launch
// --babysit), and tells the agent its harness and session.
func sessionStart(ctx context.Context, ev hook.Event, f *cmdFlags, max int, via string, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	const verb = "session start"
	if via == "hook" {
		if err := session.RecordAnchor(ev.Harness, ev.Session.ID, ev.Session.Cwd); err != nil {
			fmt.Fprintf(stderr, "sitter: %s: recording the harness process: %v\n", verb, err)
		}
		if err := writeAgentEnv(ev, reg); err != nil {
			fmt.Fprintf(stderr, "sitter: %s: %v\n", verb, err)
		}
	}
	if id := f.vals["run-id"]; id != "" {
		return sessionBindResult(ctx, ev, id, f.vals["runs-dir"], f.storeURL(), max, via, stdout, stderr, verb)
	}
	if dir := os.Getenv("SITTER_BABYSIT_RUN"); dir != "" {
		// sitter launch --babysit: the run this harness was started on.
		if st, _, _ := session.Read(ev.Harness, ev.Session.ID); st == nil || !st.Active || st.RunDir != dir {
			return sessionBindResult(ctx, ev, dir, f.vals["runs-dir"], "", max, "launch", stdout, stderr, verb)
		}
	}
	st, _, _, err := session.Start(ev.Harness, ev.Session.ID, ev.Session.Cwd)
	if err != nil {
		return fail(stderr, verb, err)
	}
	if resumable(st) {
		// The same session again (a resumed conversation): it drives the
		// run it let go of when it ended, unless another session took it.
		ref := st.RunDir
		if st.Store != "" {
			ref = st.RunID
		}
		return sessionBindResult(ctx, ev, ref, "", st.Store, st.MaxIterations, "resume", stdout, stderr, verb)
	}
	if st.Active && st.RunDir != "" {
		status := "unknown"
		if rs, err := runs.Load(st.RunDir); err == nil {
			status = rs.Status
		}
		return writeResult(stdout, stderr, hook.Result{AdditionalContext: fmt.Sprintf(
			"Babysitter run %s (status %s) is bound to this session (%s session %s). Continue it: `sitter run iterate %s --json`, execute the effects it lists, post their results with `sitter task post`, and iterate again.",
			st.RunID, status, ev.Harness, ev.Session.ID, st.RunRef())})
	}
	if !canTell(reg, ev.Harness, "sessionStart") {
		return 0 // the prompt handler tells instead
	}
	if _, _, err := session.Update(ev.Harness, ev.Session.ID, func(cur *session.State) (*session.State, error) {
		if cur == nil {
			cur = st
		}
		cur.Told = true
		return cur, nil
	}); err != nil {
		return fail(stderr, verb, err)
	}
	return writeResult(stdout, stderr, hook.Result{AdditionalContext: introduce(ev)})
}

// resumable reports whether a session that ended (session end, not the
// loop's own end) left a run that no other session drives and that is
// not finished.
func resumable(st *session.State) bool {
	if st.Active || st.RunDir == "" || st.EndedBecause != "session-end" {
		return false
	}
	all, _ := session.List()
	if session.DriverOf(all, st.RunDir) != nil {
		return false
	}
	rs, err := runs.Load(st.RunDir)
	return err == nil && !rs.Terminal()
}

// introduce tells the agent which harness and session it runs in, so the
// guide it loads is its own harness's.
func introduce(ev hook.Event) string {
	return fmt.Sprintf("Babysitter (sitter) is available in this %s session %s: to orchestrate a task as a babysitter run, use the babysit skill (`sitter instructions babysit --harness %s` prints its guide). A run you create with `sitter run create` is bound to this session.",
		ev.Harness, ev.Session.ID, ev.Harness)
}

// canTell reports whether the harness's events of a phase can add context
// that the model sees (atlas capability addContext) without keeping the
// user's first prompt from running a slash command (atlas
// contextBeforePrompt: the prompt handler tells instead).
func canTell(reg func() *adapter.Registry, harness, phase string) bool {
	d, _, err := reg().Resolve(harness)
	if err != nil {
		return false
	}
	for _, e := range d.Events {
		if e.Phase == phase && slices.Contains(e.Can, "addContext") && !e.ContextBeforePrompt {
			return true
		}
	}
	return false
}

// writeAgentEnv hands SITTER_HARNESS and SITTER_SESSION_ID to the agent's
// shell where the atlas says the harness lets a hook do so.
func writeAgentEnv(ev hook.Event, reg func() *adapter.Registry) error {
	d, _, err := reg().Resolve(ev.Harness)
	if err != nil || d.AgentEnv == nil || d.AgentEnv.Kind != "env-file" {
		return nil
	}
	path := os.Getenv(d.AgentEnv.Variable)
	if path == "" {
		return nil
	}
	if len(ev.Session.ID) > maxExported || strings.IndexByte(ev.Session.ID, 0) >= 0 {
		// An environment this large would make every command the agent
		// runs fail to start; the session is found by ancestry instead.
		return fmt.Errorf("session id of %d bytes not exported to the agent's shell", len(ev.Session.ID))
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", d.AgentEnv.Variable, err)
	}
	_, werr := fmt.Fprintf(fh, "export SITTER_HARNESS=%s\nexport SITTER_SESSION_ID=%s\n", shellQuote(d.ID), shellQuote(ev.Session.ID))
	if err := fh.Close(); werr == nil {
		werr = err
	}
	return werr
}

// maxExported caps what is exported to the agent's shell, as the hook
// engine caps what it exports to handlers.
const maxExported = 4 << 10

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sessionPrompt is the prompt-submit handler: it records the harness
// process too (a harness whose session start hook did not run), tells the
// agent its session once where session start could not, and reminds it of
// a bound run.
func sessionPrompt(ev hook.Event, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	const verb = "session prompt"
	if err := session.RecordAnchor(ev.Harness, ev.Session.ID, ev.Session.Cwd); err != nil {
		fmt.Fprintf(stderr, "sitter: %s: recording the harness process: %v\n", verb, err)
	}
	st, _, err := session.Read(ev.Harness, ev.Session.ID)
	if err != nil {
		return fail(stderr, verb, err)
	}
	if st != nil && st.Active && st.RunDir != "" {
		return writeResult(stdout, stderr, hook.Result{AdditionalContext: fmt.Sprintf(
			"Babysitter run %s is bound to this session (stop-hook iteration %d of %d). If this prompt is about it, continue with `sitter run iterate %s --json`.",
			st.RunID, st.Iteration, st.MaxIterations, st.RunRef())})
	}
	if st != nil && st.Told || canTell(reg, ev.Harness, "sessionStart") {
		return 0 // told already, or session start tells
	}
	// Under the session's lock: a session-start handler running at the
	// same time may bind a run, or tell the agent first.
	tell := false
	if _, _, err := session.Update(ev.Harness, ev.Session.ID, func(cur *session.State) (*session.State, error) {
		if cur == nil {
			cur = session.New(ev.Harness, ev.Session.ID, ev.Session.Cwd)
		}
		if cur.Told {
			return nil, nil
		}
		cur.Told, tell = true, true
		return cur, nil
	}); err != nil {
		return fail(stderr, verb, err)
	}
	if !tell {
		return 0
	}
	return writeResult(stdout, stderr, hook.Result{AdditionalContext: introduce(ev)})
}

// sessionBindResult binds and answers with a context line saying so.
func sessionBindResult(ctx context.Context, ev hook.Event, runID, runsDir, storeURL string, max int, via string, stdout, stderr io.Writer, verb string) int {
	st, err := bindRun(ctx, ev.Harness, ev.Session.ID, ev.Session.Cwd, runID, runsDir, storeURL, max, via)
	if err != nil {
		return fail(stderr, verb, err)
	}
	return writeResult(stdout, stderr, hook.Result{AdditionalContext: fmt.Sprintf(
		"Babysitter run %s is bound to this session (%s session %s; at most %d stop-hook iterations). Continue it: `sitter run iterate %s --json`, execute the effects it lists, post their results with `sitter task post`, and iterate again.",
		st.RunID, st.Harness, st.SessionID, st.MaxIterations, st.RunRef())})
}

// bindRun makes a session drive a run after checking that the run can be
// driven: it exists, belongs to the session's project, reads cleanly and
// is not finished. The binding is journaled in the run (SESSION_BOUND), so
// the journal shows every session that drove it.
func bindRun(ctx context.Context, harness, sessionID, cwd, runID, runsDir, storeURL string, max int, via string) (*session.State, error) {
	if storeURL != "" {
		return storeBind(ctx, harness, sessionID, runID, storeURL, max, via)
	}
	if runsDir == "" {
		// The default runs dir is the session's project's, wherever the
		// handler runs; an explicit one is relative to this command.
		runsDir = runs.DefaultRunsDir()
		if cwd != "" && !filepath.IsAbs(runsDir) {
			runsDir = filepath.Join(cwd, runsDir)
		}
	}
	dir, err := runs.ResolveDir(runID, runsDir)
	if err != nil {
		return nil, fmt.Errorf("no run %q: %w", runID, err)
	}
	if cwd != "" && !within(dir, cwd) {
		return nil, fmt.Errorf("run %s belongs to another project (%s, not under %s): resume it from a session in that project", runID, dir, cwd)
	}
	rs, err := runs.Load(dir)
	if err != nil {
		if text, advised := journal.Advice(err, dir); advised {
			return nil, fmt.Errorf("run %s cannot be read: %s", runID, text)
		}
		return nil, fmt.Errorf("run %s cannot be read (%v): `sitter run repair %s` quarantines damaged journal files", runID, err, dir)
	}
	if rs.Terminal() {
		return nil, fmt.Errorf("run %s is already %s: nothing to drive", rs.Meta.RunID, rs.Status)
	}
	project := cwd
	if project == "" {
		// Named by flags: the project is where the command runs.
		project, _ = os.Getwd()
	}
	st, took, _, err := session.Rebind(harness, sessionID, project, rs.Meta.RunID, dir, max)
	if err != nil {
		return nil, err
	}
	if err := journalBound(ctx, dir, via, st, took); err != nil {
		return st, err
	}
	return st, nil
}

// journalBound journals SESSION_BOUND in the run at dir: the session st
// now drives it, found via via, taking it from the sessions took.
func journalBound(ctx context.Context, dir, via string, st *session.State, took []*session.State) error {
	data := map[string]any{"harness": st.Harness, "sessionId": st.SessionID, "via": via, "maxIterations": st.MaxIterations}
	var prev []map[string]string
	for _, o := range took {
		prev = append(prev, map[string]string{"harness": o.Harness, "sessionId": o.SessionID})
	}
	if len(prev) > 0 {
		data["takenFrom"] = prev
	}
	if _, err := runs.Append(ctx, dir, journal.SessionBound, data); err != nil {
		return fmt.Errorf("journal the binding: %w", err)
	}
	return nil
}

// within reports whether path is dir or below it, symlinks resolved.
func within(path, dir string) bool {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	return hook.Within(path, dir)
}

// sessionList is `sitter session list`: the sessions of this project (or
// every project), newest first.
func sessionList(f *cmdFlags, stdout, stderr io.Writer) int {
	all, err := session.List()
	if err != nil {
		return fail(stderr, "session list", err)
	}
	cwd, _ := os.Getwd()
	rows := []*session.State{}
	var states, iters []string
	wh, ws, wst, wit := len("HARNESS"), len("SESSION"), len("STATE"), len("STOP CHECKS") // columns as wide as their widest cell
	for _, st := range all {
		if !f.bools["all"] && !sessionHere(st, cwd) {
			continue
		}
		rows = append(rows, st)
		state := "idle"
		switch {
		case st.Active:
			state = "driving " + st.RunID
		case st.EndedBecause != "":
			state = "ended (" + st.EndedBecause + ")"
		}
		iter := "iteration " + strconv.Itoa(st.Iteration) + "/" + strconv.Itoa(st.MaxIterations)
		states, iters = append(states, state), append(iters, iter)
		wh, ws, wst, wit = max(wh, len(st.Harness)), max(ws, len(st.SessionID)), max(wst, len(state)), max(wit, len(iter))
	}
	var b strings.Builder
	if len(rows) > 0 {
		fmt.Fprintf(&b, "%-*s  %-*s  %-*s  %-*s  %s\n", wh, "HARNESS", ws, "SESSION", wst, "STATE", wit, "STOP CHECKS", "UPDATED")
	}
	for i, st := range rows {
		fmt.Fprintf(&b, "%-*s  %-*s  %-*s  %-*s  %s\n", wh, st.Harness, ws, st.SessionID, wst, states[i], wit, iters[i], st.UpdatedAt)
	}
	switch {
	case len(rows) > 0 || f.bools["json"]:
	case f.bools["all"]:
		b.WriteString("no sessions\n")
	default:
		b.WriteString("no sessions here (sitter session list --all shows every project)\n")
	}
	return out(stdout, stderr, f.bools["json"], map[string]any{"sessions": rows}, b.String())
}

// sessionHere says whether a session belongs to the project at cwd: its
// own project (recorded from its events, or where the command that bound
// it ran) is cwd, above it or below it, or it drives a run kept below cwd.
func sessionHere(st *session.State, cwd string) bool {
	if st.Cwd != "" && (within(cwd, st.Cwd) || within(st.Cwd, cwd)) {
		return true
	}
	return st.RunDir != "" && st.Store == "" && within(st.RunDir, cwd)
}

// readEvent reads the canonical event from stdin; empty stdin is an empty
// event (flags then name the session).
func readEvent(stdin io.Reader) (hook.Event, error) {
	var ev hook.Event
	if stdin == nil {
		return ev, nil
	}
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return ev, nil // a terminal: no event
		}
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return ev, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return ev, nil
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("stdin is not a canonical sitter event: %w", err)
	}
	return ev, nil
}

// writeResult prints a canonical result as one JSON line.
func writeResult(stdout, stderr io.Writer, r hook.Result) int {
	return writeJSONLine(stdout, stderr, r)
}
