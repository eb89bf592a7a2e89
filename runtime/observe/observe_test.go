package observe

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"sitter.dev/sitter/runtime/checkpoint"
	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
	"sitter.dev/sitter/runtime/transcript"
)

// newRun makes a run under project/.a5c/runs without running its process
// (no Node): RUN_CREATED, then effects requested as the process would.
func newRun(t *testing.T, project, id string) string {
	t.Helper()
	proc := filepath.Join(project, "p.mjs")
	os.WriteFile(proc, []byte("export async function process() {}\n"), 0o644)
	dir, _, err := runs.Create(context.Background(), runs.CreateOptions{RunsDir: filepath.Join(project, ".a5c", "runs"), RunID: id, ProcessID: "demo-" + id, Entry: proc + "#process"})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func appendEv(t *testing.T, dir, typ string, data any) {
	t.Helper()
	j, err := journal.Load(filepath.Join(dir, runs.JournalDir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Append(filepath.Join(dir, runs.JournalDir), j.Head(), typ, data); err != nil {
		t.Fatal(err)
	}
}

func request(t *testing.T, dir, id, kind string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "tasks", id), 0o755)
	os.WriteFile(filepath.Join(dir, "tasks", id, "task.json"), []byte(`{"kind":"`+kind+`","title":"Ship it?"}`), 0o644)
	appendEv(t, dir, journal.EffectRequested, map[string]any{"effectId": id, "invocationKey": "k-" + id, "taskId": "t", "kind": kind, "label": "approve"})
}

type fixture struct {
	s       *Server
	ts      *httptest.Server
	project string
	c       *http.Client // holds the token cookie
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, ".a5c", "runs"), 0o755)
	s, err := New(Options{Dirs: []string{project}, StateDir: t.TempDir(), Token: "tok123"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	s.ix.Sweep()
	f := &fixture{s: s, ts: ts, project: project, c: &http.Client{Jar: jar}}
	if r := f.get(t, "/?token=tok123"); r.StatusCode != 200 {
		t.Fatalf("first load with the token: %d", r.StatusCode)
	}
	return f
}

func (f *fixture) get(t *testing.T, path string) *http.Response {
	t.Helper()
	r, err := f.c.Get(f.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTokenRequired(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/", "/hooks", "/events", "/static/style.css", "/?token=wrong", "/run?path=" + url.QueryEscape(f.project)} {
		r, err := http.Get(f.ts.URL + p) // no cookie
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", p, r.StatusCode)
		}
	}
	r, err := http.PostForm(f.ts.URL+"/approve", url.Values{"csrf": {f.s.csrf}})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /approve without the token: %d, want 401", r.StatusCode)
	}
	// The token in the URL becomes a cookie and leaves the URL.
	nc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err = nc.Get(f.ts.URL + "/?token=tok123")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" || !strings.Contains(r.Header.Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("first load: %d Location %q Set-Cookie %q", r.StatusCode, r.Header.Get("Location"), r.Header.Get("Set-Cookie"))
	}
	if r := f.get(t, "/hooks"); r.StatusCode != 200 {
		t.Errorf("with the cookie: %d", r.StatusCode)
	}
}

func TestLoopbackHostOnly(t *testing.T) {
	f := newFixture(t)
	f.s.loopback = true
	req, _ := http.NewRequest("GET", f.ts.URL+"/?token=tok123", nil)
	req.Host = "attacker.example:80"
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("a rebinding Host header: %d, want 403", r.StatusCode)
	}
}

func TestOutsideWatchedDirsRefused(t *testing.T) {
	f := newFixture(t)
	inside := newRun(t, f.project, "r1")
	other := newRun(t, t.TempDir(), "r2") // a real run, not watched
	link := filepath.Join(f.project, ".a5c", "runs", "link")
	os.Symlink(filepath.Dir(filepath.Dir(other)), link)
	for _, p := range []string{other, "/etc", filepath.Join(inside, ".."), filepath.Join(link, ".a5c", "runs", "r2"), "relative/r1", ""} {
		for _, route := range []string{"/run?path=", "/checkpoint?id=x&path="} {
			r := f.get(t, route+url.QueryEscape(p))
			b := body(t, r)
			if r.StatusCode != http.StatusForbidden || !strings.Contains(b, "not a run directory under a watched directory") {
				t.Errorf("GET %s%s: %d %s", route, p, r.StatusCode, b)
			}
		}
	}
	r, _ := f.c.PostForm(f.ts.URL+"/approve", url.Values{"csrf": {f.s.csrf}, "path": {other}, "effect": {"e"}, "answer": {"approve"}})
	if b := body(t, r); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST /approve outside: %d %s", r.StatusCode, b)
	}
	if r := f.get(t, "/run?path="+url.QueryEscape(inside)); r.StatusCode != 200 {
		t.Errorf("a watched run: %d", r.StatusCode)
	}
}

