//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// Models of the model-switch cases: 2.1.332's default main model, and the
// one a host switches to.
const (
	claudeDefaultModel = "claude-opus-5-5"
	claudeOtherModel   = "claude-opus-4-5"
)

// mainTurnModel reports whether q is a main turn (it offers tools) sent
// with model.
func mainTurnModel(q *llmscript.Request, model string) bool {
	return len(q.ToolNames()) > 0 && q.Contains(`"model":"`+model+`"`)
}

// TestClaudeHostEvents proves the events Claude Code 2.1.332 added, which
// the generated bundles do not register (an older Claude rejects a plugin
// naming them): hooks are written into the project's settings by hand.
// A model switch and a directory added mid-session are a host's doing:
// the cases run claude as the Agent SDK does (claudeSession) and send
// set_model and register_repo_root control requests between turns.
func TestClaudeHostEvents(t *testing.T) {
	// set_model raises PreModelSwitch before the switch and
	// PostModelSwitch after it; PostModelSwitch's added context reaches
	// the model with the first request the new model serves.
	t.Run("model-switch", func(t *testing.T) {
		verified(t, "claude-code", "add context", "PostModelSwitch")
		project, home, rec := probeCase(t, "")
		os.WriteFile(filepath.Join(rec, "afterModelSwitch-reply"), []byte(`{"additionalContext":"CTX-MODEL-SWITCH"}`), 0o644)
		claudeSettingsHooks(t, project, claudeRecorder, "PreModelSwitch", "PostModelSwitch")
		llm := startLLM(t, llmscript.Text("done"))
		s := startClaudeSession(t, llm, project, home, []string{"E2E_DIR=" + rec})
		s.prompt("first")
		if st, msg := s.control(map[string]any{"subtype": "set_model", "model": claudeOtherModel}); st != "success" {
			t.Fatalf("set_model %s: %s %s", claudeOtherModel, st, msg)
		}
		s.prompt("second")
		s.finish()
		evs := events(t, rec)
		pre := nativeEvents(t, "claude-code", project, evs, "PreModelSwitch", "modelSwitch")
		post := nativeEvents(t, "claude-code", project, evs, "PostModelSwitch", "afterModelSwitch")
		observed(t, "claude-code", append(pre, post...))
		for _, e := range append(pre, post...) {
			if !bytes.Contains(e.Raw, []byte(`"to_model":"`+claudeOtherModel+`"`)) || !bytes.Contains(e.Raw, []byte(`"source":"sdk"`)) {
				t.Errorf("%s payload %s: want to_model %s and source sdk", e.NativeEvent, e.Raw, claudeOtherModel)
			}
		}
		if !llm.Any(func(q *llmscript.Request) bool {
			return mainTurnModel(q, claudeOtherModel) && q.Contains("CTX-MODEL-SWITCH")
		}) {
			t.Errorf("the PostModelSwitch context never reached the model with the turn after the switch")
			logRequests(t, llm)
		}
		if llm.Any(func(q *llmscript.Request) bool {
			return mainTurnModel(q, claudeDefaultModel) && q.Contains("CTX-MODEL-SWITCH")
		}) {
			t.Errorf("the PostModelSwitch context reached a turn before the switch")
		}
	})
	// A deny from PreModelSwitch cancels the switch: set_model fails with
	// the reason and the next turn keeps the old model.
	t.Run("model-switch-deny", func(t *testing.T) {
		verified(t, "claude-code", "deny", "PreModelSwitch")
		project, home, rec := probeCase(t, "")
		os.WriteFile(filepath.Join(rec, "modelSwitch-reply"), []byte(`{"decision":"deny","reason":"REASON-MODEL-SWITCH"}`), 0o644)
		claudeSettingsHooks(t, project, claudeRecorder, "PreModelSwitch", "PostModelSwitch")
		llm := startLLM(t, llmscript.Text("done"))
		s := startClaudeSession(t, llm, project, home, []string{"E2E_DIR=" + rec})
		s.prompt("first")
		st, msg := s.control(map[string]any{"subtype": "set_model", "model": claudeOtherModel})
		s.prompt("second")
		s.finish()
		evs := events(t, rec)
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, "PreModelSwitch", "modelSwitch"))
		if st != "error" || !strings.Contains(msg, "REASON-MODEL-SWITCH") {
			t.Errorf("set_model answered %s %q, want an error carrying the deny's reason", st, msg)
		}
		if llm.Any(func(q *llmscript.Request) bool { return mainTurnModel(q, claudeOtherModel) }) {
			t.Errorf("a turn went to %s although the hook denied the switch", claudeOtherModel)
		}
		if !llm.Any(func(q *llmscript.Request) bool {
			return mainTurnModel(q, claudeDefaultModel) && q.UserTextContains("second")
		}) {
			t.Errorf("the turn after the denied switch did not keep %s", claudeDefaultModel)
			logRequests(t, llm)
		}
		for _, e := range evs {
			if e.NativeEvent == "PostModelSwitch" {
				t.Errorf("PostModelSwitch fired although the switch was denied: %s", e.Raw)
			}
		}
	})
	// register_repo_root adds a folder of the project as a working
	// directory and raises DirectoryAdded (source register_repo_root).
	t.Run("directory-added", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		sub := filepath.Join(project, "sub")
		os.MkdirAll(sub, 0o755)
		claudeSettingsHooks(t, project, claudeRecorder, "DirectoryAdded")
		llm := startLLM(t, llmscript.Text("done"))
		s := startClaudeSession(t, llm, project, home, []string{"E2E_DIR=" + rec})
		s.prompt("first")
		if st, msg := s.control(map[string]any{"subtype": "register_repo_root", "directory": sub}); st != "success" {
			t.Fatalf("register_repo_root %s: %s %s", sub, st, msg)
		}
		recorded(rec, "DirectoryAdded", 20*time.Second, nil)
		s.finish()
		got := nativeEvents(t, "claude-code", project, events(t, rec), "DirectoryAdded", "directoryAdded")
		observed(t, "claude-code", got)
		if !bytes.Contains(got[0].Raw, []byte(`"directory":"`+sub+`"`)) || !bytes.Contains(got[0].Raw, []byte(`"source":"register_repo_root"`)) {
			t.Errorf("DirectoryAdded payload %s: want directory %s, source register_repo_root", got[0].Raw, sub)
		}
	})
	// A DirectoryAdded hook's continue:false and systemMessage go nowhere:
	// the next turn runs, and the message shows neither in claude's output
	// nor to the model (the atlas claims no output there). The case fails
	// if a Claude version starts honouring either.
	t.Run("directory-added-output", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		sub := filepath.Join(project, "sub")
		os.MkdirAll(sub, 0o755)
		h := haltHook("DirectoryAdded", "halted")
		h.command = strings.Replace(h.command, `"HALT-E2E"`, `"HALT-E2E","systemMessage":"SAY-DIRECTORY-ADDED"`, 1)
		claudeSettings(t, project, h)
		llm := startLLM(t, llmscript.Text("done"))
		s := startClaudeSession(t, llm, project, home, []string{"E2E_DIR=" + rec})
		s.prompt("first")
		if st, msg := s.control(map[string]any{"subtype": "register_repo_root", "directory": sub}); st != "success" {
			t.Fatalf("register_repo_root %s: %s %s", sub, st, msg)
		}
		if !waitFile(filepath.Join(rec, "halted"), 20*time.Second, nil) {
			t.Fatalf("the DirectoryAdded hook never ran\n%s", s.output())
		}
		s.prompt("second")
		r := s.finish()
		if !llm.Any(func(q *llmscript.Request) bool { return len(q.ToolNames()) > 0 && q.UserTextContains("second") }) {
			t.Errorf("no turn ran after the DirectoryAdded hook answered continue:false: Claude now honours it there; claim halt on DirectoryAdded in the atlas again")
		}
		if strings.Contains(r.stdout+r.stderr, "SAY-DIRECTORY-ADDED") || llm.Any(func(q *llmscript.Request) bool { return q.Contains("SAY-DIRECTORY-ADDED") }) {
			t.Errorf("the DirectoryAdded hook's systemMessage showed: claim userMessage on DirectoryAdded in the atlas again\n%s", r.stdout)
		}
	})
	// A skill's inline shell command (!`…`) raises PreSkillShellCommand
	// when the skill runs (here typed as /e2e-skill); its output goes into
	// the prompt. A deny keeps the command from running.
	skill := func(reply string) (llm *llmscript.Server, project string, evs []event) {
		project, home, rec := probeCase(t, "")
		if reply != "" {
			os.WriteFile(filepath.Join(rec, "preToolUse-reply"), []byte(reply), 0o644)
		}
		claudeSettingsHooks(t, project, claudeRecorder, "PreSkillShellCommand")
		dir := filepath.Join(project, ".claude", "skills", "e2e-skill")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: e2e-skill\ndescription: e2e skill\nallowed-tools: Bash(printf:*)\n---\nSKILL-BODY: !`printf 'SKILL-%s' RAN`\n"), 0o644)
		llm = startLLM(t, llmscript.Text("done"))
		r := claudeRunEnv(t, llm, project, home, []string{"E2E_DIR=" + rec}, "/e2e-skill")
		if r.err != nil {
			t.Logf("claude exited with %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		return llm, project, events(t, rec)
	}
	ran := func(q *llmscript.Request) bool { return q.Contains("SKILL-RAN") }
	t.Run("skill-shell", func(t *testing.T) {
		llm, project, evs := skill("")
		got := nativeEvents(t, "claude-code", project, evs, "PreSkillShellCommand", "preToolUse")
		observed(t, "claude-code", got)
		if !bytes.Contains(got[0].Raw, []byte(`"command_name":"e2e-skill"`)) {
			t.Errorf("PreSkillShellCommand payload %s: want command_name e2e-skill", got[0].Raw)
		}
		if !llm.Any(ran) {
			t.Errorf("the skill's command output never reached the model")
			logRequests(t, llm)
		}
	})
	t.Run("skill-shell-deny", func(t *testing.T) {
		verified(t, "claude-code", "deny", "PreSkillShellCommand")
		llm, project, evs := skill(`{"decision":"deny","reason":"REASON-SKILL-SHELL"}`)
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, "PreSkillShellCommand", "preToolUse"))
		if llm.Any(ran) {
			t.Errorf("the denied skill command ran: its output reached the model")
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("SKILL-BODY") }) {
			t.Errorf("the skill never reached the model")
			logRequests(t, llm)
		}
	})
}
