//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// droidRun runs one headless Factory Droid turn (droid exec) against the
// fake LLM, reached through a custom model in the fresh home's
// ~/.factory/settings.json (an OpenAI Chat Completions provider). No login
// is needed for a custom model. --auto high lets the shell tool write files
// (exec is read-only by default).
func droidRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin, env := droidSetup(t, llm, home, more)
	return runCLI(t, project, env, 2*time.Minute, bin, "exec", "--auto", "high", "-m", "custom:Fake-0", prompt)
}

// droidSetup writes the home's settings with the fake LLM as a custom
// model and returns the binary and the environment.
func droidSetup(t *testing.T, llm *llmscript.Server, home string, more []string) (string, []string) {
	t.Helper()
	bin := install(t, clis["droid"])
	dir := filepath.Join(home, ".factory")
	os.MkdirAll(dir, 0o755)
	settings := fmt.Sprintf(`{"customModels": [{"model": "fake-model", "displayName": "Fake", "baseUrl": %q, "apiKey": "sk-fake", "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}]}
`, llm.URL+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, append(baseEnv(t, home), more...)
}

func TestDroidGuard(t *testing.T) { guardCase(t, "droid", "PreToolUse", droidRun) }

// TestDroidProbe: the probe plugin installed into the project's
// .factory/settings.json sees every event of a turn with the turn's
// session, its SessionStart context reaches the model, a Stop block sends
// its reason to the model and the turn goes on (the next Stop says
// stop_hook_active), the tool phases rewrite the command and add context
// (or, with a deny, feedback) after the result, and an observer on every
// phase sees the session's events (SessionEnd too).
func TestDroidProbe(t *testing.T) {
	fidelityNote("droid", "A one-shot `droid exec` does not call `UserPromptSubmit`; a JSON-RPC session does (TestDroidRPC).")
	bundle := probeBundle(t, "droid")
	t.Run("events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		pluginInstall(t, bundle, "droid", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := droidRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("droid: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		if len(reqs) == 0 {
			t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
		}
		t.Run("session-start-context", func(t *testing.T) {
			verified(t, "droid", "add context", "SessionStart")
			if !reqs[0].Contains("CTX-SESSION-START") {
				t.Errorf("the SessionStart context is not in the first model request")
				logRequests(t, llm)
			}
		})
		t.Run("stop-continue", func(t *testing.T) {
			verified(t, "droid", "continue", "Stop")
			if last := reqs[len(reqs)-1]; !last.Contains("REASON-CONTINUE") {
				t.Errorf("the last request does not carry the stop reason (%d requests)", len(reqs))
				logRequests(t, llm)
			}
			stops := stopEvents(events(t, rec))
			if len(stops) != 2 || stops[1].StopHookActive == nil || !*stops[1].StopHookActive {
				t.Errorf("want two stops, the second with stopHookActive; got %d", len(stops))
			}
		})
		evs := events(t, rec)
		observed(t, "droid", evs)
		checkEvents(t, "droid", project, evs, "sessionStart", "preToolUse", "postToolUse", "stop")
		capture(t, "droid", clis["droid"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("tool-phases", func(t *testing.T) {
		rewriteAndToolContext(t, "droid", "PreToolUse", "PostToolUse", func(project, home string) { pluginInstall(t, bundle, "droid", project, home) }, droidRun)
	})
	t.Run("post-tool-deny", func(t *testing.T) {
		postToolDeny(t, "droid", "PostToolUse", false, func(project, home string) { pluginInstall(t, bundle, "droid", project, home) }, droidRun)
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "droid")
		observeAll(t, "droid", func(project, home string) { pluginInstall(t, observer, "droid", project, home) }, droidRun)
	})
}

// TestDroidPluginLoads: Droid loads a plugin folder only through its own
// marketplace, so sitter's install copies the babysitter bundle's skills
// and commands into the project's .factory/: the model is offered the
// babysit skill, and `/plan` reaches it as the command's prompt with the
// text typed after it.
func TestDroidPluginLoads(t *testing.T) {
	tmp := t.TempDir()
	project, home := filepath.Join(tmp, "project"), filepath.Join(tmp, "home")
	os.MkdirAll(project, 0o755)
	os.MkdirAll(home, 0o755)
	pluginInstall(t, filepath.Join(repo(t), "artifacts", "babysitter", "droid"), "droid", project, home)
	llm := startLLM(t, llmscript.Text("done"))
	r := droidRun(t, llm, project, home, nil, "/plan write a haiku")
	if r.err != nil {
		t.Fatalf("droid: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	reqs := llm.Requests()
	if len(reqs) == 0 {
		t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
	}
	if !reqs[0].Contains("\nbabysit: ") {
		t.Errorf("the babysit skill is not among the skills offered to the model")
		logRequests(t, llm)
	}
	if !reqs[0].UserTextContains("Do not create or run it yet.") || !reqs[0].UserTextContains("Task: write a haiku") {
		t.Errorf("/plan did not reach the model as the command's prompt")
		logRequests(t, llm)
	}
}
