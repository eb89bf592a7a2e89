package verbs

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
)

// newAuditCmd is `sitter audit tail|query`: the audit log in the state dir.
func newAuditCmd(e *env) *cobra.Command {
	sub := func(verb, short, example string, n int, filters bool) *cobra.Command {
		var f audit.Filter
		var asJSON bool
		c := &cobra.Command{
			Use:     verb,
			Short:   short,
			Example: example,
			Args:    cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				if n < 0 {
					return usageErr("-n %d: want a count", n)
				}
				return code(runAudit(f, n, asJSON, e.stdout, e.stderr))
			},
		}
		c.Flags().IntVarP(&n, "n", "n", n, "at most `N` entries, the newest (0: all)")
		if filters {
			c.Flags().StringVar(&f.Session, "session", "", "only the calls of session `ID`")
			c.Flags().StringVar(&f.Decision, "decision", "", "only calls whose merged decision is `DECISION` (deny, block, ask, allow, noop)")
			c.Flags().StringVar(&f.Verdict, "verdict", "", "only calls whose policy verdict is `VERDICT` (allow, deny, restricted, redacted)")
			c.Flags().StringVar(&f.Harness, "harness", "", "only the calls of `HARNESS`")
			c.Flags().StringVar(&f.Phase, "phase", "", "only calls of the canonical phase `PHASE`")
			c.Flags().BoolVar(&f.Halted, "halted", false, "only calls whose answer halted the session")
			completeHarnessFlag(e, c)
		}
		jsonFlag(c, &asJSON, "print the entries as JSON lines")
		return c
	}
	return group(&cobra.Command{
		Use:   "audit",
		Short: "Read the audit log of hook decisions",
		Long: `Every hook call appends one JSON line (handlers' verdicts and latencies, merged
decision, policy verdict, secrets masked) to audit.jsonl in the state dir
($SITTER_STATE_DIR, else $XDG_STATE_HOME/sitter, else ~/.local/state/sitter).`,
		Example: "  sitter audit tail\n  sitter audit query --decision deny --json",
	},
		sub("tail", "Print the newest entries", "  sitter audit tail\n  sitter audit tail -n 100 --json", 20, false),
		sub("query", "Print the entries that match every filter given", "  sitter audit query --session s1 --decision deny\n  sitter audit query --harness codex --halted --json", 0, true),
	)
}

// runAudit prints the entries of the audit log that f keeps, n at most.
func runAudit(f audit.Filter, n int, asJSON bool, stdout, stderr io.Writer) int {
	dir, err := hook.StateDir()
	if err != nil {
		fmt.Fprintf(stderr, "sitter: audit: %v\n", err)
		return 1
	}
	es, skipped, err := audit.Query(audit.FromEnv(dir), f, n)
	if err != nil {
		fmt.Fprintf(stderr, "sitter: audit: %v\n", err)
		return 1
	}
	// What the reader passed over (an oversized or torn line, a log file
	// that is a symbolic link) is said, not an error: the rest is read.
	if s := skipped.String(); s != "" {
		fmt.Fprintf(stderr, "sitter: audit: %s\n", s)
	}
	if asJSON {
		w := &errWriter{w: stdout}
		for _, e := range es {
			b, _ := json.Marshal(e)
			w.Write(append(b, '\n'))
		}
		if w.err != nil {
			return 1
		}
		return 0
	}
	w := &errWriter{w: stdout}
	for _, e := range es {
		var hs []string
		for _, h := range e.Handlers {
			hs = append(hs, fmt.Sprintf("%s %.1fms", orDash(h.Decision), h.LatencyMs))
		}
		halt := ""
		switch {
		case e.Halted:
			halt = " HALTED: " + oneLine(orDash(e.HaltReason), 80)
		case e.HaltDropped:
			halt = " halt dropped"
		}
		w.printf("%s %s %s/%s %s %s %s→%s %s%s\n", e.Time, orDash(e.Session), e.Harness, e.NativeEvent, orDash(e.ToolKind), oneLine(e.Command, 60),
			e.Decision, e.Verdict, strings.Join(hs, ", "), halt)
	}
	if w.err != nil {
		return 1
	}
	return 0
}
