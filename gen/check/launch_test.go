package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/gen/model"
)

// TestLaunches: every launch rule reports at the launch's positions.
func TestLaunches(t *testing.T) {
	p := func(col int) model.Pos { return model.Pos{File: "atlas/launch.cue", Line: 5, Col: col} }
	a := &model.Atlas{
		Harnesses: []*model.Harness{{
			ID:     "mini",
			Speaks: []model.Named{{Name: "anthropic"}, {Name: "gemini"}},
			Events: []*model.Event{{Name: "Start", Phase: model.Named{Name: "sessionStart"}}, {Name: "Tool", Phase: model.Named{Name: "preToolUse"}}},
		}},
		Launches: []*model.Launch{{
			Harness:    "mini",
			Pos:        p(1),
			Headless:   []string{"-p", "{promt}"},
			Resume:     []string{"--continue", "{prompt}"},
			ResumeID:   []string{"--resume"},
			PluginKind: "flag",
			Connect: []model.Connect{
				{Protocol: model.Named{Name: "anthropic", Pos: p(2)}, Env: []model.KV{{Name: "URL", Value: "{baseURL}"}, {Name: "KEY", Value: "{key}"}}},
				{Protocol: model.Named{Name: "openai-chat", Pos: p(3)}, Env: []model.KV{{Name: "URL", Value: "{baseURL}"}}},
			},
			Bridge: []model.LaunchHook{
				{Role: "sessionStart", Event: model.Named{Name: "Start", Pos: p(4)}, Payload: `{"s":"{session}"}`},
				{Role: "stop", Event: model.Named{Name: "Tool", Pos: p(5)}, Payload: `{"a":"{stopHookActive}"}`},
				{Role: "sessionEnd", Event: model.Named{Name: "End", Pos: p(6)}, Payload: `not json`},
			},
			Onboarding: []model.LaunchPrompt{
				{ID: "trust", Match: "trust\\?", Keys: "\r", Pos: p(7), Evidence: []model.Evidence{{Kind: "doc", Ref: "x"}}},
				{ID: "trust", Match: "(unclosed", Keys: "", Pos: p(8)},
				{ID: "any", Match: "x*", Keys: "1", Pos: p(9), Evidence: []model.Evidence{{Kind: "doc", Ref: "x"}}},
			},
			Files: []model.LaunchFile{
				{Path: "{home}/s.json", Content: `{"a":"{home}"}`, Pos: p(11)},
				{Path: "{home}/c.toml", Content: `a = "{home}"`, Pos: p(12)},
			},
			TurnEnd: &model.LaunchTurnEnd{Event: model.Named{Name: "Tool", Pos: p(10)},
				Files: []model.LaunchFile{
					{Path: "{home}/s.json", Content: `{"cmd":"{turnEnd}"}`, Pos: p(13)},
					{Path: "{home}/c.toml", Content: `{"hooks":{}}`, Pos: p(14)},
				}},
			Evidence: []model.Evidence{{Kind: "doc", Ref: "x"}},
		}},
	}
	got := Launches(a).Sort()
	want := model.Errors{
		{Pos: p(1), Msg: "harness mini: launch headless args do not pass {prompt}"},
		{Pos: p(1), Msg: "harness mini: launch headless: unknown slot {promt}"},
		{Pos: p(1), Msg: "harness mini: launch plugin kind flag needs args naming {bundle}"},
		{Pos: p(1), Msg: "harness mini: launch resumeId args do not name {session}"},
		{Pos: p(1), Msg: "harness mini: launch turnEnd file {home}/s.json: unknown slot {turnEnd}"},
		{Pos: p(1), Msg: "harness mini: speaks gemini but launch has no connect entry for it: ProxyRequired would pass it through with no way to configure it"},
		{Pos: p(3), Msg: "harness mini: launch connect openai-chat must pass {baseURL} and {key} in its env or files"},
		{Pos: p(3), Msg: "harness mini: launch connects in openai-chat, which is not in its speaks (protocols.cue)"},
		{Pos: p(5), Msg: "harness mini: launch bridge stop: event Tool has phase preToolUse"},
		{Pos: p(6), Msg: "harness mini: launch bridge sessionEnd: payload is not a JSON object: invalid character 'o' in literal null (expecting 'u')"},
		{Pos: p(6), Msg: `harness mini: launch bridge sessionEnd: unknown event "End"`},
		{Pos: p(8), Msg: "harness mini: launch onboarding prompt trust declared twice"},
		{Pos: p(8), Msg: "harness mini: launch onboarding prompt trust has no evidence"},
		{Pos: p(8), Msg: "harness mini: launch onboarding prompt trust types no keys"},
		{Pos: p(8), Msg: "harness mini: launch onboarding prompt trust: match is not a regexp: error parsing regexp: missing closing ): `(unclosed`"},
		{Pos: p(9), Msg: "harness mini: launch onboarding prompt any: match matches an empty screen"},
		{Pos: p(10), Msg: "harness mini: launch turnEnd files never run {turnEndCommand}"},
		{Pos: p(10), Msg: "harness mini: launch turnEnd: event Tool has phase preToolUse, want stop"},
		{Pos: p(12), Msg: "harness mini: launch writes {home}/c.toml more than once (files, connect anthropic, turnEnd): each must be a JSON object to be merged"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
