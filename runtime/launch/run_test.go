//go:build unix

package launch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/runtime/launch"
)

// script writes an executable shell script.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		}
		return nil
	})
	return m
}

type events []map[string]any

func parse(t *testing.T, out string) events {
	t.Helper()
	var evs events
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not NDJSON: %q", sc.Text())
		}
		evs = append(evs, e)
	}
	return evs
}

func (evs events) find(name string) map[string]any {
	for _, e := range evs {
		if e["type"] == name {
			return e
		}
	}
	return nil
}

// fakeProxy prints its URL like sitter-proxy, writes the token file it is
// given, records its pid and waits to be terminated.
const fakeProxy = `while [ $# -gt 0 ]; do case "$1" in --token-file) tf="$2"; shift;; --upstream) up="$2"; shift;; esac; shift; done
echo "fake-token" > "$tf"
echo "$up" > "$(dirname "$tf")/upstream"
echo "SITTER_PROXY_URL=http://127.0.0.1:1"
exec sleep 1000
`

// TestRunOverlayAndCleanup: a launch behind the proxy gives the harness
// an overlay HOME with its config, passes the proxy URL and token, returns
// the harness's exit code, stops the proxy, removes the overlay and leaves
// the user's HOME untouched.
func TestRunOverlayAndCleanup(t *testing.T) {
	bin := t.TempDir()
	user := t.TempDir()
	os.MkdirAll(filepath.Join(user, ".codex"), 0o755)
	os.WriteFile(filepath.Join(user, ".codex", "config.toml"), []byte("model = \"mine\"\n"), 0o644)
	before := tree(t, user)
	ws := t.TempDir()
	harness := script(t, bin, "codex", `echo "args: $*"
echo "home: $HOME"
cat "$CODEX_HOME/config.toml"
echo "key: $SITTER_LAUNCH_KEY"
echo "$HOME" > "$PWD/seen-home"
echo "mine" > "$HOME/.codex/extra"
exit 3
`)
	proxyBin := script(t, bin, "sitter-proxy", fakeProxy)
	spec, _ := launch.Find(genlaunch.Specs, "codex")
	var out, errOut bytes.Buffer
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "ANTHROPIC_API_KEY", DefaultModel: "claude-x"},
		Proxy: true, Prompt: "hello", Workspace: ws, Bin: harness, ProxyBin: proxyBin, Upstream: "http://127.0.0.1:2",
		Env: []string{"HOME=" + user, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=x"}, Stdout: &out, Stderr: &errOut, JSON: true,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, errOut.String())
	}
	if code != 3 {
		t.Errorf("exit code %d, want the harness's 3", code)
	}
	h := errOut.String() // --json: the harness's stdout goes to stderr
	for _, want := range []string{"args: exec --dangerously-bypass-hook-trust --skip-git-repo-check hello", `base_url = "http://127.0.0.1:1/v1"`,
		`model = "claude-x"`, "key: fake-token", `[projects."` + mustEval(t, ws) + `"]`} {
		if !strings.Contains(h, want) {
			t.Errorf("harness output lacks %q:\n%s", want, h)
		}
	}
	evs := parse(t, out.String())
	ov := evs.find("overlay")
	if ov == nil || evs.find("proxy_started") == nil || evs.find("proxy_stopped") == nil || evs.find("overlay_removed") == nil {
		t.Fatalf("missing events:\n%s", out.String())
	}
	dir := ov["dir"].(string)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("overlay %s still exists", dir)
	}
	seen, _ := os.ReadFile(filepath.Join(ws, "seen-home"))
	if got := strings.TrimSpace(string(seen)); got != filepath.Join(dir, "home") {
		t.Errorf("harness HOME = %s, want the overlay's", got)
	}
	pid := int(evs.find("proxy_started")["pid"].(float64))
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("proxy pid %d still alive", pid)
	}
	after := tree(t, user)
	if len(after) != len(before) || after[filepath.Join(user, ".codex", "config.toml")] != "model = \"mine\"\n" {
		t.Errorf("user HOME changed: %v → %v", before, after)
	}
}

