// Package launch runs a harness on a provider: it decides whether the
// transport proxy is needed (starting the sitter-proxy binary, so net/http
// stays out of the sitter binary), prepares a per-launch overlay HOME with
// only what the run needs, loads plugins, spawns the harness in one of the
// activation modes and cleans everything up on every exit path. What to
// write and pass per harness is data (Spec, generated from atlas/launch.cue).
package launch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/run"
)

// Modes of activation, in the order sitter supports them.
const (
	AgentDriven       = "agent-driven"
	HookDriven        = "hook-driven"
	BridgeHooks       = "bridge-hooks"
	BridgeInteractive = "bridge-interactive"
)

// Provider is the part of an atlas provider a launch needs.
type Provider struct {
	ID, Protocol, BaseURL, KeyEnv, DefaultModel string
	Params                                      []KV // placeholder name → env var
}

// Options are one launch.
type Options struct {
	Spec     Spec
	Provider Provider
	// Proxy says the harness cannot speak the provider's protocol
	// (generated providers.ProxyRequired).
	Proxy    bool
	Mode     string
	Model    string // --model ("" = the provider's default)
	Upstream string // --upstream base URL
	// Routes, when set, is a routes file: the proxy is started with it
	// (provider and model per request) and Provider is only the protocol
	// the harness is pointed at.
	Routes string
	// UnsetEnv: launch variables a routed launch leaves out (the atlas's
	// routing.harnesses.<id>.routedLaunch).
	UnsetEnv      []string
	Prompt        string
	MaxIterations int // bridge-hooks: spawns at most (default 10)
	MaxTurns      int
	Workspace     string
	// Bundles are plugin bundle dirs. Harnesses with PluginKind "install"
	// get them through Install (agent-driven and hook-driven modes).
	Bundles   []string
	KeepState bool
	Bin       string // harness binary ("" = Spec.Binary on PATH)
	ProxyBin  string // sitter-proxy binary
	SitterBin string // the sitter binary (bridge-hooks calls `sitter hook`)
	StateDir  string // parent of the overlay ("" = os.TempDir())
	Env       []string
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	// JSON makes Stdout an NDJSON stream of launch events; the harness's
	// own stdout then goes to Stderr.
	JSON bool

	// InstallCmd is the command that installs the harness (doctor's fix),
	// named when Spec.Binary is not on PATH; "" names none.
	InstallCmd string
	// Install registers a bundle in the workspace with the overlay as
	// HOME and returns how to remove it again.
	Install func(bundle, home, workspace string) (undo func() error, err error)
	// Signals, when set, replaces the process's SIGINT/SIGTERM/SIGHUP
	// subscription (tests).
	Signals <-chan os.Signal
	// IdleTimeout (bridge-interactive, default 30s): output quiet this long
	// ends the run (and, for a harness without a turn-end hook, the turn).
	IdleTimeout time.Duration
	// Timeout (0 = none): the whole run's limit (headless, bridge-hooks and
	// bridge-interactive modes; in bridge-interactive, for a harness whose
	// output never goes quiet); reaching it ends the harness's process
	// group and exits 124.
	Timeout time.Duration
	// Settle (bridge-interactive, default 1s): how long output must be
	// quiet before an onboarding answer is typed, and after a turn ended
	// before sitter ends the harness (a stop hook that blocks makes it
	// carry on instead).
	Settle time.Duration
	// Babysit, when set, drives a babysitter run (agent-driven or
	// bridge-hooks mode): see babysit.go. The exit code is then the run's
	// outcome (ExitCompleted, ExitFailed, ExitCap, ExitUnfinished,
	// ExitTimeout).
	Babysit *Babysit
	// Sessions is where the harness keeps its sessions: the overlay links
	// it to the user's own (store.go). Empty: they stay in the overlay.
	Sessions SessionStore
	// StopBlock is the atlas's render rule of a block on the bridge's stop
	// event (hook.Rules.Block): how bridge-hooks mode reads the stop
	// hook's answer. nil: StopDecision's reading.
	StopBlock *hook.Rule
}

// killGrace is how long a harness sitter ended (or forwarded a signal to)
// has before its process group gets SIGKILL.
var killGrace = 5 * time.Second

