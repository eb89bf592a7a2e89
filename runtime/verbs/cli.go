package verbs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitter.dev/sitter/runtime/adapter"
)

// The command line of every verb is one cobra command tree (NewCommand),
// so that every verb and subcommand follows the same grammar:
//
//   - -h/--help prints the usage, with examples, on stdout and exits 0;
//   - an unknown flag, a missing or unknown subcommand or a wrong number of
//     arguments prints one "sitter: …" line and the usage on stderr and
//     exits 2;
//   - a verb that prints something has --json;
//   - what a verb itself reports (a failure, a refusal) is its own exit
//     code, returned as an exitCode error and never printed by cobra.
//
// The verbs the sitter binary answers itself (hook, guard, version) are in
// the tree too, so that help, completion and docs/cli list every verb;
// sitter-host hands hook and guard back to sitter (see ownVerb).

// env is what a command reads and writes.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	reg            func() *adapter.Registry
	// args is the command line Run was given (none for a tree built only
	// to be walked): a verb whose flags did not parse reads it.
	args []string
}

// exitCode is a verb's non-zero exit status; the verb has said why.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// code turns a verb's exit status into what a cobra RunE returns.
func code(n int) error {
	if n == 0 {
		return nil
	}
	return exitCode(n)
}

// Run is one `sitter <verb> …` command line (sitter-host's main); reg is
// called only by the verbs that need the registry.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	root := newCommand(&env{stdin: stdin, stdout: stdout, stderr: stderr, reg: reg, args: args})
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	var ec exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec):
		return int(ec)
	}
	// A usage error: the command line itself is wrong.
	where := strings.TrimPrefix(cmd.CommandPath(), "sitter ")
	if cmd == cmd.Root() {
		where = "sitter"
	} else {
		where = "sitter: " + where
	}
	fmt.Fprintf(stderr, "%s: %v\n\n%s", where, err, cmd.UsageString())
	return 2
}

// NewCommand is the command tree of every sitter verb, writing to stdout
// and stderr.
func NewCommand(stdin io.Reader, stdout, stderr io.Writer, reg func() *adapter.Registry) *cobra.Command {
	return newCommand(&env{stdin: stdin, stdout: stdout, stderr: stderr, reg: reg})
}

func newCommand(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "sitter",
		Short: "One coding-agent plugin, every harness",
		Long: `sitter makes one coding-agent plugin work in every harness (Claude Code, Codex,
Gemini CLI, Cursor, Copilot, OpenCode, Pi): hooks, plugins, runs, sessions,
launches, transcripts, checkpoints and the audit log.

Every verb takes -h/--help; a usage error exits 2.`,
		Example: `  sitter atlas list
  sitter hook claude-code PreToolUse --handler ./deny-push.sh < payload.json
  sitter plugin install guard --harness gemini-cli --dir ~/my-project
  sitter help checkpoint`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("a command is needed")
			}
			hint := ""
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				hint = "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return fmt.Errorf("unknown command %q%s", args[0], hint)
		},
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return checkDir(c, e.stderr) }
	root.SetUsageFunc(func(c *cobra.Command) error {
		_, err := io.WriteString(c.OutOrStderr(), usageText(c))
		return err
	})
	root.SuggestionsMinimumDistance = 2
	root.AddCommand(
		ownVerb(e, "hook"), ownVerb(e, "guard"), newVersionCmd(e),
		newAtlasCmd(e), newAgentsCmd(e), newDoctorCmd(e),
		newPluginCmd(e), newLaunchCmd(e), newProxyCmd(e),
		newRunCmd(e), newTaskCmd(e), newSessionCmd(e), newInstructionsCmd(e),
		newTranscriptCmd(e), newCheckpointCmd(e), newAuditCmd(e), newObserveCmd(e), newWorkerCmd(e),
	)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	completeHarnessFlags(e, root)
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  sitter help\n  sitter help checkpoint restore"
			// cobra's own shows the root's help for a topic it does not
			// know, and exits 0; a topic is a verb or subcommand.
			c.Run = nil
			c.RunE = func(c *cobra.Command, args []string) error {
				target, rest, err := c.Root().Find(args)
				if err != nil || len(rest) > 0 {
					hint := ""
					if err == nil {
						var topics []string
						for _, s := range subSuggestions(target, rest[0]) {
							topics = append(topics, strings.TrimPrefix(target.CommandPath()+" "+s, "sitter "))
						}
						if len(topics) > 0 {
							hint = "; did you mean " + strings.Join(topics, " or ") + "?"
						}
					}
					return fmt.Errorf("unknown help topic %q: run 'sitter help' for the verbs%s", strings.Join(args, " "), hint)
				}
				target.InitDefaultHelpFlag() // as cobra's own does: the usage lists -h
				return target.Help()
			}
		case "completion":
			c.RunE = groupRunE
			for _, s := range c.Commands() {
				if s.Args != nil {
					s.Args = noArgs
				}
				s.Example = fmt.Sprintf("  sitter completion %[1]s > sitter.%[1]s   # then source it from your shell's startup file", s.Name())
			}
			c.Example = "  source <(sitter completion bash)\n  sitter completion fish > ~/.config/fish/completions/sitter.fish"
		}
	}
	return root
}

// anyDir marks a verb whose --dir may name a folder that does not exist.
const anyDir = "anyDir"

