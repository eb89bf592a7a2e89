package adapter

import "testing"

func TestClosest(t *testing.T) {
	phases := []string{"preToolUse", "postToolUse", "sessionStart", "sessionEnd", "stop", "userPromptSubmit"}
	harnesses := []string{"claude-code", "codex", "gemini-cli", "pi", "kilo-code", "oh-my-pi"}
	for _, c := range []struct {
		name  string
		cands []string
		want  string
	}{
		{"PreToolUse", phases, "preToolUse"},                      // case
		{"preTool", phases, "preToolUse"},                         // the only one it begins
		{"preTooluse", phases, "preToolUse"},                      // case again
		{"session", phases, ""},                                   // begins two: no guess
		{"stpo", phases, ""},                                      // two edits: too many for four letters
		{"sto", phases, "stop"},                                   // one edit
		{"gemni", harnesses, ""},                                  // five edits from gemini-cli (the registry knows the alias gemini)
		{"clau", harnesses, ""},                                   // begins one, but a third of it
		{"claude-c", harnesses, "claude-code"},                    // begins one, most of it
		{"px", harnesses, ""},                                     // too short for an edit
		{"pi", harnesses, "pi"},                                   // itself
		{"codx", harnesses, "codex"},                              // one edit
		{"xyzzy", harnesses, ""},                                  // nothing close
		{"kilo-c", harnesses, "kilo-code"},                        // begins one
		{"BeforeTool", append(phases, "beforeToolSelection"), ""}, // begins one, but half of it
		{"cod", harnesses, ""},                                    // too short to be taken as a start, two edits from codex
	} {
		if got := Closest(c.name, c.cands); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
