//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

func claudeRun(t *testing.T, llm *llmscript.Server, project, home, prompt string, extra ...string) runResult {
	return claudeRunEnv(t, llm, project, home, nil, prompt, extra...)
}

func claudeRunEnv(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string, extra ...string) runResult {
	return claudeRunArgs(t, llm, project, home, more, append([]string{"-p", prompt, "--output-format", "json", "--allowedTools", "Bash"}, extra...)...)
}

// claudeRunArgs runs claude with exactly args (no pre-approved tool).
func claudeRunArgs(t *testing.T, llm *llmscript.Server, project, home string, more []string, args ...string) runResult {
	bin := install(t, clis["claude-code"])
	return runCLI(t, project, claudeEnv(t, llm, home, more), 2*time.Minute, bin, args...)
}

// claudeEnv is the environment of a headless claude run against llm:
// offline, with every tool offered to the model up front.
// ENABLE_TOOL_SEARCH=false: 2.1.332 otherwise defers most tools
// (TaskCreate, EnterWorktree, MCP tools …) behind its ToolSearch tool, and
// the fake model calls only tools a request offers.
func claudeEnv(t *testing.T, llm *llmscript.Server, home string, more []string) []string {
	return append(append(baseEnv(t, home), more...),
		"ANTHROPIC_BASE_URL="+llm.URL,
		"ANTHROPIC_API_KEY=sk-fake",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"ENABLE_TOOL_SEARCH=false",
	)
}

