//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
	"sitter.dev/sitter/gen"
	"sitter.dev/sitter/gen/write"
)

const geminiModel = "gemini-2.5-flash"

// geminiRun runs one headless Gemini CLI turn against the fake LLM (Gemini
// API) in project, with user settings selecting API-key auth in the fresh
// home.
func geminiRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin, env := geminiSetup(t, llm, home, more)
	return runCLI(t, project, env, 2*time.Minute, bin,
		"-m", geminiModel, "-p", prompt, "--output-format", "json", "--approval-mode", "yolo")
}

// geminiSetup writes the home's settings (API-key auth, no updates or
// telemetry) and returns the binary and the environment that points it at
// the fake LLM.
func geminiSetup(t *testing.T, llm *llmscript.Server, home string, more []string) (string, []string) {
	t.Helper()
	bin := install(t, clis["gemini-cli"])
	dir := filepath.Join(home, ".gemini")
	os.MkdirAll(dir, 0o755)
	settings := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(append(baseEnv(t, home), more...),
		"GEMINI_API_KEY=fake-key",
		"GOOGLE_GEMINI_BASE_URL="+llm.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	)
	return bin, env
}

func TestGeminiGuard(t *testing.T) { guardCase(t, "gemini-cli", "BeforeTool", geminiRun) }

func TestGeminiProbe(t *testing.T) {
	bundle := probeBundle(t, "gemini-cli")
	t.Run("context-events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		pluginInstall(t, bundle, "gemini-cli", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := geminiRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		if len(reqs) == 0 {
			t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-SESSION-START") }) {
			t.Errorf("session-start context never reached the model")
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-SUBMIT") }) {
			t.Errorf("prompt-submit context never reached the model")
		}
		if last := reqs[len(reqs)-1]; !last.Contains("REASON-CONTINUE") {
			t.Errorf("the last request does not carry the stop reason (%d requests)", len(reqs))
		}
		evs := events(t, rec)
		observed(t, "gemini-cli", evs)
		verified(t, "gemini-cli", "add context", "SessionStart", "BeforeAgent")
		verified(t, "gemini-cli", "continue", "AfterAgent")
		checkEvents(t, "gemini-cli", project, evs, "sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
		stops := stopEvents(evs)
		if len(stops) != 2 || stops[1].StopHookActive == nil || !*stops[1].StopHookActive {
			t.Errorf("want two stops, the second with stopHookActive; got %d", len(stops))
		}
		capture(t, "gemini-cli", clis["gemini-cli"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-cap", func(t *testing.T) {
		project, home, rec := probeCase(t, "always")
		verified(t, "gemini-cli", "continue", "AfterAgent")
		pluginInstall(t, bundle, "gemini-cli", project, home)
		llm := startLLM(t, llmscript.Text("done"))
		r := geminiRun(t, llm, project, home, []string{"E2E_DIR=" + rec, "SITTER_STOP_CAP=3"}, "finish")
		if r.err != nil {
			t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("model requests = %d, want 4 (1 + 3 blocks before the cap)", n)
		}
		if n := phases(events(t, rec))["stop"]; n != 4 {
			t.Errorf("stop hook calls = %d, want 4", n)
		}
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "gemini-cli", "BeforeTool", "AfterTool",
			func(project, home string) { pluginInstall(t, bundle, "gemini-cli", project, home) }, geminiRun)
	})
	t.Run("prompt-deny", func(t *testing.T) {
		promptDeny(t, "gemini-cli", "BeforeAgent", "REASON-PROMPT-BLOCKED",
			func(project, home string) { pluginInstall(t, bundle, "gemini-cli", project, home) }, geminiRun)
	})
	t.Run("post-tool-deny", func(t *testing.T) {
		postToolDeny(t, "gemini-cli", "AfterTool", true,
			func(project, home string) { pluginInstall(t, bundle, "gemini-cli", project, home) }, geminiRun)
	})
	replier := replierBundle(t, "gemini-cli")
	withReplier := func(project, home string) { pluginInstall(t, replier, "gemini-cli", project, home) }
	t.Run("before-model-deny", func(t *testing.T) {
		beforeModelDeny(t, "gemini-cli", "BeforeModel", withReplier, geminiRun)
	})
	t.Run("after-model-deny-ignored", func(t *testing.T) {
		// Gemini's own behaviour, without sitter (which no longer renders
		// a deny here): 0.61.0 reports an AfterModel decision:deny
		// ("Agent execution blocked: <reason>" in the JSON output's
		// warnings), then applies the chunk it was given as the
		// synthetic response, so the model's tool call runs. This case
		// is why the atlas has no deny for AfterModel; it fails if a
		// version starts honouring the deny.
		project, home, _ := probeCase(t, "")
		os.MkdirAll(filepath.Join(project, ".gemini"), 0o755)
		deny := `echo '{"decision":"deny","reason":"REASON-MODEL-BLOCKED"}'`
		settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"AfterModel": []any{
			map[string]any{"hooks": []any{map[string]any{"type": "command", "command": deny}}},
		}}})
		os.WriteFile(filepath.Join(project, ".gemini", "settings.json"), settings, 0o644)
		llm := startLLM(t, llmscript.ShellThenText("echo leaked > leaked.txt", "done"))
		r := geminiRun(t, llm, project, home, nil, "write a file")
		if r.err != nil {
			t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		mustContain(t, "gemini output", r.stdout, "Agent execution blocked: REASON-MODEL-BLOCKED")
		if !exists(filepath.Join(project, "leaked.txt")) {
			t.Errorf("the AfterModel deny discarded the model's tool call: honoured now, put deny back in the atlas")
		}
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "gemini-cli")
		observeAll(t, "gemini-cli", func(project, home string) { pluginInstall(t, observer, "gemini-cli", project, home) }, geminiRun)
	})
}