// corruptRun is a run whose last journal file is not JSON.
func corruptRun(t *testing.T, project, name string) string {
	t.Helper()
	dir := newRun(t, project, name)
	request(t, dir, "e1", "shell")
	files, _ := filepath.Glob(filepath.Join(dir, "journal", "*.json"))
	if err := os.WriteFile(files[len(files)-1], []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// freshBoard is the board of a new server on project and state (served
// from the index cache before any sweep), fetched with the token.
func freshBoard(t *testing.T, project, state string) string {
	t.Helper()
	s, err := New(Options{Dirs: []string{project}, StateDir: state, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	r, err := (&http.Client{Jar: jar}).Get(ts.URL + "/?token=tok")
	if err != nil {
		t.Fatal(err)
	}
	return body(t, r)
}

func TestCorruptJournalIsAnErrorCard(t *testing.T) {
	f := newFixture(t)
	good := newRun(t, f.project, "good")
	bad := corruptRun(t, f.project, "bad")
	f.s.ix.Sweep()
	b := body(t, f.get(t, "/"))
	card := regexp.MustCompile(`(?s)<a class="card nav-item error b-failed" data-key="` + regexp.QuoteMeta(bad) + `".*?cannot read this run:</strong>[^<]*journal file`)
	if !card.MatchString(b) {
		t.Errorf("no error card for the corrupt run:\n%s", b)
	}
	if !strings.Contains(b, `data-key="`+good+`"`) {
		t.Errorf("the good run is missing")
	}
	r := f.get(t, "/run?path="+url.QueryEscape(bad))
	if b := body(t, r); r.StatusCode != 200 || !strings.Contains(b, `id="run-error"`) {
		t.Errorf("run page of the corrupt run: %d\n%s", r.StatusCode, b)
	}
	if r := f.get(t, "/run?path="+url.QueryEscape(good)); r.StatusCode != 200 {
		t.Errorf("still serving: %d", r.StatusCode)
	}
}

func approve(t *testing.T, f *fixture, dir, effect, csrf string) (int, string) {
	t.Helper()
	r, err := f.c.PostForm(f.ts.URL+"/approve", url.Values{"csrf": {csrf}, "path": {dir}, "effect": {effect}, "answer": {"approve"}, "response": {"ship"}})
	if err != nil {
		t.Fatal(err)
	}
	return r.StatusCode, body(t, r)
}

func TestApproveExactlyOnce(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "bp")
	request(t, dir, "b1", "breakpoint")
	f.s.ix.Sweep()
	if v, _ := f.s.ix.Run(dir); v.Bucket != NeedsYou {
		t.Fatalf("bucket %s, want needs-you", v.Bucket)
	}
	if code, b := approve(t, f, dir, "b1", "forged"); code != http.StatusForbidden || !strings.Contains(b, "csrf field is missing") {
		t.Fatalf("a form without the csrf value: %d %s", code, b)
	}
	code, b := approve(t, f, dir, "b1", f.s.csrf)
	if code != 200 || !strings.Contains(b, `class="flash ok"`) || !strings.Contains(b, "approved breakpoint b1") {
		t.Fatalf("first answer: %d\n%s", code, b)
	}
	res, err := os.ReadFile(filepath.Join(dir, "tasks", "b1", "result.json"))
	if err != nil || !strings.Contains(string(res), `"approved": true`) || !strings.Contains(string(res), `"response": "ship"`) {
		t.Fatalf("result.json: %s %v", res, err)
	}
	code, b = approve(t, f, dir, "b1", f.s.csrf)
	if code != 200 || !strings.Contains(b, `class="flash bad"`) || !strings.Contains(b, "refused: effect b1 is not requested") {
		t.Fatalf("second answer from the page was not refused: %d\n%s", code, b)
	}
	// The CLI's path (run.Post, as `sitter task post`) refuses it too.
	if _, err := runs.Post(context.Background(), dir, "b1", runs.PostOptions{Status: "ok", Value: json.RawMessage(`{}`)}); !errors.Is(err, runs.ErrAlreadyResolved) {
		t.Fatalf("the CLI's post after the page's: %v", err)
	}
	st, _ := runs.Load(dir)
	n := 0
	for _, ev := range st.Journal.Events {
		if ev.Type == journal.EffectResolved {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d EFFECT_RESOLVED, want 1", n)
	}
	// Answered from the CLI first: the page's answer is refused and shown.
	dir2 := newRun(t, f.project, "bp2")
	request(t, dir2, "b2", "breakpoint")
	if _, err := runs.Post(context.Background(), dir2, "b2", runs.PostOptions{Status: "ok", Value: json.RawMessage(`{"approved":false}`)}); err != nil {
		t.Fatal(err)
	}
	if _, b := approve(t, f, dir2, "b2", f.s.csrf); !strings.Contains(b, "refused: effect b2 is not requested") {
		t.Fatalf("page answer after the CLI's:\n%s", b)
	}
	// Only breakpoints are answered from the page.
	request(t, dir2, "s1", "shell")
	if _, b := approve(t, f, dir2, "s1", f.s.csrf); !strings.Contains(b, "not a breakpoint") {
		t.Fatalf("a shell effect answered from the page:\n%s", b)
	}
}

func TestCrossOriginFormRefused(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "bp")
	request(t, dir, "b1", "breakpoint")
	req, _ := http.NewRequest("POST", f.ts.URL+"/approve", strings.NewReader(url.Values{"csrf": {f.s.csrf}, "path": {dir}, "effect": {"b1"}, "answer": {"approve"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	r, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if b := body(t, r); r.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin POST: %d %s", r.StatusCode, b)
	}
	if st, _ := runs.Load(dir); len(st.Pending()) != 1 {
		t.Fatal("a cross-origin form answered the breakpoint")
	}
}

// TestEventsPushedOnJournalChange: a journal append is pushed to an open
// event stream at the next sweep (no clock: the sweep is called here).
func TestEventsPushedOnJournalChange(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "live")
	f.s.ix.Sweep()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.ts.URL+"/events", nil)
	r, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	rd := bufio.NewReader(r.Body)
	next := func() string {
		var ev string
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(l, "event: ") {
				ev = strings.TrimSpace(l[7:])
			}
			if l == "\n" && ev != "" {
				return ev
			}
		}
	}
	if ev := next(); ev != "hello" {
		t.Fatalf("first event %q", ev)
	}
	if f.s.ix.Sweep() {
		t.Fatal("a sweep with nothing new reported a change")
	}
	request(t, dir, "b1", "breakpoint")
	if !f.s.ix.Sweep() {
		t.Fatal("the sweep missed the journal append")
	}
	if ev := next(); ev != "changed" {
		t.Fatalf("event %q, want changed", ev)
	}
	if v, _ := f.s.ix.Run(dir); v.Bucket != NeedsYou {
		t.Fatalf("bucket %s", v.Bucket)
	}
	// The audit log changing is pushed too.
	os.WriteFile(filepath.Join(f.s.stateDir, "audit.jsonl"), []byte(`{"time":"t","harness":"codex","nativeEvent":"PreToolUse","phase":"preToolUse","session":"s","decision":"deny","verdict":"deny","handlers":[]}`+"\n"), 0o644)
	if !f.s.ix.Sweep() {
		t.Fatal("the sweep missed the audit change")
	}
	if ev := next(); ev != "changed" {
		t.Fatalf("event %q, want changed", ev)
	}
}

func TestHookTimeline(t *testing.T) {
	f := newFixture(t)
	lines := []string{
		`{"time":"2026-01-01T00:00:01Z","harness":"codex","nativeEvent":"PreToolUse","phase":"preToolUse","session":"s1","tool":"Bash","command":"rm -rf /x","handlers":[{"command":"guard","decision":"deny","latencyMs":3.5}],"decision":"deny","verdict":"deny","reason":"guard: recursive-delete","latencyMs":5}`,
		`{"time":"2026-01-01T00:00:02Z","harness":"codex","nativeEvent":"PreToolUse","phase":"preToolUse","session":"s1","tool":"Bash","command":"ls","handlers":[],"decision":"noop","verdict":"allow","latencyMs":2}`,
		`{"time":"2026-01-01T00:00:03Z","harness":"pi","nativeEvent":"tool_call","phase":"preToolUse","session":"s2","handlers":[],"decision":"allow","verdict":"allow","latencyMs":2}`,
	}
	os.WriteFile(filepath.Join(f.s.stateDir, "audit.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	b := body(t, f.get(t, "/hooks"))
	if !regexp.MustCompile(`class="tl hook nav-item deny"[^>]*>(?s:.*?)guard: recursive-delete`).MatchString(b) || !strings.Contains(b, "1 denied or blocked") {
		t.Errorf("the deny does not stand out:\n%s", b)
	}
	b = body(t, f.get(t, "/hooks?decision=deny-or-block"))
	if strings.Contains(b, ">ls<") || strings.Contains(b, "tool_call") || !strings.Contains(b, "rm -rf /x") {
		t.Errorf("decision filter:\n%s", b)
	}
	b = body(t, f.get(t, "/hooks?harness=pi"))
	if strings.Contains(b, "rm -rf") || !strings.Contains(b, "tool_call") {
		t.Errorf("harness filter:\n%s", b)
	}
	b = body(t, f.get(t, "/hooks?session=s1"))
	if strings.Contains(b, "tool_call") || !strings.Contains(b, "rm -rf /x") {
		t.Errorf("session filter:\n%s", b)
	}
}

func TestRunDetail(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "d")
	os.WriteFile(filepath.Join(dir, runs.InputsFile), []byte(`{"target":"the-inputs"}`), 0o644)
	request(t, dir, "a1", "shell")
	request(t, dir, "a2", "agent")
	appendEv(t, dir, journal.SessionBound, map[string]any{"harness": "codex", "sessionId": "sess-1", "via": "session start"})
	appendEv(t, dir, journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "sess-2", "decision": "block", "row": "effects-pending", "reason": "do a1", "iteration": 1})
	if _, err := runs.Post(context.Background(), dir, "a1", runs.PostOptions{Status: "error", Error: json.RawMessage(`{"name":"Error","message":"boom"}`)}); err != nil {
		t.Fatal(err)
	}
	request(t, dir, "a3", "shell") // the next iteration
	appendEv(t, dir, journal.RunCompleted, map[string]any{"outputRef": runs.OutputRef})
	os.MkdirAll(filepath.Join(dir, "state"), 0o755)
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(runs.OutputRef)), []byte(`{"shipped":"the-output"}`), 0o644)
	f.s.ix.Sweep()
	b := body(t, f.get(t, "/run?path="+url.QueryEscape(dir)))
	iters := regexp.MustCompile(`iteration (\d+)</span>\s*<div class="par"|iteration (\d+)</span><span class="type">(\w+)`).FindAllStringSubmatch(b, -1)
	var got []string
	for _, m := range iters {
		got = append(got, m[1]+m[2]+m[3])
	}
	if strings.Join(got, " ") != "1 2 3RUN_COMPLETED" {
		t.Errorf("iterations in the timeline: %q, want 1 (a1 and a2), 2 (a3), 3 (completed)", got)
	}
	for _, want := range []string{
		`&#34;target&#34;:&#34;the-inputs&#34;`, `&#34;shipped&#34;:&#34;the-output&#34;`, // inputs and output
		`aria-label="2 effects requested together"`, // a parallel group
		"boom",                                                             // the effect's error
		"codex · <code>sess-1</code>", "claude-code · <code>sess-2</code>", // both harnesses that drove it
		"effects-pending", // the stop-hook decision
		"STOP_HOOK_INVOKED", "EFFECT_RESOLVED",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("run detail lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(b)
	}
}

func TestClassify(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	stale := 30 * time.Minute
	fresh, old := now.Add(-time.Minute), now.Add(-time.Hour)
	dir := "/p/.a5c/runs/r"
	sess := func(active bool, ended string) []*session.State {
		return []*session.State{{Harness: "codex", SessionID: "s", RunDir: dir, Active: active, EndedBecause: ended}}
	}
	bp := []PendingEffect{{"b", "breakpoint", "ok?"}}
	sh := []PendingEffect{{"e", "shell", ""}}
	capped := map[Driver]StopCapped{{"codex", "s"}: {At: now.Add(-30 * time.Second), Cap: 20}}
	for _, c := range []struct {
		name     string
		v        RunView
		sessions []*session.State
		caps     map[Driver]StopCapped
		want     string
	}{
		{"unreadable", RunView{Err: "journal file x: bad"}, nil, nil, Failed},
		{"completed", RunView{Status: runs.StatusCompleted, Last: old}, nil, nil, Completed},
		{"failed", RunView{Status: runs.StatusFailed, Last: fresh}, nil, nil, Failed},
		{"halted", RunView{Status: runs.StatusHalted, Last: fresh}, nil, nil, Failed},
		{"breakpoint", RunView{Status: runs.StatusWaiting, Pending: bp, Last: fresh}, sess(true, ""), nil, NeedsYou},
		{"breakpoint, old", RunView{Status: runs.StatusWaiting, Pending: bp, Last: old}, nil, nil, NeedsYou},
		{"stop cap", RunView{Status: runs.StatusWaiting, Pending: sh, Last: fresh, LastStop: session.RowMaxIterations, LastStopAfter: true}, sess(false, session.RowMaxIterations), nil, NeedsYou},
		{"stop cap, then work", RunView{Status: runs.StatusWaiting, Pending: sh, Last: fresh, LastStop: session.RowMaxIterations}, sess(true, ""), nil, Working},
		{"process error", RunView{Status: runs.StatusCreated, RuntimeError: "SyntaxError", Last: fresh}, nil, nil, NeedsYou},
		{"session ended mid-run", RunView{Status: runs.StatusWaiting, Pending: sh, Last: fresh}, sess(false, "session-end"), nil, Orphaned},
		{"resolved, no completion, idle", RunView{Status: runs.StatusCreated, Events: 5, Last: old}, nil, nil, Orphaned},
		{"pending, idle", RunView{Status: runs.StatusWaiting, Pending: sh, Events: 2, Last: old}, nil, nil, Stale},
		{"just created, idle", RunView{Status: runs.StatusCreated, Events: 1, Last: old}, nil, nil, Stale},
		{"pending, driven", RunView{Status: runs.StatusWaiting, Pending: sh, Last: fresh}, sess(true, ""), nil, Working},
		{"resolved, to iterate", RunView{Status: runs.StatusCreated, Events: 5, Last: fresh}, nil, nil, Working},
		{"other run's session", RunView{Status: runs.StatusWaiting, Pending: sh, Last: fresh}, []*session.State{{RunDir: "/other", SessionID: "x"}}, nil, Working},
		{"stop guard's cap", RunView{Status: runs.StatusWaiting, Pending: sh, Last: fresh, Drivers: []Driver{{"codex", "s"}}}, sess(true, ""), capped, NeedsYou},
		{"stop guard's cap, then work", RunView{Status: runs.StatusWaiting, Pending: sh, Last: now, Drivers: []Driver{{"codex", "s"}}}, sess(true, ""), capped, Working},
		{"stop guard's cap, another session", RunView{Status: runs.StatusWaiting, Pending: sh, Last: fresh, Drivers: []Driver{{"pi", "s"}}}, nil, capped, Working},
	} {
		c.v.Dir = dir
		if got, why := Classify(&c.v, c.sessions, c.caps, now, stale); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, why, c.want)
		}
	}
}

