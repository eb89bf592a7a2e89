//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// ocFamily is one harness of OpenCode's family (OpenCode and its fork Kilo
// Code): the same plugin API, CLI verbs (run, serve, run --attach, run
// --command, session delete) and bridge, under other names. The family's
// cases are written once against it.
type ocFamily struct {
	harness    string
	config     string   // the project's config file
	dir        string   // the project's config dir (commands, plugins)
	homeConfig string   // the user's config dir under HOME
	plugin     string   // the plugin package its config dirs are seeded with
	pluginVer  string   // and its version
	env        []string // no model fetch, no autoupdate
	timeout    time.Duration
	// compactSteps are the prompt tokens of shell steps before the answer
	// that reports 30k (compactScript): Kilo checks for an overflow only
	// before a model call, OpenCode after the answer too.
	compactSteps []int
}

var (
	openCode = ocFamily{"opencode", "opencode.json", ".opencode", ".config/opencode", "@opencode-ai/plugin", "",
		[]string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1"}, 3 * time.Minute, nil}
	kilo = ocFamily{"kilo-code", "kilo.json", ".kilo", ".config/kilo", "@kilocode/plugin", "7.3.1",
		[]string{"KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_AUTOUPDATE=1"}, 5 * time.Minute, []int{30000}}
)

// seed keeps the harness from running `npm install <plugin package>` in a
// config dir (plugin loading waits for it, 78 s offline for OpenCode): an
// empty node_modules plus a package.json and package-lock.json naming the
// dependency.
func (f ocFamily) seed(t *testing.T, dir string) {
	t.Helper()
	v := f.pluginVer
	if v == "" {
		v = clis[f.harness].version
	}
	os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755)
	pkg := fmt.Sprintf(`{"dependencies":{%q:%q}}`+"\n", f.plugin, v)
	lock := fmt.Sprintf(`{"name":"seed","lockfileVersion":3,"requires":true,"packages":{"":{"dependencies":{%q:%q}},"node_modules/%s":{"version":%q}}}`+"\n", f.plugin, v, f.plugin, v)
	for name, body := range map[string]string{"package.json": pkg, "package-lock.json": lock} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// setup writes the project's config (the fake LLM as an OpenAI Chat
// Completions provider through @ai-sdk/openai-compatible, the fake model's
// JSON config given, more top-level members in extra: `"key": value,`
// lines, or "") and the install seeds, and returns the binary and
// environment.
func (f ocFamily) setup(t *testing.T, llm *llmscript.Server, project, home string, more []string, model, extra string) (string, []string) {
	t.Helper()
	bin := install(t, clis[f.harness])
	if model == "" {
		model = `{"tool_call": true}`
	}
	config := fmt.Sprintf(`{
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
	if err := os.WriteFile(filepath.Join(project, f.config), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	f.seed(t, filepath.Join(home, filepath.FromSlash(f.homeConfig)))
	f.seed(t, filepath.Join(project, f.dir))
	return bin, append(append(baseEnv(t, home), more...), f.env...)
}

// run runs one `<cli> run` against the fake LLM, with more CLI arguments
// before the prompt.
func (f ocFamily) run(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string, args ...string) runResult {
	t.Helper()
	bin, env := f.setup(t, llm, project, home, more, "", "")
	args = append(append([]string{"run", "-m", "fake/fake-model"}, args...), prompt)
	if os.Getenv("E2E_OPENCODE_LOGS") == "1" {
		args = append(args, "--print-logs", "--log-level", "DEBUG")
	}
	return runCLI(t, project, env, f.timeout, bin, args...)
}

// runner is f.run as a runner.
func (f ocFamily) runner() runner {
	return func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		return f.run(t, llm, project, home, more, prompt)
	}
}

// opencodeRun runs one `opencode run` against the fake LLM.
func opencodeRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	return openCode.run(t, llm, project, home, more, prompt)
}

// opencodeSetup writes the project's opencode.json and the install seeds
// and returns the binary and environment.
func opencodeSetup(t *testing.T, llm *llmscript.Server, project, home string, more []string) (string, []string) {
	t.Helper()
	return openCode.setup(t, llm, project, home, more, "", "")
}

func TestOpenCodeGuard(t *testing.T) { guardCase(t, "opencode", "tool.execute.before", opencodeRun) }

// OpenCode's session.created cannot add context; chat.message
// (userPromptSubmit) and experimental.chat.system.transform
// (beforePromptBuild) can. The stop phase (session.idle) needs a server:
// see TestOpenCodeStop.
func TestOpenCodeProbe(t *testing.T) { ocProbe(t, openCode) }

// ocProbe is the probe cases of a harness of OpenCode's family.
func ocProbe(t *testing.T, f ocFamily) {
	h := f.harness
	bundle := probeBundle(t, h)
	withProbe := func(project, home string) { pluginInstall(t, bundle, h, project, home) }
	t.Run("context-events", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		withProbe(project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := f.run(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("%s: %v\n%s\n%s", h, r.err, r.stdout, r.stderr)
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
		observed(t, h, evs)
		verified(t, h, "add context", "chat.message", "experimental.chat.system.transform")
		checkEvents(t, h, project, evs, "userPromptSubmit", "beforePromptBuild", "preToolUse", "postToolUse")
		t.Logf("phases: %v", phases(evs))
		capture(t, h, clis[h].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, h, "tool.execute.before", "tool.execute.after", withProbe, f.runner())
	})
	replier := replierBundle(t, h)
	withReplier := func(project, home string) { pluginInstall(t, replier, h, project, home) }
	// A 10k-token context limit and an answer reporting 30k prompt tokens
	// make the harness compact the session and go on.
	compacting := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		bin, env := f.setup(t, llm, project, home, more, `{"tool_call": true, "limit": {"context": 10000, "output": 1000}}`, "")
		return runCLI(t, project, env, f.timeout, bin, "run", "-m", "fake/fake-model", prompt)
	}
	t.Run("compact", func(t *testing.T) {
		compaction(t, h, "experimental.session.compacting", "session.compacted", "You are a context summarization agent", false, compactScript(30000, f.compactSteps...), withReplier, compacting)
	})
	t.Run("compact-context", func(t *testing.T) {
		addContext(t, h, "preCompact", "experimental.session.compacting", false, compactScript(30000, f.compactSteps...), withReplier, compacting)
	})
	t.Run("command-context", func(t *testing.T) {
		// run --command runs a project command (a prompt template in
		// <config dir>/command/).
		command := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			dir := filepath.Join(project, f.dir, "command")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "e2e.md"), []byte("---\ndescription: e2e command\n---\nCOMMAND-TEMPLATE $ARGUMENTS\n"), 0o644)
			return f.run(t, llm, project, home, more, prompt, "--command", "e2e")
		}
		addContext(t, h, "commandExecute", "command.execute.before", false, llmscript.Text("done"), withReplier, command)
	})
	t.Run("api-error", func(t *testing.T) {
		apiFailure(t, h, "session.error", withReplier, f.runner())
	})
}

// The observer answers nothing, so the chat.message bug above does not
// apply to it.
func TestOpenCodeObserve(t *testing.T) { ocObserve(t, openCode) }

func ocObserve(t *testing.T, f ocFamily) {
	observer := observerBundle(t, f.harness)
	observeAll(t, f.harness, func(project, home string) { pluginInstall(t, observer, f.harness, project, home) }, f.runner())
}

// opencodeServe starts `opencode serve` in project (stopped at the end of
// the test) and returns its URL.
func opencodeServe(t *testing.T, llm *llmscript.Server, project, home string, more []string) string {
	t.Helper()
	return openCode.serve(t, llm, project, home, more)
}

// serve starts `<cli> serve` in project (stopped at the end of the test)
// and returns its URL. Under `<cli> run` the process exits on the first
// idle, so the stop phase's follow-up prompt needs a server.
func (f ocFamily) serve(t *testing.T, llm *llmscript.Server, project, home string, more []string) string {
	t.Helper()
	return f.serveWith(t, llm, project, home, more, "")
}

// serveWith is serve with more top-level config members (see setup).
func (f ocFamily) serveWith(t *testing.T, llm *llmscript.Server, project, home string, more []string, extra string) string {
	t.Helper()
	bin, env := f.setup(t, llm, project, home, more, "", extra)
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
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
			t.Logf("%s serve stderr:\n%s", f.harness, stderr.String())
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
		t.Fatalf("%s serve never said where it listens\n%s", f.harness, stderr.String())
	}
	return ""
}

// TestOpenCodeStop drives the stop phase (session.idle) through a server:
// the stopper plugin blocks the first idle with a reason, which the bridge
// sends as a new prompt; the model must receive it.
func TestOpenCodeStop(t *testing.T) {
	fidelityNote("opencode", "`session.idle` (stop) is driven through `opencode serve` and `opencode run --attach`: under a plain `opencode run` the process exits on the first idle and the follow-up prompt never reaches the model. sitter's stop cap is not exercised on OpenCode (the end of a capped loop cannot be observed without polling a server that keeps running).")
	ocStop(t, openCode)
}

func ocStop(t *testing.T, f ocFamily) {
	bundle := stopperBundle(t, f.harness)
	project, home, rec := probeCase(t, "once")
	verified(t, f.harness, "continue", "session.idle")
	pluginInstall(t, bundle, f.harness, project, home)
	llm := startLLM(t, llmscript.Text("done"))
	more := []string{"E2E_DIR=" + rec}
	url := f.serve(t, llm, project, home, more)
	bin, env := f.setup(t, llm, project, home, more, "", "")
	r := runCLI(t, project, env, f.timeout, bin, "run", "--attach", url, "-m", "fake/fake-model", "finish")
	if r.err != nil {
		t.Fatalf("%s run --attach: %v\n%s\n%s", f.harness, r.err, r.stdout, r.stderr)
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

// post sends a JSON body to the server and decodes its JSON answer into
// out (when not nil).
func post(t *testing.T, url string, body any, out any) error {
	t.Helper()
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// get decodes the server's JSON answer to a GET into out.
func get(t *testing.T, url string, out any) error {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, data)
	}
	return json.Unmarshal(data, out)
}

// permission: with bash set to ask, the model's shell call raises
// permission.asked on a server no client answers; the permissionRequest
// handler's deny is the only answer, so the command must not run, its
// tool call must fail and the turn must end (OpenCode ends a turn on a
// refused permission; without an answer it waits until the test times
// out).
func (f ocFamily) permission(t *testing.T) {
	verified(t, f.harness, "deny", "permission.asked")
	project, home, rec := probeCase(t, "")
	os.WriteFile(filepath.Join(rec, "permissionRequest-reply"), []byte(denyReply), 0o644)
	pluginInstall(t, replierBundle(t, f.harness), f.harness, project, home)
	llm := startLLM(t, llmscript.ShellThenText("echo leaked > leaked.txt", "done"))
	more := []string{"E2E_DIR=" + rec}
	url := f.serveWith(t, llm, project, home, more, `
  "permission": {"bash": "ask"},`)
	var s struct{ ID string }
	if err := post(t, url+"/session", map[string]any{}, &s); err != nil || s.ID == "" {
		t.Fatalf("create a session: %v (%+v)", err, s)
	}
	err := post(t, url+"/session/"+s.ID+"/message", map[string]any{
		"parts": []any{map[string]any{"type": "text", "text": "write a file"}},
		"model": map[string]any{"providerID": "fake", "modelID": "fake-model"},
	}, nil)
	if err != nil {
		t.Fatalf("the turn did not end: %v", err)
	}
	if exists(filepath.Join(project, "leaked.txt")) {
		t.Errorf("the denied command ran: leaked.txt exists")
	}
	// A refused permission fails the tool call and ends the turn.
	var msgs []struct {
		Parts []struct {
			Type  string
			State struct{ Status, Error string }
		}
	}
	if err := get(t, url+"/session/"+s.ID+"/message", &msgs); err != nil {
		t.Fatal(err)
	}
	var failed bool
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == "tool" {
				t.Logf("tool part: %s %q", p.State.Status, p.State.Error)
				failed = failed || p.State.Status == "error"
			}
		}
	}
	if !failed {
		t.Errorf("no failed tool call in the session")
	}
	observed(t, f.harness, nativeEvents(t, f.harness, project, events(t, rec), "permission.asked", "permissionRequest"))
}

// sessionDeleted: `<cli> session delete <id>` after a turn raises
// session.deleted with the deleted session's id.
func (f ocFamily) sessionDeleted(t *testing.T) {
	project, home, rec := probeCase(t, "")
	pluginInstall(t, observerBundle(t, f.harness), f.harness, project, home)
	llm := startLLM(t, llmscript.Text("done"))
	more := []string{"E2E_DIR=" + rec}
	if r := f.run(t, llm, project, home, more, "say done"); r.err != nil {
		t.Fatalf("%s run: %v\n%s\n%s", f.harness, r.err, r.stdout, r.stderr)
	}
	var session string
	for _, e := range events(t, rec) {
		if e.Phase == "sessionStart" {
			session = e.Session.ID
		}
	}
	if session == "" {
		t.Fatalf("no session.created recorded; got %v", nativeNames(events(t, rec)))
	}
	bin, env := f.setup(t, llm, project, home, more, "", "")
	if r := runCLI(t, project, env, f.timeout, bin, "session", "delete", session); r.err != nil {
		t.Fatalf("%s session delete: %v\n%s\n%s", f.harness, r.err, r.stdout, r.stderr)
	}
	observed(t, f.harness, nativeEvents(t, f.harness, project, events(t, rec), "session.deleted", "sessionEnd"))
}

func TestOpenCodeSession(t *testing.T) {
	t.Run("permission-deny", func(t *testing.T) { openCode.permission(t) })
	t.Run("deleted", func(t *testing.T) { openCode.sessionDeleted(t) })
}

func TestKiloSession(t *testing.T) {
	t.Run("permission-deny", func(t *testing.T) { kilo.permission(t) })
	t.Run("deleted", func(t *testing.T) { kilo.sessionDeleted(t) })
}
