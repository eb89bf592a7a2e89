package host

import (
	"context"
	"fmt"
	"io"
	"strings"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/agents"
)

// runDoctor: `sitter doctor [--harness H]... [--dir D] [--json]`. Without
// --harness it reports every harness and exits 0; with it, it exits 1 when
// a requested harness is not ready.
func runDoctor(args []string, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	asJSON, dir := false, ""
	var want []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch name {
		case "--json", "-json":
			asJSON = true
			continue
		case "--harness", "-harness", "--dir", "-dir":
			if !hasVal {
				if i+1 >= len(args) {
					fmt.Fprintf(stderr, "sitter: doctor: %s needs a value\n", a)
					return 2
				}
				i++
				val = args[i]
			}
			if strings.HasSuffix(name, "harness") {
				want = append(want, val)
			} else {
				dir = val
			}
			continue
		}
		fmt.Fprintf(stderr, "sitter: doctor: unknown argument %s\nusage: sitter doctor [--harness H]... [--dir D] [--json]\n", a)
		return 2
	}
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
		}
		w.printf("  trace:    %s\n", strings.Join(rep.Trace, "; "))
	}
	if w.err != nil {
		return 1
	}
	return code
}