// A run whose session ended while a sitter launch still drives it (a
// breakpoint answered, the session about to be resumed) is working, not
// orphaned; once that launch is gone, it is orphaned.
func TestClassifyLaunched(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, runs.StateDir), 0o755)
	ended := []*session.State{{Harness: "claude-code", SessionID: "s", RunDir: dir, EndedBecause: "breakpoints-only"}}
	v := RunView{Dir: dir, Status: runs.StatusCreated, Events: 5, Last: now, Launched: true}
	unmark, err := runs.MarkLaunch(dir, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got, why := Classify(&v, ended, nil, now, time.Hour); got != Working || !strings.Contains(why, "sitter launch") {
		t.Errorf("with a live launch: %s (%s), want working", got, why)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.MarkLaunch(dir, gone.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if got, why := Classify(&v, ended, nil, now, time.Hour); got != Orphaned {
		t.Errorf("with the launch gone: %s (%s), want orphaned", got, why)
	}
	if err := unmark(); err != nil {
		t.Fatal(err)
	}
	if runs.LaunchPID(dir) != 0 {
		t.Errorf("the mark outlived its removal")
	}
}

func TestRunCheckpoints(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newFixture(t)
	if out, err := exec.Command("git", "-C", f.project, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	dir := newRun(t, f.project, "cp")
	appendEv(t, dir, journal.SessionBound, map[string]any{"harness": "codex", "sessionId": "sess-9", "via": "test"})
	repo, err := checkpoint.Open(f.project)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.Create(checkpoint.Meta{Kind: "base", Harness: "codex", Session: "sess-9"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.project, "made-by-turn.txt"), []byte("turn output\n"), 0o644)
	cp, _, err := repo.Create(checkpoint.Meta{Kind: "turn", Harness: "codex", Session: "sess-9"})
	if err != nil {
		t.Fatal(err)
	}
	f.s.ix.Sweep()
	b := body(t, f.get(t, "/run?path="+url.QueryEscape(dir)))
	if !strings.Contains(b, "id="+cp.ID) || !strings.Contains(b, "A\tmade-by-turn.txt") {
		t.Fatalf("the run page does not list the turn's checkpoint %s:\n%s", cp.ID, b)
	}
	b = body(t, f.get(t, "/checkpoint?path="+url.QueryEscape(dir)+"&id="+cp.ID))
	if !strings.Contains(b, "&#43;turn output") { // html/template writes + as &#43;
		t.Fatalf("the checkpoint's diff:\n%s", b)
	}
	// A checkpoint that is not there is a 404 (the page says why), not a
	// 200 that a script or a link checker takes for a diff.
	for _, id := range []string{"", "no-such-checkpoint"} {
		r := f.get(t, "/checkpoint?path="+url.QueryEscape(dir)+"&id="+id)
		if b := body(t, r); r.StatusCode != http.StatusNotFound || !strings.Contains(b, `class="flash bad"`) {
			t.Errorf("checkpoint %q: %d\n%s", id, r.StatusCode, b)
		}
	}
}

// TestStopCapNeedsYou: a stop the stop guard let through at its cap, as
// the hook writes it to the audit log (stopCap), puts the run its session
// drives under needs you with the reason, until the journal moves again.
// The audit log is read as it grows: a line still being written waits.
func TestStopCapNeedsYou(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "capped")
	other := newRun(t, f.project, "other")
	for _, d := range []string{dir, other} {
		request(t, d, "e1", "shell")
	}
	appendEv(t, dir, journal.SessionBound, map[string]any{"harness": "claude-code", "sessionId": "s-cap", "via": "test"})
	appendEv(t, dir, journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "s-cap", "decision": "block", "row": "effects-pending"})
	appendEv(t, other, journal.SessionBound, map[string]any{"harness": "claude-code", "sessionId": "s-other", "via": "test"})
	f.s.ix.Sweep()
	if v, _ := f.s.ix.Run(dir); v.Bucket != Working {
		t.Fatalf("before the cap: %s (%s)", v.Bucket, v.Why)
	}
	st, _ := runs.Load(dir)
	at := parseTime(st.Journal.Head().RecordedAt).Add(time.Millisecond).Format(time.RFC3339Nano)
	entry := `{"time":"` + at + `","harness":"claude-code","nativeEvent":"Stop","phase":"stop","session":"s-cap","handlers":[{"command":"sitter session stop-check","decision":"block","latencyMs":4}],"decision":"noop","verdict":"allow","stopCap":20,"latencyMs":6}`
	log := filepath.Join(f.s.stateDir, "audit.jsonl")
	noise := `{"time":"` + at + `","harness":"claude-code","nativeEvent":"Stop","phase":"stop","session":"s-other","handlers":[],"decision":"block","verdict":"deny","latencyMs":1}` + "\n"
	// Half a line first: not read until it ends.
	os.WriteFile(log, []byte(noise+entry[:40]), 0o644)
	f.s.ix.Sweep()
	if v, _ := f.s.ix.Run(dir); v.Bucket != Working {
		t.Fatalf("half an audit line was read: %s (%s)", v.Bucket, v.Why)
	}
	af, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	af.WriteString(entry[40:] + "\n")
	af.Close()
	f.s.ix.Sweep()
	v, _ := f.s.ix.Run(dir)
	if v.Bucket != NeedsYou || !strings.Contains(v.Why, "gave up at its cap (20 blocks in a row)") || !strings.Contains(v.Why, "s-cap") {
		t.Fatalf("after the cap: %s (%s)", v.Bucket, v.Why)
	}
	if o, _ := f.s.ix.Run(other); o.Bucket != Working {
		t.Errorf("another session's run: %s (%s)", o.Bucket, o.Why)
	}
	b := body(t, f.get(t, "/"))
	if !regexp.MustCompile(`(?s)id="col-needs-you".*?data-run="capped".*?gave up at its cap`).MatchString(b) {
		t.Errorf("the board does not show the capped run under needs you:\n%s", b)
	}
	if b := body(t, f.get(t, "/hooks?session=s-cap")); !strings.Contains(b, "past the stop guard's cap (20 in a row): sitter let the session stop") {
		t.Errorf("the hook timeline does not show the capped stop:\n%s", b)
	}
	// Resumed: the journal moves on, the run is working again.
	appendEv(t, dir, journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "s-cap", "decision": "block", "row": "effects-pending"})
	f.s.ix.Sweep()
	if v, _ := f.s.ix.Run(dir); v.Bucket != Working {
		t.Errorf("after the journal moved: %s (%s)", v.Bucket, v.Why)
	}
}