// launcher is one running launch.
type launcher struct {
	o       Options
	dir     string // the overlay root
	home    string
	vals    Values
	conn    Connect
	env     []string
	events  *json.Encoder
	undo    []func() error
	proxy   *exec.Cmd
	sigs    <-chan os.Signal
	harness io.Writer
	// deadline is when Options.Timeout ends a headless run; timedOut
	// says it did.
	deadline time.Time
	timedOut bool
	// Babysit launches: the run, how many journal events it had when
	// the launch began, the harness session to resume, and whether a cap
	// ended the loop.
	run            *run.State
	journalStart   int
	harnessSession string
	capped         bool
	maxExplicit    bool   // --max-iterations was given
	sitterCmd      string // how the prompt names sitter
	// watch, when set, is asked every watchEvery while a headless harness
	// runs whether sitter must end it, and why.
	watch func() string
}

// watchEvery is how often a launch's watch is asked.
var watchEvery = 500 * time.Millisecond

// Run performs the launch and returns the harness's exit code. Errors are
// sitter's own (no harness ran, or cleanup failed); they come with code 1.
// Cancelling ctx ends the harness as SIGTERM to sitter does (its process
// group gets SIGTERM, then SIGKILL), and the overlay and proxy are
// cleaned up as on every exit path; a ctx already done launches nothing.
//
// With JSON, an error ends the event stream as an error event (ErrorEvent)
// with the error and the exit code, after the cleanup's events.
func Run(ctx context.Context, o Options) (code int, err error) {
	maxExplicit := o.MaxIterations > 0
	if o.Mode == "" {
		o.Mode = AgentDriven
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = 10
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = time.Second
	}
	if o.Mode == BridgeInteractive {
		// The harness's terminal is sitter's: stdout is the event stream.
		o.JSON = true
	}
	l := &launcher{o: o, harness: o.Stdout, maxExplicit: maxExplicit}
	if o.JSON {
		l.events = json.NewEncoder(o.Stdout)
		l.events.SetEscapeHTML(false)
		l.harness = o.Stderr
	}
	// Registered first, so it runs last: after the cleanup, whose error
	// it says too.
	defer func() {
		if err != nil {
			l.emit("error", "error", err.Error(), "code", code)
		}
	}()
	if err := ctx.Err(); err != nil {
		return 1, err
	}
	switch o.Mode {
	case AgentDriven, HookDriven, BridgeHooks:
	case BridgeInteractive:
		if err := ptySupported(); err != nil {
			return 2, usageError{err}
		}
		if err := checkPrompts(o.Spec.Onboarding); err != nil {
			return 2, usageError{err}
		}
	default:
		return 2, usageError{fmt.Errorf("unknown mode %q (agent-driven, hook-driven, bridge-hooks, bridge-interactive)", o.Mode)}
	}
	if o.Babysit != nil {
		if o.Mode != AgentDriven && o.Mode != BridgeHooks {
			return 2, usageError{fmt.Errorf("a babysit launch runs unattended: mode agent-driven or bridge-hooks, not %s", o.Mode)}
		}
		if err := o.Babysit.Validate(workspaceOf(o)); err != nil {
			return 2, usageError{err}
		}
	} else if o.Mode != HookDriven && o.Prompt == "" {
		return 2, usageError{fmt.Errorf("mode %s needs --prompt or --prompt-file", o.Mode)}
	}
	defer func() {
		if cerr := l.cleanup(); cerr != nil && err == nil {
			err = cerr
			if code == 0 {
				code = 1
			}
		}
	}()
	if err := l.prepare(); err != nil {
		if _, ok := err.(usageError); ok {
			return 2, err
		}
		return 1, err
	}
	if o.Babysit != nil {
		if err := l.openRun(); err != nil {
			return 1, err
		}
	}
	if o.Timeout > 0 {
		l.deadline = time.Now().Add(o.Timeout)
	}
	if o.Signals != nil {
		l.sigs = o.Signals
	} else {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		defer signal.Stop(ch)
		l.sigs = ch
	}
	if ctx.Done() != nil {
		stop := make(chan struct{})
		defer close(stop)
		l.sigs = withCancel(ctx, l.sigs, stop)
	}
	switch {
	case o.Mode == BridgeHooks:
		code, err = l.bridge()
	case o.Mode == BridgeInteractive:
		return l.interactive()
	case o.Mode == HookDriven:
		return l.spawn(Interactive, 1)
	case o.Babysit != nil:
		code, err = l.babysitAgentDriven()
	default:
		code, err = l.spawn(Headless, 1)
	}
	if l.timedOut {
		code = ExitTimeout
	}
	if err != nil || o.Babysit == nil {
		return code, err
	}
	return l.babysitEnd(code)
}

