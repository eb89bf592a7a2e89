package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Slot names the Result field that fills a template position.
type Slot uint8

const (
	NoSlot Slot = iota
	SlotReason
	SlotContext
	SlotUserMessage
	SlotUpdatedInput
	SlotWatchPaths // a JSON array of strings
)

// Member is one key of a JSON object template, in output order. Exactly one
// of Const (raw JSON), Slot or Kids (a nested object) is set.
type Member struct {
	Key   string
	Const string
	Slot  Slot
	Kids  []Member
}

// Rule is how one aspect of a Result is written back to a harness: a JSON
// object template for stdout, an exit code and what goes to stderr.
type Rule struct {
	Stdout []Member
	Exit   int
	Stderr Slot
	// HaltsSession: the atlas says this output halts the session (its
	// effect's session is haltsSession).
	HaltsSession bool
}

// Rules is the render table of one native event, generated from the atlas.
// A nil rule means the event cannot express that aspect.
type Rules struct {
	Allow, Ask, Deny, Block       *Rule
	Context, UserMessage, Rewrite *Rule
	Halt                          *Rule
	// Watch makes the harness watch the result's WatchPaths and raise
	// its fileChanged event when one changes.
	Watch *Rule
}

// Output is a native answer: what the hook process prints and exits with.
// Diags are sitter's own one-line diagnostics for stderr (fields the event
// cannot express); they are kept apart from Stderr, which may carry a reason
// the harness reads.
type Output struct {
	Stdout []byte
	Exit   int
	Stderr []byte
	Diags  []string
	// Halted: a rule that halts the session was rendered.
	Halted bool
}

// Canonical maps a decision onto the phase it answers: on stop phases a deny
// means "keep going" (block); elsewhere a block means deny.
func Canonical(phase string, d Decision) Decision {
	switch {
	case d == "":
		return Noop
	case IsStopPhase(phase) && d == Deny:
		return Block
	case !IsStopPhase(phase) && d == Block:
		return Deny
	}
	return d
}

// Render writes r back in the native format described by rules.
func Render(ev Event, r Result, rules *Rules) Output {
	var out Output
	if rules == nil {
		rules = &Rules{}
	}
	d := Canonical(ev.Phase, r.Decision)
	var apply []*Rule
	drop := func(what string) {
		out.Diags = append(out.Diags, fmt.Sprintf("sitter: %s %s cannot express %s; dropped", ev.Harness, ev.NativeEvent, what))
	}
	rewrite := len(r.UpdatedInput) > 0 && (d == Allow || d == Noop)
	if rewrite && rules.Rewrite == nil {
		rewrite = false
		drop("updatedInput")
		if d == Allow && rules.Allow != nil {
			// The allow approved the call as rewritten; said alone it
			// would approve the call as the agent wrote it. The harness
			// decides as it does when no hook answers.
			d = Noop
			out.Diags = append(out.Diags, fmt.Sprintf("sitter: %s %s: the allow that came with the rewrite is dropped too: it would approve the call as the agent wrote it", ev.Harness, ev.NativeEvent))
		}
	}
	var dr *Rule
	switch d {
	case Allow:
		dr = rules.Allow
	case Ask:
		dr = rules.Ask
	case Deny:
		dr = rules.Deny
	case Block:
		dr = rules.Block
	}
	if d != Noop {
		if dr == nil {
			// An allow that cannot be said is the harness's default anyway.
			if d != Allow {
				drop("decision " + string(d))
			}
		} else {
			apply = append(apply, dr)
		}
	}
	if rewrite {
		apply = append(apply, rules.Rewrite)
	}
	if r.AdditionalContext != "" {
		if rules.Context == nil {
			drop("additionalContext")
		} else {
			apply = append(apply, rules.Context)
		}
	}
	if r.UserMessage != "" {
		if rules.UserMessage == nil {
			drop("userMessage")
		} else {
			apply = append(apply, rules.UserMessage)
		}
	}
	if r.Halt {
		if rules.Halt == nil {
			drop("halt")
		} else {
			apply = append(apply, rules.Halt)
		}
	}
	if len(r.WatchPaths) > 0 {
		if rules.Watch == nil {
			drop("watchPaths")
		} else {
			apply = append(apply, rules.Watch)
		}
	}
	var tmpl []Member
	for _, rule := range apply {
		out.Halted = out.Halted || rule.HaltsSession
		tmpl = mergeMembers(tmpl, rule.Stdout)
		if out.Exit == 0 && rule.Exit != 0 {
			out.Exit = rule.Exit
		}
		if rule.Stderr != NoSlot && len(out.Stderr) == 0 {
			if s, ok := slotText(rule.Stderr, r); ok {
				out.Stderr = []byte(s + "\n")
			}
		}
	}
	if len(tmpl) > 0 {
		var buf bytes.Buffer
		if writeObject(&buf, tmpl, r) {
			buf.WriteByte('\n')
			out.Stdout = buf.Bytes()
		}
	}
	// Strings are encoded valid; a raw updatedInput or a text on stderr
	// may not be: the harness gets valid UTF-8 only.
	out.Stdout, out.Stderr = ValidUTF8(out.Stdout), ValidUTF8(out.Stderr)
	return out
}