// TestIndexingInBackground: New reads no run, so the URL is printed at
// once; until the first sweep has read every run the board says
// "indexing…", and then shows them all.
func TestIndexingInBackground(t *testing.T) {
	project := t.TempDir()
	for _, id := range []string{"a", "b", "c"} {
		newRun(t, project, id)
	}
	s, err := New(Options{Dirs: []string{project}, StateDir: t.TempDir(), Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if on, _, _ := s.ix.Indexing(); !on || len(s.ix.Runs()) != 0 {
		t.Fatalf("New read runs: indexing %v, %d runs", on, len(s.ix.Runs()))
	}
	get := func() string {
		r := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: CookieName, Value: "tok"})
		s.Handler().ServeHTTP(r, req)
		return r.Body.String()
	}
	if b := get(); !strings.Contains(b, `id="indexing"`) {
		t.Errorf("no indexing marker before the first sweep:\n%s", b)
	}
	s.ix.Sweep()
	if on, done, total := s.ix.Indexing(); on || done != 3 || total != 3 {
		t.Errorf("after the first sweep: indexing %v, %d of %d", on, done, total)
	}
	b := get()
	if strings.Contains(b, `id="indexing"`) || strings.Count(b, `class="card nav-item`) != 3 {
		t.Errorf("after the first sweep:\n%s", b)
	}
}

// TestGoOn: after an answer the page says how the loop goes on: resume
// the session that drives the run with its harness's resume command (from
// the atlas), or sitter launch; nothing while other breakpoints wait.
func TestGoOn(t *testing.T) {
	old := transcript.Specs
	t.Cleanup(func() { transcript.Specs = old })
	transcript.Specs = []transcript.Spec{{Harness: "claude-code", Resume: "claude --resume {sessionId}"}}
	v := RunView{RunID: "r1", Harness: "claude-code", Session: "s-9"}
	if got := goOn(v); !strings.Contains(got, "`claude --resume s-9`") || !strings.Contains(got, "`sitter launch claude-code --run-id r1`") {
		t.Errorf("goOn: %q", got)
	}
	v.Pending = []PendingEffect{{"b2", "breakpoint", ""}}
	if got := goOn(v); got != "" {
		t.Errorf("goOn with a breakpoint still waiting: %q", got)
	}
}

// waitBucket waits for the index to put dir in bucket, woken by each new
// version; limit only ends a test that would otherwise hang.
func waitBucket(t *testing.T, ix *Index, dir, bucket string, limit time.Duration) {
	t.Helper()
	deadline := time.After(limit)
	for {
		_, ch := ix.Version()
		if v, ok := ix.Run(dir); ok && v.Bucket == bucket {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			v, _ := ix.Run(dir)
			t.Fatalf("%s is in %q, want %q", dir, v.Bucket, bucket)
		}
	}
}