// withCancel forwards the signals of src, and a SIGTERM once ctx is done,
// until stop closes.
func withCancel(ctx context.Context, src <-chan os.Signal, stop <-chan struct{}) <-chan os.Signal {
	out := make(chan os.Signal, 4)
	go func() {
		done := ctx.Done()
		for {
			var s os.Signal
			select {
			case s = <-src:
			case <-done:
				done, s = nil, syscall.SIGTERM
			case <-stop:
				return
			}
			select {
			case out <- s:
			case <-stop:
				return
			}
		}
	}()
	return out
}

func (l *launcher) emit(event string, kv ...any) {
	if l.events == nil {
		return
	}
	l.events.Encode(eventOf(event, l.o.Spec.Harness, kv...))
}

// eventOf is a launch event: its type, the harness, the time and kv.
func eventOf(event, harness string, kv ...any) map[string]any {
	m := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "type": event, "harness": harness}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// ErrorEvent writes the error event that ends a --json launch that could
// not start or failed (exit code code): for the failures found before Run,
// in the shape Run writes its own.
func ErrorEvent(w io.Writer, harness string, code int, err error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(eventOf("error", harness, "error", err.Error(), "code", code))
}

func getenv(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if n, v, ok := strings.Cut(env[i], "="); ok && n == k {
			return v
		}
	}
	return ""
}