// TestRunPWDIsTheWorkspace: the harness finds the workspace in PWD, not
// the directory sitter was started from (which `opencode run` 1.18.33
// would work in). printenv, unlike a shell, does not correct PWD.
func TestRunPWDIsTheWorkspace(t *testing.T) {
	printenv, err := exec.LookPath("printenv")
	if err != nil {
		t.Skip("no printenv on PATH")
	}
	spec, _ := launch.Find(genlaunch.Specs, "codex")
	spec.Headless = []string{"{prompt}"}
	ws := t.TempDir()
	var out, errOut bytes.Buffer
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "openai-responses", Protocol: "openai-responses", KeyEnv: "OPENAI_API_KEY", DefaultModel: "gpt-5"},
		Prompt: "PWD", Workspace: ws, Bin: printenv, Upstream: "http://127.0.0.1:2", StateDir: t.TempDir(),
		Env:    []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "PWD=/somewhere/else", "OPENAI_API_KEY=x"},
		Stdout: &out, Stderr: &errOut,
	})
	if err != nil || code != 0 {
		t.Fatalf("Run: %d %v\n%s", code, err, errOut.String())
	}
	if got := strings.TrimSpace(out.String()); got != mustEval(t, ws) {
		t.Errorf("harness PWD = %q, want the workspace %s", got, mustEval(t, ws))
	}
}

func mustEval(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunKeepStateAndPassThrough: without the proxy the key comes from
// the provider's variable; --keep-state leaves the overlay.
func TestRunKeepStateAndPassThrough(t *testing.T) {
	bin := t.TempDir()
	harness := script(t, bin, "gemini", `echo "$GOOGLE_GEMINI_BASE_URL $GEMINI_API_KEY $GEMINI_CLI_TRUST_WORKSPACE"; cat "$HOME/.gemini/settings.json"`)
	spec, _ := launch.Find(genlaunch.Specs, "gemini-cli")
	var out, errOut bytes.Buffer
	state := t.TempDir()
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "gemini", Protocol: "gemini", BaseURL: "https://g.example", KeyEnv: "GEMINI_API_KEY", DefaultModel: "g"},
		Prompt: "hi", Workspace: t.TempDir(), Bin: harness, KeepState: true, StateDir: state,
		Env: []string{"HOME=/nonexistent", "GEMINI_API_KEY=gk"}, Stdout: &out, Stderr: &errOut,
	})
	if err != nil || code != 0 {
		t.Fatalf("Run: %d %v\n%s", code, err, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "https://g.example gk true\n") || !strings.Contains(out.String(), `"selectedType":"gemini-api-key"`) {
		t.Errorf("harness saw:\n%s", out.String())
	}
	kept, _ := filepath.Glob(filepath.Join(state, "sitter-launch-*", "home", ".gemini", "settings.json"))
	if len(kept) != 1 {
		t.Errorf("--keep-state: overlay not kept in %s", state)
	}
}

// TestRunErrorsCleanUp: a harness that cannot start still has its proxy
// stopped and overlay removed.
func TestRunErrorsCleanUp(t *testing.T) {
	bin := t.TempDir()
	proxyBin := script(t, bin, "sitter-proxy", fakeProxy)
	state := t.TempDir()
	spec, _ := launch.Find(genlaunch.Specs, "claude-code")
	var out bytes.Buffer
	_, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "openai", Protocol: "openai-chat", KeyEnv: "OPENAI_API_KEY", DefaultModel: "g"},
		Proxy: true, Prompt: "hi", Workspace: t.TempDir(), Bin: filepath.Join(bin, "missing"), ProxyBin: proxyBin, StateDir: state,
		Env: []string{"HOME=/nonexistent", "OPENAI_API_KEY=x"}, Stdout: &out, JSON: true,
	})
	if err == nil {
		t.Fatal("want an error for a missing binary")
	}
	evs := parse(t, out.String())
	if evs.find("proxy_stopped") == nil {
		t.Errorf("proxy not stopped:\n%s", out.String())
	}
	if left, _ := os.ReadDir(state); len(left) != 0 {
		t.Errorf("overlay left behind: %v", left)
	}
}

// signalOnReady sends SIGTERM on sigs when the harness prints "ready".
type signalOnReady struct {
	sigs chan os.Signal
	sent bool
}

