//go:build unix

package launch_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/launch"
	"sitter.dev/sitter/runtime/run"
)

// The test binary doubles as a fake harness: with fakeHarnessEnv set it
// acts on the run named by SITTER_BABYSIT_RUN as the agent and its stop
// hook would have, and exits.
const fakeHarnessEnv = "SITTER_LAUNCH_TEST_HARNESS"

func TestMain(m *testing.M) {
	if os.Getenv(fakeHarnessEnv) != "" {
		os.Exit(fakeHarness())
	}
	os.Exit(m.Run())
}

// fakeHarness records its arguments and environment in $PWD/spawns (one
// JSON line per spawn) and performs the spawn's action from FAKE_ACTIONS
// (comma-separated, one per spawn; the last repeats):
//
//	complete, fail, halt    journal RUN_COMPLETED, RUN_FAILED, RUN_HALTED
//	block                   journal a stop check that blocked (a cap ended the session)
//	cap                     journal the session's iteration cap
//	breakpoint              request a breakpoint effect
//	bpstop                  request breakpoint e1 and journal the stop check that let session real-1 stop
//	bpanswered              bpstop, then e1 answered (by a human quick in sitter observe) before the harness exits
//	sleep                   sleep (for --timeout)
//	blockloop               journal blocks for 10 s (a cap that does not hold)
//	exitN                   exit with code N
//	transcript              write a session file and a config file in $HOME
//	none                    nothing
func fakeHarness() int {
	ws, _ := os.Getwd()
	prev, _ := os.ReadFile(filepath.Join(ws, "spawns"))
	n := bytes.Count(prev, []byte("\n"))
	actions := strings.Split(os.Getenv("FAKE_ACTIONS"), ",")
	action := actions[min(n, len(actions)-1)]
	rec, _ := json.Marshal(map[string]any{"args": os.Args[1:], "run": os.Getenv(launch.BabysitEnv),
		"state": os.Getenv("SITTER_STATE_DIR"), "stopCap": os.Getenv("SITTER_STOP_CAP"), "home": os.Getenv("HOME")})
	f, err := os.OpenFile(filepath.Join(ws, "spawns"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 70
	}
	f.Write(append(rec, '\n'))
	f.Close()
	dir := os.Getenv(launch.BabysitEnv)
	appendEv := func(typ string, data map[string]any) int {
		if _, err := run.Append(context.Background(), dir, typ, data); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 71
		}
		return 0
	}
	switch {
	case action == "complete":
		return appendEv(journal.RunCompleted, map[string]any{"outputRef": "state/output.json"})
	case action == "fail":
		return appendEv(journal.RunFailed, map[string]any{"error": map[string]any{"message": "boom"}})
	case action == "halt":
		return appendEv(journal.RunHalted, map[string]any{"reason": "stop"})
	case action == "block":
		return appendEv(journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "real-1", "decision": "block", "row": "effects-pending"})
	case action == "cap":
		return appendEv(journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "real-1", "decision": "allow", "row": "max-iterations"})
	case action == "breakpoint":
		return appendEv(journal.EffectRequested, map[string]any{"effectId": "e1", "invocationKey": "k1", "taskId": "ask", "kind": "breakpoint"})
	case action == "bpstop":
		// A breakpoint, and the stop hook letting session real-1 stop.
		if c := appendEv(journal.EffectRequested, map[string]any{"effectId": "e1", "invocationKey": "k1", "taskId": "ask", "kind": "breakpoint", "label": "approve the plan"}); c != 0 {
			return c
		}
		return appendEv(journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "real-1", "decision": "allow", "row": "breakpoints-only"})
	case action == "bpanswered":
		if c := appendEv(journal.EffectRequested, map[string]any{"effectId": "e1", "invocationKey": "k1", "taskId": "ask", "kind": "breakpoint", "label": "approve the plan"}); c != 0 {
			return c
		}
		if c := appendEv(journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "real-1", "decision": "allow", "row": "breakpoints-only"}); c != 0 {
			return c
		}
		if _, err := run.Post(context.Background(), dir, "e1", run.PostOptions{Status: "ok", Value: json.RawMessage(`{"approved":true}`)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 72
		}
	case action == "sleep":
		time.Sleep(time.Minute)
	case action == "blockloop":
		// A harness whose stop hook's cap does not hold: blocks go on.
		for i := 0; i < 200; i++ {
			if c := appendEv(journal.StopHookInvoked, map[string]any{"harness": "claude-code", "sessionId": "real-1", "decision": "block"}); c != 0 {
				return c
			}
			time.Sleep(50 * time.Millisecond)
		}
	case strings.HasPrefix(action, "exit"):
		c, _ := strconv.Atoi(strings.TrimPrefix(action, "exit"))
		return c
	case action == "transcript":
		home := os.Getenv("HOME")
		p := filepath.Join(home, ".claude", "projects", "-w", "s-1.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("{}\n"), 0o600)
		os.WriteFile(filepath.Join(home, ".claude", "todo.json"), []byte("{}\n"), 0o600)
	}
	return 0
}

