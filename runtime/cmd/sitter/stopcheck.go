package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/sibling"
	"sitter.dev/sitter/runtime/session"
	"sitter.dev/sitter/runtime/transcript"
)

// isStopCheck says whether args are the babysitter plugin's stop handler,
// `sitter session stop-check` with nothing more.
func isStopCheck(args []string) bool {
	return len(args) == 2 && args[0] == "session" && args[1] == "stop-check"
}

// stopCheck answers the babysitter plugin's stop handler here rather than
// in sitter-host: it runs at every turn of an agent, and starting the host
// binary costs more than the check itself (make bench: stopbench). Only a
// hook event that names its harness and session is answered here, with
// the same code as sitter-host's (session.StopCheckAnswer); anything else
// (no event, an event without its session, stdin that is no event) goes to
// sitter-host with the same stdin, which finds the session or reports the
// problem as it does for every verb. A session bound to a run of a shared
// store goes to sitter-host too: the run is in the store, and the hook
// binary links no network client.
func stopCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, isFile := stdin.(*os.File)
	if stdin == nil || isFile && isTerminal(f) {
		return execHost(args, stderr) // no event: nothing read, nothing to pass on
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "sitter: session stop-check: %v\n", err)
		return 1
	}
	ev, err := hook.DecodeEvent(data)
	if err != nil || ev.Harness == "" || ev.Session.ID == "" {
		return runHost(args, data, stdout, stderr)
	}
	st, _, readErr := session.Read(ev.Harness, ev.Session.ID)
	if readErr == nil && st != nil && st.Active && st.Store != "" {
		return runHost(args, data, stdout, stderr)
	}
	// The stop check reads a transcript through the atlas's record shapes
	// when the event carries no last message (a static table: an
	// assignment).
	transcript.Specs = gentranscript.Specs
	return session.StopCheckAnswerState(context.Background(), ev, st, readErr, stdout, stderr)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runHost runs sitter-host as a child with data as its stdin (this
// process has read its own) and passes its exit code on.
func runHost(args []string, data []byte, stdout, stderr io.Writer) int {
	bin := sibling.Find("sitter-host")
	if bin == "" {
		return execHost(args, stderr) // reports the missing binary
	}
	cmd := exec.Command(bin, args...)
	cmd.Args[0] = "sitter-host"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(data), stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	fmt.Fprintf(stderr, "sitter %s: %s: %v\n", args[0], bin, err)
	return 1
}