// TestWatchSweepsOnChange: with the stat sweep's periods an hour long, a
// run created and its breakpoint requested are still found: the file
// system reported them, even though neither the project's runs directory
// nor the state dir's sessions/ existed at the start.
func TestWatchSweepsOnChange(t *testing.T) {
	project, state := t.TempDir(), t.TempDir()
	ix := NewIndex([]string{project}, state, time.Hour)
	watchHourly(t, ix)
	dir := newRun(t, project, "w")
	waitBucket(t, ix, dir, Working, 10*time.Second)
	request(t, dir, "b1", "breakpoint")
	waitBucket(t, ix, dir, NeedsYou, 10*time.Second)
	// A session ending mid-run (sessions/ changes): orphaned.
	st := session.State{Harness: "codex", SessionID: "s1", RunDir: dir, Active: false, EndedBecause: "session-end"}
	b, _ := json.Marshal(st)
	os.MkdirAll(filepath.Join(state, "sessions"), 0o755)
	os.WriteFile(filepath.Join(state, "sessions", "codex-s1.json"), b, 0o644)
	if _, err := runs.Post(context.Background(), dir, "b1", runs.PostOptions{Status: "ok", Value: json.RawMessage(`{"approved":true}`)}); err != nil {
		t.Fatal(err)
	}
	waitBucket(t, ix, dir, Orphaned, 10*time.Second)
}

// TestWatchFallsBackToPolling: without a watcher (a system fsnotify does
// not support, or out of watches) the stat sweep finds the changes.
func TestWatchFallsBackToPolling(t *testing.T) {
	saved := newWatcher
	newWatcher = func() (*fsnotify.Watcher, error) { return nil, errors.New("no watcher here") }
	defer func() { newWatcher = saved }()
	project, state := t.TempDir(), t.TempDir()
	ix := NewIndex([]string{project}, state, time.Hour)
	stop := make(chan struct{})
	defer close(stop)
	go ix.Watch(5*time.Millisecond, time.Hour, stop)
	dir := newRun(t, project, "p") // .a5c/runs did not exist at the start
	request(t, dir, "b1", "breakpoint")
	waitBucket(t, ix, dir, NeedsYou, 10*time.Second)
	if ix.Watching() {
		t.Error("Watching without a watcher")
	}
}

// TestIndexCache: a second index of the same directories starts with
// every run the first one read, before any sweep; its first sweep reads
// again only the runs whose journal changed, and drops the runs gone.
func TestIndexCache(t *testing.T) {
	project, state := t.TempDir(), t.TempDir()
	same, moved, gone := newRun(t, project, "same"), newRun(t, project, "moved"), newRun(t, project, "gone")
	ix := NewIndex([]string{project}, state, time.Hour)
	ix.Sweep()
	if err := ix.SaveCache(); err != nil {
		t.Fatal(err)
	}
	// Mark the cached view of the unchanged run: a run read again loses it.
	p := ix.cachePath()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), `"ProcessID":"demo-same"`, `"ProcessID":"from-the-cache"`))
	os.WriteFile(p, b, 0o644)
	request(t, moved, "b1", "breakpoint")
	os.RemoveAll(gone)
	added := newRun(t, project, "added")

	ix2 := NewIndex([]string{project}, state, time.Hour)
	if n := len(ix2.Runs()); n != 3 {
		t.Fatalf("before any sweep the index has %d runs, want the 3 cached", n)
	}
	if board := freshBoard(t, project, state); !strings.Contains(board, "from-the-cache") || !strings.Contains(board, `data-key="`+moved+`"`) {
		t.Errorf("the first board (no sweep yet) lacks the cached runs:\n%s", board)
	}
	ix2.Sweep()
	v, _ := ix2.Run(same)
	if v.ProcessID != "from-the-cache" {
		t.Errorf("the unchanged run was read again: process %q", v.ProcessID)
	}
	if v, _ := ix2.Run(moved); v.Bucket != NeedsYou {
		t.Errorf("the changed run is %s, want needs-you (read again)", v.Bucket)
	}
	if _, ok := ix2.Run(gone); ok {
		t.Error("a run gone is still on the board")
	}
	if _, ok := ix2.Run(added); !ok {
		t.Error("a run new since the cache is missing")
	}
	// A cache that does not load is ignored.
	os.WriteFile(p, []byte("{oops"), 0o644)
	if n := len(NewIndex([]string{project}, state, time.Hour).Runs()); n != 0 {
		t.Errorf("a corrupt cache gave %d runs", n)
	}
}

// TestAnswerFlash: the flash after an answer says what was done in plain
// words, for both answers.
func TestAnswerFlash(t *testing.T) {
	f := newFixture(t)
	for answer, want := range map[string]string{"approve": "approved breakpoint b1", "reject": "rejected breakpoint b1"} {
		dir := newRun(t, f.project, answer)
		request(t, dir, "b1", "breakpoint")
		r, err := f.c.PostForm(f.ts.URL+"/approve", url.Values{"csrf": {f.s.csrf}, "path": {dir}, "effect": {"b1"}, "answer": {answer}})
		if err != nil {
			t.Fatal(err)
		}
		if b := body(t, r); !strings.Contains(b, `class="flash ok"`) || !strings.Contains(b, want+" (journal event") {
			t.Errorf("%s: the flash does not say %q:\n%s", answer, want, b)
		}
	}
}

// TestFindRoots: where the runs of a --dir are, by the documented rule;
// an empty folder (not named runs) could be either, so both places are
// watched and a run created in either shows up without a restart.
func TestFindRoots(t *testing.T) {
	mk := func(sub ...string) string {
		d := filepath.Join(t.TempDir(), "d")
		os.MkdirAll(d, 0o755)
		for _, s := range sub {
			os.MkdirAll(filepath.Join(d, s), 0o755)
		}
		d, _ = filepath.EvalSymlinks(d)
		return d
	}
	withRun := mk()
	os.MkdirAll(filepath.Join(withRun, "r1"), 0o755)
	os.WriteFile(filepath.Join(withRun, "r1", runs.MetadataFile), []byte("{}"), 0o644)
	named := filepath.Join(t.TempDir(), "runs")
	os.MkdirAll(named, 0o755)
	named, _ = filepath.EvalSymlinks(named)
	for _, c := range []struct {
		name, dir string
		want      []string
	}{
		{"a project with .a5c", mk(".a5c"), []string{".a5c/runs"}},
		{"a git root", mk(".git"), []string{".a5c/runs"}},
		{"a folder holding a run", withRun, []string{""}},
		{"a folder named runs", named, []string{""}},
		{"an empty folder", mk(), []string{"", ".a5c/runs"}},
	} {
		var got []string
		for _, r := range findRoots(c.dir) {
			rel, _ := filepath.Rel(c.dir, r.runsDir)
			if rel == "." {
				rel = ""
			}
			got = append(got, filepath.ToSlash(rel))
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: runs dirs %q, want %q (relative to the folder)", c.name, got, c.want)
		}
	}

	// The empty folder, watched: a run created in it (--runs-dir D), and
	// one created in D/.a5c/runs (the project's default), both show up.
	d, state := mk(), t.TempDir()
	ix := NewIndex([]string{d}, state, time.Hour)
	watchHourly(t, ix)
	proc := filepath.Join(t.TempDir(), "p.mjs")
	os.WriteFile(proc, []byte("export async function process() {}\n"), 0o644)
	direct, _, err := runs.Create(context.Background(), runs.CreateOptions{RunsDir: d, RunID: "direct", ProcessID: "demo", Entry: proc + "#process"})
	if err != nil {
		t.Fatal(err)
	}
	waitBucket(t, ix, direct, Working, 10*time.Second)
	project := newRun(t, d, "in-project")
	waitBucket(t, ix, project, Working, 10*time.Second)
	if v, _ := ix.Run(project); v.Project != d {
		t.Errorf("the project of %s is %q, want %q", project, v.Project, d)
	}
}