// The generated bundle is a Gemini extension: `gemini extensions install`
// accepts it (with the user's consent and folder trust), and its hooks
// (hooks/hooks.json with ${extensionPath}) then guard the session.
func TestGeminiExtensionInstall(t *testing.T) {
	tmp := t.TempDir()
	project, outside, home := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside"), filepath.Join(tmp, "home")
	for _, d := range []string{project, outside, home} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
	// geminiRun writes the settings; a first run with a text answer does that.
	llm.SetScript(llmscript.Text("ready"))
	if r := geminiRun(t, llm, project, home, nil, "hello"); r.err != nil {
		t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	bin := install(t, clis["gemini-cli"])
	cmd := exec.Command(bin, "extensions", "install", filepath.Join(repo(t), "artifacts", "guard", "gemini-cli"), "--consent")
	cmd.Dir = project
	cmd.Env = append(baseEnv(t, home), "GEMINI_CLI_TRUST_WORKSPACE=true")
	cmd.Stdin = strings.NewReader("y\n") // trust the extension's folder
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `Extension "guard" installed successfully`) {
		t.Fatalf("gemini extensions install: %v\n%s", err, out)
	}
	llm.SetScript(llmscript.ShellThenText("rm -rf "+outside, "done"))
	r := geminiRun(t, llm, project, home, nil, "clean up")
	if r.err != nil {
		t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if !exists(filepath.Join(outside, "keep.txt")) {
		t.Fatalf("the installed extension did not stop rm -rf %s\n%s\n%s", outside, r.stdout, r.stderr)
	}
	if !llm.Any(func(r *llmscript.Request) bool { return r.HasToolResult() && r.Contains("guard: recursive-delete") }) {
		t.Errorf("the model never received the guard's reason")
	}
}

// TestGeminiCommandArgs: a bundle's slash command gets what the user typed
// after it where its source wrote $ARGUMENTS. Gemini CLI expands only
// {{args}} (and otherwise appends the whole invocation), so the bundle
// must carry Gemini's placeholder: the model reads "Task: <the text>".
// The plugin has no hooks: in a headless run Gemini CLI puts a
// SessionStart hook's context before the prompt, and a prompt that does
// not start with "/" runs no command (docs/harnesses.md).
func TestGeminiCommandArgs(t *testing.T) {
	root := t.TempDir()
	if err := copyDir(filepath.Join(repo(t), "atlas"), filepath.Join(root, "atlas")); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "plugins-src", "argsdemo")
	os.MkdirAll(filepath.Join(src, "commands"), 0o755)
	os.WriteFile(filepath.Join(src, "plugin.yaml"), []byte("name: argsdemo\nversion: 0.0.1\ndescription: A command that takes arguments.\nharnesses: [gemini-cli]\n"), 0o644)
	os.WriteFile(filepath.Join(src, "commands", "task.md"), []byte("---\ndescription: Start a task.\n---\nPlan this first.\n\nTask: $ARGUMENTS\n"), 0o644)
	_, files, err := gen.Generate(root)
	if err == nil {
		_, err = write.Files(root, files, gen.Owned)
	}
	if err != nil {
		t.Fatal(err)
	}

	project, home := filepath.Join(root, "project"), filepath.Join(root, "home")
	for _, d := range []string{project, home} {
		os.MkdirAll(d, 0o755)
	}
	llm := startLLM(t, llmscript.Text("ready"))
	// geminiRun writes the settings; a first run with a text answer does that.
	if r := geminiRun(t, llm, project, home, nil, "hello"); r.err != nil {
		t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	bin := install(t, clis["gemini-cli"])
	cmd := exec.Command(bin, "extensions", "install", filepath.Join(root, "artifacts", "argsdemo", "gemini-cli"), "--consent")
	cmd.Dir = project
	cmd.Env = append(baseEnv(t, home), "GEMINI_CLI_TRUST_WORKSPACE=true")
	cmd.Stdin = strings.NewReader("y\n")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `Extension "argsdemo" installed successfully`) {
		t.Fatalf("gemini extensions install: %v\n%s", err, out)
	}
	r := geminiRun(t, llm, project, home, nil, "/task add a health check endpoint")
	if r.err != nil {
		t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if !llm.Any(func(r *llmscript.Request) bool { return r.Contains("Task: add a health check endpoint") }) {
		t.Errorf("no model request held the command's prompt with the typed text in place (Task: add a health check endpoint)\n%s\n%s", r.stdout, r.stderr)
	}
	if llm.Any(func(r *llmscript.Request) bool { return r.Contains("$ARGUMENTS") }) {
		t.Errorf("a model request holds a literal $ARGUMENTS")
	}

	// The babysitter extension introduces itself to the agent. Headless,
	// Gemini CLI would put SessionStart context before the prompt and run
	// no command (atlas contextBeforePrompt), so the introduction comes
	// with the first prompt instead, and /call runs.
	cmd = exec.Command(bin, "extensions", "install", filepath.Join(repo(t), "artifacts", "babysitter", "gemini-cli"), "--consent")
	cmd.Dir = project
	cmd.Env = append(baseEnv(t, home), "GEMINI_CLI_TRUST_WORKSPACE=true")
	cmd.Stdin = strings.NewReader("y\n")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `Extension "babysitter" installed successfully`) {
		t.Fatalf("gemini extensions install: %v\n%s", err, out)
	}
	r = geminiRun(t, llm, project, home, nil, "/call write a changelog entry")
	if r.err != nil {
		t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if !llm.Any(func(r *llmscript.Request) bool {
		return r.Contains("Task: write a changelog entry") && r.Contains("Babysitter (sitter) is available in this gemini-cli session")
	}) {
		t.Errorf("no model request held both /call's prompt with the typed text and the babysitter's introduction\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestGeminiTUI drives the Gemini CLI's terminal UI: a shell call in the
// default approval mode opens the permission dialog, which raises
// Notification (ToolPermission); the dialog is then answered and the turn
// ends.
func TestGeminiTUI(t *testing.T) {
	bundle := replierBundle(t, "gemini-cli")
	project, home, rec := probeCase(t, "")
	pluginInstall(t, bundle, "gemini-cli", project, home)
	llm := startLLM(t, llmscript.ShellThenText("echo hi > hi.txt", "TURN-DONE"))
	bin, env := geminiSetup(t, llm, home, []string{"E2E_DIR=" + rec})
	d := startTTY(t, project, env, bin, "-m", geminiModel)
	d.waitScreen(`Type your message`, 2*time.Minute)
	time.Sleep(2 * time.Second)
	d.typeLine("write hi.txt")
	waitEvent(t, d, rec, "Notification", 2*time.Minute)
	evs := events(t, rec)
	got := nativeEvents(t, "gemini-cli", project, evs, "Notification", "notification")
	observed(t, "gemini-cli", got)
	if !strings.Contains(string(got[0].Raw), "ToolPermission") {
		t.Errorf("Notification payload %s: want notification_type ToolPermission", got[0].Raw)
	}
	if exists(filepath.Join(project, "hi.txt")) {
		t.Errorf("the shell call ran before the dialog was answered")
	}
}
