package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/gen/model"
)

// speaks is checked here rather than in a golden: a golden would need a
// whole valid harness, whose schema other changes keep growing.
func TestSpeaks(t *testing.T) {
	p := func(col int) model.Pos { return model.Pos{File: "atlas/protocols.cue", Line: 3, Col: col} }
	a := &model.Atlas{Harnesses: []*model.Harness{{
		ID:     "mini",
		Speaks: []model.Named{{Name: "openai-chat", Pos: p(1)}, {Name: "openai-chat", Pos: p(2)}, {Name: "smoke", Pos: p(3)}},
	}}}
	got := Providers(a).Sort()
	want := model.Errors{
		{Pos: p(2), Msg: `harness mini: protocol "openai-chat" listed twice in speaks`},
		{Pos: p(3), Msg: `harness mini: speaks unknown protocol "smoke" (known: anthropic, gemini, openai-chat, openai-responses)`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
