//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// observePage starts `sitter observe --dir project`, opens its URL as a
// browser would (the token becomes a cookie) and returns the HTML of path.
func observePage(t *testing.T, env []string, project, path string) string {
	t.Helper()
	u := startObserve(t, env, project)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(u string) string {
		r, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		if err != nil || r.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v\n%s", u, r.StatusCode, err, b)
		}
		return string(b)
	}
	get(u)
	return get(strings.SplitN(u, "/?", 2)[0] + path)
}

// lowContrastJS lists the page's visible text whose colour has a contrast
// ratio under 4.5:1 (WCAG AA) with the background it is drawn on (the
// nearest ancestor's opaque background), as the browser computed them.
const lowContrastJS = `(() => {
  const parse = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const bgOf = el => { for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor); if (c && c[3] > 0) return c; }
    return [255, 255, 255, 1]; };
  const bad = [], seen = new Set();
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = w.nextNode());) {
    const el = n.parentElement;
    if (!n.textContent.trim() || seen.has(el)) continue;
    seen.add(el);
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || el.getClientRects().length === 0) continue;
    const fg = parse(cs.color), bg = bgOf(el);
    const mix = [0, 1, 2].map(i => fg[i] * fg[3] + bg[i] * (1 - fg[3]));
    const a = lum(mix), b = lum(bg), r = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (r < 4.5) bad.push(el.tagName.toLowerCase() + '.' + el.className + ' "' + n.textContent.trim().slice(0, 40) + '": ' + cs.color + ' on rgb(' + bg.slice(0, 3).join(', ') + ') ' + r.toFixed(2) + ':1');
  }
  return bad.join('\n');
})()`

// checkContrast fails the test when text on the page is below 4.5:1.
func checkContrast(t *testing.T, b *browser, page string) {
	t.Helper()
	if bad := b.eval(lowContrastJS); bad != "" {
		t.Errorf("%s: text under 4.5:1 contrast:\n%s", page, bad)
	}
}

// breakpointAsked is the run's breakpoint effect and when the journal
// recorded its request.
func breakpointAsked(t *testing.T, dir string, env []string) (string, time.Time) {
	t.Helper()
	cmd := exec.Command(sitter(t), "run", "events", dir, "--json")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sitter run events: %v\n%s", err, out)
	}
	var evs struct {
		Events []struct {
			Type       string
			RecordedAt string
			Data       struct{ EffectID, Kind string }
		}
	}
	if err := json.Unmarshal(out, &evs); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Events {
		if e.Type == "EFFECT_REQUESTED" && e.Data.Kind == "breakpoint" {
			at, err := time.Parse(time.RFC3339Nano, e.RecordedAt)
			if err != nil {
				t.Fatal(err)
			}
			return e.Data.EffectID, at
		}
	}
	t.Fatalf("no breakpoint requested in %s:\n%s", dir, out)
	return "", time.Time{}
}

