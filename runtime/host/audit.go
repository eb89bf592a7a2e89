package host

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
)

const auditUsage = `usage: sitter audit tail [-n N] [--json]
       sitter audit query [--session S] [--decision D] [--verdict V] [--harness H] [--phase P] [--halted] [-n N] [--json]`

// runAudit reads the audit log in the state dir.
func runAudit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "tail" && args[0] != "query") {
		fmt.Fprintln(stderr, auditUsage)
		return 2
	}
	verb := args[0]
	var f audit.Filter
	n, asJSON := 0, false
	if verb == "tail" {
		n = 20
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--json" || a == "-json" {
			asJSON = true
			continue
		}
		if a == "--halted" {
			f.Halted = true
			continue
		}
		if i+1 >= len(args) {
			fmt.Fprintf(stderr, "sitter: audit: %s needs a value\n%s\n", a, auditUsage)
			return 2
		}
		i++
		v := args[i]
		switch a {
		case "-n", "--n":
			x, err := strconv.Atoi(v)
			if err != nil || x < 0 {
				fmt.Fprintf(stderr, "sitter: audit: -n %q: want a count\n", v)
				return 2
			}
			n = x
		case "--session":
			f.Session = v
		case "--decision":
			f.Decision = v
		case "--verdict":
			f.Verdict = v
		case "--harness":
			f.Harness = v
		case "--phase":
			f.Phase = v
		default:
			fmt.Fprintf(stderr, "sitter: audit: unknown flag %s\n%s\n", a, auditUsage)
			return 2
		}
	}
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
