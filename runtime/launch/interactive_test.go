//go:build unix

package launch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeTUI is an interactive harness: it insists on a terminal, shows a
// trust dialog drawn with colours and cursor moves, reads one key in raw
// mode, prints its arguments and an answer, then (with $FAKE_STOPS > 0)
// runs the stop hook the launch registered in $HOME/hook.json that many
// times, and waits like an interactive harness does.
const fakeTUI = `test -t 0 && test -t 1 || { echo "not a terminal" >&2; exit 9; }
printf '\033[?25l\033[1mWelcome\033[22m\033[9Gto \033[38;5;220mfake\033[39m\r\n'
printf '\033]0;fake title\007\033[3GDo\033[6Gyou trust the files\r\n  in this folder?\r\n\033[32m❯ 1. Yes\033[39m\r\n'
spin=
if [ -n "$FAKE_SPIN" ]; then
  ( while :; do printf '\033[1G|'; sleep 0.05; printf '\033[1G-'; sleep 0.05; done ) & spin=$!
fi
old=$(stty -g); stty raw -echo; key=$(dd bs=1 count=1 2>/dev/null); stty "$old"
[ -n "$spin" ] && kill "$spin"
echo "key=$key" > "$PWD/answer"
printf 'args: %s\r\n' "$*"
printf '\033[31mThe answer is 42\033[0m\r\n'
cmd=$(sed -e 's/.*"command":"\(.*\)"}.*/\1/' -e 's/\\"/"/g' "$HOME/hook.json" 2>/dev/null)
i=0
while [ "$i" -lt "${FAKE_STOPS:-0}" ]; do
  i=$((i+1))
  printf 'turn %s\r\n' "$i"
  printf '{"hook_event_name":"Stop","last_assistant_message":"42","n":%s}' "$i" | sh -c "$cmd"
done
[ -n "$FAKE_TRAP" ] && trap "$FAKE_TRAP" TERM
printf 'waiting\r\n'
[ -n "$FAKE_BUSY" ] && while :; do printf '\033[1G.'; sleep 0.1; done
while :; do sleep 1; done
`

func fakeSpec(turnEnd bool) Spec {
	s := Spec{
		Harness:     "fake",
		Names:       []string{"fake"},
		Binary:      "fake",
		Interactive: []string{"{prompt}", "--flag"},
		Onboarding: []Prompt{
			{ID: "never", Match: `Choose a theme`, Keys: "x"},
			{ID: "trust", Match: `Do you trust the files in this folder\?`, Keys: "1"},
		},
		Connect: []Connect{{Protocol: "anthropic", Env: []KV{{"FAKE_URL", "{baseURL}"}, {"FAKE_KEY", "{key}"}}}},
	}
	if turnEnd {
		s.TurnEnd = TurnEnd{Event: "Stop", Files: []File{{Path: "{home}/hook.json", Content: `{"command":"{turnEndCommand}"}`}}}
	}
	return s
}

type ndjson []map[string]any

// runFake runs the fake harness in bridge-interactive mode and returns
// the exit code, the events (every line checked to be an event) and the
// workspace.
func runFake(t *testing.T, spec Spec, o Options, env ...string) (int, ndjson, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+fakeTUI), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o755)
	var out, errOut bytes.Buffer
	o.Spec, o.Mode, o.Bin, o.Workspace, o.StateDir = spec, BridgeInteractive, bin, ws, state
	o.Provider = Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "FAKE_PROVIDER_KEY", DefaultModel: "m"}
	o.Upstream = "http://127.0.0.1:3"
	if o.Prompt == "" {
		o.Prompt = "do the task"
	}
	if o.Settle == 0 {
		o.Settle = 300 * time.Millisecond
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 20 * time.Second // generous: these runs end by their turns
	}
	o.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TERM=dumb", "TERM_PROGRAM=vscode"}, env...)
	o.Stderr = &errOut
	if o.Stdout != nil { // a watcher of the events as they come
		o.Stdout = io.MultiWriter(&out, o.Stdout)
	} else {
		o.Stdout = &out
	}
	code, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v\nstderr: %s", err, errOut.String())
	}
	var evs ndjson
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		ts, _ := e["time"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("event without an RFC 3339 time: %s", sc.Text())
		}
		if typ, _ := e["type"].(string); typ == "" {
			t.Errorf("event without a type: %s", sc.Text())
		}
		evs = append(evs, e)
	}
	if left, _ := os.ReadDir(state); len(left) != 0 {
		t.Errorf("overlay left behind: %v", left)
	}
	return code, evs, ws
}

