package main

import (
	"encoding/json"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
)

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// audit appends the hook call's answer to the audit log (unless
// SITTER_AUDIT=0): res is the merged result, or for a call that failed
// before its handlers ran, the answer it got and why; halted says the
// rendered answer halts the session (a rule whose atlas effect is
// haltsSession). A failure to append is a diagnostic, never a changed answer.
func (c *hookCall) audit(res hook.Result, hs []audit.Handler, failure string, halted bool, diags []string) []string {
	if !audit.Enabled() {
		return diags
	}
	dir, err := hook.StateDir()
	if err != nil {
		return append(diags, "sitter: audit: "+err.Error())
	}
	ev := c.ev
	e := audit.Entry{
		Harness: ev.Harness, NativeEvent: ev.NativeEvent, Phase: ev.Phase, Session: ev.Session.ID,
		Handlers: hs, Decision: string(res.Decision), Reason: res.Reason, Error: failure, StopCap: c.stopCap, LatencyMs: ms(time.Since(c.start)),
	}
	if e.Harness == "" {
		e.Harness, e.NativeEvent = c.harness, c.event // as given: unresolved
	}
	if e.Decision == "" {
		e.Decision = "noop"
	}
	if halted {
		e.Halted, e.HaltReason = true, res.Reason
	} else if res.Halt {
		// Asked for, but the event has no output that halts: the
		// session goes on (the diagnostic says the halt was dropped).
		e.HaltDropped = true
	}
	if e.Handlers == nil {
		e.Handlers = []audit.Handler{}
	}
	if ev.Tool != nil {
		e.Tool, e.ToolKind = ev.Tool.Name, ev.Tool.Kind
		if ev.Tool.Kind == "shell" {
			e.Command = shellCommand(ev.Tool.Input)
		}
	}
	if c.desc != nil {
		if spec, ok := c.desc.Event(ev.NativeEvent); ok {
			for _, x := range spec.Evidence {
				e.Evidence = append(e.Evidence, x.Kind+": "+x.Ref)
			}
		}
	}
	e.Finish(len(res.UpdatedInput) > 0)
	cfg, errs := audit.FromEnv(dir)
	for _, err := range errs {
		diags = append(diags, "sitter: audit: "+err.Error())
	}
	if err := audit.Append(cfg, e); err != nil {
		return append(diags, "sitter: audit: "+err.Error())
	}
	return diags
}

// shellCommand is a shell tool input's command: a string, or an argv
// array joined with spaces; "" when there is none. Read with the payload
// scanner: encoding/json's reflection costs a cold hook call more.
func shellCommand(input json.RawMessage) string {
	cmd := ""
	s := hook.NewScanner(input)
	s.Document(func(key string) error {
		if key != "command" || cmd != "" {
			return s.Skip()
		}
		raw, err := s.Raw()
		if err != nil || len(raw) == 0 {
			return err
		}
		v := hook.NewScanner(raw)
		switch raw[0] {
		case '"':
			cmd, _ = v.String(key)
		case '[':
			argv, _ := v.Strings(key)
			cmd = strings.Join(argv, " ")
		}
		return nil
	})
	return cmd
}