type spawnRec struct {
	Args    []string `json:"args"`
	Run     string   `json:"run"`
	State   string   `json:"state"`
	StopCap string   `json:"stopCap"`
	Home    string   `json:"home"`
}

func spawns(t *testing.T, ws string) []spawnRec {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(ws, "spawns"))
	var out []spawnRec
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r spawnRec
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// babysitCase is one babysit launch of the fake harness.
type babysitCase struct {
	harness, mode string
	actions       string
	babysit       launch.Babysit
	max           int
	timeout       time.Duration
	sitter        string // a fake sitter for bridge-hooks
	env           []string
	sessions      launch.SessionStore
	signals       <-chan os.Signal
	stderr        io.Writer // also gets the launch's stderr, as it is written
}

// newProcess writes a process file into a fresh workspace.
func newProcess(t *testing.T) (ws, entry string) {
	t.Helper()
	ws = mustEval(t, t.TempDir())
	entry = filepath.Join(ws, "proc.mjs")
	os.WriteFile(entry, []byte("export async function process() { return 1 }\n"), 0o644)
	return ws, entry
}

func (c babysitCase) run(t *testing.T, ws, user string) (int, error, events, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if c.harness == "" {
		c.harness = "claude-code"
	}
	spec, _ := launch.Find(genlaunch.Specs, c.harness)
	b := c.babysit
	var out, errOut bytes.Buffer
	var stderr io.Writer = &errOut
	if c.stderr != nil {
		stderr = io.MultiWriter(&errOut, c.stderr)
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + user, fakeHarnessEnv + "=1", "FAKE_ACTIONS=" + c.actions}, c.env...)
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "K", DefaultModel: "c"},
		Mode: c.mode, MaxIterations: c.max, Timeout: c.timeout, Workspace: ws, Bin: self, Upstream: "http://127.0.0.1:3",
		SitterBin: c.sitter, Bundles: []string{"/b/babysitter"}, Babysit: &b, Sessions: c.sessions, Signals: c.signals,
		Env: env, Stdout: &out, Stderr: stderr, JSON: true, StateDir: t.TempDir(),
	})
	return code, err, parse(t, out.String()), errOut.String()
}

// TestBabysitExitCodes: a babysit launch creates the run, hands the
// harness its directory and a prompt to continue it, and exits with the
// run's outcome.
func TestBabysitExitCodes(t *testing.T) {
	for _, c := range []struct {
		actions string
		code    int
		why     string
	}{
		{"complete", launch.ExitCompleted, "completed"},
		{"fail", launch.ExitFailed, "failed"},
		{"halt", launch.ExitFailed, "halted"},
		{"block", launch.ExitCap, "iteration cap"},
		{"cap", launch.ExitCap, "iteration cap"},
		{"breakpoint", launch.ExitUnfinished, "breakpoint"},
		{"none", launch.ExitUnfinished, "after the harness exited 0"},
		{"exit7", launch.ExitUnfinished, "after the harness exited 7"},
	} {
		t.Run(c.actions, func(t *testing.T) {
			ws, entry := newProcess(t)
			user := t.TempDir()
			code, err, evs, stderr := babysitCase{actions: c.actions, babysit: launch.Babysit{Entry: entry + "#process"}}.run(t, ws, user)
			if err != nil || code != c.code {
				t.Fatalf("code %d, err %v, want %d\n%s", code, err, c.code, stderr)
			}
			runs, _ := filepath.Glob(filepath.Join(ws, ".a5c", "runs", "*", "run.json"))
			if len(runs) != 1 {
				t.Fatalf("runs created: %v", runs)
			}
			dir := filepath.Dir(runs[0])
			m, _ := run.ReadMetadata(dir)
			if m.ProcessID != "proc" || m.Harness != "claude-code" || m.Entrypoint.ExportName != "process" {
				t.Errorf("run.json: %+v", m)
			}
			sp := spawns(t, ws)
			if len(sp) != 1 {
				t.Fatalf("%d spawns, want 1 (agent-driven)", len(sp))
			}
			if sp[0].Run != dir {
				t.Errorf("%s = %q, want %s", launch.BabysitEnv, sp[0].Run, dir)
			}
			args := strings.Join(sp[0].Args, " ")
			if sp[0].Args[0] != "-p" || !strings.Contains(args, "Continue babysitter run "+m.RunID) ||
				!strings.Contains(args, "run iterate "+dir+" --json") || !strings.Contains(args, "--plugin-dir /b/babysitter") {
				t.Errorf("harness args: %q", sp[0].Args)
			}
			if want := filepath.Join(user, ".local", "state", "sitter"); sp[0].State != want {
				t.Errorf("SITTER_STATE_DIR = %q, want the user's %s", sp[0].State, want)
			}
			if sp[0].StopCap != "" {
				t.Errorf("SITTER_STOP_CAP = %q without --max-iterations", sp[0].StopCap)
			}
			e := evs.find("babysit")
			if e == nil || e["code"] != float64(c.code) || !strings.Contains(fmt.Sprint(e["why"]), c.why) || e["runId"] != m.RunID {
				t.Errorf("babysit event %v, want code %d why %q", e, c.code, c.why)
			}
			if !strings.Contains(stderr, "run "+m.RunID+" ") {
				t.Errorf("stderr does not report the run:\n%s", stderr)
			}
			if (c.code == launch.ExitCap || c.code == launch.ExitUnfinished) != strings.Contains(stderr, "--run-id "+m.RunID) {
				t.Errorf("stderr: continue hint only for an unfinished run:\n%s", stderr)
			}
		})
	}
}

