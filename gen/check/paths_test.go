package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/gen/model"
)

// A command-object source is a string, so it may take the first string of
// an array (Cline's run_commands: {"commands": [...]}), and it changes the
// type of its own path only: a later source of the same field is still
// read as JSON.
func TestPathsCommandObject(t *testing.T) {
	p := func(col int) model.Pos { return model.Pos{File: "atlas/harnesses/mini.cue", Line: 9, Col: col} }
	h := &model.Harness{ID: "mini", Fields: []model.FieldSources{{
		Field: "toolInput",
		Sources: []model.Source{
			{Path: "call.input.commands[0]", As: "command-object", Pos: p(1)},
			{Path: "call.params", Pos: p(2)},
			{Path: "args[0]", Pos: p(3)},
		},
	}, {
		Field:   "sessionId",
		Sources: []model.Source{{Path: "call.params", Pos: p(4)}},
	}}}
	got := checkPaths(h)
	want := model.Errors{
		{Pos: p(3), Msg: `field toolInput: bad payload path "args[0]": [0] takes the first string of an array and must end the path of a string field`},
		{Pos: p(4), Msg: `payload path "call.params" is read as string for sessionId but as json for toolInput (at atlas/harnesses/mini.cue:9:2)`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
