package hook

import (
	"encoding/json"
	"testing"
)

// preToolUseRules is Claude Code's PreToolUse render table, as the atlas
// declares it.
func preToolUseRules() *Rules {
	hso := func(kids ...Member) []Member {
		return []Member{{Key: "hookSpecificOutput", Kids: append([]Member{{Key: "hookEventName", Const: `"PreToolUse"`}}, kids...)}}
	}
	decision := func(d string) *Rule {
		return &Rule{Stdout: hso(Member{Key: "permissionDecision", Const: `"` + d + `"`}, Member{Key: "permissionDecisionReason", Slot: SlotReason})}
	}
	return &Rules{
		Allow:       decision("allow"),
		Ask:         decision("ask"),
		Deny:        decision("deny"),
		Rewrite:     &Rule{Stdout: hso(Member{Key: "permissionDecision", Const: `"allow"`}, Member{Key: "updatedInput", Slot: SlotUpdatedInput})},
		Context:     &Rule{Stdout: hso(Member{Key: "additionalContext", Slot: SlotContext})},
		UserMessage: &Rule{Stdout: []Member{{Key: "systemMessage", Slot: SlotUserMessage}}},
		Halt:        &Rule{Stdout: []Member{{Key: "continue", Const: "false"}, {Key: "stopReason", Slot: SlotReason}}},
	}
}

func TestPreToolUseRules(t *testing.T) {
	out := Render(shellEvent("preToolUse"), Result{Decision: Deny, Reason: "R"}, preToolUseRules())
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}` + "\n"
	if string(out.Stdout) != want || out.Exit != 0 || out.Diags != nil {
		t.Errorf("Render = %q exit %d diags %q; want %q", out.Stdout, out.Exit, out.Diags, want)
	}
}

func BenchmarkRender(b *testing.B) {
	ev := shellEvent("preToolUse")
	rules := preToolUseRules()
	r := Result{Decision: Deny, Reason: "git push is blocked by policy; open a PR instead", AdditionalContext: "repo uses pnpm", UserMessage: "policy hook"}
	b.ReportAllocs()
	for b.Loop() {
		Render(ev, r, rules)
	}
}

func BenchmarkMerge(b *testing.B) {
	h := Handler{Command: "h", OnError: FailOpen}
	outs := []Outcome{
		{Handler: h, Result: Result{Decision: Allow, Reason: "read-only", AdditionalContext: "a"}},
		{Handler: h, Result: Result{Decision: Deny, Reason: "no pushes", UserMessage: "m"}},
		{Handler: h, Result: Result{Decision: Noop, UpdatedInput: json.RawMessage(`{"command":"ls"}`)}},
		{Handler: h, Err: &HandlerError{ErrExit, "exit status 1"}},
	}
	b.ReportAllocs()
	for b.Loop() {
		Merge("preToolUse", outs)
	}
}