// prepare makes the overlay, starts the proxy if needed, writes the
// files and loads the plugins.
func (l *launcher) prepare() error {
	o := l.o
	if o.Bin == "" {
		p, err := lookPath(o.Spec.Binary, getenv(o.Env, "PATH"))
		if err != nil {
			install := "install it"
			if o.InstallCmd != "" {
				install += " (" + o.InstallCmd + ")"
			}
			return fmt.Errorf("%s: %q not found on PATH; %s or pass --bin PATH (the npm package's binary is %s)", o.Spec.Harness, o.Spec.Binary, install, o.Spec.NpmBin)
		}
		l.o.Bin = p
	} else if strings.Contains(o.Bin, "/") && !filepath.IsAbs(o.Bin) {
		// --bin ./claude names a file from where sitter was started; the
		// harness starts in the workspace, where exec would look for it.
		abs, err := filepath.Abs(o.Bin)
		if err != nil {
			return err
		}
		l.o.Bin = abs
	}
	ws := workspaceOf(o)
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		// Only --workspace can name one (the default is the current
		// directory): a bad flag, exit 2.
		return usageError{fmt.Errorf("--workspace %s: not a directory", ws)}
	}
	dir, err := os.MkdirTemp(o.StateDir, "sitter-launch-")
	if err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	l.dir, l.home = dir, filepath.Join(dir, "home")
	if err := os.MkdirAll(l.home, 0o700); err != nil {
		return err
	}
	l.emit("overlay", "dir", dir, "home", l.home, "workspace", ws)
	model := o.Model
	if model == "" {
		model = o.Provider.DefaultModel
	}
	l.vals = Values{Prompt: o.Prompt, Model: model, Home: l.home, Workspace: ws, MaxTurns: o.MaxTurns, ExplicitModel: o.Model != "",
		Session: fmt.Sprintf("sitter-launch-%d-%d", os.Getpid(), time.Now().UnixNano())}
	l.conn, err = ChooseConnect(o.Spec, o.Provider.Protocol, o.Proxy)
	if err != nil {
		return err
	}
	// The provider's URL and key are checked here whether the harness
	// reaches the provider directly or through the proxy (which would
	// refuse them with exit 2): a variable left unset is one error, exit 1.
	var base, key string
	if o.Routes == "" {
		if base, key, err = upstreamOf(o); err != nil {
			return err
		}
	}
	if o.Proxy {
		url, token, err := l.startProxy(model)
		if err != nil {
			return err
		}
		l.vals.BaseURL, l.vals.Key = url+l.conn.ProxyPath, token
	} else {
		l.vals.BaseURL, l.vals.Key = base, key
		l.emit("pass_through", "provider", o.Provider.ID, "protocol", o.Provider.Protocol, "baseURL", base)
	}
	if o.Spec.PluginKind == "flag" {
		l.vals.Bundles = o.Bundles
	}
	if o.Mode == BridgeInteractive && len(o.Spec.TurnEnd.Files) > 0 {
		l.vals.TurnEndCommand = turnEndCommand
	}
	plan, err := Prepare(o.Spec, l.conn, l.vals, Headless)
	if err != nil {
		return err
	}
	if len(o.UnsetEnv) > 0 {
		plan.Env = slices.DeleteFunc(plan.Env, func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			return slices.Contains(o.UnsetEnv, k)
		})
	}
	state := UserStateDir(o.Env)
	if state == "" {
		state = filepath.Join(dir, "state")
	}
	// The variable that moves the harness's home (CLAUDE_CONFIG_DIR, say)
	// would take it out of the overlay: only the plan sets it.
	l.env = overlayEnv(o.Env, l.home, state, ws, o.SitterBin, plan.Env, BabysitEnv, o.Sessions.HomeEnv)
	link, target, err := linkSessions(o.Sessions, o.Env, l.env, dir)
	switch {
	case err != nil && o.Sessions.Location != "":
		fmt.Fprintf(o.Stderr, "sitter launch: %s sessions stay in the overlay: %v\n", o.Spec.Harness, err)
		l.emit("sessions_in_overlay", "reason", err.Error())
	case link != "":
		l.emit("sessions_linked", "dir", link, "to", target)
	}
	for _, f := range plan.Files {
		if link != "" && within(f.Path, link) {
			return fmt.Errorf("%s: %s would be written into the user's session store", o.Spec.Harness, f.Path)
		}
		if err := l.writeFile(f); err != nil {
			return err
		}
	}
	if o.Spec.PluginKind == "install" && o.Mode != BridgeHooks {
		for _, b := range o.Bundles {
			if o.Install == nil {
				return fmt.Errorf("%s: cannot install plugin %s", o.Spec.Harness, b)
			}
			undo, err := o.Install(b, l.home, ws)
			if err != nil {
				return fmt.Errorf("install plugin %s: %v", b, err)
			}
			l.undo = append(l.undo, undo)
			l.emit("plugin_installed", "bundle", b, "workspace", ws)
		}
	}
	return nil
}

