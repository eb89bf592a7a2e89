package verbs

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/agents"
)

// newDoctorCmd is `sitter doctor [--harness H]... [--dir D] [--json]`.
// Without --harness it reports every harness and exits 0; with it, it
// exits 1 when a requested harness is not ready.
func newDoctorCmd(e *env) *cobra.Command {
	var want []string
	var dir string
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Say whether each harness is ready (binary, version, hooks, config)",
		Long: `For each harness: its binary and version against the atlas-verified versions,
whether the project uses it, the sitter hooks and plugins installed and whether
its hook configs are valid; failure codes and a resolution trace. Without
--harness it reports every harness and exits 0; with it, it exits 1 when a
requested harness is not ready.`,
		Example: "  sitter doctor\n  sitter doctor --harness claude-code --dir ~/my-project --json",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			// An unknown harness is a mistake on the command line: said
			// before any report is printed.
			for _, n := range want {
				if _, _, err := e.reg().Resolve(n); err != nil {
					return usageErr("%v", err)
				}
			}
			return code(runDoctor(want, dir, asJSON, e.stdout, e.stderr, e.reg))
		},
	}
	c.Flags().StringArrayVar(&want, "harness", nil, "check `HARNESS` (repeatable; default: every harness)")
	c.Flags().StringVar(&dir, "dir", "", "the project folder `DIR` (default: the current directory)")
	jsonFlag(c, &asJSON, "print the reports as JSON")
	return c
}

// runDoctor checks the harnesses named in want (every one when empty).
func runDoctor(want []string, dir string, asJSON bool, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	r := reg()
	names := want
	if len(names) == 0 {
		names = r.IDs()
	}
	var reps []*agents.Report
	code := 0
	for _, n := range names {
		rep, err := agents.Doctor(context.Background(), r, n, agents.Env{Dir: dir})
		if err != nil {
			fmt.Fprintf(stderr, "sitter: doctor: %v\n", err)
			code = 2
			continue
		}
		reps = append(reps, rep)
		if len(want) > 0 && !rep.Ready {
			code = 1
		}
	}
	if asJSON {
		if c := writeJSON(stdout, stderr, reps); c != 0 {
			return c
		}
		return code
	}
	w := &errWriter{w: stdout}
	for _, rep := range reps {
		state := "ready"
		if !rep.Ready {
			state = "NOT READY"
		}
		w.printf("%s: %s\n", rep.Harness, state)
		w.printf("  binary:   %s %s (verified: %s)\n", orDash(rep.Binary), orDash(rep.Version), orDash(strings.Join(rep.Verified, ", ")))
		w.printf("  project:  %s\n", orDash(strings.Join(rep.Detected.Found, ", ")))
		w.printf("  hooks:    %s\n", orDash(strings.Join(rep.Hooks, ", ")))
		w.printf("  plugins:  %s\n", orDash(strings.Join(rep.Plugins, ", ")))
		for _, p := range rep.Problems {
			kind := "error"
			if p.Warning {
				kind = "warning"
			}
			w.printf("  %s %s: %s\n", kind, p.Code, p.Detail)
			if p.Fix != "" {
				w.printf("    fix: %s\n", p.Fix)
			}
		}
		w.printf("  trace:    %s\n", strings.Join(rep.Trace, "; "))
	}
	if w.err != nil {
		return 1
	}
	return code
}