func TestClaudeGuard(t *testing.T) {
	tmp := t.TempDir()
	project, outside := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside")
	for _, d := range []string{project, outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	bundle := filepath.Join(repo(t), "artifacts", "guard", "claude-code")

	t.Run("deny", func(t *testing.T) {
		verified(t, "claude-code", "observe", "PreToolUse")
		verified(t, "claude-code", "deny", "PreToolUse")
		home := t.TempDir()
		llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
		r := claudeRun(t, llm, project, home, "clean up", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if !exists(filepath.Join(outside, "keep.txt")) {
			t.Fatalf("the guard did not stop rm -rf %s", outside)
		}
		if !llm.Any(func(r *llmscript.Request) bool { return r.HasToolResult() && r.Contains("guard: recursive-delete") }) {
			t.Errorf("the model never received the guard's reason; requests: %d", len(llm.Requests()))
			for _, q := range llm.Requests() {
				t.Logf("%s", q.Body)
			}
		}
	})
	// After the agent moves into a folder of the project, a sibling folder
	// is still the project's: the guard takes the project from
	// CLAUDE_PROJECT_DIR (session.projectDir), not from the shell's cwd.
	t.Run("allow-from-a-folder", func(t *testing.T) {
		home := t.TempDir()
		for _, d := range []string{"packages/api", "packages/web"} {
			os.MkdirAll(filepath.Join(project, d), 0o755)
		}
		os.WriteFile(filepath.Join(project, "packages", "web", "old.js"), nil, 0o644)
		var n atomic.Int32
		llm := startLLM(t, func(q *llmscript.Request) llmscript.Turn {
			if len(q.ToolNames()) == 0 {
				return llmscript.Turn{Text: "title"}
			}
			switch n.Add(1) {
			case 1:
				return llmscript.Turn{Shell: "cd packages/api"}
			case 2:
				return llmscript.Turn{Shell: "rm -rf ../web"}
			}
			return llmscript.Turn{Text: "done"}
		})
		r := claudeRun(t, llm, project, home, "remove the web package", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if exists(filepath.Join(project, "packages", "web")) {
			t.Errorf("rm -rf ../web from packages/api did not run; the model got: %q", llm.Requests()[len(llm.Requests())-1].LastToolResult())
		}
		if !exists(filepath.Join(project, "packages", "api")) || !exists(filepath.Join(outside, "keep.txt")) {
			t.Errorf("more than packages/web was deleted")
		}
	})
	t.Run("allow", func(t *testing.T) {
		home := t.TempDir()
		llm := startLLM(t, llmscript.ShellThenText("echo hi > ok.txt", "done"))
		r := claudeRun(t, llm, project, home, "write ok.txt", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(project, "ok.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "hi" {
			t.Fatalf("ok.txt = %q, %v; stdout %s stderr %s", b, err, r.stdout, r.stderr)
		}
	})
}

// probeCase prepares a probe case: project, home and the probe's record dir.
func probeCase(t *testing.T, stopMode string) (project, home, rec string) {
	tmp := t.TempDir()
	project, home, rec = filepath.Join(tmp, "project"), filepath.Join(tmp, "home"), filepath.Join(tmp, "rec")
	for _, d := range []string{project, home, rec} {
		os.MkdirAll(d, 0o755)
	}
	if stopMode != "" {
		os.WriteFile(filepath.Join(rec, "stop-mode"), []byte(stopMode), 0o644)
	}
	return project, home, rec
}

func TestClaudeProbe(t *testing.T) {
	bundle := probeBundle(t, "claude-code")
	t.Run("context-events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := claudeRunEnv(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		reqs := llm.Requests()
		// Context from SessionStart and UserPromptSubmit reaches the model.
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-SESSION-START") }) {
			t.Errorf("session-start context never reached the model")
		}
		if !llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-PROMPT-SUBMIT") }) {
			t.Errorf("prompt-submit context never reached the model")
		}
		// The stop block's reason is sent to the model, which answers once more.
		last := reqs[len(reqs)-1]
		if !last.Contains("REASON-CONTINUE") {
			t.Errorf("the last request does not carry the stop reason (%d requests)", len(reqs))
		}
		evs := events(t, rec)
		observed(t, "claude-code", evs)
		verified(t, "claude-code", "add context", "SessionStart", "UserPromptSubmit")
		verified(t, "claude-code", "continue", "Stop")
		checkEvents(t, "claude-code", project, evs, "sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
		var stops []event
		for _, e := range evs {
			if e.Phase == "stop" {
				stops = append(stops, e)
			}
		}
		if len(stops) != 2 || stops[1].StopHookActive == nil || !*stops[1].StopHookActive {
			t.Errorf("want two stops, the second with stopHookActive; got %d", len(stops))
		}
		capture(t, "claude-code", clis["claude-code"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-cap", func(t *testing.T) {
		project, home, rec := probeCase(t, "always")
		verified(t, "claude-code", "continue", "Stop")
		llm := startLLM(t, llmscript.Text("done"))
		r := claudeRunEnv(t, llm, project, home, []string{"E2E_DIR=" + rec, "SITTER_STOP_CAP=3"}, "finish", "--plugin-dir", bundle)
		if r.err != nil {
			t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		// One answer, then one more per block until sitter's cap of 3 lets it stop.
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("model requests = %d, want 4 (1 + 3 blocks before the cap)", n)
		}
		if n := phases(events(t, rec))["stop"]; n != 4 {
			t.Errorf("stop hook calls = %d, want 4", n)
		}
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "claude-code", "PreToolUse", "PostToolUse", nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", bundle)
			})
	})
	t.Run("prompt-deny", func(t *testing.T) {
		promptDeny(t, "claude-code", "UserPromptSubmit", "REASON-PROMPT-BLOCKED", nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", bundle)
			})
	})
	t.Run("post-tool-deny", func(t *testing.T) {
		postToolDeny(t, "claude-code", "PostToolUse", false, nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", bundle)
			})
	})
	replier := replierBundle(t, "claude-code")
	withReplier := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", replier)
	}
	t.Run("tool-failure", func(t *testing.T) {
		toolFailure(t, "claude-code", "PostToolUseFailure", true, llmscript.ShellThenText(failingCommand, "done"), nil, withReplier)
	})
	t.Run("pre-tool-context", func(t *testing.T) {
		addContext(t, "claude-code", "preToolUse", "PreToolUse", false, llmscript.ShellThenText("echo hi", "done"), nil, withReplier)
	})
	t.Run("tool-batch-context", func(t *testing.T) {
		addContext(t, "claude-code", "postToolBatch", "PostToolBatch", false, llmscript.ShellThenText("echo hi", "done"), nil, withReplier)
	})
	t.Run("stop-context", func(t *testing.T) {
		addContext(t, "claude-code", "stop", "Stop", true, llmscript.Text("done"), nil, withReplier)
	})
	t.Run("subagent", func(t *testing.T) {
		subagent(t, "claude-code", "SubagentStart", "SubagentStop", true, true, claudeSubagentScript(), nil, withReplier)
	})
	t.Run("subagent-stop-context", func(t *testing.T) {
		// The context goes to the subagent, which answers again.
		verified(t, "claude-code", "add context", "SubagentStop")
		llm, project, evs := replyTurn(t, "claude-code", map[string]string{
			"subagentStop-reply-once": `{"additionalContext":"CTX-SUBAGENT-STOP"}`,
		}, claudeSubagentScript(), "delegate the task", nil, withReplier)
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, "SubagentStop", "subagentStop"))
		if !llm.Any(func(q *llmscript.Request) bool {
			return q.UserTextContains(subagentTask) && q.Contains("CTX-SUBAGENT-STOP")
		}) {
			t.Errorf("the SubagentStop context never reached the subagent (%d requests)", len(llm.Requests()))
			logRequests(t, llm)
		}
	})
	// A 100k-token auto-compact window (the default model has 1M) and
	// three tool calls reporting 30k, 60k and 90k prompt tokens make claude
	// compact before its fourth request.
	t.Run("permission-request", func(t *testing.T) {
		claudePermissionRequest(t, replier)
	})
	// 2.1.332 under -p runs a --plugin-dir plugin's InstructionsLoaded
	// hooks for a CLAUDE.md it loads during the session (the model reads a
	// file in a folder that has one: nested_traversal), not for the
	// project's CLAUDE.md loaded at session start (hooks in settings files
	// see that one: TestClaudeHooks/instructions-loaded-halt).
	t.Run("instructions-loaded", func(t *testing.T) {
		withInstructions := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			os.WriteFile(filepath.Join(project, "CLAUDE.md"), []byte("# e2e\nBe brief.\n"), 0o644)
			os.MkdirAll(filepath.Join(project, "sub"), 0o755)
			os.WriteFile(filepath.Join(project, "sub", "CLAUDE.md"), []byte("# sub\nSUB-RULES\n"), 0o644)
			os.WriteFile(filepath.Join(project, "sub", "notes.txt"), []byte("notes\n"), 0o644)
			return withReplier(t, llm, project, home, more, prompt)
		}
		read := func(q *llmscript.Request) llmscript.Turn {
			switch {
			case len(q.ToolNames()) == 0:
				return llmscript.Turn{Text: "title"}
			case q.HasToolResult():
				return llmscript.Turn{Text: "done"}
			}
			// The Read tool wants an absolute path: the project is the
			// working directory the system prompt names.
			m := regexp.MustCompile(`Primary working directory: ([^\\\s"]+)`).FindSubmatch(q.Body)
			if m == nil {
				return llmscript.Turn{Text: "no working directory in the request"}
			}
			return llmscript.Turn{Tool: "Read", Input: map[string]any{"file_path": string(m[1]) + "/sub/notes.txt"}}
		}
		_, project, evs := replyTurn(t, "claude-code", nil, read, "read sub/notes.txt", nil, withInstructions)
		got := nativeEvents(t, "claude-code", project, evs, "InstructionsLoaded", "instructionsLoaded")
		observed(t, "claude-code", got)
		if !bytes.Contains(got[0].Raw, []byte(`"load_reason":"nested_traversal"`)) {
			t.Errorf("InstructionsLoaded payload %s: want load_reason nested_traversal", got[0].Raw)
		}
	})
	t.Run("prompt-expansion", func(t *testing.T) {
		claudePromptExpansion(t, withReplier)
	})
	t.Run("task-events-deny", func(t *testing.T) {
		// 2.1.332 offers the task tools only to some models, not to its
		// default (claude-opus-5-5), unless CLAUDE_CODE_ENABLE_TODO_TOOLS
		// is set.
		withTasks := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			return withReplier(t, llm, project, home, append(more, "CLAUDE_CODE_ENABLE_TODO_TOOLS=1"), prompt)
		}
		claudeTaskDeny(t, "TaskCreated", "taskCreated", withTasks)
		claudeTaskDeny(t, "TaskCompleted", "taskCompleted", withTasks)
	})
	compacting := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		return withReplier(t, llm, project, home, append(more, "CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000"), prompt)
	}
	t.Run("compact", func(t *testing.T) {
		compaction(t, "claude-code", "PreCompact", "PostCompact", claudeSummary, false, compactScript(0, 30000, 60000, 90000), nil, compacting)
	})
	t.Run("compact-deny", func(t *testing.T) {
		compaction(t, "claude-code", "PreCompact", "PostCompact", claudeSummary, true, compactScript(0, 30000, 60000, 90000), nil, compacting)
	})
	// StopFailure hooks are fire-and-forget: claude -p 2.1.332 mostly
	// exits before the hook has run. The turn runs in a session kept open
	// until the hook has recorded the event (or 20 s have passed).
	t.Run("api-error", func(t *testing.T) {
		apiFailure(t, "claude-code", "StopFailure", nil, func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
			s := startClaudeSession(t, llm, project, home, more, "--plugin-dir", replier)
			s.prompt(prompt)
			recorded(envValue(more, "E2E_DIR"), "StopFailure", 20*time.Second, nil)
			return s.finish()
		})
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "claude-code")
		observeAll(t, "claude-code", nil,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return claudeRunEnv(t, llm, project, home, more, prompt, "--plugin-dir", observer)
			})
	})
}