// TestObserveDashboard drives `sitter observe` in headless Chromium while
// real Claude Code sessions with the babysitter bundle run a scripted
// agent that follows the babysit skill: the run reaching a breakpoint
// shows under "needs you" within a second; the breakpoint is approved in
// the page (a second answer, from the CLI or the page, is refused); with
// its session ended the run is orphaned until the user resumes the
// session (claude --continue), and the stop hook drives the loop on until
// the run completes, which the open page follows live (working, then
// completed). A session the stop hook gave up on at the stop
// guard's cap shows under "needs you" with the reason. The hook timeline
// of a real Claude Code session shows the guard's deny. Screenshots of
// the board, the run and the hook timeline are written to artifactsDir.
func TestObserveDashboard(t *testing.T) {
	b := startBrowser(t)
	shots := artifactsDir(t)
	tmp := t.TempDir()
	project, outside, home := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside"), filepath.Join(tmp, "home")
	for _, d := range []string{project, outside, home} {
		os.MkdirAll(d, 0o755)
	}
	env := baseEnv(t, home)
	install(t, clis["claude-code"]) // here, not in a session's goroutine
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

	// The babysitter loop in a real session: the agent creates the run,
	// iterates to the breakpoint, asks, and the stop hook lets the session
	// end there (a human must act). The board shows it meanwhile.
	var guides []string
	agent := startLLM(t, scriptedAgent(agentOptions{process: babysitBreakpointProcess, processID: "ship", guides: &guides}))
	session := func(prompt string, extra ...string) <-chan runResult {
		done := make(chan runResult, 1)
		go func() {
			var r runResult
			// A set-up failure ends this goroutine (t.Fatal): the
			// waiter still gets an answer, and t says it failed.
			defer func() { done <- r }()
			r = babysitRun(t, "claude-code", agent, project, home, prompt, extra...)
		}()
		return done
	}
	first := session(babysitPrompt)
	card := func(col, runID string) string {
		return `!!document.querySelector('#col-` + col + ` .card[data-run="` + runID + `"]')`
	}
	b.waitFor(`!!document.querySelector('#col-needs-you .card')`, 3*time.Minute)
	seen := time.Now()
	if r := <-first; r.err != nil || t.Failed() {
		t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	dir := runOf(t, project, "ship")
	runID := filepath.Base(dir)
	b.waitFor(card("needs-you", runID), time.Second)
	bp, asked := breakpointAsked(t, dir, env)
	took := seen.Sub(asked)
	t.Logf("the breakpoint showed under needs you %s after the journal had it", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("the breakpoint took %s to show under needs you, want under 1 s", took)
	}
	if _, evs := readJournal(t, dir, home); evs[len(evs)-1].Type != "STOP_HOOK_INVOKED" || evs[len(evs)-1].Data["row"] != "breakpoints-only" {
		t.Fatalf("the session did not stop at the breakpoint for the human: last event %+v", evs[len(evs)-1])
	}
	t.Logf("board: %s", b.screenshot(shots, "board.png"))
	checkContrast(t, b, "board")

	// Keyboard: / goes to the filter and what is typed there filters the
	// cards; Esc leaves it; j selects the first card, Enter opens it.
	b.eval(`document.activeElement && document.activeElement.blur(), true`)
	b.key("/")
	b.waitFor(`document.activeElement === document.getElementById('filter') && document.getElementById('filter').value === ''`, 2*time.Second)
	b.key("~")
	b.waitFor(`document.querySelector('.card[data-run="`+runID+`"]').classList.contains('hidden')`, 2*time.Second)
	b.eval(`document.getElementById('filter').value = '` + runID + `', document.getElementById('filter').dispatchEvent(new Event('input')), true`)
	b.waitFor(`!document.querySelector('.card[data-run="`+runID+`"]').classList.contains('hidden')`, 2*time.Second)
	b.key("Escape")
	b.waitFor(`document.activeElement !== document.getElementById('filter')`, 2*time.Second)
	b.key("j")
	b.waitFor(`!!document.querySelector('.card.selected[data-run="`+runID+`"]')`, 2*time.Second)
	b.key("Enter")
	b.waitFor(`location.pathname === '/run' && !!document.querySelector('form.bp input[name=effect][value="`+bp+`"]')`, 5*time.Second)
	t.Logf("run detail: %s", b.screenshot(shots, "run.png"))
	checkContrast(t, b, "run detail")

	// Approve in the page.
	b.eval(`document.querySelector('form.bp textarea').value = 'ship it', document.querySelector('form.bp button.approve').click(), true`)
	// The page says how to go on: resume the session that drives the run.
	b.waitFor(`!!document.querySelector('#flash.ok') && document.querySelector('#flash.ok').textContent.includes('claude --resume ')`, 5*time.Second)
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

	// Answered: nothing drives the run now (the headless session ended
	// when its turn did), so it is orphaned until the user resumes the
	// session as docs/observe.md says; then the stop hook drives the loop
	// on to completion while the open page follows: working, completed.
	b.waitFor(`document.getElementById('bucket').textContent === 'orphaned'`, 3*time.Second)
	b.eval(`window.buckets = [document.getElementById('bucket').textContent], setInterval(function () {
	  var e = document.getElementById('bucket');
	  if (e && e.textContent !== window.buckets[window.buckets.length - 1]) window.buckets.push(e.textContent);
	}, 10), true`)
	resumed := session("I answered the breakpoint in sitter observe. Continue.", "--continue")
	b.waitFor(`document.getElementById('bucket').textContent === 'completed'`, 3*time.Minute)
	// The page's timers may run late (a page in the background): let the
	// recorder catch up with the bucket shown.
	b.waitFor(`window.buckets[window.buckets.length - 1] === 'completed'`, 5*time.Second)
	if r := <-resumed; r.err != nil || t.Failed() {
		t.Fatalf("claude --continue: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if got := b.eval(`window.buckets.join(' → ')`); got != "orphaned → working → completed" {
		t.Errorf("the run page showed %v, want orphaned → working → completed", got)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "state", "output.json"))
	if !strings.Contains(string(out), "ship it") {
		t.Errorf("the run's output does not carry the page's answer: %s", out)
	}
	if _, evs := readJournal(t, dir, home); evs[len(evs)-1].Type != "STOP_HOOK_INVOKED" || evs[len(evs)-1].Data["row"] != "completion-proof" {
		t.Errorf("the resumed session did not end on the completion proof: %+v", evs[len(evs)-1])
	}
	b.navigate(strings.SplitN(url, "?", 2)[0])
	b.waitFor(card("completed", runID), 3*time.Second)

	// A session the stop hook gives up on: the agent ignores every block,
	// and with a stop cap of 1 the second block in a row lets it stop.
	stubborn := scriptedAgent(agentOptions{process: babysitProcess, processID: "stubborn", guides: &guides})
	capLLM := startLLM(t, func(q *llmscript.Request) llmscript.Turn {
		if strings.Contains(strings.Join(q.LastInput(), "\n"), "is not finished (stop-hook iteration") {
			return llmscript.Turn{Text: "I will not go on with this run. Ending my turn."}
		}
		return stubborn(q)
	})
	if r := babysitRun(t, "claude-code", capLLM, project, home, babysitPrompt, "SITTER_STOP_CAP=1"); r.err != nil {
		t.Fatalf("claude (stop cap): %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	capped := filepath.Base(runOf(t, project, "stubborn"))
	b.waitFor(card("needs-you", capped)+` && document.querySelector('#col-needs-you .card[data-run="`+capped+`"] .why').textContent.includes('gave up at its cap (1 block in a row)')`, 3*time.Second)
	t.Logf("board, a session given up at the stop cap: %s", b.screenshot(shots, "board-capped.png"))
	checkContrast(t, b, "board with a capped session")

	// The hook timeline: Claude Code's session, the deny standing out.
	b.navigate(strings.SplitN(url, "/?", 2)[0] + "/hooks?harness=claude-code")
	b.waitFor(`[...document.querySelectorAll('.tl.hook.deny')].some(e => e.textContent.includes('PreToolUse') && e.textContent.includes('recursive-delete'))`, 5*time.Second)
	if s := b.eval(`getComputedStyle(document.querySelector('.tl.hook.deny')).borderLeftWidth`); s != "4px" {
		t.Errorf("the deny does not stand out: border %v", s)
	}
	t.Logf("hook timeline: %s", b.screenshot(shots, "hooks.png"))
	checkContrast(t, b, "hook timeline")
	// j and k walk the hook calls.
	selected := `[...document.querySelectorAll('main .nav-item')].findIndex(e => e.classList.contains('selected'))`
	b.key("j")
	b.key("j")
	b.waitFor(selected+` === 1`, 2*time.Second)
	b.key("k")
	b.waitFor(selected+` === 0`, 2*time.Second)
	// Dark theme.
	b.eval(`document.getElementById('theme').click(), true`)
	b.waitFor(`document.documentElement.dataset.theme === 'dark'`, time.Second)
	b.navigate(strings.SplitN(url, "?", 2)[0])
	b.waitFor(`document.documentElement.dataset.theme === 'dark'`, time.Second)
	t.Logf("board, dark: %s", b.screenshot(shots, "board-dark.png"))
	checkContrast(t, b, "board, dark")
	b.navigate(strings.SplitN(url, "/?", 2)[0] + "/run?path=" + neturl.QueryEscape(dir))
	b.waitFor(`document.documentElement.dataset.theme === 'dark' && !!document.getElementById('bucket')`, 5*time.Second)
	t.Logf("run detail, dark: %s", b.screenshot(shots, "run-dark.png"))
	checkContrast(t, b, "run detail, dark")
	b.navigate(strings.SplitN(url, "/?", 2)[0] + "/hooks")
	b.waitFor(`document.documentElement.dataset.theme === 'dark'`, 5*time.Second)
	t.Logf("hook timeline, dark: %s", b.screenshot(shots, "hooks-dark.png"))
	checkContrast(t, b, "hook timeline, dark")
}

// launchBreakpointAgent is launchBabysitAgent that leaves a breakpoint to
// the human, as the babysit skill says for an interactive run: at an
// iterate result whose next actions are all breakpoints it ends its turn
// without posting.
func launchBreakpointAgent(sitter string) llmscript.Script {
	agent := launchBabysitAgent(sitter)
	return func(r *llmscript.Request) llmscript.Turn {
		if text, tool := launchLastUserTurn(r); tool {
			var it struct {
				Status      string `json:"status"`
				NextActions []struct {
					EffectID string `json:"effectId"`
					Kind     string `json:"kind"`
				} `json:"nextActions"`
			}
			if i := strings.Index(text, "{"); i >= 0 {
				json.NewDecoder(strings.NewReader(text[i:])).Decode(&it)
			}
			if it.Status == "waiting" && len(it.NextActions) > 0 &&
				!slices.ContainsFunc(it.NextActions, func(a struct {
					EffectID string `json:"effectId"`
					Kind     string `json:"kind"`
				}) bool {
					return a.Kind != "breakpoint"
				}) {
				return llmscript.Turn{Text: "The run waits for a human to answer breakpoint " + it.NextActions[0].EffectID + "; ending my turn."}
			}
		}
		return agent(r)
	}
}

// TestObserveLaunch: issue #18's whole loop through `sitter launch`. The
// user starts `sitter launch claude-code --babysit <process with a
// breakpoint> --interactive` (in the background, as in another terminal);
// the real Claude Code session stops at the breakpoint and the launch
// waits, saying so; the page shows the run under "needs you"; the user
// approves in the page; the launch resumes the session itself, and the
// open run page follows: working, then completed, never orphaned. The
// launch exits 0 with the run completed, the breakpoint's answer in the
// journal and exactly one RUN_COMPLETED.
//
// after-the-wait approves once the launch has said that it waits; at-once
// approves as soon as the board shows the breakpoint, which may be before
// the session has ended (the launch then resumes without waiting).
func TestObserveLaunch(t *testing.T) {
	t.Run("after-the-wait", func(t *testing.T) { observeLaunch(t, true) })
	t.Run("at-once", func(t *testing.T) { observeLaunch(t, false) })
}

func observeLaunch(t *testing.T, afterWait bool) {
	bin := install(t, clis["claude-code"])
	b := startBrowser(t)
	shots := artifactsDir(t)
	home := userHome(t)
	project := t.TempDir()
	proc := filepath.Join(project, "ship.mjs")
	os.WriteFile(proc, []byte(babysitBreakpointProcess), 0o644)
	env := baseEnv(t, home)
	url := startObserve(t, env, project)
	b.navigate(url)
	b.waitFor(`document.getElementById('live').textContent === 'live'`, 5*time.Second)

	llm := startLLM(t, launchBreakpointAgent(sitter(t)))
	var stdout, stderr lockedBuffer
	launched := make(chan error, 1)
	go func() {
		launched <- runCLITo(t, &stdout, &stderr, t.TempDir(), append(env, "ANTHROPIC_API_KEY=sk-fake"), 5*time.Minute, sitter(t), "launch",
			"claude-code", "--bin", bin, "--workspace", project, "--upstream", llm.URL,
			"--plugin", filepath.Join(repo(t), "artifacts", "babysitter", "claude-code"),
			"--babysit", proc, "--interactive", "--json")
	}()
	b.waitFor(`!!document.querySelector('#col-needs-you .card')`, 3*time.Minute)
	dir := runOf(t, project, "ship")
	runID := filepath.Base(dir)
	b.waitFor(`!!document.querySelector('#col-needs-you .card[data-run="`+runID+`"]')`, time.Second)
	bp, _ := breakpointAsked(t, dir, env)
	waits := "waits for breakpoint " + bp + " (approve): answer it in `sitter observe`"
	if afterWait {
		// The user reads in the launch's terminal that it waits.
		for deadline := time.Now().Add(time.Minute); !strings.Contains(stderr.String(), waits); time.Sleep(50 * time.Millisecond) {
			select {
			case err := <-launched:
				t.Fatalf("sitter launch exited at the breakpoint: %v\n%s\n%s", err, stdout.String(), stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("the launch did not say that it waits (%q):\n%s", waits, stderr.String())
			}
		}
		t.Logf("board, the launch waiting: %s", b.screenshot(shots, "launch-board.png"))
	}

	b.navigate(strings.SplitN(url, "/?", 2)[0] + "/run?path=" + neturl.QueryEscape(dir))
	b.waitFor(`!!document.querySelector('form.bp input[name=effect][value="`+bp+`"]') && !!document.getElementById('bucket')`, 5*time.Second)
	b.eval(`document.querySelector('form.bp textarea').value = 'ship it', document.querySelector('form.bp button.approve').click(), true`)
	b.waitFor(`!!document.querySelector('#flash.ok')`, 5*time.Second)
	// The form's submit reloads the page: record the buckets from there on.
	b.waitFor(`!!document.getElementById('bucket')`, 5*time.Second)
	b.eval(`window.buckets = [document.getElementById('bucket').textContent], setInterval(function () {
	  var e = document.getElementById('bucket');
	  if (e && e.textContent !== window.buckets[window.buckets.length - 1]) window.buckets.push(e.textContent);
	}, 10), true`)
	b.waitFor(`document.getElementById('bucket').textContent === 'completed'`, 3*time.Minute)
	b.waitFor(`window.buckets[window.buckets.length - 1] === 'completed'`, 5*time.Second)
	got := fmt.Sprint(b.eval(`window.buckets.join(' → ')`))
	t.Logf("the run page after the approval: %s", got)
	// Never orphaned: between the answer and the resumed session the
	// waiting launch drives the run (its mark in the run's state/).
	if !strings.HasSuffix(got, "working → completed") || strings.Contains(got, "orphaned") {
		t.Errorf("the run page showed %v, want it to go working → completed, never orphaned", got)
	}
	if afterWait {
		t.Logf("run, completed: %s", b.screenshot(shots, "launch-run.png"))
	}

	if err := <-launched; err != nil {
		t.Fatalf("sitter launch: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	r := runResult{stdout: stdout.String(), stderr: stderr.String()}
	var wait, answered, end map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) != nil {
			t.Fatalf("launch stdout is not NDJSON: %q", l)
		}
		switch e["type"] {
		case "breakpoint_wait":
			wait = e
		case "breakpoint_answered":
			answered = e
		case "babysit":
			end = e
		}
	}
	if answered == nil || answered["runId"] != runID {
		t.Errorf("no breakpoint_answered event for run %s:\n%s", runID, r.stdout)
	}
	// At once, the answer may come before the session has ended: then the
	// launch has nothing to wait for and says nothing of it.
	if n := strings.Count(r.stderr, waits); afterWait && n != 1 || n > 1 || (n == 1) != (wait != nil) {
		t.Errorf("the launch said %d times what waits (%q), breakpoint_wait event %v:\n%s\n%s", n, waits, wait, r.stderr, r.stdout)
	}
	if wait != nil && wait["runId"] != runID {
		t.Errorf("breakpoint_wait event for another run: %v", wait)
	}
	if end == nil || end["code"] != float64(0) || end["status"] != "completed" {
		t.Errorf("babysit event %v, want code 0, completed", end)
	}
	res, err := os.ReadFile(filepath.Join(dir, "tasks", bp, "result.json"))
	if err != nil || !strings.Contains(string(res), `"approved": true`) || !strings.Contains(string(res), `"response": "ship it"`) {
		t.Errorf("the breakpoint's answer: %s %v", res, err)
	}
	st := launchJournal(t, dir)
	if n := countJournal(st, "RUN_COMPLETED", nil); n != 1 {
		t.Errorf("%d RUN_COMPLETED events, want 1", n)
	}
	if n := countJournal(st, "EFFECT_RESOLVED", func(d string) bool { return strings.Contains(d, bp) }); n != 1 {
		t.Errorf("%d EFFECT_RESOLVED events of the breakpoint, want 1", n)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "state", "output.json"))
	if !strings.Contains(string(out), "ship it") {
		t.Errorf("the run's output does not carry the page's answer: %s", out)
	}
}