// breakInPlace damages two runs without renaming a file, as an editor or a
// bad disk does: one byte of a's last journal file and one key of b's
// run.json are overwritten where they are. Neither changes the journal
// directory. It waits first, so the writes get another modification time
// than the files' creation on a file system with coarse timestamps.
func breakInPlace(t *testing.T, a, b string) {
	t.Helper()
	time.Sleep(30 * time.Millisecond)
	files, _ := filepath.Glob(filepath.Join(a, runs.JournalDir, "*.json"))
	overwrite := func(path, old, new string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		data, _ := io.ReadAll(f)
		i := strings.Index(string(data), old)
		if i < 0 {
			t.Fatalf("%s has no %q", path, old)
		}
		if _, err := f.WriteAt([]byte(new), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	overwrite(files[len(files)-1], `"breakpoint"`, `"breakpoinX"`)
	overwrite(filepath.Join(b, runs.MetadataFile), `"runId":`, `"runId" `)
	for _, d := range []string{a, b} {
		if _, err := runs.Load(d); err == nil {
			t.Fatalf("%s still loads", d)
		}
	}
}

// TestInPlaceDamageSeenLive: two runs wait at a breakpoint; one's journal
// file and the other's run.json are damaged in place. The file system
// reports the writes, and both runs move to failed as error cards, with
// the stat sweep's periods an hour long.
func TestInPlaceDamageSeenLive(t *testing.T) {
	project, state := t.TempDir(), t.TempDir()
	a, b := newRun(t, project, "a"), newRun(t, project, "b")
	request(t, a, "b1", "breakpoint")
	request(t, b, "b1", "breakpoint")
	ix := NewIndex([]string{project}, state, time.Hour)
	watchHourly(t, ix)
	waitBucket(t, ix, a, NeedsYou, 10*time.Second)
	waitBucket(t, ix, b, NeedsYou, 10*time.Second)
	breakInPlace(t, a, b)
	waitBucket(t, ix, a, Failed, 10*time.Second)
	waitBucket(t, ix, b, Failed, 10*time.Second)
	for _, d := range []string{a, b} {
		if v, _ := ix.Run(d); v.Err == "" || !strings.HasPrefix(v.Why, "unreadable: ") {
			t.Errorf("%s: %q %q, want an error card", d, v.Why, v.Err)
		}
	}
}

// TestRunJSONEditSeenByPolling: without a watcher, a sweep still sees
// run.json edited in place (its size and time are in the signature).
func TestRunJSONEditSeenByPolling(t *testing.T) {
	project := t.TempDir()
	a, b := newRun(t, project, "a"), newRun(t, project, "b")
	request(t, a, "b1", "breakpoint")
	request(t, b, "b1", "breakpoint")
	ix := NewIndex([]string{project}, t.TempDir(), time.Hour)
	ix.Sweep()
	breakInPlace(t, a, b)
	ix.Sweep()
	if v, _ := ix.Run(b); v.Bucket != Failed {
		t.Errorf("run.json edited in place: %s, want failed", v.Bucket)
	}
}

// TestInPlaceDamageSeenAfterRestart: runs damaged in place while no
// observe ran are error cards at the next start, though the index cache
// holds them healthy under an unchanged journal directory; an untouched
// run is still taken from the cache, not read again.
func TestInPlaceDamageSeenAfterRestart(t *testing.T) {
	project, state := t.TempDir(), t.TempDir()
	a, b, same := newRun(t, project, "a"), newRun(t, project, "b"), newRun(t, project, "same")
	request(t, a, "b1", "breakpoint")
	request(t, b, "b1", "breakpoint")
	ix := NewIndex([]string{project}, state, time.Hour)
	ix.Sweep()
	if err := ix.SaveCache(); err != nil {
		t.Fatal(err)
	}
	p := ix.cachePath()
	c, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.ReplaceAll(string(c), `"ProcessID":"demo-same"`, `"ProcessID":"from-the-cache"`)), 0o644)
	breakInPlace(t, a, b)

	ix2 := NewIndex([]string{project}, state, time.Hour)
	if n := len(ix2.Runs()); n != 3 {
		t.Fatalf("%d runs from the cache, want 3", n)
	}
	ix2.Sweep()
	for _, d := range []string{a, b} {
		if v, _ := ix2.Run(d); v.Bucket != Failed || v.Err == "" {
			t.Errorf("%s after a restart: %s %q, want an error card under failed", d, v.Bucket, v.Why)
		}
	}
	if v, _ := ix2.Run(same); v.ProcessID != "from-the-cache" {
		t.Errorf("the untouched run was read again: process %q", v.ProcessID)
	}
	// The damaged runs are not cached: the start after shows them failed
	// too, at once.
	ix2.SaveCache()
	ix3 := NewIndex([]string{project}, state, time.Hour)
	for _, d := range []string{a, b} {
		if v, ok := ix3.Run(d); ok {
			t.Errorf("%s was cached: %s", d, v.Bucket)
		}
	}
}

// TestRunPageSaysUnreadable: a run damaged since the index read it: its
// page's header does not call it working or needing you while its body
// says it cannot be read, and the board follows.
func TestRunPageSaysUnreadable(t *testing.T) {
	f := newFixture(t)
	a, b := newRun(t, f.project, "a"), newRun(t, f.project, "b")
	request(t, a, "b1", "breakpoint")
	request(t, b, "b1", "breakpoint")
	f.s.ix.Sweep()
	breakInPlace(t, a, b)
	for _, d := range []string{a, b} {
		page := body(t, f.get(t, "/run?path="+url.QueryEscape(d)))
		if !strings.Contains(page, `id="run-error"`) || !strings.Contains(page, `id="bucket">failed<`) || !strings.Contains(page, `id="status">unreadable<`) {
			t.Errorf("run page of %s:\n%s", d, page)
		}
	}
	f.s.ix.Sweep()
	for _, d := range []string{a, b} {
		if v, _ := f.s.ix.Run(d); v.Bucket != Failed {
			t.Errorf("%s on the board after its page was opened: %s, want failed", d, v.Bucket)
		}
	}
}

// watchHourly runs ix.Watch with stat sweeps an hour apart, until the
// test ends, and waits until the index watches its directories: what
// changes then is seen through the file system's reports alone.
func watchHourly(t *testing.T, ix *Index) {
	t.Helper()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go ix.Watch(time.Hour, time.Hour, stop)
	for deadline := time.Now().Add(10 * time.Second); !ix.Watching(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the index never watched its directories")
		}
	}
}

