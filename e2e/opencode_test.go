//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// opencodeSeed keeps OpenCode from running `npm install @opencode-ai/plugin`
// in a config dir (plugin loading waits for it, 78 s offline): an empty
// node_modules plus a package.json and package-lock.json naming the
// dependency.
func opencodeSeed(t *testing.T, dir string) {
	t.Helper()
	v := clis["opencode"].version
	os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755)
	pkg := fmt.Sprintf(`{"dependencies":{"@opencode-ai/plugin":%q}}`+"\n", v)
	lock := fmt.Sprintf(`{"name":"seed","lockfileVersion":3,"requires":true,"packages":{"":{"dependencies":{"@opencode-ai/plugin":%q}},"node_modules/@opencode-ai/plugin":{"version":%q}}}`+"\n", v, v)
	for name, body := range map[string]string{"package.json": pkg, "package-lock.json": lock} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// opencodeRun runs one `opencode run` against the fake LLM (OpenAI Chat
// Completions through @ai-sdk/openai-compatible, configured in the
// project's opencode.json).
func opencodeRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	bin, env := opencodeSetup(t, llm, project, home, more)
	args := []string{"run", "-m", "fake/fake-model", prompt}
	if os.Getenv("E2E_OPENCODE_LOGS") == "1" {
		args = append(args, "--print-logs", "--log-level", "DEBUG")
	}
	return runCLI(t, project, env, 3*time.Minute, bin, args...)
}

// opencodeSetup writes the project's opencode.json and the install seeds
// and returns the binary and environment.
func opencodeSetup(t *testing.T, llm *llmscript.Server, project, home string, more []string) (string, []string) {
	t.Helper()
	return opencodeSetupModel(t, llm, project, home, more, `{"tool_call": true}`, "")
}

