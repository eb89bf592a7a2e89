package checkpoint

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	gen "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/transcript"
)

// A turn from userPromptSubmit to stop: a base and a turn checkpoint whose
// diff is the turn's edits and whose record carries the transcript's
// prompts, files and usage since the turn began.
func TestPhaseMachine(t *testing.T) {
	transcript.Specs = gen.Specs
	dir := newRepo(t, true)
	before := userState(t, dir)
	r, _ := Open(dir)
	tp := filepath.Join(t.TempDir(), "s.jsonl")
	old := `{"type":"user","message":{"role":"user","content":"an earlier turn"}}` + "\n"
	os.WriteFile(tp, []byte(old), 0o644)
	ev := func(phase string) hook.Event {
		return hook.Event{Harness: "claude-code", Phase: phase, Session: hook.Session{ID: "sess", Cwd: dir, TranscriptPath: tp}}
	}
	if r.Phase("sess") != Idle {
		t.Fatal("a new session is not idle")
	}
	base, err := r.OnEvent(ev("userPromptSubmit"))
	if err != nil || base == nil || base.Kind != "base" || base.TranscriptPos != 1 || r.Phase("sess") != Active {
		t.Fatalf("base %+v %v", base, err)
	}
	if again, _ := r.OnEvent(ev("userPromptSubmit")); again != nil {
		t.Error("a second turn start made another base")
	}
	writeFile(t, dir, "edit.txt", "by the agent\n")
	f, _ := os.OpenFile(tp, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"user","message":{"role":"user","content":"fix edit.txt"}}` + "\n" +
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","name":"Edit","input":{"file_path":"edit.txt"}}],"usage":{"input_tokens":3,"output_tokens":2}}}` + "\n")
	f.Close()
	turn, err := r.OnEvent(ev("stop"))
	if err != nil || turn == nil {
		t.Fatal(err)
	}
	if turn.Kind != "turn" || turn.Parent != base.ID || turn.TranscriptPos != 3 ||
		!reflect.DeepEqual(turn.Prompts, []string{"fix edit.txt"}) || !reflect.DeepEqual(turn.ModifiedFiles, []string{"edit.txt"}) ||
		turn.Usage == nil || turn.Usage.Input != 3 || r.Phase("sess") != Idle {
		t.Errorf("turn %+v", turn)
	}
	if ch, _ := r.Changes(turn); !reflect.DeepEqual(ch, []string{"M\tedit.txt"}) {
		t.Errorf("changes %q", ch)
	}
	// A stop with nothing changed since: no checkpoint.
	if again, _ := r.OnEvent(ev("stop")); again != nil {
		t.Error("an unchanged stop made a checkpoint")
	}
	// The session ends after its last turn was recorded: nothing to add.
	if again, _ := r.OnEvent(ev("sessionEnd")); again != nil {
		t.Error("an unchanged session end made a checkpoint")
	}
	// Changes after the last turn are recorded at the end.
	writeFile(t, dir, "late.txt", "late\n")
	end, err := r.OnEvent(ev("sessionEnd"))
	if err != nil || end == nil || !end.Ended || r.Phase("sess") != Ended {
		t.Errorf("end %+v %v", end, err)
	}
	if userState(t, dir) != before {
		t.Error("user state changed")
	}
}

// The harnesses' protected dirs (.claude, …) are not checkpointed, so a
// restore leaves them alone.
func TestProtectedDirs(t *testing.T) {
	transcript.Presences = gen.Presences
	defer func() { transcript.Presences = nil }()
	dir := newRepo(t, true)
	r, _ := Open(dir)
	base, _, _ := r.Create(Meta{Kind: "base", Session: "p"})
	writeFile(t, dir, ".claude/settings.json", "{}\n")
	writeFile(t, dir, ".sitter/plugins/x/claude-code/bin/sitter-hook", "#!/bin/sh\n")
	writeFile(t, dir, "work.txt", "w\n")
	turn, _, err := r.Create(Meta{Kind: "turn", Session: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if ch, _ := r.Changes(turn); !reflect.DeepEqual(ch, []string{"A\twork.txt"}) {
		t.Errorf("changes %q", ch)
	}
	if _, _, err := r.Restore(base, nil, false); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "work.txt") != "<missing>" || read(t, dir, ".claude/settings.json") != "{}\n" || read(t, dir, ".sitter/plugins/x/claude-code/bin/sitter-hook") == "<missing>" {
		t.Error("restore touched a protected dir or missed work.txt")
	}
}
