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
	"syscall"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/sibling"
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
  sitter observe [--dir D]... [--listen A] [--open]   live dashboard of runs, sessions and hook decisions
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
  --redact              --handler handlers get the event with secrets (API keys, tokens,
                        private keys, key=value credentials) masked
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
	os.Exit(sitterMain(os.Args[1:]))
}

// sitterMain is the process: the hook path (and the babysitter plugin's
// stop check, a hook handler too) runs here, every other verb in the
// sitter-host binary, which replaces this process.
func sitterMain(args []string) int {
	reg := registry.Registry
	if len(args) > 0 && args[0] == "hook" {
		// A hook call builds only the descriptor it names.
		reg = registry.Hooks
	}
	return run(args, os.Stdin, os.Stdout, os.Stderr, reg)
}

// execHost replaces this process with sitter-host (next to this binary,
// else on PATH), so signals, stdin and the exit code pass through as if
// the verb ran here. Every verb but this binary's own goes there: the
// verbs live in a second binary because every package a binary links
// costs each hook call start-up time (make bench: hookbench), and
// sitter-host's own switch is the one list of them.
func execHost(args []string, stderr io.Writer) int {
	bin := sibling.Find("sitter-host")
	if bin == "" {
		fmt.Fprintf(stderr, "sitter %s: sitter-host not found next to sitter or on PATH (it runs every verb but hook and guard): build it with `make build` (go build ./runtime/cmd/sitter-host)\n", args[0])
		return 1
	}
	err := syscall.Exec(bin, append([]string{"sitter-host"}, args...), os.Environ())
	fmt.Fprintf(stderr, "sitter %s: exec %s: %v\n", args[0], bin, err)
	return 1
}

// run answers the verbs of this binary and hands every other to
// sitter-host; reg is called only by the verbs that need it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "hook":
		return runHook(args[1:], stdin, stdout, stderr, reg)
	case "guard":
		return runGuard(args[1:], stdin, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version())
		return 0
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	if isStopCheck(args) {
		return stopCheck(args, stdin, stdout, stderr)
	}
	return execHost(args, stderr)
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
