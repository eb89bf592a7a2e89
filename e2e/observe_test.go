//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// artifactsDir is where the observe screenshots go: $SITTER_E2E_ARTIFACTS,
// else a folder in the temp dir (never the repository).
func artifactsDir(t *testing.T) string {
	d := os.Getenv("SITTER_E2E_ARTIFACTS")
	if d == "" {
		d = filepath.Join(os.TempDir(), "sitter-e2e-artifacts")
	}
	d = filepath.Join(d, "observe")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// startObserve runs `sitter observe --dir project` and returns its URL.
func startObserve(t *testing.T, env []string, project string) string {
	t.Helper()
	cmd := exec.Command(sitter(t), "observe", "--dir", project)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Errorf("sitter observe did not stop on SIGINT")
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "SITTER_OBSERVE_URL="); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return u
		}
	}
	t.Fatal("sitter observe printed no URL")
	return ""
}

// sitterJSON runs a sitter verb in project and decodes its --json output.
func sitterJSON(t *testing.T, env []string, project string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(sitter(t), append(args, "--json")...)
	cmd.Dir, cmd.Env = project, env
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("sitter %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("sitter %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return m
}

// nextEffect is the first next action of an iterate answer.
func nextEffect(t *testing.T, it map[string]any) (id, kind string) {
	t.Helper()
	acts, _ := it["nextActions"].([]any)
	if len(acts) == 0 {
		t.Fatalf("iterate gave no next action: %v", it)
	}
	a := acts[0].(map[string]any)
	return a["effectId"].(string), a["kind"].(string)
}

// TestObserveDashboard drives `sitter observe` in headless Chromium: a run
// reaching a breakpoint shows under "needs you" within a second; the
// breakpoint is approved in the page (a second answer from the CLI is
// refused); the run then moves to working as the loop goes on, and to
// completed; the hook timeline of a real Claude Code session shows the
// guard's deny. Screenshots of the board, the run and the hook timeline
// are written to artifactsDir.
func TestObserveDashboard(t *testing.T) {
	b := startBrowser(t)
	shots := artifactsDir(t)
	tmp := t.TempDir()
	project, outside, home := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside"), filepath.Join(tmp, "home")
	for _, d := range []string{project, outside, home} {
		os.MkdirAll(d, 0o755)
	}
	env := baseEnv(t, home)
	url := startObserve(t, env, project)
	b.navigate(url)
	b.waitFor(`document.getElementById('live').textContent === 'live'`, 5*time.Second)

	// A real harness session's hook calls: Claude Code with the guard
	// plugin, denied an rm -rf outside the project (the guard case).
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
	r := claudeRun(t, llm, project, home, "clean up", "--plugin-dir", filepath.Join(repo(t), "artifacts", "guard", "claude-code"))
	if r.err != nil || !exists(filepath.Join(outside, "keep.txt")) {
		t.Fatalf("the guard case did not deny: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}

	// The babysitter loop, driven as the agent would from its shell.
	os.WriteFile(filepath.Join(project, "proc.mjs"), []byte(babysitBreakpointProcess), 0o644)
	created := sitterJSON(t, env, project, "run", "create", "--process-id", "ship", "--entry", "./proc.mjs#process")
	dir := created["runDir"].(string)
	runID := filepath.Base(dir)
	card := func(col string) string {
		return `!!document.querySelector('#col-` + col + ` .card[data-run="` + runID + `"]')`
	}
	id, kind := nextEffect(t, sitterJSON(t, env, project, "run", "iterate", dir))
	if kind != "shell" {
		t.Fatalf("first effect %s, want shell", kind)
	}
	b.waitFor(card("working"), 3*time.Second)
	sitterJSON(t, env, project, "task", "post", dir, id, "--status", "ok", "--value-inline", `{"built":true}`)
	it := sitterJSON(t, env, project, "run", "iterate", dir)
	bp, kind := nextEffect(t, it)
	if kind != "breakpoint" {
		t.Fatalf("second effect %s, want breakpoint", kind)
	}
	took := b.waitFor(card("needs-you"), 5*time.Second)
	t.Logf("the breakpoint showed under needs you %s after the journal had it", took)
	if took > time.Second {
		t.Errorf("the breakpoint took %s to show under needs you, want under 1 s", took)
	}
	t.Logf("board: %s", b.screenshot(shots, "board.png"))

	// Keyboard: j selects the first card, Enter opens it.
	b.eval(`document.activeElement && document.activeElement.blur(), true`)
	b.eval(`document.getElementById('filter').value = '` + runID + `', document.getElementById('filter').dispatchEvent(new Event('input')), true`)
	b.key("j")
	b.waitFor(`!!document.querySelector('.card.selected[data-run="`+runID+`"]')`, 2*time.Second)
	b.key("Enter")
	b.waitFor(`location.pathname === '/run' && !!document.querySelector('form.bp input[name=effect][value="`+bp+`"]')`, 5*time.Second)
	t.Logf("run detail: %s", b.screenshot(shots, "run.png"))

	// Approve in the page.
	b.eval(`document.querySelector('form.bp textarea').value = 'ship it', document.querySelector('form.bp button.approve').click(), true`)
	b.waitFor(`!!document.querySelector('#flash.ok')`, 5*time.Second)
	res, err := os.ReadFile(filepath.Join(dir, "tasks", bp, "result.json"))
	if err != nil || !strings.Contains(string(res), `"approved": true`) || !strings.Contains(string(res), `"response": "ship it"`) {
		t.Fatalf("the approval's result: %s %v", res, err)
	}
	// Exactly once: the CLI's answer now is refused.
	cmd := exec.Command(sitter(t), "task", "post", dir, bp, "--status", "ok", "--value-inline", `{"approved":false}`)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "not requested") {
		t.Fatalf("a second answer from the CLI was not refused: %v\n%s", err, out)
	}
	// The page's second answer is refused and shown: post the same form
	// again (the browser's back button would).
	b.eval(`(function(){var f=document.createElement('form');f.method='post';f.action='/approve';
	  for (const [k,v] of Object.entries({csrf: document.getElementById('main').dataset.csrf, path: ` + strconv.Quote(dir) + `, effect: '` + bp + `', answer: 'reject'})) {
	    var i=document.createElement('input');i.type='hidden';i.name=k;i.value=v;f.appendChild(i);}
	  document.body.appendChild(f);f.submit();return true;})()`)
	b.waitFor(`!!document.querySelector('#flash.bad') && document.querySelector('#flash.bad').textContent.includes('refused')`, 5*time.Second)

	// The loop resumes: the next effect is pending (working), then the run
	// completes; the open run page follows live.
	id, kind = nextEffect(t, sitterJSON(t, env, project, "run", "iterate", dir))
	if kind != "agent" {
		t.Fatalf("after the approval: %s, want the agent effect", kind)
	}
	b.waitFor(`document.getElementById('bucket').textContent === 'working'`, 3*time.Second)
	sitterJSON(t, env, project, "task", "post", dir, id, "--status", "ok", "--value-inline", `{"review":"fine"}`)
	if it := sitterJSON(t, env, project, "run", "iterate", dir); it["status"] != "completed" {
		t.Fatalf("the run did not complete: %v", it)
	}
	b.waitFor(`document.getElementById('bucket').textContent === 'completed'`, 3*time.Second)
	b.navigate(strings.SplitN(url, "?", 2)[0])
	b.waitFor(card("completed"), 3*time.Second)

	// The hook timeline: Claude Code's session, the deny standing out.
	b.navigate(strings.SplitN(url, "/?", 2)[0] + "/hooks?harness=claude-code")
	b.waitFor(`[...document.querySelectorAll('.tl.hook.deny')].some(e => e.textContent.includes('PreToolUse') && e.textContent.includes('recursive-delete'))`, 5*time.Second)
	if s := b.eval(`getComputedStyle(document.querySelector('.tl.hook.deny')).borderLeftWidth`); s != "4px" {
		t.Errorf("the deny does not stand out: border %v", s)
	}
	t.Logf("hook timeline: %s", b.screenshot(shots, "hooks.png"))
	// Dark theme.
	b.eval(`document.getElementById('theme').click(), true`)
	b.waitFor(`document.documentElement.dataset.theme === 'dark'`, time.Second)
	b.navigate(strings.SplitN(url, "?", 2)[0])
	b.waitFor(`document.documentElement.dataset.theme === 'dark'`, time.Second)
	t.Logf("board, dark: %s", b.screenshot(shots, "board-dark.png"))
}
