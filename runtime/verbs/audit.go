package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/store/natsstore"
)

// newAuditCmd is `sitter audit tail|query`: the audit log in the state dir.
func newAuditCmd(e *env) *cobra.Command {
	sub := func(verb, short, example string, n int, filters bool) *cobra.Command {
		var f audit.Filter
		var asJSON bool
		var url, source string
		c := &cobra.Command{
			Use:     verb,
			Short:   short,
			Example: example,
			Args:    noArgs,
			RunE: func(*cobra.Command, []string) error {
				if n < 0 {
					return usageErr("-n %d: want a count", n)
				}
				// An alias filters as its harness's id (what entries hold).
				f, err := f.Check(func(h string) (string, error) {
					d, _, err := e.reg().Resolve(h)
					if err != nil {
						return "", err
					}
					return d.ID, nil
				})
				if err != nil {
					return usageErr("%v", err)
				}
				if f.Phase != "" {
					if err := checkPhase(e.reg(), f.Phase); err != nil {
						return usageErr("%v", err)
					}
				}
				if url != "" {
					return code(runAuditStore("audit "+verb, url, source, f, n, asJSON, e.stdout, e.stderr))
				}
				if source != "" {
					return usageErr("--source goes with --store")
				}
				return code(runAudit(f, n, asJSON, e.stdout, e.stderr))
			},
		}
		c.Flags().IntVarP(&n, "n", "n", n, "at most `N` entries, the newest (0: all)")
		c.Flags().StringVar(&url, "store", "", "read the team audit that sitter audit ship fills in the store at `URL` (nats://host:port), not this machine's log")
		c.Flags().StringVar(&source, "source", "", "with --store: only the entries shipped from `SOURCE` (a machine)")
		if filters {
			c.Flags().StringVar(&f.Session, "session", "", "only the calls of session `ID`")
			c.Flags().StringVar(&f.Decision, "decision", "", "only calls whose merged decision is `DECISION` (deny, block, ask, allow, noop)")
			c.Flags().StringVar(&f.Verdict, "verdict", "", "only calls whose policy verdict is `VERDICT` (allow, deny, restricted, redacted)")
			c.Flags().StringVar(&f.Harness, "harness", "", "only the calls of `HARNESS`")
			c.Flags().StringVar(&f.Phase, "phase", "", "only calls of the canonical phase `PHASE`")
			c.Flags().BoolVar(&f.Halted, "halted", false, "only calls whose answer halted the session")
		}
		jsonFlag(c, &asJSON, "print the entries as JSON lines")
		return c
	}
	return group(&cobra.Command{
		Use:   "audit",
		Short: "Read the audit log of hook decisions",
		Long: `Every hook call appends one JSON line (handlers' verdicts and latencies, merged
decision, policy verdict, secrets masked) to audit.jsonl in the state dir
($SITTER_STATE_DIR, else $XDG_STATE_HOME/sitter, else ~/.local/state/sitter).
sitter audit ship copies it to a team store (NATS JetStream); tail and query
read that with --store (docs/store.md).

tail and query print one line a call: time, session, harness/native event,
tool kind, command, merged decision→policy verdict, each handler's decision and
latency ("-" for a value the call lacks; with --store, the source machine
first); it ends with a deny's or block's "reason:", "HALTED:" and why (or "halt
dropped"), "ERROR:" for a call or handler that failed, "WARNING:" for a result
with unknown keys. No entry to print is one line naming the log (or store) read. --json
prints the entries whole (and nothing for none).`,
		Example: "  sitter audit tail\n  sitter audit query --decision deny --json\n  sitter audit ship --store nats://nats.internal:4222 --follow\n  sitter audit query --store nats://nats.internal:4222 --decision deny",
	},
		sub("tail", "Print the newest entries", "  sitter audit tail\n  sitter audit tail -n 100 --json\n  sitter audit tail --store nats://nats.internal:4222", 20, false),
		sub("query", "Print the entries that match every filter given", "  sitter audit query --session s1 --decision deny\n  sitter audit query --harness codex --halted --json\n  sitter audit query --store nats://nats.internal:4222 --source ci-runner-7 --decision deny --json", 0, true),
		newAuditShipCmd(e),
	)
}