// envValue is the value of name in an environment list ("" when unset).
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// The generated marketplace and bundles pass Claude Code's own checks:
// `claude plugin validate` on every Claude bundle, and a marketplace add
// plus install of each plugin.
func TestClaudeMarketplaceAndValidate(t *testing.T) {
	bin := install(t, clis["claude-code"])
	home := t.TempDir()
	env := append(baseEnv(t, home), "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	for _, p := range []string{"guard", "babysitter"} {
		bundle := filepath.Join(repo(t), "artifacts", p, "claude-code")
		r := runCLI(t, home, env, time.Minute, bin, "plugin", "validate", bundle)
		if r.err != nil || !strings.Contains(r.stdout+r.stderr, "Validation passed") {
			t.Errorf("claude plugin validate %s: %v\n%s%s", p, r.err, r.stdout, r.stderr)
		}
		market := filepath.Join(repo(t), "artifacts", p, "marketplaces", "claude")
		if r := runCLI(t, home, env, time.Minute, bin, "plugin", "marketplace", "add", market); r.err != nil {
			t.Fatalf("marketplace add %s: %v\n%s%s", p, r.err, r.stdout, r.stderr)
		}
		r = runCLI(t, home, env, time.Minute, bin, "plugin", "install", p+"@"+p+"-marketplace")
		if r.err != nil || !strings.Contains(r.stdout+r.stderr, "Successfully installed") {
			t.Errorf("plugin install %s: %v\n%s%s", p, r.err, r.stdout, r.stderr)
		}
	}
}