// TestUnreadableRunDirIsAnErrorCard: a run folder sitter may not read
// (its permissions, another user's) is an error card naming it, not a
// run left off the board. Root reads every folder, so it needs a user.
func TestUnreadableRunDirIsAnErrorCard(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a folder whatever its mode")
	}
	f := newFixture(t)
	good := newRun(t, f.project, "good")
	locked := newRun(t, f.project, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	f.s.ix.Sweep()
	b := body(t, f.get(t, "/"))
	card := regexp.MustCompile(`(?s)<a class="card nav-item error b-failed" data-key="` + regexp.QuoteMeta(locked) + `".*?cannot read this run:</strong>[^<]*permission denied`)
	if !card.MatchString(b) {
		t.Errorf("no error card for the unreadable run folder:\n%s", b)
	}
	if !strings.Contains(b, `data-key="`+good+`"`) {
		t.Errorf("the good run is missing")
	}
	r := f.get(t, "/run?path="+url.QueryEscape(locked))
	if b := body(t, r); r.StatusCode != 200 || !strings.Contains(b, `id="run-error"`) || !strings.Contains(b, "permission denied") {
		t.Errorf("run page of the unreadable run: %d\n%s", r.StatusCode, b)
	}
}

// TestDeletedRunPage: a run deleted while its page is open is said to
// be gone (404, a page with <main>, which the live refresh swaps in),
// not refused as outside the watched directories, which left the open
// page showing the run as it was.
func TestDeletedRunPage(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "doomed")
	f.s.ix.Sweep()
	if r := f.get(t, "/run?path="+url.QueryEscape(dir)); r.StatusCode != 200 {
		t.Fatalf("the run's page: %d", r.StatusCode)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, sweep := range []bool{false, true} { // before and after the board saw it go
		if sweep {
			f.s.ix.Sweep()
		}
		r := f.get(t, "/run?path="+url.QueryEscape(dir))
		b := body(t, r)
		if r.StatusCode != http.StatusNotFound || !strings.Contains(b, `<main id="main"`) || !strings.Contains(b, `id="run-gone"`) || !strings.Contains(b, dir) {
			t.Errorf("page of the deleted run (swept: %v): %d\n%s", sweep, r.StatusCode, b)
		}
	}
	// Outside the watched directories it is still refused.
	r := f.get(t, "/run?path="+url.QueryEscape(filepath.Join(t.TempDir(), "nothere")))
	if b := body(t, r); r.StatusCode != http.StatusForbidden {
		t.Errorf("a missing run outside: %d %s", r.StatusCode, b)
	}
}

// TestRunWithoutRunJSONPage: a run whose run.json was removed is an
// error card on the board, and its page says why (it was refused as
// not a run).
func TestRunWithoutRunJSONPage(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "headless")
	if err := os.Remove(filepath.Join(dir, runs.MetadataFile)); err != nil {
		t.Fatal(err)
	}
	f.s.ix.Sweep()
	if v, ok := f.s.ix.Run(dir); !ok || v.Err == "" {
		t.Fatalf("on the board: %v %+v", ok, v)
	}
	r := f.get(t, "/run?path="+url.QueryEscape(dir))
	if b := body(t, r); r.StatusCode != 200 || !strings.Contains(b, `id="run-error"`) || !strings.Contains(b, runs.MetadataFile) {
		t.Errorf("page of the run without run.json: %d\n%s", r.StatusCode, b)
	}
}

// TestEmptyBoardSaysWhatToDo: with no run at all the board says where
// runs are looked for and how one gets there, not six empty columns
// alone; it says nothing of the kind once there is a run.
func TestEmptyBoardSaysWhatToDo(t *testing.T) {
	f := newFixture(t)
	runsDir := filepath.Join(f.project, ".a5c", "runs")
	b := body(t, f.get(t, "/"))
	hint := regexp.MustCompile(`(?s)<p class="empty-board" id="no-runs">.*` + regexp.QuoteMeta(runsDir) + `.*sitter run create`)
	if !hint.MatchString(b) {
		t.Errorf("empty board without a hint:\n%s", b)
	}
	newRun(t, f.project, "r1")
	f.s.ix.Sweep()
	if b := body(t, f.get(t, "/")); strings.Contains(b, `id="no-runs"`) {
		t.Errorf("the hint with a run on the board:\n%s", b)
	}
}

// TestUnreadableRunsDirSaysSo: a runs directory sitter may not list is
// said on the board, naming it and the error, not shown as "no runs yet".
// Root lists every folder, so it needs a user.
func TestUnreadableRunsDirSaysSo(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root lists a folder whatever its mode")
	}
	f := newFixture(t)
	newRun(t, f.project, "r1")
	runsDir := filepath.Join(f.project, ".a5c", "runs")
	if err := os.Chmod(runsDir, 0o300); err != nil { // no read: not listed
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(runsDir, 0o755) })
	f.s.ix.Sweep()
	b := body(t, f.get(t, "/"))
	bad := regexp.MustCompile(`(?s)class="flash bad runs-dir-error"[^>]*>[^<]*cannot read[^<]*<code>` + regexp.QuoteMeta(runsDir) + `</code>[^<]*permission denied`)
	if !bad.MatchString(b) || strings.Contains(b, `id="no-runs"`) {
		t.Errorf("board of an unreadable runs dir:\n%s", b)
	}
}

// cardOf is the board's card of the run dir, "" when there is none.
func cardOf(board, dir string) string {
	m := regexp.MustCompile(`(?s)<a class="card[^"]*" data-key="` + regexp.QuoteMeta(dir) + `".*?</a>`).FindString(board)
	return m
}

// TestFailedCardSaysWhy: the card of a failed run shows its error's first
// line (escaped, cut to about 120 characters), of a halted run the
// reason; the index cache carries it, so a board served from the cache
// says it too, and a cache from before it is not used.
func TestFailedCardSaysWhy(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("x", 200)
	failed := newRun(t, f.project, "failed")
	appendEv(t, failed, journal.RunFailed, map[string]any{"error": map[string]any{
		"name": "TypeError", "message": "<b>deploy</b> broke " + long + "\nsecond line of the message",
		"stack": "TypeError: <b>deploy</b> broke\n    at process (p.mjs:3:9)"}})
	plain := newRun(t, f.project, "plain")
	appendEv(t, plain, journal.RunFailed, map[string]any{"error": "disk full\nmore"})
	halted := newRun(t, f.project, "halted")
	appendEv(t, halted, journal.RunHalted, map[string]any{"reason": "asked to stop\nby the user"})
	f.s.ix.Sweep()
	check := func(board, when string) {
		t.Helper()
		for _, c := range []struct {
			dir, want string
			not       []string
		}{
			{failed, `<span class="why">failed: TypeError: &lt;b&gt;deploy&lt;/b&gt; broke xxx`, []string{"<b>deploy", "second line", "p.mjs:3:9", long}},
			{plain, `<span class="why">failed: disk full</span>`, []string{"more"}},
			{halted, `<span class="why">halted: asked to stop</span>`, []string{"by the user"}},
		} {
			card := cardOf(board, c.dir)
			if !strings.Contains(card, c.want) {
				t.Errorf("%s: the card of %s lacks %q:\n%s", when, filepath.Base(c.dir), c.want, card)
			}
			for _, n := range c.not {
				if strings.Contains(card, n) {
					t.Errorf("%s: the card of %s shows %q:\n%s", when, filepath.Base(c.dir), n, card)
				}
			}
		}
		why := regexp.MustCompile(`(?s)<span class="why">(.*?)</span>`).FindStringSubmatch(cardOf(board, failed))
		if why == nil || !strings.HasSuffix(why[1], "…") || len([]rune(why[1])) > 160 {
			t.Errorf("%s: the long error is not cut: %q", when, why)
		}
	}
	check(body(t, f.get(t, "/")), "read")

	// Served from the cache, before any sweep.
	if err := f.s.ix.SaveCache(); err != nil {
		t.Fatal(err)
	}
	check(freshBoard(t, f.project, f.s.ix.stateDir), "from the cache")

	// A cache of the version before (no error line) is not used: its
	// failed runs would say only "failed" until they changed.
	p := f.s.ix.cachePath()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, regexp.MustCompile(`"version":\d+`).ReplaceAll(b, []byte(`"version":3`)), 0o644)
	if n := len(NewIndex([]string{f.project}, f.s.ix.stateDir, time.Hour).Runs()); n != 0 {
		t.Errorf("a version 3 cache gave %d runs", n)
	}
}

