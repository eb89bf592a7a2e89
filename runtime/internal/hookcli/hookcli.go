// Package hookcli holds what the sitter binary and sitter-host share
// about the verbs sitter answers itself (hook, guard, version): their
// usage texts and the version. sitter prints them; sitter-host lists the
// same verbs in its help, completion and docs/cli. Standard library only:
// the hook binary imports it.
package hookcli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// Set at link time (make build, make dist):
//
//	-ldflags "-X sitter.dev/sitter/runtime/internal/hookcli.Version=v1.2.3 -X sitter.dev/sitter/runtime/internal/hookcli.Commit=abc…"
//
// Without them the module's build info says what it can.
var (
	Version string
	Commit  string
)

// HookShort, GuardShort and VersionShort are the one-line summaries.
const (
	HookShort    = "Answer one hook call (stdin: the harness's native payload)"
	GuardShort   = "The built-in guard handler: canonical event on stdin, result on stdout"
	VersionShort = "Print the version and commit"
)

// HookSynopsis is the usage line of `sitter hook`.
const HookSynopsis = "sitter hook <harness> <native-event> [--handler CMD]... [--plugin DIR] [--timeout D] [--on-error open|closed] [--redact] [--stop-cap N]"

// HookLong is the description of `sitter hook` (flags listed apart).
const HookLong = `Every hook registration calls sitter hook: stdin is the harness's native
payload; stdout and the exit code are the native answer. The handlers get the
canonical event on stdin and print a canonical result (or nothing).

<harness> is a descriptor id or alias (sitter atlas list). <native-event> "-" or ""
takes the event name from the payload (where the atlas says it is, e.g.
hook_event_name). Flags go before or after the arguments.

A hook never breaks its harness: bad input, an unknown harness or event, a
missing argument, a bad flag value or an internal error answer the harness's
no-op (exit 0, empty stdout) with one "sitter: " line on stderr; with
--on-error closed, a deny or block where the event can say one.

An unknown flag is a mistake in the registration itself: sitter writes the
answer --on-error asks for, prints the error and the usage line on stderr and
exits 1, a non-blocking hook error in every harness. This is the one verb whose
usage error is not exit 2: Claude Code, Codex and Gemini CLI read a hook's exit
2 as "block". With --on-error closed and an event that can deny, the deny is
the answer, with its own exit code. -h/--help prints this usage and exits 0.`

// HookFlags are the flags of `sitter hook`: name, value placeholder (""
// for a boolean) and meaning, which names the placeholder. sitter's own
// parser and sitter-host's command tree both read this table.
var HookFlags = []Flag{
	{"handler", "CMD", "run CMD with /bin/sh -c, the canonical event on stdin; repeatable"},
	{"plugin", "DIR", "also run the handlers of DIR/sitter-handlers.json for the event's phase"},
	{"timeout", "D", "kill a handler still running after D (default 30s)"},
	{"on-error", "POLICY", "what a failing handler, or a hook call sitter cannot answer, becomes, by POLICY: ignored (open, the default) or a deny/block (closed)"},
	{"redact", "", "--handler handlers get the event with secrets (API keys, tokens, private keys, key=value credentials) masked"},
	{"stop-cap", "N", "let a session stop after N stop blocks in a row (default $SITTER_STOP_CAP, else 20; 0 = no cap)"},
}

// HookExample shows `sitter hook` at work.
const HookExample = `  # deny git push in Claude Code
  echo '{"session_id":"s1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push"}}' |
    sitter hook claude-code PreToolUse --handler ./deny-push.sh
  # what a plugin bundle registers
  sitter hook gemini-cli BeforeTool --plugin "$SITTER_PLUGIN_DIR" --on-error closed`

// GuardLong describes `sitter guard`.
const GuardLong = `The guard plugin's handler, built in: it reads the canonical event on stdin
and refuses recursive deletes outside the project and force pushes, in every
harness; it prints the result (nothing for a no-op). Input it cannot read is
one stderr line and exit 0: whether that fails open or closed is the engine's
policy, not the handler's. It never exits 2, which a hook reads as a deny: an
unknown flag or an argument is one stderr line and exit 1, a handler error.`