// claudeSubagentScript calls Claude's subagent tool (Agent; Task before).
func claudeSubagentScript() llmscript.Script {
	return subagentScript("Agent|Task", map[string]any{"description": "sub task", "prompt": subagentTask, "subagent_type": "general-purpose"})
}

// claudeStreamCmd is claude -p speaking stream-json both ways, as the
// Agent SDK runs it, in project with args after the stream flags, and
// its context, stdin and stdout; cancel (or timeout) kills it.
func claudeStreamCmd(t *testing.T, llm *llmscript.Server, project, home string, more []string, timeout time.Duration, args ...string) (*exec.Cmd, context.Context, context.CancelFunc, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	bin := install(t, clis["claude-code"])
	args = append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = project, claudeEnv(t, llm, home, more)
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return cmd, ctx, cancel, stdin, out
}

// claudeSDKRun runs claude as the Agent SDK does: stream-json in and out,
// permission prompts sent to the host over stdio (--permission-prompt-tool
// stdio). It writes the prompt as one user message and never answers a
// permission request, so only a PermissionRequest hook can decide one; it
// closes stdin when the result arrives. Without such a decision the run
// waits for the host and times out.
func claudeSDKRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string, extra ...string) runResult {
	t.Helper()
	cmd, ctx, cancel, stdin, out := claudeStreamCmd(t, llm, project, home, more, 40*time.Second, append([]string{"--permission-prompt-tool", "stdio"}, extra...)...)
	defer cancel()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
	stdin.Write(append(msg, '\n'))
	var stdout strings.Builder
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		stdout.WriteString(sc.Text() + "\n")
		if isResultLine(sc.Text()) {
			stdin.Close()
		}
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out waiting for a permission decision: %w", err)
	}
	return runResult{stdout.String(), stderr.String(), err}
}