func (w *signalOnReady) Write(p []byte) (int, error) {
	if !w.sent && bytes.Contains(p, []byte("ready")) {
		w.sent = true
		w.sigs <- syscall.SIGTERM
	}
	return len(p), nil
}

// TestRunSignalReachesGroup: a signal sitter receives reaches the
// harness's whole process group: a child of the harness gets it too.
func TestRunSignalReachesGroup(t *testing.T) {
	bin := t.TempDir()
	ws := t.TempDir()
	// The harness traps TERM and waits for its child; the child says it is
	// ready, and records the TERM it gets. Were only the harness signalled,
	// the child would never end. The child prints ready once its sleep
	// has exec'd (a TERM before that would be lost in the fork).
	harness := script(t, bin, "claude", `trap 'echo harness-term >> "$PWD/log"' TERM
sh -c 'trap "echo child-term >> \"$PWD/log\"; exit 0" TERM; sleep 1000 & until [ "$(cat /proc/$!/comm 2>/dev/null)" = sleep ]; do :; done; echo ready; wait'
exit 5
`)
	sigs := make(chan os.Signal, 1)
	spec, _ := launch.Find(genlaunch.Specs, "claude-code")
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "K", DefaultModel: "c"},
		Prompt: "hi", Workspace: ws, Bin: harness, Upstream: "http://127.0.0.1:3", Env: []string{"PATH=" + os.Getenv("PATH")},
		Signals: sigs, Stdout: &signalOnReady{sigs: sigs},
	})
	if err != nil {
		t.Fatal(err)
	}
	if code != 5 {
		t.Errorf("exit code %d, want the harness's 5", code)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "log"))
	if !strings.Contains(string(b), "child-term") || !strings.Contains(string(b), "harness-term") {
		t.Errorf("log = %q: the signal did not reach the group", b)
	}
}

// TestRunHookDriven: hook-driven mode runs the interactive arguments with
// the terminal (stdin) handed over, and the plugin by flag.
func TestRunHookDriven(t *testing.T) {
	bin := t.TempDir()
	harness := script(t, bin, "claude", `echo "args: $*"; read line; echo "stdin: $line"`)
	spec, _ := launch.Find(genlaunch.Specs, "claude-code")
	var out bytes.Buffer
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "K", DefaultModel: "c"},
		Mode: launch.HookDriven, Workspace: t.TempDir(), Bin: harness, Upstream: "http://127.0.0.1:3", Bundles: []string{"/b/guard"},
		Env: []string{"PATH=" + os.Getenv("PATH")}, Stdin: strings.NewReader("typed\n"), Stdout: &out,
	})
	if err != nil || code != 0 {
		t.Fatalf("Run: %d %v", code, err)
	}
	if want := "args: --plugin-dir /b/guard\nstdin: typed\n"; out.String() != want {
		t.Errorf("harness saw %q, want %q", out.String(), want)
	}
}