func (evs ndjson) all(typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

func (evs ndjson) one(t *testing.T, typ string) map[string]any {
	t.Helper()
	all := evs.all(typ)
	if len(all) != 1 {
		t.Fatalf("%d %s events, want 1:\n%s", len(all), typ, evs)
	}
	return all[0]
}

func (evs ndjson) text() string {
	var b strings.Builder
	for _, e := range evs.all("output") {
		b.WriteString(e["text"].(string))
	}
	return b.String()
}

func (evs ndjson) String() string {
	var b strings.Builder
	for _, e := range evs {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// order returns the types of the events, outputs left out.
func (evs ndjson) order() []string {
	var out []string
	for _, e := range evs {
		if t := e["type"].(string); t != "output" {
			out = append(out, t)
		}
	}
	return out
}

// TestInteractiveTurnEndHook: the fake harness gets a terminal, the
// prompt as its argument and the declared answer to its trust dialog;
// its output comes out stripped of control sequences; its stop hook
// (registered by the spec's turn-end files) ends the turn, after which
// sitter ends it and exits 0.
func TestInteractiveTurnEndHook(t *testing.T) {
	code, evs, ws := runFake(t, fakeSpec(true), Options{}, "FAKE_STOPS=1")
	if code != 0 {
		t.Errorf("exit code %d, want 0 (ended by sitter after the turn)\n%s", code, evs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "answer")); string(b) != "key=1\n" {
		t.Errorf("the harness read %q, want the trust answer 1\n%s", b, evs)
	}
	ob := evs.one(t, "onboarding")
	if ob["id"] != "trust" || ob["keys"] != "1" {
		t.Errorf("onboarding event %v", ob)
	}
	text := evs.text()
	for _, want := range []string{"Welcome to fake\n", "  Do you trust the files\n  in this folder?\n❯ 1. Yes\n", "args: do the task --flag\n", "The answer is 42\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%q", want, text)
		}
	}
	if strings.ContainsAny(text, "\x1b\r\a") || strings.Contains(text, "fake title") {
		t.Errorf("control sequences left in the output: %q", text)
	}
	te := evs.one(t, "turn_end")
	p, _ := te["payload"].(map[string]any)
	if te["source"] != "hook" || te["native"] != "Stop" || te["turn"] != float64(1) || p["last_assistant_message"] != "42" {
		t.Errorf("turn_end event %v", te)
	}
	ex := evs.one(t, "exit")
	if ex["code"] != float64(0) || ex["endedBy"] != "sitter" || ex["harnessCode"] != float64(128+int(syscall.SIGTERM)) {
		t.Errorf("exit event %v", ex)
	}
	if term := evs.one(t, "terminate"); term["reason"] != "turn_end" {
		t.Errorf("terminate event %v", term)
	}
	want := []string{"overlay", "pass_through", "spawn", "onboarding", "turn_end", "terminate", "exit", "overlay_removed"}
	if got := evs.order(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events %q, want %q", got, want)
	}
	// The harness saw an xterm, not the terminal sitter runs in.
	if sp := evs.one(t, "spawn"); sp["terminal"] != "160x50" {
		t.Errorf("spawn event %v", sp)
	}
}

// TestInteractiveAnimatedPrompt: a prompt whose screen never goes quiet
// (a spinner) is answered all the same, 5 × Settle after it appeared.
func TestInteractiveAnimatedPrompt(t *testing.T) {
	code, evs, ws := runFake(t, fakeSpec(true), Options{}, "FAKE_STOPS=1", "FAKE_SPIN=1")
	if b, _ := os.ReadFile(filepath.Join(ws, "answer")); string(b) != "key=1\n" || code != 0 {
		t.Errorf("code %d, the harness read %q\n%s", code, b, evs)
	}
	evs.one(t, "onboarding")
}

// TestInteractiveMaxIterations: a harness that keeps going after its
// stop hook (as when a plugin's stop hook blocks) is ended once it has
// reported --max-iterations turns.
func TestInteractiveMaxIterations(t *testing.T) {
	code, evs, _ := runFake(t, fakeSpec(true), Options{MaxIterations: 2, Settle: 2 * time.Second}, "FAKE_STOPS=3")
	if code != 0 {
		t.Errorf("exit code %d\n%s", code, evs)
	}
	if n := len(evs.all("turn_end")); n != 2 {
		t.Errorf("%d turn_end events, want 2\n%s", n, evs)
	}
	if term := evs.one(t, "terminate"); term["reason"] != "max_iterations" {
		t.Errorf("terminate event %v", term)
	}
}

// TestInteractiveIdleNoHook: a harness without a turn-end hook ends its
// turn by going quiet for the idle timeout; sitter then ends it (exit 0).
func TestInteractiveIdleNoHook(t *testing.T) {
	code, evs, _ := runFake(t, fakeSpec(false), Options{IdleTimeout: time.Second})
	if code != 0 {
		t.Errorf("exit code %d\n%s", code, evs)
	}
	te := evs.one(t, "turn_end")
	if te["source"] != "idle" {
		t.Errorf("turn_end %v", te)
	}
	idle := evs.one(t, "idle")
	if s, _ := idle["screen"].(string); !strings.Contains(s, "The answer is 42") {
		t.Errorf("idle event lacks the screen: %v", idle)
	}
}

// TestInteractiveIdleKill: a harness whose turn-end hook never runs (it
// is stuck) and that ignores SIGTERM is killed after the idle timeout and
// the kill grace; the run exits 124 with the screen in the idle event.
func TestInteractiveIdleKill(t *testing.T) {
	defer func(g time.Duration) { killGrace = g }(killGrace)
	killGrace = 500 * time.Millisecond
	code, evs, _ := runFake(t, fakeSpec(true), Options{IdleTimeout: time.Second}, "FAKE_STOPS=0", "FAKE_TRAP=echo ignored")
	if code != exitIdle {
		t.Errorf("exit code %d, want %d\n%s", code, exitIdle, evs)
	}
	if len(evs.all("turn_end")) != 0 {
		t.Errorf("a turn_end without a stop\n%s", evs)
	}
	idle := evs.one(t, "idle")
	if s, _ := idle["screen"].(string); !strings.Contains(s, "args: do the task --flag") {
		t.Errorf("idle event lacks the screen: %v", idle)
	}
	evs.one(t, "kill")
	ex := evs.one(t, "exit")
	if ex["harnessCode"] != float64(128+int(syscall.SIGKILL)) || ex["endedBy"] != "sitter" {
		t.Errorf("exit event %v", ex)
	}
}

// TestInteractiveTimeout: a harness whose output never goes quiet and
// that never ends a turn is ended at --timeout (exit 124), not left to
// run forever under the idle timeout.
func TestInteractiveTimeout(t *testing.T) {
	code, evs, _ := runFake(t, fakeSpec(true), Options{Timeout: 2 * time.Second}, "FAKE_BUSY=1")
	if code != exitIdle {
		t.Errorf("exit code %d, want %d\n%s", code, exitIdle, evs)
	}
	if len(evs.all("idle")) != 0 || len(evs.all("turn_end")) != 0 {
		t.Errorf("idle or turn_end events from a busy harness\n%s", evs)
	}
	if to := evs.one(t, "timeout"); to["after"] != "2s" {
		t.Errorf("timeout event %v", to)
	}
	if ex := evs.one(t, "exit"); ex["endedBy"] != "sitter" {
		t.Errorf("exit event %v", ex)
	}
}

// sendOn sends sig once the event stream shows text.
type sendOn struct {
	text string
	sig  chan os.Signal
	sent bool
}

func (w *sendOn) Write(p []byte) (int, error) {
	if !w.sent && bytes.Contains(p, []byte(w.text)) {
		w.sent = true
		w.sig <- syscall.SIGTERM
	}
	return len(p), nil
}

// TestInteractiveSignal: a signal sitter gets reaches the harness's
// process group; the exit code is the harness's.
func TestInteractiveSignal(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	o := Options{Signals: sigs, Stdout: &sendOn{text: "waiting", sig: sigs}}
	code, evs, _ := runFake(t, fakeSpec(true), o, "FAKE_TRAP=exit 7")
	if code != 7 {
		t.Errorf("exit code %d, want the harness's 7\n%s", code, evs)
	}
	if ex := evs.one(t, "exit"); ex["endedBy"] != "signal" || ex["harnessCode"] != float64(7) {
		t.Errorf("exit event %v", ex)
	}
	if sg := evs.one(t, "signal"); sg["signal"] != "terminated" {
		t.Errorf("signal event %v", sg)
	}
}