// newAuditShipCmd is `sitter audit ship`.
func newAuditShipCmd(e *env) *cobra.Command {
	var url, source string
	var follow, asJSON bool
	var interval time.Duration
	c := &cobra.Command{
		Use:   "ship --store URL",
		Short: "Copy this machine's audit log to a team store",
		Long: `Copies the lines of the local audit log that the store does not have yet to
the store's audit stream (NATS JetStream stream SITTER_AUDIT, subject
sitter.audit.<source>.<log>), oldest first, across rotated files. It resumes
after the last line it shipped, which the store itself records, so a ship that
was interrupted, or run again, ships nothing twice. With --follow it keeps
shipping what is appended (every --interval) until interrupted. Lines that are
not an entry stay in the local log and are counted as skipped. The hook path
never talks to the network: shipping is this separate command (run it from
cron, a systemd unit, or with --follow). See docs/store.md.`,
		Example: `  sitter audit ship --store nats://nats.internal:4222
  sitter audit ship --store nats://nats.internal:4222 --follow --source ci-runner-7
  SITTER_STORE=nats://nats.internal:4222 sitter audit ship --json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !c.Flags().Changed("store") {
				url = os.Getenv("SITTER_STORE")
			}
			if interval < 10*time.Millisecond {
				return usageErr("--interval %s: want at least 10ms", interval)
			}
			return code(runAuditShip(url, source, follow, interval, asJSON, e.stdout, e.stderr))
		},
	}
	c.Flags().StringVar(&url, "store", "", "the team store `URL`, nats://host:port ($SITTER_STORE)")
	c.Flags().StringVar(&source, "source", "", "this machine's `NAME` in the team audit: letters, digits, - and _ (default: the host name)")
	c.Flags().BoolVar(&follow, "follow", false, "keep shipping what is appended until interrupted")
	c.Flags().DurationVar(&interval, "interval", time.Second, "with --follow: how often to look for new lines, a Go duration `D`")
	jsonFlag(c, &asJSON, "print what was shipped as JSON (with --follow: one line per pass that shipped)")
	return c
}

// runAuditShip ships the local audit log to the store at url.
func runAuditShip(url, source string, follow bool, interval time.Duration, asJSON bool, stdout, stderr io.Writer) int {
	const verb = "audit ship"
	if url == "" {
		return fail(stderr, verb, errors.New("--store (or $SITTER_STORE) names the store to ship to"))
	}
	dir, err := hook.StateDir()
	if err != nil {
		return fail(stderr, verb, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := dialStore(ctx, url)
	if err != nil {
		return fail(stderr, verb, err)
	}
	defer c.Close()
	w := &errWriter{w: stdout}
	say := func(r natsstore.ShipResult) {
		if r.Lost {
			fmt.Fprintf(stderr, "sitter: audit ship: the last shipped line's file has rotated out of the local log: lines after it that rotated out too were never shipped\n")
		}
		for _, x := range r.Refused {
			fmt.Fprintf(stderr, "sitter: audit ship: did not read %s\n", x)
		}
		if asJSON {
			b, _ := json.Marshal(r)
			w.Write(append(b, '\n'))
			return
		}
		w.printf("[audit:ship] shipped=%d skipped=%d subject=%s\n", r.Shipped, r.Skipped, r.Subject)
	}
	cfg := auditConfig(dir, stderr)
	o := natsstore.ShipOptions{Log: cfg, Source: source, Follow: follow, Interval: interval}
	if follow {
		o.Pass = say
	}
	r, err := c.ShipAudit(ctx, o)
	if err != nil {
		return fail(stderr, verb, err)
	}
	if !follow {
		say(r)
	}
	if w.err != nil {
		return 1
	}
	return 0
}

// runAuditStore prints the team audit's entries that f keeps; verb
// (audit tail or audit query) names it in what it says.
func runAuditStore(verb, url, source string, f audit.Filter, n int, asJSON bool, stdout, stderr io.Writer) int {
	ctx := context.Background()
	c, err := dialStore(ctx, url)
	if err != nil {
		return fail(stderr, verb, err)
	}
	defer c.Close()
	es, bad, err := c.AuditQuery(ctx, f, source, n)
	if err != nil {
		return fail(stderr, verb, err)
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "sitter: %s: skipped %d message(s) of the store that are not an entry\n", verb, bad)
	}
	w := &errWriter{w: stdout}
	if len(es) == 0 && !asJSON {
		// As for the local log: nothing printed would look like a wrong
		// store or source.
		what := "no entries in the audit of " + natsstore.RedactURL(url)
		if f != (audit.Filter{}) || source != "" {
			what = "no entries match in the audit of " + natsstore.RedactURL(url)
		}
		w.printf("%s\n", what)
	}
	for _, x := range es {
		if asJSON {
			b, _ := json.Marshal(x)
			w.Write(append(b, '\n'))
			continue
		}
		w.printf("%s %s", x.Source, entryLine(x.Entry))
	}
	if w.err != nil {
		return 1
	}
	return 0
}

// runAudit prints the entries of the audit log that f keeps, n at most.
func runAudit(f audit.Filter, n int, asJSON bool, stdout, stderr io.Writer) int {
	dir, err := hook.StateDir()
	if err != nil {
		fmt.Fprintf(stderr, "sitter: audit: %v\n", err)
		return 1
	}
	cfg := auditConfig(dir, stderr)
	es, skipped, err := audit.Query(cfg, f, n)
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
	// Nothing to print says which log was read: an empty output looks
	// like a wrong state dir.
	if len(es) == 0 {
		if (f == audit.Filter{}) {
			w.printf("no entries in %s\n", filepath.Join(dir, audit.FileName))
		} else {
			w.printf("no entries match in %s\n", filepath.Join(dir, audit.FileName))
		}
	}
	for _, e := range es {
		w.printf("%s", entryLine(e))
	}
	if w.err != nil {
		return 1
	}
	return 0
}

// auditConfig is the audit log's settings; a bad one is said on stderr
// (the default holds).
func auditConfig(dir string, stderr io.Writer) audit.Config {
	cfg, errs := audit.FromEnv(dir)
	for _, err := range errs {
		fmt.Fprintf(stderr, "sitter: audit: %v\n", err)
	}
	return cfg
}

// checkPhase says why --phase p can match no entry: entries record the
// canonical phase of the atlas's events, and a native event name (what
// the text lines show) is the commonest mistake.
func checkPhase(reg *adapter.Registry, p string) error {
	var phases []string
	native := ""
	for _, d := range reg.Descriptors {
		for _, ev := range d.Events {
			if ev.Phase == p {
				return nil
			}
			if ev.Phase != "" && !slices.Contains(phases, ev.Phase) {
				phases = append(phases, ev.Phase)
			}
			if native == "" && ev.Name == p && ev.Phase != "" {
				native = fmt.Sprintf(" (%s is a native event name, of phase %s)", p, ev.Phase)
			}
		}
	}
	slices.Sort(phases)
	return fmt.Errorf("--phase %q: no canonical phase of the atlas%s; want one of %s", p, native, strings.Join(phases, ", "))
}

// ofPlugin is a handler's error or warning, with its plugin's name first
// when it has one.
func ofPlugin(h audit.Handler, msg string) string {
	if h.Plugin == "" {
		return msg
	}
	return "plugin " + h.Plugin + ": " + msg
}

// entryLine is an entry as audit tail and query print it: a failed
// handler shows as "error", and the line ends with the reason of a deny
// or block, the first error (the call's own, else a handler's), so that
// a failed hook never reads as an allowed call, and the first warning (a
// handler's unknown result keys); a handler's names its plugin.
func entryLine(e audit.Entry) string {
	var hs []string
	errMsg, warn := e.Error, ""
	for _, h := range e.Handlers {
		d := orDash(h.Decision)
		switch {
		case h.Skipped:
			d = "skipped"
		case h.Error != "":
			d = "error"
			if errMsg == "" {
				errMsg = ofPlugin(h, h.Error)
			}
		case h.Warning != "" && warn == "":
			warn = ofPlugin(h, h.Warning)
		}
		hs = append(hs, fmt.Sprintf("%s %.1fms", d, h.LatencyMs))
	}
	tail := ""
	switch {
	case e.Halted:
		tail = " HALTED: " + oneLine(orDash(e.HaltReason), 80)
	case e.HaltDropped:
		tail = " halt dropped"
	}
	if e.Reason != "" && (e.Decision == "deny" || e.Decision == "block") && !e.Halted {
		tail += " reason: " + oneLine(e.Reason, 80)
	}
	if errMsg != "" {
		tail += " ERROR: " + oneLine(errMsg, 120)
	}
	if warn != "" {
		tail += " WARNING: " + oneLine(warn, 120)
	}
	// A value the call lacks is "-", so every line has the same columns.
	return fmt.Sprintf("%s %s %s/%s %s %s %s→%s %s%s\n", e.Time, orDash(e.Session), e.Harness, e.NativeEvent, orDash(e.ToolKind), orDash(oneLine(e.Command, 60)),
		e.Decision, e.Verdict, orDash(strings.Join(hs, ", ")), tail)
}