// opencodeSetupModel is opencodeSetup with the fake model's JSON config
// given (a small context limit, say) and more top-level config members
// (extra: `"key": value,` lines, or "").
func opencodeSetupModel(t *testing.T, llm *llmscript.Server, project, home string, more []string, model, extra string) (string, []string) {
	t.Helper()
	bin := install(t, clis["opencode"])
	config := fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "model": "fake/fake-model",
  "autoupdate": false,
  "share": "disabled",%s
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "options": {"baseURL": %q, "apiKey": "sk-fake"},
      "models": {"fake-model": %s}
    }
  }
}
`, extra, llm.URL+"/v1", model)
	if err := os.WriteFile(filepath.Join(project, "opencode.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	opencodeSeed(t, filepath.Join(home, ".config", "opencode"))
	opencodeSeed(t, filepath.Join(project, ".opencode"))
	env := append(append(baseEnv(t, home), more...),
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
	)
	return bin, env
}

func TestOpenCodeGuard(t *testing.T) { guardCase(t, "opencode", "tool.execute.before", opencodeRun) }

// OpenCode's session.created cannot add context; chat.message
// (userPromptSubmit) and experimental.chat.system.transform
// (beforePromptBuild) can. The stop phase (session.idle) needs a server:
// see TestOpenCodeStop.
func TestOpenCodeProbe(t *testing.T) {
	bundle := probeBundle(t, "opencode")
	t.Run("context-events", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		pluginInstall(t, bundle, "opencode", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := opencodeRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("opencode: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if len(llm.Requests()) == 0 {
			t.Fatalf("no model request\n%s\n%s", r.stdout, r.stderr)
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-SUBMIT") }) {
			t.Errorf("chat.message context never reached the model\n%s", r.stderr)
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-BUILD") }) {
			t.Errorf("system-transform context never reached the model\n%s", r.stderr)
		}
		evs := events(t, rec)
		observed(t, "opencode", evs)
		verified(t, "opencode", "add context", "chat.message", "experimental.chat.system.transform")
		checkEvents(t, "opencode", project, evs, "userPromptSubmit", "beforePromptBuild", "preToolUse", "postToolUse")
		t.Logf("phases: %v", phases(evs))
		capture(t, "opencode", clis["opencode"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "opencode", "tool.execute.before", "tool.execute.after",
			func(project, home string) { pluginInstall(t, bundle, "opencode", project, home) }, opencodeRun)
	})
	replier := replierBundle(t, "opencode")
	withReplier := func(project, home string) { pluginInstall(t, replier, "opencode", project, home) }
	// A 10k-token context limit and an answer reporting 30k prompt tokens
	// make OpenCode compact the session and go on.
	compacting := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		bin, env := opencodeSetupModel(t, llm, project, home, more, `{"tool_call": true, "limit": {"context": 10000, "output": 1000}}`, "")
		return runCLI(t, project, env, 3*time.Minute, bin, "run", "-m", "fake/fake-model", prompt)
	}
	t.Run("compact", func(t *testing.T) {
		compaction(t, "opencode", "experimental.session.compacting", "session.compacted", "You are a context summarization agent", false, compactScript(30000), withReplier, compacting)
	})
	t.Run("compact-context", func(t *testing.T) {
		addContext(t, "opencode", "preCompact", "experimental.session.compacting", false, compactScript(30000), withReplier, compacting)
	})
	t.Run("command-context", func(t *testing.T) {
		// opencode run --command runs a project command (a prompt
		// template in .opencode/command/).
		command := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			dir := filepath.Join(project, ".opencode", "command")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "e2e.md"), []byte("---\ndescription: e2e command\n---\nCOMMAND-TEMPLATE $ARGUMENTS\n"), 0o644)
			bin, env := opencodeSetup(t, llm, project, home, more)
			return runCLI(t, project, env, 3*time.Minute, bin, "run", "-m", "fake/fake-model", "--command", "e2e", prompt)
		}
		addContext(t, "opencode", "commandExecute", "command.execute.before", false, llmscript.Text("done"), withReplier, command)
	})
	t.Run("api-error", func(t *testing.T) {
		apiFailure(t, "opencode", "session.error", withReplier, opencodeRun)
	})
}

// The observer answers nothing, so the chat.message bug above does not
// apply to it.
func TestOpenCodeObserve(t *testing.T) {
	observer := observerBundle(t, "opencode")
	observeAll(t, "opencode", func(project, home string) { pluginInstall(t, observer, "opencode", project, home) }, opencodeRun)
}

// opencodeServe starts `opencode serve` in project (stopped at the end of
// the test) and returns its URL. Under `opencode run` the process exits on
// the first idle, so the stop phase's follow-up prompt needs a server.
func opencodeServe(t *testing.T, llm *llmscript.Server, project, home string, more []string) string {
	t.Helper()
	bin, env := opencodeSetup(t, llm, project, home, more)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "serve", "--port", "0", "--hostname", "127.0.0.1")
	cmd.Dir, cmd.Env = project, env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("opencode serve stderr:\n%s", stderr.String())
		}
	})
	url := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1]
			}
		}
	}()
	select {
	case u := <-url:
		return u
	case <-ctx.Done():
		t.Fatalf("opencode serve never said where it listens\n%s", stderr.String())
	}
	return ""
}

// TestOpenCodeStop drives the stop phase (session.idle) through a server:
// the stopper plugin blocks the first idle with a reason, which the bridge
// sends as a new prompt; the model must receive it.
func TestOpenCodeStop(t *testing.T) {
	fidelityNote("opencode", "`session.idle` (stop) is driven through `opencode serve` and `opencode run --attach`: under a plain `opencode run` the process exits on the first idle and the follow-up prompt never reaches the model. sitter's stop cap is not exercised on OpenCode (the end of a capped loop cannot be observed without polling a server that keeps running).")
	bundle := stopperBundle(t, "opencode")
	project, home, rec := probeCase(t, "once")
	verified(t, "opencode", "continue", "session.idle")
	pluginInstall(t, bundle, "opencode", project, home)
	llm := startLLM(t, llmscript.Text("done"))
	more := []string{"E2E_DIR=" + rec}
	url := opencodeServe(t, llm, project, home, more)
	_, env := opencodeSetup(t, llm, project, home, more)
	r := runCLI(t, project, env, 3*time.Minute, install(t, clis["opencode"]), "run", "--attach", url, "-m", "fake/fake-model", "finish")
	if r.err != nil {
		t.Fatalf("opencode run --attach: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	done := make(chan struct{})
	timer := time.AfterFunc(2*time.Minute, func() { close(done) })
	defer timer.Stop()
	ok := llm.Wait(done, func(reqs []*llmscript.Request) bool {
		for _, q := range reqs {
			if q.Contains("REASON-CONTINUE") {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Errorf("the stop reason never reached the model (%d requests)", len(llm.Requests()))
	}
	if n := len(stopEvents(events(t, rec))); n == 0 {
		t.Errorf("no stop event recorded")
	}
}
