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
	"strconv"
	"strings"
	"syscall"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/hookcli"
	"sitter.dev/sitter/runtime/internal/sibling"
)

// fallbackUsage is printed when sitter-host, which prints the full list
// of verbs, is missing.
const fallbackUsage = `sitter makes one coding-agent plugin work in every harness.

Usage:
  sitter hook <harness> <native-event> [flags]   answer one hook call (sitter hook --help)
  sitter guard                                   the built-in guard handler
  sitter version [--json]                        print the version and commit

Every other verb (atlas, plugin, run, task, session, launch, doctor, …) and
the full help are in sitter-host, which was not found next to sitter or on
PATH: build it with ` + "`make build`" + `.
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
// sitter-host (help too: its command tree lists every verb, these
// included); reg is called only by the verbs that need it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	if len(args) == 0 {
		if sibling.Find("sitter-host") == "" {
			fmt.Fprint(stderr, fallbackUsage)
			return 2
		}
		return execHost(args, stderr)
	}
	switch args[0] {
	case "hook":
		return runHook(args[1:], stdin, stdout, stderr, reg)
	case "guard":
		return runGuard(args[1:], stdin, stdout, stderr)
	case "version", "--version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "--help", "-h":
		if sibling.Find("sitter-host") == "" {
			fmt.Fprint(stdout, fallbackUsage)
			return 0
		}
	}
	if isStopCheck(args) {
		return stopCheck(args, stdin, stdout, stderr)
	}
	return execHost(args, stderr)
}

// runVersion is `sitter version [--json]`, parsed as the cobra verbs
// are: --json=BOOL too, and -- ends the flags (version takes no
// arguments).
func runVersion(args []string, stdout, stderr io.Writer) int {
	asJSON := false
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sitter: version: "+format+"\n\n%s", append(a, hookcli.VersionUsage())...)
		return 2
	}
	for i, a := range args {
		if a == "--" {
			if rest := args[i+1:]; len(rest) > 0 {
				return usage("unexpected arguments %q", rest)
			}
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		switch {
		case name == "--json":
			asJSON = true
			if hasVal {
				b, err := strconv.ParseBool(val)
				if err != nil {
					return usage("invalid argument %q for \"--json\" flag: want true or false", val)
				}
				asJSON = b
			}
		case (a == "-h" || a == "--help") && !hasVal:
			fmt.Fprint(stdout, hookcli.VersionUsage())
			return 0
		case strings.HasPrefix(a, "-"):
			return usage("unknown flag: %s", name)
		default:
			return usage("unexpected arguments %q", args[i:])
		}
	}
	if err := hookcli.PrintVersion(stdout, version(), asJSON); err != nil {
		fmt.Fprintf(stderr, "sitter: version: %v\n", err)
		return 1
	}
	return 0
}

func version() hookcli.Info { return hookcli.Read(hook.Version) }
