//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/transcript"
)

// ompRun runs one headless oh-my-pi turn (omp -p) against the fake LLM,
// reached through a custom OpenAI Chat Completions provider in the fresh
// home's ~/.omp/agent/models.yml. omp is a Bun script: the Bun binary the
// suite installs next to it goes first on PATH.
func ompRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin, env := ompSetup(t, llm, home, more, nil)
	return runCLI(t, project, env, 2*time.Minute, bin,
		"--model", "fake/fake-model", "--no-title", "-p", prompt)
}

// ompSetup writes the fake LLM as the provider "fake" (fake-model, and
// models: more entries of its model list as YAML flow mappings) into the
// fresh home's ~/.omp/agent/models.yml and returns the binary and
// environment.
func ompSetup(t *testing.T, llm *llmscript.Server, home string, more, models []string) (string, []string) {
	t.Helper()
	bin := install(t, clis["oh-my-pi"])
	dir := filepath.Join(home, ".omp", "agent")
	os.MkdirAll(dir, 0o755)
	config := fmt.Sprintf(`providers:
  fake:
    baseUrl: %q
    api: openai-completions
    apiKey: sk-fake
    models:
      - id: fake-model
        reasoning: false
        compat:
          supportsDeveloperRole: false
          supportsReasoningEffort: false
`, llm.URL+"/v1")
	for _, m := range models {
		config += "      - " + m + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "models.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := withCLIPath(baseEnv(t, home), clis["oh-my-pi"])
	return bin, append(append(env, more...), "PI_NO_TITLE=1")
}

func TestOhMyPiGuard(t *testing.T) { guardCase(t, "oh-my-pi", "tool_call", ompRun) }

func TestOhMyPiProbe(t *testing.T) {
	bundle := probeBundle(t, "oh-my-pi")
	withProbe := func(project, home string) { pluginInstall(t, bundle, "oh-my-pi", project, home) }
	t.Run("context-events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		withProbe(project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := ompRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("omp: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		if len(reqs) == 0 {
			t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-SESSION-START") }) {
			t.Errorf("session-start context never reached the model")
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-BUILD") }) {
			t.Errorf("before-agent-start context never reached the model")
		}
		if last := reqs[len(reqs)-1]; !last.Contains("REASON-CONTINUE") {
			t.Errorf("the last request does not carry the stop reason (%d requests)\n%s", len(reqs), r.stderr)
		}
		evs := events(t, rec)
		observed(t, "oh-my-pi", evs)
		verified(t, "oh-my-pi", "add context", "session_start", "before_agent_start")
		verified(t, "oh-my-pi", "continue", "session_stop")
		checkEvents(t, "oh-my-pi", project, evs, "sessionStart", "beforePromptBuild", "preToolUse", "postToolUse", "stop")
		stops := stopEvents(evs)
		if len(stops) != 2 {
			t.Fatalf("want two stops (the block, then the end of the continued run); got %d", len(stops))
		}
		if a := stops[0].StopHookActive; a == nil || *a {
			t.Errorf("the first stop should say stop_hook_active false; got %v", a)
		}
		if a := stops[1].StopHookActive; a == nil || !*a {
			t.Errorf("the continued stop should say stop_hook_active true; got %v", a)
		}
		capture(t, "oh-my-pi", clis["oh-my-pi"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-cap", func(t *testing.T) {
		project, home, rec := probeCase(t, "always")
		verified(t, "oh-my-pi", "continue", "session_stop")
		withProbe(project, home)
		llm := startLLM(t, llmscript.Text("done"))
		r := ompRun(t, llm, project, home, []string{"E2E_DIR=" + rec, "SITTER_STOP_CAP=3"}, "finish")
		if r.err != nil {
			t.Fatalf("omp: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("model requests = %d, want 4 (1 + 3 blocks before the cap)", n)
		}
		if n := phases(events(t, rec))["stop"]; n != 4 {
			t.Errorf("stop hook calls = %d, want 4", n)
		}
	})
	// No rewrite case: omp reads a replacement input from the tool_call
	// result, and the Pi bridge replaces event.input in place, a copy omp
	// does not read back (the atlas does not claim rewriteInput). No
	// prompt-deny case: input fires only for what is typed in the TUI.
	replier := replierBundle(t, "oh-my-pi")
	withReplier := func(project, home string) { pluginInstall(t, replier, "oh-my-pi", project, home) }
	t.Run("tool-context", func(t *testing.T) {
		addContext(t, "oh-my-pi", "postToolUse", "tool_result", false, llmscript.ShellThenText("echo hi", "done"), withReplier, ompRun)
	})
	t.Run("transcript", func(t *testing.T) {
		// The session file the bridge hands over (ctx.sessionFile) is
		// the one the atlas's location finds, and sitter reads the turn
		// from it: the prompt, the shell call, the answer, the usage.
		llm, project, evs := replyTurn(t, "oh-my-pi", nil, llmscript.ShellThenText("echo hi > note.txt", "done: PROOF-1"), "create note.txt saying hi", withReplier, ompRun)
		stops := nativeEvents(t, "oh-my-pi", project, evs, "session_stop", "stop")
		var payload struct {
			Ctx struct{ SessionFile string } `json:"ctx"`
		}
		if err := json.Unmarshal(stops[0].Raw, &payload); err != nil || payload.Ctx.SessionFile == "" {
			t.Fatalf("session_stop carries no ctx.sessionFile (%v): %s", err, stops[0].Raw)
		}
		home := filepath.Join(filepath.Dir(project), "home")
		var sp *transcript.Spec
		for i := range gentranscript.Specs {
			if gentranscript.Specs[i].Harness == "oh-my-pi" {
				sp = &gentranscript.Specs[i]
			}
		}
		if sp == nil {
			t.Fatal("no transcript spec for oh-my-pi")
		}
		found, _, err := transcript.Resolve(sp, "", stops[0].Session.ID, project, home, func(string) string { return "" })
		if err != nil || found != payload.Ctx.SessionFile {
			t.Errorf("the atlas's location finds %q (%v), the bridge names %q", found, err, payload.Ctx.SessionFile)
		}
		s, err := transcript.ReadFile(sp, payload.Ctx.SessionFile, 0, transcript.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Prompts) != 1 || s.Prompts[0] != "create note.txt saying hi" {
			t.Errorf("prompts = %q", s.Prompts)
		}
		if s.LastAssistant != "done: PROOF-1" {
			t.Errorf("last assistant = %q", s.LastAssistant)
		}
		if len(s.ToolCalls) != 1 || s.ToolCalls[0].Name != "bash" {
			t.Errorf("tool calls = %+v, want one bash", s.ToolCalls)
		}
		if want := (transcript.Usage{Input: 200, Output: 20}); s.Usage != want {
			t.Errorf("usage = %+v, want %+v", s.Usage, want)
		}
		if n := len(llm.Requests()); n != 2 {
			t.Errorf("model requests = %d, want 2", n)
		}
	})
	t.Run("no-resources-discover", func(t *testing.T) {
		// oh-my-pi 18.2.3 declares resources_discover but never fires it
		// (the atlas says unsupported): an extension subscribed to it
		// directly, and to session_start as a control, sees only the
		// latter. This fails once oh-my-pi fires the event.
		project, home, rec := probeCase(t, "")
		dir := filepath.Join(project, ".omp", "extensions")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "e2e-raw.ts"), []byte(rawEventsExtension("session_start", "resources_discover")), 0o644)
		llm := startLLM(t, llmscript.Text("done"))
		if r := ompRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "say done"); r.err != nil {
			t.Fatalf("omp: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		b, _ := os.ReadFile(filepath.Join(rec, "raw-events.txt"))
		if !strings.Contains(string(b), "session_start") {
			t.Fatalf("the extension did not run: raw events %q", b)
		}
		if strings.Contains(string(b), "resources_discover") {
			t.Errorf("oh-my-pi fired resources_discover: the atlas's unsupported is stale (raw events %q)", b)
		}
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "oh-my-pi")
		observeAll(t, "oh-my-pi", func(project, home string) { pluginInstall(t, observer, "oh-my-pi", project, home) }, ompRun)
	})
}

// rawEventsExtension is a Pi-family extension that appends the name of
// each of events to $E2E_DIR/raw-events.txt when it fires, without sitter.
func rawEventsExtension(events ...string) string {
	names, _ := json.Marshal(events)
	return `import { appendFileSync } from "node:fs";
import { join } from "node:path";

export default function (pi: any) {
  for (const name of ` + string(names) + `) {
    pi.on(name, () => {
      appendFileSync(join(process.env.E2E_DIR ?? ".", "raw-events.txt"), name + "\n");
    });
  }
}
`
}
