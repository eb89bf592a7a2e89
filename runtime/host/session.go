package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"sitter.dev/sitter/runtime/hook"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

const sessionUsage = `Usage (hook handlers: the canonical sitter event on stdin, a canonical result on stdout):
  sitter session start [--run-id ID] [--runs-dir D] [--max-iterations N]   bind or resume the event's session
  sitter session bind --run-id ID [--runs-dir D] [--max-iterations N]      make the session drive a run
  sitter session stop-check                                                 decide a stop: block with the next step, or nothing
  sitter session prompt                                                     remind the agent of the bound run (prompt submit)
  sitter session end                                                        stop driving the run (session end; the run stays resumable)
  sitter session state [--json]                                             show the session's state
Without an event on stdin, --harness H --session-id S name the session.
`

// runSession is `sitter session …`. Each verb reads the canonical event
// (runtime/hook.Event) from stdin when there is one; --harness and
// --session-id override it. Output is a canonical hook.Result or nothing.
func runSession(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, sessionUsage)
		return 2
	}
	verb := "session " + args[0]
	f, err := parseFlags(args[1:], "harness session-id run-id runs-dir max-iterations transcript-path", "")
	if err != nil {
		fmt.Fprintf(stderr, "sitter: %s: %v\n%s", verb, err, sessionUsage)
		return 2
	}
	ev, err := readEvent(stdin)
	if err != nil {
		return fail(stderr, verb, err)
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
	max := 0
	if v := f.vals["max-iterations"]; v != "" {
		if max, err = strconv.Atoi(v); err != nil || max < 0 {
			return fail(stderr, verb, fmt.Errorf("--max-iterations %q is not a count", v))
		}
	}
	ctx := context.Background()
	switch args[0] {
	case "start":
		if id := f.vals["run-id"]; id != "" {
			return sessionBind(ev, id, f.runsDir(), max, stdout, stderr, verb)
		}
		st, resumed, _, err := session.Start(ev.Harness, ev.Session.ID, ev.Session.Cwd)
		if err != nil {
			return fail(stderr, verb, err)
		}
		if !resumed || !st.Active || st.RunDir == "" {
			return 0
		}
		status := "unknown"
		if rs, err := runs.Load(st.RunDir); err == nil {
			status = rs.Status
		}
		return writeResult(stdout, stderr, hook.Result{AdditionalContext: fmt.Sprintf(
			"Babysitter run %s (status %s) is bound to this session. Continue it: `sitter run iterate %s --json`, execute the effects it lists, post their results with `sitter task post`, and iterate again.",
			st.RunID, status, st.RunDir)})
	case "bind":
		id := f.vals["run-id"]
		if id == "" {
			return fail(stderr, verb, fmt.Errorf("--run-id is required"))
		}
		return sessionBind(ev, id, f.runsDir(), max, stdout, stderr, verb)
	case "stop-check":
		d, err := session.StopCheck(ctx, ev)
		if err != nil {
			// Never trap an agent because sitter failed: the decision
			// stands, the error is a diagnostic.
			fmt.Fprintf(stderr, "sitter: %s: %v\n", verb, err)
		}
		if !d.Block {
			return 0
		}
		return writeResult(stdout, stderr, d.Result())
	case "prompt":
		// userPromptSubmit: while a run is bound, remind the agent of it,
		// so a new prompt does not silently abandon the run.
		st, _, err := session.Read(ev.Harness, ev.Session.ID)
		if err != nil {
			return fail(stderr, verb, err)
		}
		if st == nil || !st.Active || st.RunDir == "" {
			return 0
		}
		return writeResult(stdout, stderr, hook.Result{AdditionalContext: fmt.Sprintf(
			"Babysitter run %s is bound to this session (iteration %d of %d). If this prompt is about it, continue with `sitter run iterate %s --json`.",
			st.RunID, st.Iteration, st.MaxIterations, st.RunDir)})
	case "end":
		// sessionEnd: the session stops driving its run; the run itself
		// stays resumable from another session or harness.
		st, _, err := session.Read(ev.Harness, ev.Session.ID)
		if err != nil {
			return fail(stderr, verb, err)
		}
		if st == nil || !st.Active {
			return 0
		}
		st.Active = false
		st.EndedBecause = "session-end"
		if _, err := session.Write(st); err != nil {
			return fail(stderr, verb, err)
		}
		return 0
	case "state":
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
	fmt.Fprintf(stderr, "sitter: unknown command %q\n%s", verb, sessionUsage)
	return 2
}

func sessionBind(ev hook.Event, runID, runsDir string, max int, stdout, stderr io.Writer, verb string) int {
	dir, err := runs.ResolveDir(runID, runsDir)
	if err != nil {
		return fail(stderr, verb, err)
	}
	m, err := runs.ReadMetadata(dir)
	if err != nil {
		return fail(stderr, verb, err)
	}
	st, _, err := session.Bind(ev.Harness, ev.Session.ID, m.RunID, dir, max)
	if err != nil {
		return fail(stderr, verb, err)
	}
	return writeResult(stdout, stderr, hook.Result{AdditionalContext: fmt.Sprintf(
		"Babysitter run %s is bound to this session (at most %d stop-hook iterations).", st.RunID, st.MaxIterations)})
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
	b, err := json.Marshal(r)
	if err != nil {
		return fail(stderr, "session", err)
	}
	if _, err := stdout.Write(append(b, '\n')); err != nil {
		return fail(stderr, "session", err)
	}
	return 0
}