// TestBabysitMaxIterationsAgentDriven: --max-iterations caps the stop
// hook's blocks in a row (SITTER_STOP_CAP) in agent-driven mode.
func TestBabysitMaxIterationsAgentDriven(t *testing.T) {
	ws, entry := newProcess(t)
	code, err, _, _ := babysitCase{actions: "block", max: 7, babysit: launch.Babysit{Entry: entry}}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitCap {
		t.Fatalf("code %d, err %v", code, err)
	}
	if sp := spawns(t, ws); sp[0].StopCap != "7" {
		t.Errorf("SITTER_STOP_CAP = %q, want 7", sp[0].StopCap)
	}
}

// TestBabysitMaxIterationsWatch: where the stop hook's cap does not hold,
// sitter ends the harness once the journal shows more blocks than
// --max-iterations.
func TestBabysitMaxIterationsWatch(t *testing.T) {
	ws, entry := newProcess(t)
	start := time.Now()
	code, err, evs, _ := babysitCase{actions: "blockloop", max: 3, babysit: launch.Babysit{Entry: entry}}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitCap {
		t.Fatalf("code %d, err %v, want %d", code, err, launch.ExitCap)
	}
	if e := evs.find("terminate"); e == nil || !strings.Contains(fmt.Sprint(e["reason"]), "more than --max-iterations 3") {
		t.Errorf("terminate event: %v", e)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the harness ran %s: not ended by the watch", d)
	}
}