// claudePermissionRequest proves PermissionRequest in the SDK's permission
// mode (claudeSDKRun): a Bash call that needs approval raises it; a deny's
// reason must reach the model, and a rewrite must run the rewritten command
// (without the hook's decision nothing decides and the run times out).
func claudePermissionRequest(t *testing.T, replier string) {
	run := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		return claudeSDKRun(t, llm, project, home, more, prompt, "--plugin-dir", replier)
	}
	// bash -c is no read-only command: it needs approval.
	t.Run("deny", func(t *testing.T) {
		permissionDeny(t, "claude-code", "PermissionRequest", llmscript.ShellThenText("bash -c 'echo leaked > leaked.txt'", "done"), nil, run)
	})
	t.Run("rewrite", func(t *testing.T) {
		verified(t, "claude-code", "rewrite input", "PermissionRequest")
		llm, project, evs := replyTurn(t, "claude-code", map[string]string{
			"permissionRequest-reply": `{"updatedInput":{"command":"printf 'REWRITTEN-%s' RAN"}}`,
		}, llmscript.ShellThenText("bash -c 'printf ORIGINAL-RAN'", "done"), "print something", nil, run)
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, "PermissionRequest", "permissionRequest"))
		if !llm.Any(func(q *llmscript.Request) bool { return strings.Contains(q.LastToolResult(), "REWRITTEN-RAN") }) {
			t.Errorf("the rewritten command's output never reached the model")
			logRequests(t, llm)
		}
		if llm.Any(func(q *llmscript.Request) bool { return strings.Contains(q.LastToolResult(), "ORIGINAL-RAN") }) {
			t.Errorf("the model's own command ran")
		}
	})
}

// claudeSummary is in claude's compaction summary request only.
const claudeSummary = "Your task is to create a detailed summary"

// claudePromptExpansion runs a project slash command (.claude/commands/
// e2e.md, whose template carries COMMAND-TEMPLATE) as the prompt, which
// raises UserPromptExpansion: its context must reach the model; its deny
// must keep the expanded prompt from the model.
func claudePromptExpansion(t *testing.T, run runner) {
	withCommand := func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
		dir := filepath.Join(project, ".claude", "commands")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "e2e.md"), []byte("---\ndescription: e2e command\n---\nCOMMAND-TEMPLATE $ARGUMENTS\n"), 0o644)
		return run(t, llm, project, home, more, "/e2e ARG-1")
	}
	t.Run("context", func(t *testing.T) {
		addContext(t, "claude-code", "promptExpansion", "UserPromptExpansion", false, llmscript.Text("done"), nil, withCommand)
	})
	t.Run("deny", func(t *testing.T) {
		verified(t, "claude-code", "deny", "UserPromptExpansion")
		llm, project, evs, r := replyRun(t, "claude-code", map[string]string{
			"promptExpansion-reply": `{"decision":"deny","reason":"REASON-EXPANSION-BLOCKED"}`,
		}, llmscript.Text("done"), "", nil, withCommand)
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, "UserPromptExpansion", "promptExpansion"))
		if llm.Any(func(q *llmscript.Request) bool { return q.Contains("COMMAND-TEMPLATE") }) {
			t.Errorf("the denied command's prompt reached the model\n%s\n%s", r.stdout, r.stderr)
		}
	})
}

// claudeTaskDeny has the model create a task (TaskCreate) and complete it
// (TaskUpdate): a deny on the native event (TaskCreated or TaskCompleted)
// must send its reason to the model as the tool's result.
func claudeTaskDeny(t *testing.T, nativeEvent, phase string, run runner) {
	t.Run(nativeEvent, func(t *testing.T) {
		verified(t, "claude-code", "deny", nativeEvent)
		var n atomic.Int32
		script := func(q *llmscript.Request) llmscript.Turn {
			if len(q.ToolNames()) == 0 {
				return llmscript.Turn{Text: "title"}
			}
			switch n.Add(1) {
			case 1:
				return llmscript.Turn{Tool: "TaskCreate", Input: map[string]any{"subject": "e2e task", "description": "do it"}}
			case 2:
				return llmscript.Turn{Tool: "TaskUpdate", Input: map[string]any{"taskId": "1", "status": "completed"}}
			}
			return llmscript.Turn{Text: "done"}
		}
		reason := "REASON-" + strings.ToUpper(nativeEvent)
		llm, project, evs := replyTurn(t, "claude-code", map[string]string{
			phase + "-reply": `{"decision":"deny","reason":"` + reason + `"}`,
		}, script, "track a task", nil, run)
		observed(t, "claude-code", nativeEvents(t, "claude-code", project, evs, nativeEvent, phase))
		if !llm.Any(func(q *llmscript.Request) bool { return strings.Contains(q.LastToolResult(), reason) }) {
			t.Errorf("the %s deny reason never reached the model as the tool's result", nativeEvent)
			for _, q := range llm.Requests() {
				t.Logf("tool result: %s", q.LastToolResult())
			}
		}
	})
}