// writeFile writes an overlay file; a workspace file must not exist yet
// and is removed at cleanup.
func (l *launcher) writeFile(f PlannedFile) error {
	if !within(f.Path, l.dir) {
		if _, err := os.Lstat(f.Path); err == nil {
			return fmt.Errorf("%s exists: sitter launch does not overwrite workspace files", f.Path)
		}
		path := f.Path
		l.undo = append(l.undo, func() error { return os.Remove(path) })
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(f.Path, []byte(f.Content), 0o600)
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// workspaceOf is the launch's workspace, absolute with symlinks resolved.
func workspaceOf(o Options) string {
	ws := o.Workspace
	if ws == "" {
		ws = "."
	}
	if a, err := filepath.Abs(ws); err == nil {
		ws = a
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	return ws
}

// overlayEnv is the user's environment with HOME and the XDG dirs
// pointed into the overlay, sitter's state dir named as the user's own
// environment gives it (the overlay's HOME and XDG_STATE_HOME would move
// it), PWD naming the workspace the harness runs in (exec keeps the
// user's PWD when Env is given, and `opencode run` works in $PWD rather
// than its working directory), and the plan's variables. The user's
// variables named in drop are left out (the plan's are kept).
func overlayEnv(user []string, home, stateDir, workspace, sitterBin string, plan []string, drop ...string) []string {
	set := map[string]string{
		"HOME":             home,
		"PWD":              workspace,
		"XDG_CONFIG_HOME":  filepath.Join(home, ".config"),
		"XDG_DATA_HOME":    filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":   filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":   filepath.Join(home, ".cache"),
		"SITTER_STATE_DIR": stateDir,
	}
	if sitterBin != "" && getenv(user, "SITTER_BIN") == "" {
		set["SITTER_BIN"] = sitterBin
	}
	for _, kv := range plan {
		k, v, _ := strings.Cut(kv, "=")
		set[k] = v
	}
	var env []string
	for _, kv := range user {
		k, _, _ := strings.Cut(kv, "=")
		if k != "" && slices.Contains(drop, k) {
			continue // BabysitEnv: only a babysit launch binds its harness to a run
		}
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range sortedKeys(set) {
		env = append(env, k+"="+set[k])
	}
	return env
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// upstreamOf is the provider's base URL (--upstream, else the atlas's
// with its placeholders filled from the environment) and its key, or an
// error naming the variable to set. With --upstream the key may be unset
// (a local server): the harness then gets a placeholder.
func upstreamOf(o Options) (base, key string, err error) {
	base = o.Upstream
	if base == "" {
		base = o.Provider.BaseURL
		for _, p := range o.Provider.Params {
			v := getenv(o.Env, p.Value)
			if v == "" {
				return "", "", fmt.Errorf("provider %s: set %s (fills {%s} in %s), or pass --upstream", o.Provider.ID, p.Value, p.Name, o.Provider.BaseURL)
			}
			base = strings.ReplaceAll(base, "{"+p.Name+"}", v)
		}
	}
	key = getenv(o.Env, o.Provider.KeyEnv)
	if key == "" {
		if o.Upstream == "" {
			return "", "", fmt.Errorf("provider %s: set %s to its key", o.Provider.ID, o.Provider.KeyEnv)
		}
		key = "sitter-launch-no-key"
	}
	return base, key, nil
}

// usageError is a setting of the launch that it refuses before the
// harness starts, or that the proxy rejected: the launch exits 2 for it,
// as `sitter proxy` does.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// IsUsage reports whether err, an error of Run, is a setting of the launch
// refused (exit 2: a mistake on the command line or in a file it names),
// rather than a failure or a harness's own exit code 2 with a cleanup error.
func IsUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// startProxy runs sitter-proxy on loopback with a fresh token and reads
// its SITTER_PROXY_URL line.
func (l *launcher) startProxy(model string) (url, token string, err error) {
	o := l.o
	if o.ProxyBin == "" {
		return "", "", errors.New("the proxy is needed but sitter-proxy was not found next to sitter or on PATH: build it with `make build`")
	}
	tokenFile := filepath.Join(l.dir, "proxy-token")
	args := []string{"--provider", o.Provider.ID, "--listen", "127.0.0.1:0", "--token-file", tokenFile, "--model", model}
	if o.Upstream != "" {
		args = append(args, "--upstream", o.Upstream)
	}
	if o.Routes != "" {
		// The rules pick provider and model; the harness is named for its
		// background signals and custom harness rules.
		args = []string{"--routes", o.Routes, "--harness", o.Spec.Harness, "--listen", "127.0.0.1:0", "--token-file", tokenFile}
	}
	logPath := filepath.Join(l.dir, "proxy.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return "", "", err
	}
	defer logf.Close()
	cmd := exec.Command(o.ProxyBin, args...)
	// The gateway stops itself once this launch is gone, however it went
	// (SIGKILL included): it never serves, key loaded, with no owner.
	cmd.Env = append(slices.Clip(o.Env), "SITTER_PROXY_PARENT="+strconv.Itoa(os.Getpid()))
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", "", err
	}
	if err := cmd.Start(); err != nil {
		return "", "", fmt.Errorf("start sitter-proxy: %v", err)
	}
	l.proxy = cmd
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "SITTER_PROXY_URL="); ok {
			url = v
			break
		}
	}
	go io.Copy(io.Discard, out)
	if url == "" {
		werr := cmd.Wait()
		l.proxy = nil
		b, _ := os.ReadFile(logPath)
		err := fmt.Errorf("sitter-proxy did not start: %s", strings.TrimSpace(string(b)))
		if exit, ok := werr.(*exec.ExitError); ok && exit.ExitCode() == 2 {
			// The proxy rejected a setting (a routes file, a provider):
			// what `sitter proxy` says with exit 2 for the same file.
			return "", "", usageError{err}
		}
		return "", "", err
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", "", fmt.Errorf("sitter-proxy token: %v", err)
	}
	if o.Routes != "" {
		l.emit("proxy_started", "url", url, "routes", o.Routes, "speaks", l.conn.Protocol, "pid", cmd.Process.Pid)
	} else {
		l.emit("proxy_started", "url", url, "provider", o.Provider.ID, "protocol", o.Provider.Protocol, "speaks", l.conn.Protocol, "pid", cmd.Process.Pid)
	}
	return url, strings.TrimSpace(string(b)), nil
}

// spawn runs the harness once and returns its exit code. A headless
// run past the launch's deadline is ended (SIGTERM to its process group,
// SIGKILL killGrace later) and gives ExitTimeout.
func (l *launcher) spawn(which Args, iteration int) (int, error) {
	v := l.vals
	if which == ResumeID {
		v.Session = l.harnessSession
	}
	plan, err := Prepare(l.o.Spec, l.conn, v, which)
	if err != nil {
		return 1, err
	}
	cmd := exec.Command(l.o.Bin, plan.Args...)
	cmd.Dir = l.vals.Workspace
	cmd.Env = l.env
	cmd.Stdout, cmd.Stderr = l.harness, l.o.Stderr
	// A daemon the harness leaves behind holding its stdout must not keep
	// the launch waiting once the harness itself has exited.
	cmd.WaitDelay = 2 * time.Second
	interactive := which == Interactive
	if interactive {
		cmd.Stdin = l.o.Stdin
	} else {
		// Headless: no terminal (Claude and Codex wait on an open stdin),
		// and a process group of its own that signals are forwarded to.
		setGroup(cmd)
	}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("start %s: %v", l.o.Bin, err)
	}
	l.emit("spawn", "iteration", iteration, "pid", cmd.Process.Pid, "argv", append([]string{l.o.Bin}, plan.Args...))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout, kill, watch <-chan time.Time
	if !l.deadline.IsZero() && !interactive {
		t := time.NewTimer(time.Until(l.deadline))
		defer t.Stop()
		timeout = t.C
	}
	if l.watch != nil && !interactive {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		watch = t.C
	}
	end := func() {
		signalGroup(cmd, syscall.SIGTERM, true)
		kt := time.NewTimer(killGrace)
		kill = kt.C
	}
	var werr error
wait:
	for {
		select {
		case werr = <-done:
			break wait
		case s := <-l.sigs:
			l.emit("signal", "signal", s.String())
			signalGroup(cmd, s, !interactive)
		case <-timeout:
			l.timedOut = true
			l.emit("timeout", "after", l.o.Timeout.String(), "iteration", iteration)
			end()
		case <-watch:
			if why := l.watch(); why != "" {
				watch = nil
				l.emit("terminate", "reason", why, "iteration", iteration)
				end()
			}
		case <-kill:
			l.emit("kill", "signal", "SIGKILL")
			signalGroup(cmd, syscall.SIGKILL, true)
		}
	}
	code, err := waitCode(werr)
	if err != nil {
		return 1, err
	}
	l.emit("exit", "iteration", iteration, "code", code)
	if l.timedOut {
		return ExitTimeout, nil
	}
	return code, nil
}

// bridge emulates the harness's lifecycle around headless runs: session
// start before the first spawn, a stop decision after each exit (respawn
// with the resume arguments and the reason while it says continue), then
// session end.
func (l *launcher) bridge() (int, error) {
	b := l.o.Spec.Bridge
	out, _, err := l.hook(b.SessionStart, false)
	if err != nil {
		return 1, err
	}
	if ctx := AdditionalContext(out); ctx != "" {
		l.vals.Prompt = ctx + "\n\n" + l.vals.Prompt
	}
	code := 0
	for it := 1; ; it++ {
		which := Headless
		switch {
		case it == 1 && l.harnessSession != "":
			which = ResumeID
		case it > 1:
			which = Resume
		}
		l.emit("iteration", "iteration", it, "max", l.o.MaxIterations)
		code, err = l.spawn(which, it)
		if err != nil {
			return code, err
		}
		if l.timedOut {
			break
		}
		if which == ResumeID && code != 0 && l.resumeFailed(code) {
			// The session could not be resumed: a new one continues the run.
			it--
			continue
		}
		_, stop, err := l.hook(b.Stop, it > 1)
		if err != nil {
			return 1, err
		}
		cont, reason := stop.block, stop.reason
		l.emit("stop_decision", "iteration", it, "continue", cont, "reason", reason)
		if l.o.Babysit != nil {
			cont, reason = l.babysitContinue(cont, reason)
		}
		if !cont || code != 0 {
			break
		}
		if it >= l.o.MaxIterations {
			l.emit("max_iterations", "iteration", it)
			l.capped = true
			break
		}
		l.vals.Prompt = reason
	}
	if _, _, err := l.hook(b.SessionEnd, false); err != nil {
		return 1, err
	}
	return code, nil
}

// stopAnswer is what the bundles' answers to a stop event ask: to block,
// with their reasons joined.
type stopAnswer struct {
	block  bool
	reason string
}

// hook calls `sitter hook <harness> <event> --plugin B` for each bundle
// with the native payload, in the overlay's environment, and returns the
// first bundle's stdout and, read with the atlas's block rule of the
// stop event, whether any bundle blocks and the blocking ones' reasons.
func (l *launcher) hook(h Hook, stopHookActive bool) (stdout []byte, stop stopAnswer, err error) {
	payload, err := Payload(h.Payload, l.vals, stopHookActive)
	if err != nil {
		return nil, stop, fmt.Errorf("bridge payload for %s: %v", h.Event, err)
	}
	if l.o.SitterBin == "" {
		return nil, stop, errors.New("bridge-hooks needs the sitter binary")
	}
	var reasons []string
	for i, bundle := range l.o.Bundles {
		cmd := exec.Command(l.o.SitterBin, "hook", l.o.Spec.Harness, h.Event, "--plugin", bundle)
		cmd.Dir = l.vals.Workspace
		cmd.Env = l.env
		cmd.Stdin = bytes.NewReader(payload)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		rerr := cmd.Run()
		c := 0
		if rerr != nil {
			var ee *exec.ExitError
			if !errors.As(rerr, &ee) {
				return nil, stop, fmt.Errorf("sitter hook: %v", rerr)
			}
			c = ee.ExitCode()
		}
		if se.Len() > 0 {
			l.o.Stderr.Write(se.Bytes())
		}
		l.emit("hook", "native", h.Event, "bundle", bundle, "code", c, "stdout", strings.TrimSpace(so.String()))
		if i == 0 {
			stdout = so.Bytes()
		}
		if ok, r := StopDecisionBy(l.o.StopBlock, so.Bytes(), se.Bytes(), c); ok {
			stop.block = true
			if r != "" {
				reasons = append(reasons, r)
			}
		}
	}
	stop.reason = strings.Join(reasons, "\n")
	return stdout, stop, nil
}

// cleanup stops the proxy, undoes plugin installs and workspace files,
// and removes the overlay unless --keep-state.
func (l *launcher) cleanup() error {
	var errs []error
	if l.proxy != nil {
		l.proxy.Process.Signal(syscall.SIGTERM)
		l.proxy.Wait()
		l.emit("proxy_stopped")
	}
	for i := len(l.undo) - 1; i >= 0; i-- {
		if err := l.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	if l.dir != "" {
		if l.o.KeepState {
			l.emit("state_kept", "dir", l.dir)
			if l.events == nil && l.o.Stderr != nil {
				fmt.Fprintf(l.o.Stderr, "sitter launch: overlay kept in %s\n", l.dir)
			}
		} else if err := os.RemoveAll(l.dir); err != nil {
			errs = append(errs, err)
		} else {
			l.emit("overlay_removed", "dir", l.dir)
		}
	}
	return errors.Join(errs...)
}

// lookPath finds name on a PATH value.
func lookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// waitCode is the exit code a cmd.Wait error stands for; an error that is
// no exit status (the harness could not be waited for) is returned.
func waitCode(werr error) (int, error) {
	if werr == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return 0, werr
	}
	return exitCode(ee), nil
}

// exitCode is the harness's exit code, 128+N when a signal ended it.
func exitCode(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