// TestBabysitStateDir: a user's SITTER_STATE_DIR is kept as it is.
func TestBabysitStateDir(t *testing.T) {
	ws, entry := newProcess(t)
	state := t.TempDir()
	_, err, _, _ := babysitCase{actions: "complete", babysit: launch.Babysit{Entry: entry}, env: []string{"SITTER_STATE_DIR=" + state}}.run(t, ws, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if sp := spawns(t, ws); sp[0].State != state {
		t.Errorf("SITTER_STATE_DIR = %q, want %s", sp[0].State, state)
	}
}

// TestBabysitTimeout: --timeout ends the harness's group and exits 124.
func TestBabysitTimeout(t *testing.T) {
	ws, entry := newProcess(t)
	start := time.Now()
	code, err, evs, _ := babysitCase{actions: "sleep", timeout: 500 * time.Millisecond, babysit: launch.Babysit{Entry: entry}}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitTimeout {
		t.Fatalf("code %d, err %v, want %d", code, err, launch.ExitTimeout)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
	if evs.find("timeout") == nil || evs.find("babysit")["code"] != float64(launch.ExitTimeout) {
		t.Errorf("events: %v", evs)
	}
}

// TestBabysitBridgeHooks: in bridge-hooks mode the harness is run again
// while the run is unfinished (with the stop hook's reason, or the babysit
// prompt when the hook lets it stop), up to --max-iterations.
func TestBabysitBridgeHooks(t *testing.T) {
	bin := t.TempDir()
	blocker := script(t, bin, "sitter-block", `cat >/dev/null; if [ "$3" = session.idle ]; then echo '{"decision":"block","reason":"next step please"}'; fi`)
	silent := script(t, bin, "sitter-silent", `cat >/dev/null`)
	for _, c := range []struct {
		name, sitter, actions string
		max, code, spawns     int
		second                string
	}{
		{"blocks", blocker, "none,none,complete", 10, launch.ExitCompleted, 3, "next step please"},
		{"no-binding", silent, "none,complete", 10, launch.ExitCompleted, 2, "Continue babysitter run"},
		{"cap", blocker, "none", 2, launch.ExitCap, 2, "next step please"},
		{"breakpoint", blocker, "breakpoint", 5, launch.ExitUnfinished, 1, ""},
		{"breakpoint-interactive", blocker, "breakpoint,complete", 5, launch.ExitCompleted, 2, "Continue babysitter run"},
		{"failed", blocker, "fail", 5, launch.ExitFailed, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, entry := newProcess(t)
			interactive := strings.HasSuffix(c.name, "-interactive")
			bc := babysitCase{harness: "opencode", mode: launch.BridgeHooks, actions: c.actions, max: c.max,
				sitter: c.sitter, babysit: launch.Babysit{Entry: entry, Interactive: interactive}}
			var answered <-chan error
			if interactive {
				bc.stderr, answered = answerBreakpoint(t, ws)
			}
			code, err, evs, stderr := bc.run(t, ws, t.TempDir())
			if err != nil || code != c.code {
				t.Fatalf("code %d, err %v, want %d\n%s", code, err, c.code, stderr)
			}
			if answered != nil {
				if err := <-answered; err != nil {
					t.Fatal(err)
				}
			}
			sp := spawns(t, ws)
			if len(sp) != c.spawns {
				t.Fatalf("%d spawns, want %d", len(sp), c.spawns)
			}
			if !strings.Contains(strings.Join(sp[0].Args, " "), "Continue babysitter run") {
				t.Errorf("first prompt: %q", sp[0].Args)
			}
			if len(sp) > 1 {
				if a := strings.Join(sp[1].Args, " "); !strings.Contains(a, "--continue") || !strings.Contains(a, c.second) {
					t.Errorf("second spawn %q, want --continue with %q", sp[1].Args, c.second)
				}
			}
			if (c.code == launch.ExitCap) != (evs.find("max_iterations") != nil) {
				t.Errorf("max_iterations event: %v", evs)
			}
		})
	}
}

// TestBabysitResume: --run-id resumes the run's last session when it was
// this harness's (its resume-by-id arguments), starts a new one when it
// was another harness's or cannot be resumed, and refuses runs that do
// not exist or have ended.
func TestBabysitResume(t *testing.T) {
	newRun := func(t *testing.T, ws, entry string, evs ...map[string]any) string {
		t.Helper()
		dir, _, err := run.Create(context.Background(), run.CreateOptions{RunsDir: filepath.Join(ws, ".a5c", "runs"), ProcessID: "p", Entry: entry, Harness: "claude-code"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			typ := e["type"].(string)
			delete(e, "type")
			if _, err := run.Append(context.Background(), dir, typ, e); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	bound := func(h, s string) map[string]any {
		return map[string]any{"type": journal.SessionBound, "harness": h, "sessionId": s, "via": "launch"}
	}
	t.Run("same-harness", func(t *testing.T) {
		ws, entry := newProcess(t)
		dir := newRun(t, ws, entry, bound("codex", "cx-1"), bound("claude-code", "cc-1"))
		code, err, evs, _ := babysitCase{actions: "complete", babysit: launch.Babysit{RunID: filepath.Base(dir)}}.run(t, ws, t.TempDir())
		if err != nil || code != 0 {
			t.Fatalf("code %d, err %v", code, err)
		}
		sp := spawns(t, ws)
		if len(sp) != 1 || sp[0].Args[0] != "--resume" || sp[0].Args[1] != "cc-1" || !strings.Contains(strings.Join(sp[0].Args, " "), "Continue babysitter run") {
			t.Errorf("spawns: %+v", sp)
		}
		if e := evs.find("babysit_run"); e == nil || e["event"] != "resumed" || e["resumeSession"] != "cc-1" {
			t.Errorf("babysit_run event: %v", e)
		}
		if got := spawns(t, ws); len(got) == 1 && got[0].Run != dir {
			t.Errorf("%s = %q, want %s", launch.BabysitEnv, got[0].Run, dir)
		}
	})
	t.Run("other-harness", func(t *testing.T) {
		ws, entry := newProcess(t)
		dir := newRun(t, ws, entry, bound("claude-code", "cc-1"), bound("codex", "cx-1"))
		code, err, _, _ := babysitCase{actions: "complete", babysit: launch.Babysit{RunID: dir}}.run(t, ws, t.TempDir())
		if sp := spawns(t, ws); err != nil || code != 0 || len(sp) != 1 || sp[0].Args[0] != "-p" {
			t.Errorf("code %d err %v spawns %+v: want a new session", code, err, sp)
		}
	})
	t.Run("made-up-session", func(t *testing.T) {
		ws, entry := newProcess(t)
		dir := newRun(t, ws, entry, bound("claude-code", "sitter-launch-1-2"))
		babysitCase{actions: "complete", babysit: launch.Babysit{RunID: dir}}.run(t, ws, t.TempDir())
		if sp := spawns(t, ws); len(sp) != 1 || sp[0].Args[0] != "-p" {
			t.Errorf("spawns %+v: a launch's made-up session id is not resumed", sp)
		}
	})
	t.Run("resume-fails", func(t *testing.T) {
		ws, entry := newProcess(t)
		dir := newRun(t, ws, entry, bound("claude-code", "gone"))
		code, err, evs, _ := babysitCase{actions: "exit1,complete", babysit: launch.Babysit{RunID: dir}}.run(t, ws, t.TempDir())
		sp := spawns(t, ws)
		if err != nil || code != 0 || len(sp) != 2 || sp[0].Args[0] != "--resume" || sp[1].Args[0] != "-p" || evs.find("resume_failed") == nil {
			t.Errorf("code %d err %v spawns %+v", code, err, sp)
		}
	})
	t.Run("refused", func(t *testing.T) {
		ws, entry := newProcess(t)
		done := newRun(t, ws, entry, map[string]any{"type": journal.RunCompleted})
		for id, want := range map[string]string{"nope": "no such run", filepath.Base(done): "already completed"} {
			code, err, _, _ := babysitCase{actions: "none", babysit: launch.Babysit{RunID: id}}.run(t, ws, t.TempDir())
			if code != 2 || err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("--run-id %s: code %d err %v, want 2 and %q", id, code, err, want)
			}
		}
		if sp := spawns(t, ws); len(sp) != 0 {
			t.Errorf("harness ran for a refused run: %+v", sp)
		}
	})
}

// TestBabysitRequests: what a babysit launch refuses before it starts.
func TestBabysitRequests(t *testing.T) {
	ws, entry := newProcess(t)
	for _, c := range []struct {
		mode string
		b    launch.Babysit
		want string
	}{
		{launch.HookDriven, launch.Babysit{Entry: entry}, "unattended"},
		{launch.BridgeInteractive, launch.Babysit{Entry: entry}, "unattended"},
		{"", launch.Babysit{}, "--babysit FILE"},
		{"", launch.Babysit{Entry: entry, RunID: "x"}, "exclude"},
		{"", launch.Babysit{Entry: filepath.Join(ws, "missing.mjs")}, "no process file"},
		{"", launch.Babysit{Entry: entry, Inputs: []byte("{")}, "not JSON"},
	} {
		code, err, _, _ := babysitCase{mode: c.mode, babysit: c.b}.run(t, ws, t.TempDir())
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: code %d err %v, want %q", c.mode, c.b, code, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".a5c")); err == nil {
		t.Errorf("a refused launch created a run")
	}
}

// TestLaunchOverlayKeepsSessions: the overlay links the harness's session
// store to the user's own, so its transcripts outlive the launch, while
// everything else it writes in its HOME goes with the overlay; sitter's
// state dir is the user's.
func TestLaunchOverlayKeepsSessions(t *testing.T) {
	ws, entry := newProcess(t)
	user := t.TempDir()
	os.MkdirAll(filepath.Join(user, ".claude"), 0o755)
	os.WriteFile(filepath.Join(user, ".claude", "settings.json"), []byte(`{"theme":"mine"}`), 0o644)
	before := tree(t, user)
	code, err, evs, stderr := babysitCase{actions: "transcript", babysit: launch.Babysit{Entry: entry},
		sessions: launch.SessionStore{Location: "~/.claude/projects/{cwdSlug}/{sessionId}.jsonl", HomeEnv: "CLAUDE_CONFIG_DIR"}}.run(t, ws, user)
	if err != nil || code != launch.ExitUnfinished {
		t.Fatalf("code %d err %v\n%s", code, err, stderr)
	}
	after := tree(t, user)
	for p, c := range before {
		if after[p] != c {
			t.Errorf("%s changed: %q → %q", p, c, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && p != filepath.Join(user, ".claude", "projects", "-w", "s-1.jsonl") {
			t.Errorf("%s was added to the user's HOME", p)
		}
	}
	if _, ok := after[filepath.Join(user, ".claude", "projects", "-w", "s-1.jsonl")]; !ok {
		t.Errorf("the session file did not reach the user's store")
	}
	link := evs.find("sessions_linked")
	if link == nil || link["to"] != filepath.Join(user, ".claude", "projects") {
		t.Errorf("sessions_linked: %v", link)
	}
	if evs.find("overlay_removed") == nil {
		t.Errorf("overlay not removed: %v", evs)
	}
	// CLAUDE_CONFIG_DIR moves the user's store.
	ws2, entry2 := newProcess(t)
	cfg := t.TempDir()
	_, _, evs, _ = babysitCase{actions: "none", babysit: launch.Babysit{Entry: entry2}, env: []string{"CLAUDE_CONFIG_DIR=" + cfg},
		sessions: launch.SessionStore{Location: "~/.claude/projects/{cwdSlug}/{sessionId}.jsonl", HomeEnv: "CLAUDE_CONFIG_DIR"}}.run(t, ws2, t.TempDir())
	if link := evs.find("sessions_linked"); link == nil || link["to"] != filepath.Join(cfg, "projects") {
		t.Errorf("with CLAUDE_CONFIG_DIR: sessions_linked %v", link)
	}
	// A store in a database (OpenCode's): the directory is kept, under
	// the user's XDG_DATA_HOME when set, ~/.local/share otherwise.
	db := launch.SessionStore{Store: "~/.local/share/opencode", HomeEnv: "XDG_DATA_HOME"}
	data := t.TempDir()
	ws3, entry3 := newProcess(t)
	_, _, evs, _ = babysitCase{actions: "none", babysit: launch.Babysit{Entry: entry3}, env: []string{"XDG_DATA_HOME=" + data}, sessions: db}.run(t, ws3, t.TempDir())
	if link := evs.find("sessions_linked"); link == nil || link["to"] != filepath.Join(data, "opencode") {
		t.Errorf("with XDG_DATA_HOME: sessions_linked %v", link)
	}
	ws4, entry4 := newProcess(t)
	home := t.TempDir()
	_, _, evs, _ = babysitCase{actions: "none", babysit: launch.Babysit{Entry: entry4}, sessions: db}.run(t, ws4, home)
	if link := evs.find("sessions_linked"); link == nil || link["to"] != filepath.Join(home, ".local", "share", "opencode") {
		t.Errorf("without XDG_DATA_HOME: sessions_linked %v", link)
	}
}

func TestSessionStoreRoot(t *testing.T) {
	for loc, want := range map[string]string{
		"~/.claude/projects/{cwdSlug}/{sessionId}.jsonl":           ".claude/projects",
		"~/.codex/sessions/*/*/*/rollout-*-{sessionId}.jsonl":      ".codex/sessions",
		"~/.gemini/tmp/*/chats/session-*-{sessionId8}.jsonl":       ".gemini/tmp",
		"~/.copilot/session-state/{sessionId}/events.jsonl":        ".copilot/session-state",
		"~/.pi/agent/sessions/--{cwdDashed}--/*_{sessionId}.jsonl": ".pi/agent/sessions",
		"": "",
	} {
		if got := (launch.SessionStore{Location: loc}).Root(); got != want {
			t.Errorf("Root(%q) = %q, want %q", loc, got, want)
		}
	}
	if got := (launch.SessionStore{Location: "", Store: "~/.local/share/opencode"}).Root(); got != ".local/share/opencode" {
		t.Errorf("Root of a store = %q", got)
	}
	if got := (launch.SessionStore{Resume: "claude --resume {sessionId}"}).ResumeCommand("abc"); got != "claude --resume abc" {
		t.Errorf("ResumeCommand = %q", got)
	}
}

func TestUserStateDir(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h", "XDG_STATE_HOME=/x", "SITTER_STATE_DIR=/s"}, "/s"},
		{[]string{"HOME=/h", "XDG_STATE_HOME=/x"}, "/x/sitter"},
		{[]string{"HOME=/h"}, "/h/.local/state/sitter"},
		{nil, ""},
	} {
		if got := launch.UserStateDir(c.env); got != c.want {
			t.Errorf("UserStateDir(%q) = %q, want %q", c.env, got, c.want)
		}
	}
}

func TestBabysitPromptQuotes(t *testing.T) {
	p := launch.BabysitPrompt("R1", "/a b/runs/R1", "/bin/sitter")
	if !strings.Contains(p, "`/bin/sitter run iterate '/a b/runs/R1' --json`") || !strings.Contains(p, "<promise>COMPLETION_PROOF</promise>") {
		t.Errorf("prompt: %s", p)
	}
}

// waitSignal is a launch's stderr for a test that answers a breakpoint:
// waiting is closed once the launch says that a breakpoint waits, as a
// human answering in sitter observe would see it.
type waitSignal struct {
	mu      sync.Mutex
	seen    []byte
	once    sync.Once
	waiting chan struct{}
}

func (w *waitSignal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, p...)
	if bytes.Contains(w.seen, []byte("waits for breakpoint")) {
		w.once.Do(func() { close(w.waiting) })
	}
	return len(p), nil
}

// answerBreakpoint approves breakpoint e1 of the one run in ws with
// run.Post from another goroutine once the launch, whose stderr must be
// the writer it returns, says that it waits (answered any earlier, the
// launch would never wait: the order would depend on the machine's load);
// it also checks that the waiting launch marks the run it drives.
func answerBreakpoint(t *testing.T, ws string) (io.Writer, <-chan error) {
	t.Helper()
	w := &waitSignal{waiting: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		select {
		case <-w.waiting:
		case <-time.After(60 * time.Second):
			done <- fmt.Errorf("the launch never said that a breakpoint waits")
			return
		}
		runs, _ := filepath.Glob(filepath.Join(ws, ".a5c", "runs", "*"))
		if len(runs) != 1 {
			done <- fmt.Errorf("%d runs in %s, want 1", len(runs), ws)
			return
		}
		if st, err := run.Load(runs[0]); err != nil || st.Effect("e1") == nil {
			done <- fmt.Errorf("no breakpoint e1 to answer (%v)", err)
			return
		}
		// The launch marks the run it drives (sitter observe: working,
		// not orphaned, while it waits).
		var markErr error
		if pid := run.LaunchPID(runs[0]); pid != os.Getpid() {
			markErr = fmt.Errorf("the waiting launch's mark names pid %d, want %d", pid, os.Getpid())
		}
		_, err := run.Post(context.Background(), runs[0], "e1", run.PostOptions{Status: "ok", Value: json.RawMessage(`{"approved":true}`)})
		done <- cmp.Or(markErr, err)
	}()
	return w, done
}

// TestBabysitInteractiveBreakpoint: an --interactive launch's run waits
// for a human at a breakpoint: the launch says what waits, waits until the
// breakpoint is answered (here by run.Post from another goroutine), then
// resumes the session that drove the run and goes on to completion.
func TestBabysitInteractiveBreakpoint(t *testing.T) {
	ws, entry := newProcess(t)
	waits, answered := answerBreakpoint(t, ws)
	code, err, evs, stderr := babysitCase{actions: "bpstop,complete", babysit: launch.Babysit{Entry: entry, Interactive: true}, stderr: waits}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitCompleted {
		t.Fatalf("code %d, err %v, want 0\n%s", code, err, stderr)
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	runs, _ := filepath.Glob(filepath.Join(ws, ".a5c", "runs", "*"))
	if m, _ := run.ReadMetadata(runs[0]); m.NonInteractive {
		t.Errorf("run.json: nonInteractive with --interactive")
	}
	sp := spawns(t, ws)
	if len(sp) != 2 || sp[0].Args[0] != "-p" || sp[1].Args[0] != "--resume" || sp[1].Args[1] != "real-1" ||
		!strings.Contains(strings.Join(sp[1].Args, " "), "Continue babysitter run") {
		t.Fatalf("spawns %+v, want a new session, then session real-1 resumed with the babysit prompt", sp)
	}
	if n := strings.Count(stderr, "waits for breakpoint e1 (approve the plan): answer it in `sitter observe` or with `sitter task post "+runs[0]+" e1"); n != 1 {
		t.Errorf("stderr says %d times what waits, want once:\n%s", n, stderr)
	}
	if e := evs.find("breakpoint_wait"); e == nil || fmt.Sprint(e["breakpoints"]) != "[map[effectId:e1 label:approve the plan]]" {
		t.Errorf("breakpoint_wait event: %v", e)
	}
	if e := evs.find("babysit"); e == nil || e["status"] != run.StatusCompleted || e["harnessSession"] != "real-1" {
		t.Errorf("babysit event: %v", e)
	}
	if _, err := os.Stat(filepath.Join(runs[0], run.StateDir, run.LaunchFile)); !os.IsNotExist(err) {
		t.Errorf("the launch's mark outlived the launch: %v", err)
	}
}

// TestBabysitInteractiveAnsweredEarly: the human answers the breakpoint
// after the stop hook let the session stop but before the harness has
// exited (quick in sitter observe): the launch does not wait for an answer
// it already has, and does not end with the run unfinished either: it
// resumes the session at once and goes on to completion.
func TestBabysitInteractiveAnsweredEarly(t *testing.T) {
	ws, entry := newProcess(t)
	code, err, evs, stderr := babysitCase{actions: "bpanswered,complete", babysit: launch.Babysit{Entry: entry, Interactive: true}}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitCompleted {
		t.Fatalf("code %d, err %v, want 0\n%s", code, err, stderr)
	}
	if sp := spawns(t, ws); len(sp) != 2 || sp[1].Args[0] != "--resume" || sp[1].Args[1] != "real-1" {
		t.Fatalf("spawns %+v, want a new session, then session real-1 resumed", sp)
	}
	if evs.find("breakpoint_wait") != nil || evs.find("breakpoint_answered") == nil || strings.Contains(stderr, "waits for breakpoint") {
		t.Errorf("events %v, stderr %q: want breakpoint_answered and no wait", evs, stderr)
	}
}

// TestBabysitInteractiveTimeout: --timeout ends the wait for a
// breakpoint's answer with exit 124, and the harness is not run again.
func TestBabysitInteractiveTimeout(t *testing.T) {
	ws, entry := newProcess(t)
	code, err, evs, stderr := babysitCase{actions: "bpstop,complete", timeout: 2 * time.Second,
		babysit: launch.Babysit{Entry: entry, Interactive: true}}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitTimeout {
		t.Fatalf("code %d, err %v, want %d\n%s", code, err, launch.ExitTimeout, stderr)
	}
	if sp := spawns(t, ws); len(sp) != 1 {
		t.Errorf("%d spawns, want 1", len(sp))
	}
	if evs.find("breakpoint_wait") == nil || evs.find("timeout") == nil || evs.find("babysit")["code"] != float64(launch.ExitTimeout) {
		t.Errorf("events: %v", evs)
	}
}

// TestBabysitInteractiveSignal: SIGINT ends the wait; the launch exits 4
// (the run waits for a breakpoint) as a launch without the wait does.
func TestBabysitInteractiveSignal(t *testing.T) {
	ws, entry := newProcess(t)
	sigs := make(chan os.Signal, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// Once the harness is done (its stop check journaled), Ctrl-C
		// until the launch is over.
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			runs, _ := filepath.Glob(filepath.Join(ws, ".a5c", "runs", "*"))
			if len(runs) != 1 {
				continue
			}
			if st, err := run.Load(runs[0]); err == nil && len(stopChecksOf(st)) > 0 {
				select {
				case sigs <- os.Interrupt:
				default:
				}
			}
		}
	}()
	code, err, evs, stderr := babysitCase{actions: "bpstop,complete", signals: sigs, timeout: time.Minute,
		babysit: launch.Babysit{Entry: entry, Interactive: true}}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitUnfinished {
		t.Fatalf("code %d, err %v, want %d\n%s", code, err, launch.ExitUnfinished, stderr)
	}
	if sp := spawns(t, ws); len(sp) != 1 || evs.find("breakpoint_wait") == nil {
		t.Errorf("%d spawns, events %v", len(sp), evs)
	}
}

// TestBabysitNonInteractiveBreakpoint: a launch without --interactive
// creates a non-interactive run and exits 4 at a breakpoint, as before.
func TestBabysitNonInteractiveBreakpoint(t *testing.T) {
	ws, entry := newProcess(t)
	code, err, evs, stderr := babysitCase{actions: "bpstop,complete", babysit: launch.Babysit{Entry: entry}}.run(t, ws, t.TempDir())
	if err != nil || code != launch.ExitUnfinished {
		t.Fatalf("code %d, err %v, want %d\n%s", code, err, launch.ExitUnfinished, stderr)
	}
	runs, _ := filepath.Glob(filepath.Join(ws, ".a5c", "runs", "*"))
	if m, _ := run.ReadMetadata(runs[0]); !m.NonInteractive {
		t.Errorf("run.json: interactive without --interactive")
	}
	if sp := spawns(t, ws); len(sp) != 1 || evs.find("breakpoint_wait") != nil {
		t.Errorf("%d spawns, events %v: a non-interactive run does not wait", len(sp), evs)
	}
}

func stopChecksOf(st *run.State) []journal.Event {
	var out []journal.Event
	for _, ev := range st.Journal.Events {
		if ev.Type == journal.StopHookInvoked {
			out = append(out, ev)
		}
	}
	return out
}
