package session

import (
	"context"
	"fmt"
	"io"

	"sitter.dev/sitter/runtime/hook"
)

// StopCheckAnswer is the verb `sitter session stop-check` once its event
// is known: it decides the stop (StopCheck) and writes the answer, a
// canonical block result as one JSON line on stdout, or, when the agent
// may stop, nothing (a userMessage, when the run is left unfinished for a
// reason the user must act on). It returns the exit code. Both binaries answer the verb
// with it: sitter itself for a hook event that names its session (the
// babysitter plugin's stop handler, on every turn of an agent), sitter-host
// for every other call.
func StopCheckAnswer(ctx context.Context, ev hook.Event, stdout, stderr io.Writer) int {
	st, _, err := Read(ev.Harness, ev.Session.ID)
	return StopCheckAnswerState(ctx, ev, st, err, stdout, stderr)
}

// StopCheckAnswerState is StopCheckAnswer on a session state read
// already (see StopCheckState).
func StopCheckAnswerState(ctx context.Context, ev hook.Event, st *State, readErr error, stdout, stderr io.Writer) int {
	d, err := StopCheckState(ctx, ev, st, readErr)
	if err != nil {
		// Never trap an agent because sitter failed: the decision
		// stands, the error is a diagnostic.
		fmt.Fprintf(stderr, "sitter: session stop-check: %v\n", err)
	}
	if !d.Block && d.Say == "" {
		return 0
	}
	b, err := hook.MarshalResult(d.Result(), true)
	if err == nil {
		_, err = stdout.Write(append(b, '\n'))
	}
	if err != nil {
		fmt.Fprintf(stderr, "sitter: session: %v\n", err)
		return 1
	}
	return 0
}
