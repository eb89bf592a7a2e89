package model

// The phase facts the generator and the runtime rely on, in one place.
// gen/check and the emitters ask these functions, never a list of their
// own; runtime/hook.IsStopPhase says the same of stops (TestPhaseFacts in
// gen/golden holds the two together).
var (
	stopPhases = map[string]bool{"stop": true, "subagentStop": true}
	toolPhases = map[string]bool{
		"preToolUse": true, "postToolUse": true, "postToolUseFailure": true,
		"permissionRequest": true, "permissionDenied": true,
	}
)

// Stops reports whether a phase is a stop: there "block" keeps the agent
// going and refusing is a block; everywhere else refusing is a deny.
func Stops(phase string) bool { return stopPhases[phase] }

// CarriesTool reports whether a phase's events carry a tool call, where a
// handler's tool-kind matcher applies.
func CarriesTool(phase string) bool { return toolPhases[phase] }