// columnOf is the board's section of a column.
func columnOf(board, id string) string {
	return regexp.MustCompile(`(?s)<section class="col" id="col-` + regexp.QuoteMeta(id) + `".*?</section>`).FindString(board)
}

// TestBoardColumnPages: a column shows its newest boardPage cards and
// says how many more there are, with a link to the next ones; following
// the links shows every run of the column once, in the board's order
// (newest first). Another column's page is kept in the links.
func TestBoardColumnPages(t *testing.T) {
	f := newFixture(t)
	for i := range 120 {
		newRun(t, f.project, fmt.Sprintf("r%03d", i))
	}
	done := newRun(t, f.project, "done")
	appendEv(t, done, journal.RunCompleted, map[string]any{})
	f.s.ix.Sweep()
	var want []string
	for _, v := range f.s.ix.Runs() {
		if v.Bucket == Working {
			want = append(want, v.Dir)
		}
	}
	if len(want) != 120 {
		t.Fatalf("%d working runs, want 120", len(want))
	}
	cardRE := regexp.MustCompile(`<a class="card[^"]*" data-key="([^"]*)"`)
	moreRE := regexp.MustCompile(`<p class="page-nav more">(\d+) more · <a class="older" href="([^"]*)"`)
	var got []string
	path := "/?completed=0"
	for page := 0; ; page++ {
		r := f.get(t, path)
		b := body(t, r)
		if r.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", path, r.StatusCode, b)
		}
		col := columnOf(b, Working)
		cards := cardRE.FindAllStringSubmatch(col, -1)
		wantCards := min(boardPage, 120-page*boardPage)
		if len(cards) != wantCards {
			t.Fatalf("page %d (%s): %d cards, want %d", page, path, len(cards), wantCards)
		}
		for _, c := range cards {
			got = append(got, html.UnescapeString(c[1]))
		}
		if !strings.Contains(col, `<span class="count">120</span>`) || !strings.Contains(b, "121 runs under") {
			t.Errorf("page %d: the column or the board does not count every run:\n%s", page, col)
		}
		if !strings.Contains(columnOf(b, Completed), `data-key="`+done+`"`) {
			t.Errorf("page %d: the completed column lost its run", page)
		}
		m := moreRE.FindStringSubmatch(col)
		if len(got) == 120 {
			if m != nil {
				t.Errorf("the last page links to more: %q", m[0])
			}
			break
		}
		if m == nil || m[1] != strconv.Itoa(120-len(got)) {
			t.Fatalf("page %d: no \"%d more\" link:\n%s", page, 120-len(got), col)
		}
		path = html.UnescapeString(m[2])
		if !strings.Contains(path, "completed=0") {
			t.Errorf("the link %s drops the other column's page", path)
		}
		if page > 3 {
			t.Fatal("too many pages")
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the pages show\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A later page links back to the newest; one past the end shows the
	// last cards; an offset that is no count is refused, on an HTML page.
	b := body(t, f.get(t, fmt.Sprintf("/?%s=%d", Working, boardPage)))
	if !strings.Contains(columnOf(b, Working), `class="newer" href="/"`) {
		t.Errorf("page 2 does not link to the newest:\n%s", columnOf(b, Working))
	}
	b = body(t, f.get(t, "/?"+Working+"=1000"))
	if n := len(cardRE.FindAllString(columnOf(b, Working), -1)); n != 120%boardPage {
		t.Errorf("past the end: %d cards, want the last %d", n, 120%boardPage)
	}
	for _, bad := range []string{"x", "-50"} {
		r := f.get(t, "/?"+Working+"="+bad)
		b := body(t, r)
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(b, `<main id="main"`) || !strings.Contains(b, `class="flash bad"`) {
			t.Errorf("?%s=%s: %d\n%s", Working, bad, r.StatusCode, b)
		}
	}
}

// TestUnreadableCardShowsFirstLine: the card of a run that cannot be
// read shows its error's first line, cut as a failed run's is; its page
// shows the whole error.
func TestUnreadableCardShowsFirstLine(t *testing.T) {
	f := newFixture(t)
	bad := corruptRun(t, f.project, "bad")
	f.s.ix.Sweep()
	v, _ := f.s.ix.Run(bad)
	if len([]rune(v.Err)) <= cardLineMax || !strings.Contains(v.Err, "sitter run repair") {
		t.Fatalf("the error is not long enough to test: %q", v.Err)
	}
	card := cardOf(body(t, f.get(t, "/")), bad)
	line := regexp.MustCompile(`(?s)cannot read this run:</strong> ([^<]*)</span>`).FindStringSubmatch(card)
	if line == nil || !strings.HasSuffix(line[1], "…") || len([]rune(html.UnescapeString(line[1]))) > cardLineMax+1 || !strings.HasPrefix(line[1], "run "+bad) {
		t.Errorf("the card's error is not its first line, cut:\n%s", card)
	}
	page := body(t, f.get(t, "/run?path="+url.QueryEscape(bad)))
	full := regexp.MustCompile(`(?s)<div class="card error" id="run-error">.*?</div>`).FindString(page)
	if !strings.Contains(html.UnescapeString(full), v.Err) {
		t.Errorf("the run page lacks the whole error %q:\n%s", v.Err, full)
	}
}

// TestRefusalIsAnHTMLPage: a path outside the watched directories, and a
// form without its csrf value, are refused (403) with the dashboard's
// error page, not plain text.
func TestRefusalIsAnHTMLPage(t *testing.T) {
	f := newFixture(t)
	dir := newRun(t, f.project, "bp")
	request(t, dir, "b1", "breakpoint")
	for _, p := range []string{"/run?path=/etc", "/checkpoint?id=x&path=/etc"} {
		r := f.get(t, p)
		b := body(t, r)
		if r.StatusCode != http.StatusForbidden || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
			!regexp.MustCompile(`(?s)<main id="main".*class="flash bad"[^>]*>[^<]*/etc is not a run directory under a watched directory`).MatchString(b) {
			t.Errorf("GET %s: %d %s\n%s", p, r.StatusCode, r.Header.Get("Content-Type"), b)
		}
	}
	code, b := approve(t, f, dir, "b1", "forged")
	if code != http.StatusForbidden || !regexp.MustCompile(`(?s)<main id="main".*class="flash bad"[^>]*>[^<]*the form&#39;s csrf field is missing`).MatchString(b) {
		t.Errorf("a forged form: %d\n%s", code, b)
	}
}