// checkDir refuses a --dir that names no folder, before the verb runs: a
// mistyped project folder is an error (exit 1), never a folder created,
// an empty project reported or "nothing to do". observe checks its own
// (repeatable) --dir.
func checkDir(c *cobra.Command, stderr io.Writer) error {
	f := c.Flags().Lookup("dir")
	if f == nil || !f.Changed || f.Value.Type() != "string" || c.Annotations[anyDir] != "" {
		return nil
	}
	if fi, err := os.Stat(f.Value.String()); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "sitter: %s: --dir %s is not a directory\n", strings.TrimPrefix(c.CommandPath(), "sitter "), f.Value.String())
		return exitCode(1)
	}
	return nil
}

// group makes c a command that only holds subcommands: alone or with an
// unknown subcommand it is a usage error.
func group(c *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	c.Args = cobra.ArbitraryArgs
	c.RunE = groupRunE
	c.AddCommand(subs...)
	return c
}

func groupRunE(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("a subcommand is needed")
	}
	return unknownSub(c, args[0])
}

// unknownSub is the error for a subcommand c does not have, with the
// ones it most likely means, as the root does for a verb.
func unknownSub(c *cobra.Command, name string) error {
	hint := ""
	if s := subSuggestions(c, name); len(s) > 0 {
		hint = "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return fmt.Errorf("unknown command %q for %q%s", name, c.CommandPath(), hint)
}

// subSuggestions are the subcommands of c that name likely means: a
// prefix of one, or two edits from it.
func subSuggestions(c *cobra.Command, name string) []string {
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, which it sets for the root alone
	}
	return c.SuggestionsFor(name)
}

// nArgs accepts between min and max arguments (max < 0: no limit),
// naming them in the error.
func nArgs(min, max int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		switch {
		case len(args) < min:
			return fmt.Errorf("missing %s", what)
		case max >= 0 && len(args) > max:
			return fmt.Errorf("unexpected arguments %q", args[max:])
		}
		return nil
	}
}

// noArgs is noArgs in the words of nArgs: cobra's says `unknown
// command "x"`, which reads as a subcommand typo.
var noArgs = nArgs(0, 0, "")

// usageErr is a usage error found by a verb after parsing (exit 2).
func usageErr(format string, a ...any) error { return fmt.Errorf(format, a...) }

// jsonFlag adds --json to c.
func jsonFlag(c *cobra.Command, p *bool, what string) {
	c.Flags().BoolVar(p, "json", false, what)
}

// cmdFlagsOf reads a parsed command line as cmdFlags: the flags given (not
// their defaults) and the positional arguments; usage is the command's.
func cmdFlagsOf(c *cobra.Command, args []string) *cmdFlags {
	f := &cmdFlags{pos: args, vals: map[string]string{}, bools: map[string]bool{}, usage: c.UsageString(),
		verb: strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")}
	c.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Value.Type() == "bool" {
			f.bools[fl.Name] = fl.Value.String() == "true"
		} else {
			f.vals[fl.Name] = fl.Value.String()
		}
	})
	return f
}

// flagged is a subcommand whose flags are read as cmdFlags (the run, task,
// session and instructions verbs); flags are "name=usage" (a value) or
// "name?usage" (a boolean).
func flagged(use, short, example string, flags []string, run func(c *cobra.Command, f *cmdFlags) int) *cobra.Command {
	c := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			f := cmdFlagsOf(c, args)
			// An extra argument is a mistake (a second run, an effect id
			// given to a verb that takes none), not something to ignore:
			// refused before the verb runs, in the words and exit code of
			// a missing one (the SDK's usage, exit 1). The verbs check
			// what is missing themselves, in the SDK's order.
			if len(args) > strings.Count(c.Use, " <") {
				return code(usageFail(c.ErrOrStderr(), f))
			}
			return code(run(c, f))
		},
	}
	for _, fl := range flags {
		if name, usage, ok := strings.Cut(fl, "?"); ok && !strings.Contains(name, "=") {
			c.Flags().Bool(name, false, usage)
			continue
		}
		name, usage, _ := strings.Cut(fl, "=")
		c.Flags().String(name, "", usage)
	}
	return c
}

// harnessNames completes a harness id.
func harnessNames(e *env) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return e.reg().IDs(), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeHarnessFlags makes every --harness flag of c and its
// subcommands complete the atlas's harness ids.
func completeHarnessFlags(e *env, c *cobra.Command) {
	if c.Flags().Lookup("harness") != nil {
		c.RegisterFlagCompletionFunc("harness", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return e.reg().IDs(), cobra.ShellCompDirectiveNoFileComp
		})
	}
	for _, sub := range c.Commands() {
		completeHarnessFlags(e, sub)
	}
}

// usageText is the usage of c, as every verb prints it: the command line,
// examples, subcommands and flags.
func usageText(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	if c.HasAvailableSubCommands() {
		if c.Annotations[runsItself] != "" { // sitter proxy: both forms
			fmt.Fprintf(&b, "  %s\n", c.UseLine())
		}
		fmt.Fprintf(&b, "  %s <command> [flags]\n", c.CommandPath())
	} else {
		fmt.Fprintf(&b, "  %s\n", c.UseLine())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\nExamples:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\nCommands:\n")
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				fmt.Fprintf(&b, "  %-*s %s\n", s.NamePadding(), s.Name(), s.Short)
			}
		}
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(&b, "\nFlags:\n%s", c.LocalFlags().FlagUsages())
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "\nGlobal flags:\n%s", c.InheritedFlags().FlagUsages())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\nRun '%s <command> --help' for a command's usage.\n", c.CommandPath())
	}
	return b.String()
}