// TestRunBridgeHooks: bridge-hooks calls `sitter hook` for session start,
// a stop after each run and session end; a block resumes the session with
// the reason as the prompt, up to MaxIterations.
func TestRunBridgeHooks(t *testing.T) {
	bin := t.TempDir()
	ws := t.TempDir()
	harness := script(t, bin, "codex", `echo "$*" >> "$PWD/runs"`)
	// A fake sitter: records each hook call; blocks the first two stops.
	sitter := script(t, bin, "sitter", `payload=$(cat); echo "$3 $payload" >> "$PWD/hooks"
if [ "$3" = Stop ] && [ "$(grep -c '^Stop' "$PWD/hooks")" -le 2 ]; then echo '{"decision":"block","reason":"again"}'; fi
if [ "$3" = SessionStart ]; then echo '{"hookSpecificOutput":{"additionalContext":"CTX"}}'; fi
`)
	spec, _ := launch.Find(genlaunch.Specs, "codex")
	for _, c := range []struct {
		max, runs int
	}{{5, 3}, {2, 2}} {
		os.Remove(filepath.Join(ws, "runs"))
		os.Remove(filepath.Join(ws, "hooks"))
		code, err := launch.Run(context.Background(), launch.Options{
			Spec: spec, Provider: launch.Provider{ID: "openai-responses", Protocol: "openai-responses", KeyEnv: "K", DefaultModel: "g"},
			Mode: launch.BridgeHooks, MaxIterations: c.max, Prompt: "task", Workspace: ws, Bin: harness, SitterBin: sitter,
			Upstream: "http://127.0.0.1:3/v1", Bundles: []string{"/b/stop"}, Env: []string{"PATH=" + os.Getenv("PATH")},
		})
		if err != nil || code != 0 {
			t.Fatalf("Run: %d %v", code, err)
		}
		runs, _ := os.ReadFile(filepath.Join(ws, "runs"))
		// The first prompt holds the session-start context: two lines more.
		lines := strings.Split(strings.TrimSpace(strings.Replace(string(runs), "CTX\n\ntask", "CTX+task", 1)), "\n")
		if len(lines) != c.runs {
			t.Fatalf("max %d: %d runs, want %d:\n%s", c.max, len(lines), c.runs, runs)
		}
		if lines[0] != "exec --dangerously-bypass-hook-trust --skip-git-repo-check CTX+task" {
			t.Errorf("first run: %q", lines[0])
		}
		if !strings.HasPrefix(lines[len(lines)-1], "exec resume --last") || !strings.HasSuffix(lines[len(lines)-1], " again") {
			t.Errorf("resumed run: %q", lines[len(lines)-1])
		}
		hooks, _ := os.ReadFile(filepath.Join(ws, "hooks"))
		h := string(hooks)
		if !strings.HasPrefix(h, "SessionStart ") || !strings.Contains(h, `"stop_hook_active":false`) ||
			!strings.Contains(h, `"stop_hook_active":true`) || !strings.Contains(h, "\nSessionEnd ") {
			t.Errorf("hook calls:\n%s", h)
		}
	}
}

// cancelOnReady cancels a context when the harness prints "ready".
type cancelOnReady struct{ cancel context.CancelFunc }

func (w cancelOnReady) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("ready")) {
		w.cancel()
	}
	return len(p), nil
}

// TestRunContextCancel: cancelling Run's context ends the harness as a
// SIGTERM to sitter does (the harness's trap sees it); a context done
// before the launch runs nothing.
func TestRunContextCancel(t *testing.T) {
	bin := t.TempDir()
	ws := t.TempDir()
	harness := script(t, bin, "claude", `trap 'echo harness-term >> "$PWD/log"; exit 7' TERM
sleep 1000 & until [ "$(cat /proc/$!/comm 2>/dev/null)" = sleep ]; do :; done; echo ready; wait
`)
	spec, _ := launch.Find(genlaunch.Specs, "claude-code")
	o := launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "K", DefaultModel: "c"},
		Prompt: "hi", Workspace: ws, Bin: harness, Upstream: "http://127.0.0.1:3", Env: []string{"PATH=" + os.Getenv("PATH")},
		Signals: make(chan os.Signal),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Stdout = cancelOnReady{cancel}
	code, err := launch.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if code != 7 {
		t.Errorf("exit code %d, want the harness's 7 (its TERM trap)", code)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "log")); !strings.Contains(string(b), "harness-term") {
		t.Errorf("log = %q: the harness got no SIGTERM", b)
	}
	os.Remove(filepath.Join(ws, "log"))
	if code, err := launch.Run(ctx, o); err == nil || code != 1 {
		t.Errorf("Run with a done context: %d, %v; want 1 and an error", code, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "log")); err == nil {
		t.Error("Run with a done context started the harness")
	}
}

// TestRunProxyRejectsConfig: a proxy that exits 2 before it serves (it
// rejected the routes file or another setting, as `sitter proxy` does
// with exit 2) makes the launch exit 2 with the proxy's message, and
// no harness runs.
func TestRunProxyRejectsConfig(t *testing.T) {
	bin := t.TempDir()
	ran := filepath.Join(bin, "ran")
	for _, c := range []struct {
		exit, want int
	}{{2, 2}, {1, 1}} {
		proxyBin := script(t, bin, "sitter-proxy", "echo 'sitter proxy: r.json:1:16: providers.nosuch: unknown provider' >&2\nexit "+strconv.Itoa(c.exit)+"\n")
		spec, _ := launch.Find(genlaunch.Specs, "claude-code")
		code, err := launch.Run(context.Background(), launch.Options{
			Spec: spec, Provider: launch.Provider{ID: "openai", Protocol: "openai-chat", KeyEnv: "OPENAI_API_KEY", DefaultModel: "g"},
			Proxy: true, Prompt: "hi", Workspace: t.TempDir(), Bin: script(t, bin, "harness", "touch "+ran+"\n"), ProxyBin: proxyBin, StateDir: t.TempDir(),
			Env: []string{"HOME=/nonexistent", "OPENAI_API_KEY=x"}, Stdout: io.Discard,
		})
		if code != c.want || err == nil || !strings.Contains(err.Error(), "r.json:1:16: providers.nosuch: unknown provider") {
			t.Errorf("proxy exit %d: launch code %d, err %v; want %d and the proxy's message", c.exit, code, err, c.want)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Errorf("proxy exit %d: the harness ran", c.exit)
		}
	}
}

