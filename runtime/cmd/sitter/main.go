// Command sitter is the binary every generated hook registration calls:
// `sitter hook <harness> <native-event>` reads the harness's native payload,
// runs the plugin's handlers on the canonical event and answers in the
// harness's native format. `sitter atlas` shows the generated descriptors.
//
// Start-up is on the hot path of every hook call: no init-time work, no
// heavy imports; the registry is built on first use.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
)

const usage = `sitter makes one coding-agent plugin work in every harness.

Usage:
  sitter hook <harness> <native-event> [flags]  answer one hook call (stdin: the native payload)
  sitter atlas list [--json]                    list the harness descriptors
  sitter atlas show <harness> [--json]          show a descriptor and how its name resolved
  sitter run create|iterate|status|events|rebuild-state|repair …   drive a babysitter run (sitter run for help)
  sitter task post|list|show <runDir> …         the effects of a run
  sitter session start|bind|stop-check|state    session loop handlers (canonical event on stdin)
  sitter instructions babysit --harness H       the orchestration guide of the babysit skill
  sitter proxy --provider P [flags]             LLM gateway translating between wire protocols (sitter proxy --help)
  sitter launch <harness> [flags]               run a harness on a provider in one command (sitter launch --help)
  sitter agents list|detect [--dir D] [--json]  adapters; which harnesses a project uses
  sitter doctor [--harness H] [--dir D] [--json]   is each harness ready (binary, version, hooks, config)
  sitter checkpoint list|show|diff|restore <id> [--paths …] [--force]   working-tree checkpoints per session
  sitter audit tail|query [--session S] [--decision D] [--json]   the audit log of hook decisions
  sitter transcript <harness> <path> [--from POS] [--json]   prompts, last answer, files, tokens since POS
  sitter guard                                  built-in guard handler: canonical event on stdin, result on stdout
  sitter plugin install <bundle-or-plugin> --harness H [--scope project|user] [--dir DIR] [--force] [--json]
                                                install a plugin bundle into a harness's config
  sitter plugin uninstall <plugin> --harness H [--scope …] [--dir DIR]   remove only what install added
  sitter plugin verify <bundle-or-dir>... [--json]   check bundles: manifests, paths, hooks, scripts
  sitter version                                print the version
  sitter help                                   print this help

Hook flags (before or after the arguments):
  --handler CMD         run CMD with /bin/sh -c, the canonical event on stdin; repeatable
  --plugin DIR          also run the handlers of DIR/sitter-handlers.json for the event's phase
  --timeout D           time a handler may take before it is killed (default 30s)
  --on-error open|closed
                        what a failing handler, or a hook call sitter cannot answer, becomes:
                        ignored (open, the default) or a deny/block (closed)
  --stop-cap N          stop blocks in a row before sitter lets a session stop
                        (default $SITTER_STOP_CAP, else 20; 0 = no cap)

<harness> is a descriptor id or alias (sitter atlas list). <native-event> "-" or ""
takes the event name from the payload (where the atlas says it is, e.g. hook_event_name).

A hook never breaks its harness: bad input, an unknown harness or event, a missing
argument or an internal error answer the harness's no-op (exit 0, empty stdout) with
one "sitter: " line on stderr; with --on-error closed, a deny or block where the event
can say one.
`

func main() {
	reg := registry.Registry
	if len(os.Args) > 1 && os.Args[1] == "hook" {
		// A hook call builds only the descriptor it names.
		reg = registry.Hooks
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, reg))
}

// run is the whole command; reg is called only by the verbs that need it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "hook":
		return runHook(args[1:], stdin, stdout, stderr, reg)
	case "atlas":
		return runAtlas(args[1:], stdout, stderr, reg)
	case "plugin":
		return runPlugin(args[1:], stdout, stderr, reg)
	case "run":
		return runRun(args[1:], stdout, stderr)
	case "task":
		return runTask(args[1:], stdout, stderr)
	case "session":
		return runSession(args[1:], stdin, stdout, stderr)
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
	case "guard":
		return runGuard(args[1:], stdin, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version())
		return 0
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "sitter: unknown command %q; run 'sitter help'\n", args[0])
	return 2
}

func version() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("sitter %s (hook contract %s, %s)", v, hook.Version, runtime.Version())
}