// mergeMembers deep-merges b over a: nested objects merge key by key, a
// later scalar replaces an earlier one in place.
func mergeMembers(a, b []Member) []Member {
	res := append([]Member(nil), a...)
	for _, m := range b {
		i := -1
		for j := range res {
			if res[j].Key == m.Key {
				i = j
				break
			}
		}
		switch {
		case i < 0:
			res = append(res, m)
		case res[i].Kids != nil && m.Kids != nil:
			res[i].Kids = mergeMembers(res[i].Kids, m.Kids)
		default:
			res[i] = m
		}
	}
	return res
}

func slotText(s Slot, r Result) (string, bool) {
	switch s {
	case SlotReason:
		return r.Reason, r.Reason != ""
	case SlotContext:
		return r.AdditionalContext, r.AdditionalContext != ""
	case SlotUserMessage:
		return r.UserMessage, r.UserMessage != ""
	case SlotUpdatedInput:
		return string(r.UpdatedInput), len(r.UpdatedInput) > 0
	}
	return "", false
}

// writeObject writes the filled template; keys whose slot is empty and
// objects left empty are omitted. It reports whether anything was written.
func writeObject(buf *bytes.Buffer, ms []Member, r Result) bool {
	start := buf.Len()
	buf.WriteByte('{')
	n := 0
	for _, m := range ms {
		mark := buf.Len()
		if n > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, m.Key)
		buf.WriteByte(':')
		switch {
		case m.Kids != nil:
			if !writeObject(buf, m.Kids, r) {
				buf.Truncate(mark)
				continue
			}
		case m.Slot == SlotUpdatedInput:
			if len(r.UpdatedInput) == 0 {
				buf.Truncate(mark)
				continue
			}
			if err := json.Compact(buf, r.UpdatedInput); err != nil {
				buf.Truncate(mark)
				continue
			}
		case m.Slot == SlotWatchPaths:
			if len(r.WatchPaths) == 0 {
				buf.Truncate(mark)
				continue
			}
			buf.WriteByte('[')
			for i, p := range r.WatchPaths {
				if i > 0 {
					buf.WriteByte(',')
				}
				writeString(buf, p)
			}
			buf.WriteByte(']')
		case m.Slot != NoSlot:
			s, ok := slotText(m.Slot, r)
			if !ok {
				buf.Truncate(mark)
				continue
			}
			writeString(buf, s)
		default:
			buf.WriteString(m.Const)
		}
		n++
	}
	if n == 0 {
		buf.Truncate(start)
		return false
	}
	buf.WriteByte('}')
	return true
}

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Truncate(buf.Len() - 1)
}
