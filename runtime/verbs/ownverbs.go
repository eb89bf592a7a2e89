package verbs

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/hookcli"
	"sitter.dev/sitter/runtime/internal/sibling"
)

// ownVerb is hook or guard, which the sitter binary answers with its own
// small parser (no CLI library on the hook path). Here they are in the
// tree for help, completion and docs/cli; typed to sitter-host, they are
// handed to sitter.
func ownVerb(e *env, name string) *cobra.Command {
	c := &cobra.Command{
		Use:                   strings.TrimPrefix(hookcli.GuardSynopsis, "sitter "),
		DisableFlagsInUseLine: true,
		Short:                 hookcli.GuardShort,
		Long:                  hookcli.GuardLong,
		Example:               hookcli.GuardExample,
		Args:                  noArgs,
	}
	if name == "hook" {
		c = &cobra.Command{
			Use:                   strings.TrimPrefix(hookcli.HookSynopsis, "sitter "),
			DisableFlagsInUseLine: true,
			Short:                 hookcli.HookShort,
			Long:                  hookcli.HookLong,
			Example:               hookcli.HookExample,
			Args:                  nArgs(0, 2, "<harness>"),
			ValidArgsFunction:     harnessNames(e),
		}
		// A hook's exit 2 is "block" to Claude Code, Codex and Gemini
		// CLI: an unknown flag is exit 1, as the sitter binary answers it
		// (docs/contract.md, error policy).
		c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
			fmt.Fprintf(e.stderr, "sitter: hook: %v\nusage: %s (sitter hook --help)\n", err, hookcli.HookSynopsis)
			return exitCode(1)
		})
		for _, f := range hookcli.HookFlags {
			// The usage names the value's placeholder; backticked, pflag
			// shows it as the value's name (--timeout D).
			usage := strings.Replace(f.Usage, f.Value, "`"+f.Value+"`", 1)
			switch {
			case f.Value == "":
				c.Flags().Bool(f.Name, false, f.Usage)
			case f.Name == "handler":
				c.Flags().StringArray(f.Name, nil, usage)
			default:
				c.Flags().String(f.Name, "", usage)
			}
		}
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		argv := append([]string{"sitter", name}, args...)
		c.Flags().Visit(func(f *pflag.Flag) {
			if sa, ok := f.Value.(pflag.SliceValue); ok {
				for _, v := range sa.GetSlice() {
					argv = append(argv, "--"+f.Name+"="+v)
				}
				return
			}
			argv = append(argv, "--"+f.Name+"="+f.Value.String())
		})
		bin := sibling.Find("sitter")
		if bin == "" {
			fmt.Fprintf(e.stderr, "sitter-host %s: the sitter binary answers %s: it is not next to sitter-host or on PATH\n", name, name)
			return exitCode(1)
		}
		err := syscall.Exec(bin, argv, os.Environ())
		fmt.Fprintf(e.stderr, "sitter-host %s: exec %s: %v\n", name, bin, err)
		return exitCode(1)
	}
	return c
}

// newVersionCmd is `sitter version` (the sitter binary answers it too,
// from the same package).
func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:                   strings.TrimPrefix(hookcli.VersionSynopsis, "sitter "),
		DisableFlagsInUseLine: true,
		Short:                 hookcli.VersionShort,
		Long:                  hookcli.VersionLong,
		Example:               hookcli.VersionExample,
		Args:                  noArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := hookcli.PrintVersion(e.stdout, hookcli.Read(hook.Version), asJSON); err != nil {
				fmt.Fprintf(e.stderr, "sitter: version: %v\n", err)
				return exitCode(1)
			}
			return nil
		},
	}
	jsonFlag(c, &asJSON, "print the version as JSON")
	return c
}
