//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// codexRun runs one headless Codex turn against the fake LLM (Responses
// API) in project, with CODEX_HOME under the fresh home.
func codexRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	return codexRunArgs(t, llm, project, home, more, prompt, nil)
}

// codexRunArgs is codexRun with the sandbox and approval arguments of exec
// given (nil: -s danger-full-access, no approvals).
func codexRunArgs(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string, args []string) runResult {
	t.Helper()
	bin, env := codexSetup(t, llm, project, home, more)
	if args == nil {
		args = []string{"-s", "danger-full-access"}
	}
	return runCLI(t, project, env, 2*time.Minute, bin,
		append(append([]string{"exec", "--dangerously-bypass-hook-trust"}, args...), "--skip-git-repo-check", prompt)...)
}

// codexSetup writes CODEX_HOME's config (the fake LLM as a Responses
// provider, the project trusted) and returns the binary and environment.
func codexSetup(t *testing.T, llm *llmscript.Server, project, home string, more []string) (string, []string) {
	t.Helper()
	bin := install(t, clis["codex"])
	codexHome := filepath.Join(home, ".codex")
	os.MkdirAll(codexHome, 0o755)
	config := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = %q
env_key = "FAKE_LLM_KEY"
wire_api = "responses"

[projects.%q]
trust_level = "trusted"
`, llm.URL+"/v1", project)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(append(baseEnv(t, home), more...),
		"CODEX_HOME="+codexHome,
		"FAKE_LLM_KEY=sk-fake",
	)
	return bin, env
}

func TestCodexGuard(t *testing.T) { guardCase(t, "codex", "PreToolUse", codexRun) }

func TestCodexProbe(t *testing.T) {
	bundle := probeBundle(t, "codex")
	t.Run("context-events-stop-once", func(t *testing.T) {
		project, home, rec := probeCase(t, "once")
		pluginInstall(t, bundle, "codex", project, home)
		llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
		r := codexRun(t, llm, project, home, []string{"E2E_DIR=" + rec}, "run the tests")
		if r.err != nil {
			t.Fatalf("codex: %v\n%s\n%s", r.err, r.stdout, r.stderr)
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
		observed(t, "codex", evs)
		verified(t, "codex", "add context", "SessionStart", "UserPromptSubmit")
		verified(t, "codex", "continue", "Stop")
		checkEvents(t, "codex", project, evs, "sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
		stops := stopEvents(evs)
		if len(stops) != 2 || stops[1].StopHookActive == nil || !*stops[1].StopHookActive {
			t.Errorf("want two stops, the second with stopHookActive; got %d", len(stops))
		}
		capture(t, "codex", clis["codex"].version, evs, map[string]string{project: "/work/project", home: "/home/e2e"})
	})
	t.Run("stop-cap", func(t *testing.T) {
		project, home, rec := probeCase(t, "always")
		verified(t, "codex", "continue", "Stop")
		pluginInstall(t, bundle, "codex", project, home)
		llm := startLLM(t, llmscript.Text("done"))
		r := codexRun(t, llm, project, home, []string{"E2E_DIR=" + rec, "SITTER_STOP_CAP=3"}, "finish")
		if r.err != nil {
			t.Fatalf("codex: %v\n%s\n%s", r.err, r.stdout, r.stderr)
		}
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("model requests = %d, want 4 (1 + 3 blocks before the cap)", n)
		}
		if n := phases(events(t, rec))["stop"]; n != 4 {
			t.Errorf("stop hook calls = %d, want 4", n)
		}
	})
	t.Run("rewrite-tool-context", func(t *testing.T) {
		rewriteAndToolContext(t, "codex", "PreToolUse", "PostToolUse",
			func(project, home string) { pluginInstall(t, bundle, "codex", project, home) }, codexRun)
	})
	t.Run("prompt-deny", func(t *testing.T) {
		// codex exec prints a hook run's status but none of its entries:
		// the reason (decision:block, exit 2, systemMessage or stopReason
		// alike) never reaches its stdout or stderr.
		promptDeny(t, "codex", "UserPromptSubmit", "hook: UserPromptSubmit Blocked",
			func(project, home string) { pluginInstall(t, bundle, "codex", project, home) }, codexRun)
		if !t.Failed() {
			fidelityNote("codex", "`UserPromptSubmit` deny: `codex exec` prints only `hook: UserPromptSubmit Blocked`, not the reason (TestCodexProbe/prompt-deny); the reason is the hook run's feedback entry, which exec does not print.")
		}
	})
	t.Run("post-tool-deny", func(t *testing.T) {
		postToolDeny(t, "codex", "PostToolUse", false,
			func(project, home string) { pluginInstall(t, bundle, "codex", project, home) }, codexRun)
	})
	replier := replierBundle(t, "codex")
	withReplier := func(project, home string) { pluginInstall(t, replier, "codex", project, home) }
	t.Run("subagent", func(t *testing.T) {
		subagent(t, "codex", "SubagentStart", "SubagentStop", true, true, codexSubagentScript(), withReplier, codexRun)
	})
	t.Run("pre-tool-context", func(t *testing.T) {
		addContext(t, "codex", "preToolUse", "PreToolUse", false, llmscript.ShellThenText("echo hi", "done"), withReplier, codexRun)
	})
	t.Run("permission-deny", func(t *testing.T) {
		// codex exec asks no one: with --approve-for-me an escalation
		// request goes to PermissionRequest hooks, then to an automatic
		// review by the model (which the fake LLM cannot pass).
		escalate := func(q *llmscript.Request) llmscript.Turn {
			if q.HasToolResult() {
				return llmscript.Turn{Text: "done"}
			}
			return llmscript.Turn{Tool: "exec_command", Input: map[string]any{"cmd": "touch leaked.txt", "sandbox_permissions": "require_escalated", "justification": "write a file"}}
		}
		permissionDeny(t, "codex", "PermissionRequest", escalate, withReplier,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return codexRunArgs(t, llm, project, home, more, prompt, []string{"--approve-for-me"})
			})
	})
	t.Run("compact", func(t *testing.T) {
		// A 1000-token auto-compact limit and a tool call reporting 5000
		// prompt tokens make codex compact before its next request.
		compaction(t, "codex", "PreCompact", "PostCompact", "", false, compactScript(0, 5000), withReplier,
			func(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
				return codexRunArgs(t, llm, project, home, more, prompt, []string{"-s", "danger-full-access", "-c", "model_auto_compact_token_limit=1000"})
			})
	})
	t.Run("observe-all", func(t *testing.T) {
		observer := observerBundle(t, "codex")
		observeAll(t, "codex", func(project, home string) { pluginInstall(t, observer, "codex", project, home) }, codexRun)
	})
}

// codexSubagentScript has the parent spawn a subagent (multi_agent_v1
// spawn_agent) with the task, then wait for it (wait_agent), then answer
// "done"; the subagent answers SUBAGENT-RESULT.
func codexSubagentScript() llmscript.Script {
	return func(q *llmscript.Request) llmscript.Turn {
		switch {
		case q.UserTextContains(subagentTask):
			return llmscript.Turn{Text: "SUBAGENT-RESULT"}
		case !q.HasToolResult():
			return llmscript.Turn{Tool: "spawn_agent", Input: map[string]any{"message": subagentTask}}
		}
		var spawned struct {
			AgentID string `json:"agent_id"`
		}
		if json.Unmarshal([]byte(q.LastToolResult()), &spawned) == nil && spawned.AgentID != "" {
			return llmscript.Turn{Tool: "wait_agent", Input: map[string]any{"targets": []string{spawned.AgentID}, "timeout_ms": 30000}}
		}
		return llmscript.Turn{Text: "done"}
	}
}

// TestCodexTUI drives the Codex TUI: Esc while a shell call runs
// interrupts the turn, which raises Interrupt.
func TestCodexTUI(t *testing.T) {
	bundle := replierBundle(t, "codex")
	project, home, rec := probeCase(t, "")
	pluginInstall(t, bundle, "codex", project, home)
	llm := startLLM(t, llmscript.ShellThenText("sleep 60; echo SLEPT", "TURN-DONE"))
	bin, env := codexSetup(t, llm, project, home, []string{"E2E_DIR=" + rec})
	d := startTTY(t, project, env, bin, "--dangerously-bypass-hook-trust", "--ask-for-approval", "never", "--sandbox", "danger-full-access")
	d.waitScreen(`context left|% left|Ask Codex|›`, 2*time.Minute)
	time.Sleep(2 * time.Second)
	d.typeLine("sleep a while")
	waitEvent(t, d, rec, "PreToolUse", 2*time.Minute)
	time.Sleep(3 * time.Second)
	d.send("\x1b")
	waitEvent(t, d, rec, "Interrupt", time.Minute)
	got := nativeEvents(t, "codex", project, events(t, rec), "Interrupt", "interrupt")
	observed(t, "codex", got)
	if llm.Any(func(q *llmscript.Request) bool { return strings.Contains(q.LastToolResult(), "SLEPT") }) {
		t.Errorf("the shell call ran to its end: the turn was not interrupted")
	}
}

// TestCodexHookTimeoutKillsHandlerGroup: Codex kills a hook that outlives
// its timeout with SIGKILL (its hook runner drops the child). Nothing of
// the handler's may outlive that: not the handler script (with dash, sh -c
// runs a script path as its child: a grandchild of sitter, which the
// parent-death signal does not reach), not the job it put in the
// background, not the command it waits for. Before the orphaned-group
// sentinel all three ran on.
func TestCodexHookTimeoutKillsHandlerGroup(t *testing.T) {
	tmp := t.TempDir()
	project, home, rec := filepath.Join(tmp, "project"), filepath.Join(tmp, "home"), filepath.Join(tmp, "rec")
	for _, d := range []string{filepath.Join(project, ".codex"), home, rec} {
		os.MkdirAll(d, 0o755)
	}
	handler := filepath.Join(tmp, "slow-handler.sh")
	os.WriteFile(handler, []byte(`#!/bin/sh
cat >/dev/null
echo $$ > "`+rec+`/script"
sleep 300 &
echo $! > "`+rec+`/background"
sh -c 'echo $$ > "`+rec+`/foreground"; exec sleep 301'
`), 0o755)
	// Codex's timeout (2 s) is the one that fires: sitter's own is longer.
	cmd := fmt.Sprintf("%q hook codex PreToolUse --timeout 5m --handler %q", sitter(t), handler)
	hooks, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "^(Bash)$", "hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": 2}}},
	}}})
	if err := os.WriteFile(filepath.Join(project, ".codex", "hooks.json"), hooks, 0o644); err != nil {
		t.Fatal(err)
	}
	llm := startLLM(t, llmscript.ShellThenText("echo hi", "done"))
	start := time.Now()
	r := codexRun(t, llm, project, home, nil, "say hi")
	if r.err != nil {
		t.Logf("codex: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	var pids []int
	for _, name := range []string{"script", "background", "foreground"} {
		b, err := os.ReadFile(filepath.Join(rec, name))
		var pid int
		if _, serr := fmt.Sscan(string(b), &pid); err != nil || serr != nil {
			t.Fatalf("the handler did not record its %s process (%v): did Codex run the hook?\n%s\n%s", name, err, r.stdout, r.stderr)
		}
		pids = append(pids, pid)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	deadline := time.Now().Add(5 * time.Second)
	for i, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("the handler's %s process %d still runs %s after Codex started (its hook timeout: 2 s)",
					[]string{"script", "background", "foreground"}[i], pid, time.Since(start).Round(time.Second))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// running reports whether pid runs (a zombie does not count).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
