package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
)

// runHandlersTimed is hook.Run with each handler's latency: the handlers
// still run concurrently and merge in handler order.
func runHandlersTimed(ctx context.Context, ev hook.Event, hs []hook.Handler) (hook.Result, []string, []audit.Handler) {
	outs := make([]hook.Outcome, len(hs))
	lat := make([]time.Duration, len(hs))
	one := func(i int) {
		t0 := time.Now()
		outs[i] = hook.RunHandlers(ctx, ev, hs[i:i+1])[0]
		lat[i] = time.Since(t0)
	}
	if len(hs) == 1 {
		one(0)
	} else {
		var wg sync.WaitGroup
		for i := range hs {
			wg.Go(func() { one(i) })
		}
		wg.Wait()
	}
	res, diags := hook.Merge(ev.Phase, outs)
	ah := make([]audit.Handler, len(hs))
	for i, o := range outs {
		ah[i] = audit.Handler{Command: o.Handler.Command, Skipped: o.Skipped, LatencyMs: ms(lat[i])}
		if !o.Skipped {
			ah[i].Decision = string(o.Result.Decision)
			if ah[i].Decision == "" {
				ah[i].Decision = "noop"
			}
		}
		if o.Err != nil {
			ah[i].Error = string(o.Err.Kind) + ": " + o.Err.Detail
		}
	}
	return res, diags, ah
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// auditCall appends the hook call's merged decision to the audit log
// (unless SITTER_AUDIT=0); a failure is a diagnostic, never a changed answer.
func auditCall(d *adapter.Descriptor, ev hook.Event, res hook.Result, hs []audit.Handler, start time.Time, diags []string) []string {
	if !audit.Enabled() {
		return diags
	}
	dir, err := hook.StateDir()
	if err != nil {
		return append(diags, "sitter: audit: "+err.Error())
	}
	e := audit.Entry{
		Harness: ev.Harness, NativeEvent: ev.NativeEvent, Phase: ev.Phase, Session: ev.Session.ID,
		Handlers: hs, Decision: string(res.Decision), Reason: res.Reason, LatencyMs: ms(time.Since(start)),
	}
	if e.Decision == "" {
		e.Decision = "noop"
	}
	if e.Handlers == nil {
		e.Handlers = []audit.Handler{}
	}
	if ev.Tool != nil {
		e.Tool, e.ToolKind = ev.Tool.Name, ev.Tool.Kind
		if ev.Tool.Kind == "shell" {
			var in map[string]any
			if json.Unmarshal(ev.Tool.Input, &in) == nil {
				switch c := in["command"].(type) {
				case string:
					e.Command = c
				case []any:
					e.Command = fmt.Sprint(c...)
				}
			}
		}
	}
	if spec, ok := d.Event(ev.NativeEvent); ok {
		for _, x := range spec.Evidence {
			e.Evidence = append(e.Evidence, x.Kind+": "+x.Ref)
		}
	}
	e.Finish(len(res.UpdatedInput) > 0)
	if err := audit.Append(audit.FromEnv(dir), e); err != nil {
		return append(diags, "sitter: audit: "+err.Error())
	}
	return diags
}

const auditUsage = `usage: sitter audit tail [-n N] [--json]
       sitter audit query [--session S] [--decision D] [--verdict V] [--harness H] [--phase P] [-n N] [--json]`

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
	es, err := audit.Query(audit.FromEnv(dir), f, n)
	if err != nil {
		fmt.Fprintf(stderr, "sitter: audit: %v\n", err)
		return 1
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
		w.printf("%s %s %s/%s %s %s %s→%s %s\n", e.Time, orDash(e.Session), e.Harness, e.NativeEvent, orDash(e.ToolKind), oneLine(e.Command, 60),
			e.Decision, e.Verdict, strings.Join(hs, ", "))
	}
	if w.err != nil {
		return 1
	}
	return 0
}