// TestRunRelativeBin: --bin ./harness names a file from where sitter was
// started, not from the workspace the harness runs in.
func TestRunRelativeBin(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "gemini", `echo started`)
	t.Chdir(dir)
	spec, _ := launch.Find(genlaunch.Specs, "gemini-cli")
	var out, errOut bytes.Buffer
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "gemini", Protocol: "gemini", BaseURL: "https://g.example", KeyEnv: "GEMINI_API_KEY", DefaultModel: "g"},
		Prompt: "hi", Workspace: t.TempDir(), Bin: "./gemini", StateDir: t.TempDir(),
		Env: []string{"HOME=/nonexistent", "GEMINI_API_KEY=gk"}, Stdout: &out, Stderr: &errOut,
	})
	if err != nil || code != 0 || out.String() != "started\n" {
		t.Fatalf("Run: %d %v\nstdout %q\nstderr %s", code, err, out.String(), errOut.String())
	}
}

// TestRunJSONSaysWhyItFailed: with --json, a launch that cannot start
// ends its event stream with an error event saying why and with the exit
// code (stderr is not the only place the reason goes): the harness binary
// missing, the proxy missing, the proxy failing to listen or rejecting a
// setting (a routes file, an --upstream), no prompt.
func TestRunJSONSaysWhyItFailed(t *testing.T) {
	bin := t.TempDir()
	harness := script(t, bin, "codex", "exit 0\n")
	failingProxy := func(name, msg string, code int) string {
		return script(t, bin, name, "echo '"+msg+"' >&2\nexit "+strconv.Itoa(code)+"\n")
	}
	spec, _ := launch.Find(genlaunch.Specs, "codex")
	prov := launch.Provider{ID: "anthropic", Protocol: "anthropic", KeyEnv: "ANTHROPIC_API_KEY", DefaultModel: "claude-x"}
	cases := []struct {
		name string
		o    func(*launch.Options)
		code int
		want string // in the event's error
	}{
		{"harness missing", func(o *launch.Options) { o.Bin = ""; o.Env = []string{"PATH=" + t.TempDir(), "ANTHROPIC_API_KEY=x"} }, 1, `"codex" not found on PATH`},
		{"proxy missing", func(o *launch.Options) { o.ProxyBin = "" }, 1, "sitter-proxy was not found"},
		{"proxy cannot listen", func(o *launch.Options) {
			o.ProxyBin = failingProxy("listen-fails", "sitter proxy: listen: listen tcp 127.0.0.1:0: bind: address already in use", 1)
		}, 1, "address already in use"},
		{"routes file rejected", func(o *launch.Options) {
			o.Routes = "/r.json"
			o.ProxyBin = failingProxy("routes-bad", "sitter proxy: /r.json:1:2: no rules", 2)
		}, 2, "/r.json:1:2: no rules"},
		{"upstream refused", func(o *launch.Options) {
			o.ProxyBin = failingProxy("upstream-bad", "sitter proxy: --upstream: base URL \"x\": want an http:// or https:// URL", 2)
		}, 2, "--upstream: base URL"},
		{"no prompt", func(o *launch.Options) { o.Prompt = "" }, 2, "needs --prompt"},
		{"workspace missing", func(o *launch.Options) { o.Workspace = "/nonexistent/ws" }, 2, "--workspace /nonexistent/ws: not a directory"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		o := launch.Options{Spec: spec, Provider: prov, Proxy: true, Prompt: "hello", Workspace: t.TempDir(), Bin: harness,
			ProxyBin: script(t, bin, "sitter-proxy", fakeProxy), Upstream: "http://127.0.0.1:2", StateDir: t.TempDir(),
			Env: []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=x"}, Stdout: &out, Stderr: &errOut, JSON: true}
		c.o(&o)
		code, err := launch.Run(context.Background(), o)
		if code != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Run = %d, %v; want %d and an error with %q", c.name, code, err, c.code, c.want)
			continue
		}
		evs := parse(t, out.String())
		if len(evs) == 0 {
			t.Errorf("%s: no event on stdout", c.name)
			continue
		}
		last := evs[len(evs)-1]
		if last["type"] != "error" || last["error"] != err.Error() || last["code"] != float64(code) || last["harness"] != "codex" || last["time"] == nil {
			t.Errorf("%s: last event %v; want type error with the error %q, code %d, harness and time", c.name, last, err.Error(), code)
		}
	}
}

// TestRunMissingKeySameWithProxy: a provider key variable left unset is
// the same error, exit 1 (not a usage error), whether the harness would
// reach the provider directly or through the proxy: the launch checks it
// before it starts the proxy, which would refuse it with exit 2.
func TestRunMissingKeySameWithProxy(t *testing.T) {
	bin := t.TempDir()
	ran := filepath.Join(bin, "ran")
	proxyBin := script(t, bin, "sitter-proxy", "echo 'sitter proxy: provider openai: set OPENAI_API_KEY to the upstream key' >&2\nexit 2\n")
	for _, c := range []struct {
		harness string
		proxy   bool
	}{{"copilot", false}, {"claude-code", true}} {
		spec, _ := launch.Find(genlaunch.Specs, c.harness)
		code, err := launch.Run(context.Background(), launch.Options{
			Spec: spec, Provider: launch.Provider{ID: "openai", Protocol: "openai-chat", BaseURL: "https://o.example/v1", KeyEnv: "OPENAI_API_KEY", DefaultModel: "g"},
			Proxy: c.proxy, Prompt: "hi", Workspace: t.TempDir(), Bin: script(t, bin, "harness", "touch "+ran+"\n"), ProxyBin: proxyBin, StateDir: t.TempDir(),
			Env: []string{"HOME=/nonexistent"}, Stdout: io.Discard,
		})
		if code != 1 || err == nil || launch.IsUsage(err) || err.Error() != "provider openai: set OPENAI_API_KEY to its key" {
			t.Errorf("%s (proxy %v): Run = %d, %v (usage %v); want 1 and \"provider openai: set OPENAI_API_KEY to its key\"", c.harness, c.proxy, code, err, launch.IsUsage(err))
		}
		if _, err := os.Stat(ran); err == nil {
			t.Errorf("%s: the harness ran", c.harness)
		}
	}
}

// TestRunKeepStateSaysWhere: --keep-state without --json says on stderr
// where the overlay was kept (with --json the state_kept event does).
func TestRunKeepStateSaysWhere(t *testing.T) {
	bin := t.TempDir()
	spec, _ := launch.Find(genlaunch.Specs, "gemini-cli")
	state := t.TempDir()
	var out, errOut bytes.Buffer
	code, err := launch.Run(context.Background(), launch.Options{
		Spec: spec, Provider: launch.Provider{ID: "gemini", Protocol: "gemini", BaseURL: "https://g.example", KeyEnv: "GEMINI_API_KEY", DefaultModel: "g"},
		Prompt: "hi", Workspace: t.TempDir(), Bin: script(t, bin, "gemini", "exit 0\n"), StateDir: state, KeepState: true,
		Env: []string{"HOME=/nonexistent", "GEMINI_API_KEY=gk"}, Stdout: &out, Stderr: &errOut,
	})
	if err != nil || code != 0 {
		t.Fatalf("Run: %d %v\nstderr %s", code, err, errOut.String())
	}
	left, _ := os.ReadDir(state)
	if len(left) != 1 {
		t.Fatalf("overlays in the state dir: %v; want the one kept", left)
	}
	dir := filepath.Join(state, left[0].Name())
	if want := "sitter launch: overlay kept in " + dir + "\n"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr %q; want %q", errOut.String(), want)
	}
}
