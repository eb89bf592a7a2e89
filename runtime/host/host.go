// Package host is everything `sitter` does besides answering hook calls:
// runs, sessions, plugins, launch, transcripts, checkpoints, audit,
// readiness. It is the sitter-host binary, which the sitter binary execs
// for these verbs, so that a hook call starts a binary holding only the
// hook path (see runtime/cmd/sitter).
package host

import (
	"fmt"
	"io"

	"sitter.dev/sitter/runtime/adapter"
)

// Run is one `sitter <verb> …` command other than hook, guard, version and
// help; reg is called only by the verbs that need the registry.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "sitter-host: a verb is needed; run 'sitter help'")
		return 2
	}
	switch args[0] {
	case "atlas":
		return runAtlas(args[1:], stdout, stderr, reg)
	case "plugin":
		return runPlugin(args[1:], stdout, stderr, reg)
	case "run":
		return runRun(args[1:], stdout, stderr)
	case "task":
		return runTask(args[1:], stdout, stderr)
	case "session":
		return runSession(args[1:], stdin, stdout, stderr, reg)
	case "instructions":
		return runInstructions(args[1:], stdout, stderr, reg)
	case "proxy":
		return runProxy(args[1:], stdout, stderr)
	case "launch":
		return runLaunch(args[1:], stdin, stdout, stderr, reg)
	case "agents":
		return runAgents(args[1:], stdout, stderr, reg)
	case "doctor":
		return runDoctor(args[1:], stdout, stderr, reg)
	case "checkpoint":
		return runCheckpoint(args[1:], stdin, stdout, stderr)
	case "audit":
		return runAudit(args[1:], stdout, stderr)
	case "transcript":
		return runTranscript(args[1:], stdout, stderr, reg)
	case "observe":
		return runObserve(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "sitter: unknown command %q; run 'sitter help'\n", args[0])
	return 2
}