// GuardExample shows `sitter guard` at work.
const GuardExample = `  sitter hook claude-code PreToolUse --handler 'sitter guard'
  echo '{"version":"sitter.hook.v1","phase":"preToolUse","tool":{"kind":"shell","input":{"command":"git push --force"}}}' | sitter guard`

// VersionExample shows `sitter version` at work.
const VersionExample = `  sitter version
  sitter version --json`

// Flag is one flag of a verb the sitter binary answers.
type Flag struct{ Name, Value, Usage string }

// VersionLong describes `sitter version`.
const VersionLong = "The version (make build, make install and make dist stamp what git describe says: a release tag, a tag and the commits since, or the commit alone; a plain go build says what Go recorded: a pseudo-version, or (devel)), the commit it was built from, the hook contract and the Go version."

// HookUsage is `sitter hook --help`, as sitter-host's command tree prints
// `sitter help hook` (a test holds them equal).
func HookUsage() string {
	return usage(HookLong, HookSynopsis, HookExample, "hook", HookFlags)
}

// GuardUsage is `sitter guard --help`.
func GuardUsage() string {
	return usage(GuardLong, GuardSynopsis, GuardExample, "guard", nil)
}

// VersionUsage is `sitter version --help`.
func VersionUsage() string {
	return usage(VersionLong, VersionSynopsis, VersionExample, "version", []Flag{{"json", "", "print the version as JSON"}})
}

// GuardSynopsis and VersionSynopsis are the usage lines of `sitter guard`
// and `sitter version`.
const (
	GuardSynopsis   = "sitter guard < event.json"
	VersionSynopsis = "sitter version [--json]"
)

// usage lays a verb's help out as the command tree does: the description,
// the usage line, the examples, then the flags sorted by name with -h,
// their meanings aligned three spaces past the longest.
func usage(long, synopsis, example, verb string, flags []Flag) string {
	type line struct{ name, head, usage string }
	lines := []line{{"help", "  -h, --help", "help for " + verb}}
	for _, f := range flags {
		head := "      --" + f.Name
		if f.Value != "" {
			head += " " + f.Value
		}
		lines = append(lines, line{f.Name, head, f.Usage})
	}
	slices.SortFunc(lines, func(a, b line) int { return strings.Compare(a.name, b.name) })
	width := 0
	for _, l := range lines {
		width = max(width, len(l.head))
	}
	var b strings.Builder
	b.WriteString(long + "\n\nUsage:\n  " + synopsis + "\n\nExamples:\n" + example + "\n\nFlags:\n")
	for _, l := range lines {
		b.WriteString(l.head + strings.Repeat(" ", width-len(l.head)+3) + l.usage + "\n")
	}
	return b.String()
}

// Info is what `sitter version --json` prints.
type Info struct {
	Version      string `json:"version"`
	Commit       string `json:"commit"`
	HookContract string `json:"hookContract"`
	Go           string `json:"go"`
}

// Read is the version of this binary: the link-time values, else the
// module's build info ("(devel)" and the VCS revision when built in a
// checkout).
func Read(contract string) Info {
	i := Info{Version: Version, Commit: Commit, HookContract: contract, Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if i.Version == "" && bi.Main.Version != "" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && i.Commit == "" {
				i.Commit = s.Value
			}
		}
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	return i
}

// String is the one-line version: sitter VERSION [COMMIT12] (hook contract …, go…).
func (i Info) String() string {
	v := i.Version
	if len(i.Commit) >= 12 {
		v += " " + i.Commit[:12]
	} else if i.Commit != "" {
		v += " " + i.Commit
	}
	return fmt.Sprintf("sitter %s (hook contract %s, %s)", v, i.HookContract, i.Go)
}

// PrintVersion writes the version as text or JSON.
func PrintVersion(w io.Writer, i Info, asJSON bool) error {
	if !asJSON {
		_, err := fmt.Fprintln(w, i.String())
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(i)
}

// Own are the verbs the sitter binary answers without sitter-host.
var Own = []string{"hook", "guard", "version"}
