package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/generated/providers"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/agents"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/sibling"
	"sitter.dev/sitter/runtime/launch"
	"sitter.dev/sitter/runtime/plugin"
	"sitter.dev/sitter/runtime/proxy"
	"sitter.dev/sitter/runtime/transcript"
)

// launchLong is the description of `sitter launch`.
const launchLong = `Runs a harness on a provider in one command. When the harness cannot speak the
provider's wire protocol, sitter-proxy is started on 127.0.0.1 with a fresh token
and the harness is pointed at it; otherwise it talks to the provider directly.
With --routes FILE the proxy is always started, with the routes file: it picks
provider and model per request (docs/routing.md).
Everything the run needs (config files, onboarding and trust state) goes into a
per-launch overlay HOME: your own config is never read or written. sitter's
state dir (session states, the audit log) and the harness's session store (its
transcripts, where its resume arguments look) stay your own, so a launched
session can be resumed later. The overlay and the proxy are removed on every
exit path (--keep-state leaves the overlay and prints where). The exit code is
the harness's, except for a babysit launch; a launch that cannot start exits 2
for what its flags or files ask (a routes file the proxy rejects, as sitter
proxy does) and 1 otherwise.

Babysit (unattended, until the run ends):
  --babysit FILE[#export]  create a run of the process (process id: the file's
                      base name; in $SITTER_RUNS_DIR, else <workspace>/.a5c/runs)
                      and drive it; --inputs F gives its inputs (JSON)
  --run-id ID         drive an existing, unfinished run instead (an id in the runs
                      dir, or a run directory); when the session that drove it
                      last was this harness's, it is resumed (the atlas's resume
                      arguments with its id), else a new session continues
  The harness gets SITTER_BABYSIT_RUN=<run dir> (the babysitter plugin's session
  start binds its session to the run), the babysitter plugin (artifacts/
  babysitter/<harness> from the current directory, or --plugin DIR naming it)
  and a prompt to continue the run (--prompt adds to it). Mode: agent-driven
  where the harness's stop hook is native (its stop hook drives the loop;
  --max-iterations caps its blocks: SITTER_STOP_CAP, and sitter ends the harness
  past it), else bridge-hooks (sitter runs the harness again while the run is
  unfinished, up to --max-iterations).
  --interactive       the run --babysit creates is interactive (by default a
                      launch's run is non-interactive): when the
                      harness stops with only breakpoints pending, the launch
                      says what waits, waits until a human answers (sitter
                      observe, or sitter task post), then resumes the harness's
                      session and goes on; --timeout and Ctrl-C end the wait.
                      A --run-id run keeps its own mode.
  Exit code: 0 the run completed; 1 it failed or halted (or sitter could not
  launch); 2 usage; 3 a cap ended the loop with the run unfinished
  (--max-iterations, the stop hook's or the session's cap); 4 the harness
  ended with the run unfinished otherwise (only breakpoints pending in a
  non-interactive run or a wait a signal ended, the harness failed); 124
  --timeout.

Modes:
  agent-driven        (default) run headless once; the agent drives its own loop
  hook-driven         hand the terminal to the interactive harness; the plugin's
                      stop hook drives the loop
  bridge-hooks        run headless, and emulate the lifecycle through sitter hook:
                      session start before the first run, a stop decision after
                      each exit (while it says continue, resume the session with
                      the reason as the prompt, up to --max-iterations), session end
  bridge-interactive  run the interactive harness in a pseudo-terminal with the
                      prompt, answer the onboarding prompts the atlas declares,
                      and print NDJSON events on stdout (always, as with --json):
                      output (terminal text, control sequences stripped),
                      onboarding, turn_end (from the harness's own stop hook, or
                      output quiet for --idle-timeout where it has none), exit.
                      Once the output settles after a turn (or after
                      --max-iterations turns), sitter ends the harness (SIGTERM
                      to its process group, then SIGKILL) and exits 0; quiet for
                      --idle-timeout before any turn ended: exit 124, and the
                      idle event carries the screen
`

// launchExample are the examples of `sitter launch`.
const launchExample = `  sitter launch claude-code --provider openai --prompt "fix the failing test"
  sitter launch codex --provider anthropic --prompt "add a README"
  sitter launch gemini-cli --provider gemini --prompt "explain main.go"
  sitter launch copilot --provider openai --prompt "list the TODOs"
  sitter launch opencode --provider anthropic --prompt "rename foo to bar"
  sitter launch pi --provider openai --prompt "write the changelog"
  sitter launch codex --plugin babysitter --mode bridge-hooks --max-iterations 5 --prompt "…"
  sitter launch claude-code --mode bridge-interactive --prompt "fix the failing test" | jq -c 'select(.type != "output")'
  sitter launch claude-code --babysit ./process.mjs --inputs inputs.json --timeout 1h
  sitter launch codex --run-id 01JB7ZK3Q8X4M2N5P6R7S8T9V0`

// launchArgs are the parsed arguments of `sitter launch`.
type launchArgs struct {
	harness, provider, model, upstream string
	routes                             string
	plugins                            []string
	prompt, promptFile, mode           string
	maxIterations, maxTurns            int
	idleTimeout, timeout               time.Duration
	workspace, bin                     string
	keepState, json                    bool
	modeSet                            bool
	babysit, runID, inputs             string
	interactive                        bool
	usage                              func() string // the command's usage, printed with a usage error
}

// newLaunchCmd is `sitter launch`.
func newLaunchCmd(e *env) *cobra.Command {
	return launchCmd(e, func(ctx context.Context, a launchArgs) int { return runLaunch(ctx, a, e) })
}

// launchCmd is the launch command running run with the flags read.
func launchCmd(e *env, run func(context.Context, launchArgs) int) *cobra.Command {
	var a launchArgs
	var mode string
	c := &cobra.Command{
		Use:               "launch <harness>",
		Short:             "Run a harness on a provider in one command",
		Long:              launchLong,
		Example:           launchExample,
		Args:              nArgs(1, 1, "<harness> (sitter launch runs "+launchable()+")"),
		ValidArgsFunction: harnessNames(e),
		RunE: func(c *cobra.Command, args []string) error {
			a.harness, a.mode, a.modeSet, a.usage = args[0], mode, c.Flags().Changed("mode"), c.UsageString
			for _, n := range []string{"max-iterations", "max-turns", "idle-timeout", "timeout"} {
				if f := c.Flags().Lookup(n); f.Changed && (f.Value.String() == "0" || f.Value.String() == "0s") {
					return a.usageFailed(e, fmt.Errorf("--%s %s: want a positive number", n, f.Value))
				}
			}
			if err := a.check(); err != nil {
				return a.usageFailed(e, err)
			}
			return code(run(c.Context(), a))
		},
	}
	// A flag that does not parse (unknown, missing its value, a bad
	// number) stops cobra before RunE: the usage error is said as every
	// verb's (exit 2, the usage on stderr), and, when the command line
	// asks for the event stream, as its error event too.
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if events, harness := launchEventsAsked(c.Flags(), e.args); events {
			launch.ErrorEvent(e.stdout, harness, 2, err)
		}
		return err
	})
	fs := c.Flags()
	fs.StringVar(&a.provider, "provider", "", "atlas `PROVIDER` (anthropic, openai, openai-responses, gemini, azure-foundry, vertex); default: the one the harness speaks")
	fs.StringVar(&a.model, "model", "", "the `MODEL` (default: the provider's default)")
	fs.StringVar(&a.upstream, "upstream", "", "provider base `URL` as its SDK takes it (…/v1 for OpenAI)")
	fs.StringVar(&a.routes, "routes", "", "routes `FILE`: sitter proxy picks provider and model per request (docs/routing.md); replaces --provider and --upstream")
	fs.StringArrayVar(&a.plugins, "plugin", nil, "load a plugin bundle (`NAME|DIR`) for this run (repeatable): Claude Code with --plugin-dir, other harnesses through sitter plugin install into the workspace, removed afterwards")
	fs.StringVar(&a.prompt, "prompt", "", "the task, as `TEXT`")
	fs.StringVar(&a.promptFile, "prompt-file", "", "read the task from `FILE`")
	fs.StringVar(&mode, "mode", launch.AgentDriven, "the run's `MODE`: agent-driven, hook-driven, bridge-hooks or bridge-interactive (see Modes)")
	fs.IntVar(&a.maxIterations, "max-iterations", 0, "bridge-hooks: at most `N` harness runs; bridge-interactive: at most N turns (default 10)")
	fs.IntVar(&a.maxTurns, "max-turns", 0, "at most `N` turns, where the harness has a turn limit ("+turnLimited()+"; the others ignore it)")
	fs.DurationVar(&a.idleTimeout, "idle-timeout", 0, "bridge-interactive: end the harness after output quiet for `D` (default 30s)")
	fs.DurationVar(&a.timeout, "timeout", 0, "end the harness after `D` in all, even while it writes output (SIGTERM to its process group, then SIGKILL; exit 124; default: no limit; not in hook-driven mode)")
	fs.StringVar(&a.workspace, "workspace", "", "the folder `DIR` the harness runs in (default: the current directory)")
	fs.StringVar(&a.bin, "bin", "", "the harness binary `PATH` (default: its name on PATH)")
	fs.BoolVar(&a.keepState, "keep-state", false, "keep the overlay for inspection")
	fs.BoolVar(&a.json, "json", false, "NDJSON launch events on stdout (the harness's stdout goes to stderr)")
	fs.StringVar(&a.babysit, "babysit", "", "create a run of the process `FILE[#export]` and drive it until it ends")
	fs.StringVar(&a.runID, "run-id", "", "drive the existing, unfinished run `ID` (an id in the runs dir, or a run directory)")
	fs.StringVar(&a.inputs, "inputs", "", "the inputs of the run --babysit creates, a JSON `FILE`")
	fs.BoolVar(&a.interactive, "interactive", false, "the run --babysit creates is interactive: at a breakpoint the launch waits for a human's answer (sitter observe, sitter task post), then resumes the harness")
	return c
}

// check refuses flags that exclude each other or are out of range.
func (a *launchArgs) check() error {
	var upstreamErr error
	if a.upstream != "" {
		upstreamErr = proxy.CheckBaseURL(a.upstream)
	}
	switch {
	case a.mode != launch.AgentDriven && a.mode != launch.HookDriven && a.mode != launch.BridgeHooks && a.mode != launch.BridgeInteractive:
		return fmt.Errorf("--mode %q: want agent-driven, hook-driven, bridge-hooks or bridge-interactive", a.mode)
	case a.maxIterations < 0:
		return fmt.Errorf("--max-iterations %d: want a positive integer", a.maxIterations)
	case a.maxTurns < 0:
		return fmt.Errorf("--max-turns %d: want a positive integer", a.maxTurns)
	case a.idleTimeout < 0:
		return fmt.Errorf("--idle-timeout %s: want a positive duration (30s, 2m)", a.idleTimeout)
	case a.timeout < 0:
		return fmt.Errorf("--timeout %s: want a positive duration (30s, 2m)", a.timeout)
	case a.routes != "" && (a.provider != "" || a.upstream != ""):
		return fmt.Errorf("--routes names the providers: drop --provider and --upstream")
	case upstreamErr != nil:
		return fmt.Errorf("--upstream: %v", upstreamErr)
	case a.prompt != "" && a.promptFile != "":
		return fmt.Errorf("--prompt and --prompt-file exclude each other")
	case a.babysit != "" && a.runID != "":
		return fmt.Errorf("--babysit and --run-id exclude each other (--babysit creates a run, --run-id resumes one)")
	case a.inputs != "" && a.babysit == "":
		return fmt.Errorf("--inputs goes with --babysit (a resumed run keeps its inputs)")
	case a.interactive && a.babysit == "":
		return fmt.Errorf("--interactive goes with --babysit (a --run-id run keeps its own mode)")
	case (a.babysit != "" || a.runID != "") && a.modeSet && a.mode != launch.AgentDriven && a.mode != launch.BridgeHooks:
		return fmt.Errorf("a babysit launch runs unattended: --mode agent-driven or bridge-hooks, not %s", a.mode)
	}
	return nil
}

// routedUnsetEnv is what a routed launch of the harness leaves out of its
// launch environment (atlas/routing.cue).
func routedUnsetEnv(routes, harness string) []string {
	if routes == "" {
		return nil
	}
	for _, h := range providers.Background {
		if h.Harness == harness {
			return h.RoutedUnsetEnv
		}
	}
	return nil
}

// defaultProvider is the provider named like the protocol the harness
// speaks first (openai for openai-chat).
func defaultProvider(s launch.Spec) string {
	if len(s.Connect) == 0 {
		return ""
	}
	proto := s.Connect[0].Protocol
	for _, p := range providers.All {
		if p.ID == proto || p.ID+"-chat" == proto {
			return p.ID
		}
	}
	return ""
}

// babysitMode is the mode a babysit launch runs a harness in: agent-driven
// when the atlas says its stop event is native and can block (its own stop
// hook keeps a headless run going), else bridge-hooks, and why.
func babysitMode(d *adapter.Descriptor) (mode, why string) {
	var stops []string
	for _, e := range d.Events {
		if e.Phase != "stop" {
			continue
		}
		if e.Support == "native" && slices.Contains(e.Can, "block") {
			return launch.AgentDriven, "its " + e.Name + " event is a native stop hook that can block"
		}
		stops = append(stops, e.Name+" ("+e.Support+")")
	}
	if len(stops) == 0 {
		return launch.BridgeHooks, "it has no stop event"
	}
	return launch.BridgeHooks, "its stop event " + strings.Join(stops, ", ") + " cannot keep a headless run going"
}

// stopBlock is the atlas's render rule of a block on a native stop event.
func stopBlock(d *adapter.Descriptor, event string) *hook.Rule {
	if r := d.EventRules(event); r != nil {
		return r.Block
	}
	return nil
}

// runLaunch is `sitter launch` once its flags are read: what to run
// (harness, provider, proxy), the prompt, the plugin bundles, the babysit
// run, then launch.Run with all of it.
func runLaunch(ctx context.Context, a launchArgs, e *env) int {
	r := e.reg()
	t, err := launchTarget(&a, r)
	if err != nil {
		h := a.harness
		if t.d != nil {
			h = t.d.ID // the atlas's id of a name it resolved (claude: claude-code)
		}
		return launchFailed(e, a, h, err)
	}
	prompt, err := launchPrompt(a)
	if err != nil {
		return launchFailed(e, a, t.spec.Harness, err)
	}
	bs, err := launchBundles(a.plugins, t.d, r)
	if err != nil {
		return launchFailed(e, a, t.spec.Harness, err)
	}
	babysit, err := launchBabysit(&a, t.d, r, bs)
	if err != nil {
		return launchFailed(e, a, t.spec.Harness, err)
	}
	code, err := launch.Run(ctx, launchOptions(a, t, prompt, bs, babysit, e))
	if err != nil {
		a.say(e, err, launch.IsUsage(err))
	}
	return code
}

// launchErr is why a launch could not start, and its exit code (2 for
// what the command line asked, 1 otherwise).
type launchErr struct {
	code int
	err  error
}

func (l *launchErr) Error() string { return l.err.Error() }

func launchUsage(format string, a ...any) error { return &launchErr{2, fmt.Errorf(format, a...)} }

// launchFailed prints why the launch could not start and returns its
// code; with --json (or in bridge-interactive mode, whose stdout is
// always the event stream) the stream says it too, as the error event
// launch.Run ends with.
func launchFailed(e *env, a launchArgs, harness string, err error) int {
	code := 1
	if l, ok := err.(*launchErr); ok {
		code = l.code
	}
	a.say(e, err, code == 2)
	if a.events() {
		launch.ErrorEvent(e.stdout, harness, code, err)
	}
	return code
}

// say prints why the launch could not start as every verb does: one
// "sitter: launch: …" line, then, for a mistake on the command line (exit
// 2), a blank line and the usage.
func (a *launchArgs) say(e *env, err error, usage bool) {
	fmt.Fprintf(e.stderr, "sitter: launch: %v\n", err)
	if usage && a.usage != nil {
		fmt.Fprintf(e.stderr, "\n%s", a.usage())
	}
}

// usageFailed is a usage error of the command line (exit 2, said with the
// usage on stderr), also as the error event with --json.
func (a *launchArgs) usageFailed(e *env, err error) error {
	if a.events() {
		launch.ErrorEvent(e.stdout, a.harness, 2, err)
	}
	return err
}

// launchEventsAsked reads a launch command line whose flags did not
// parse, flag by flag as pflag does (a flag of fs that takes a value takes
// the next argument unless it has "=value"; an unknown one is passed
// over): whether it asks for the event stream (--json, or --mode
// bridge-interactive), and the harness named (the argument after the
// verb), for its error event.
func launchEventsAsked(fs *pflag.FlagSet, args []string) (events bool, harness string) {
	var pos []string
	asJSON, mode := false, ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			pos = append(pos, arg)
			continue
		}
		if !strings.HasPrefix(arg, "--") {
			continue // a shorthand: launch has none that takes a value
		}
		name, val, hasVal := strings.Cut(arg[2:], "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if !hasVal && f.NoOptDefVal == "" {
			if i+1 >= len(args) {
				break
			}
			i++
			val = args[i]
		}
		switch name {
		case "json":
			asJSON = !hasVal
			if b, err := strconv.ParseBool(val); hasVal && err == nil {
				asJSON = b
			}
		case "mode":
			mode = val
		}
	}
	if len(pos) > 1 {
		harness = pos[1] // pos[0] is the verb
	}
	return asJSON || mode == launch.BridgeInteractive, harness
}

// events says the launch's stdout is its NDJSON event stream.
func (a *launchArgs) events() bool { return a.json || a.mode == launch.BridgeInteractive }

// launchTo is what a launch runs: the harness, its launch settings, the
// provider, whether the proxy goes between them, and the routes file
// (absolute) when the proxy routes.
type launchTo struct {
	d      *adapter.Descriptor
	spec   launch.Spec
	p      providers.Provider
	proxy  bool
	routes string
}

// launchable names the harnesses that have launch settings, the ones
// sitter launch runs (sitter atlas list names every harness).
func launchable() string { return launchIDs(func(launch.Spec) bool { return true }) }

// turnLimited names the harnesses whose launch settings pass --max-turns
// on to them.
func turnLimited() string {
	return launchIDs(func(s launch.Spec) bool { return len(s.MaxTurns) > 0 })
}

// launchIDs lists the harnesses of the launch settings that keep takes,
// sorted.
func launchIDs(keep func(launch.Spec) bool) string {
	var ids []string
	for _, s := range genlaunch.Specs {
		if keep(s) {
			ids = append(ids, s.Harness)
		}
	}
	slices.Sort(ids)
	return strings.Join(ids, ", ")
}

// launchTarget resolves the harness and the provider (a.provider gets the
// harness's default) and decides the proxy.
func launchTarget(a *launchArgs, r *adapter.Registry) (launchTo, error) {
	var t launchTo
	d, _, err := r.Resolve(a.harness)
	if err != nil {
		return t, launchUsage("%v", err)
	}
	t.d = d
	spec, ok := launch.Find(genlaunch.Specs, d.ID)
	if !ok {
		return t, launchUsage("%s has no launch settings in the atlas (atlas/launch.cue): sitter launch runs %s", d.ID, launchable())
	}
	t.spec = spec
	if a.provider == "" {
		a.provider = defaultProvider(spec)
	}
	p, ok := providers.Lookup(a.provider)
	if !ok {
		return t, launchUsage("unknown provider %q (known: %s)", a.provider, strings.Join(providers.IDs(), ", "))
	}
	t.p = p
	if t.proxy, err = providers.ProxyRequired(spec.Harness, p.ID); err != nil {
		return t, launchUsage("%v", err)
	}
	if a.routes != "" {
		// The harness speaks its own protocol to the proxy, which the
		// routes file takes on from there.
		if t.routes, err = filepath.Abs(a.routes); err != nil {
			return t, launchUsage("--routes: %v", err)
		}
		if _, err := os.Stat(t.routes); err != nil {
			return t, launchUsage("--routes: %v", err)
		}
		t.proxy = true
	}
	return t, nil
}

// launchPrompt is --prompt, or the contents of --prompt-file.
func launchPrompt(a launchArgs) (string, error) {
	if a.promptFile == "" {
		return a.prompt, nil
	}
	b, err := os.ReadFile(a.promptFile)
	if err != nil {
		return "", launchUsage("%v", err)
	}
	return string(b), nil
}

// bundles are the plugin bundles a launch installs, in --plugin order,
// by absolute directory.
type bundles struct {
	dirs  []string
	byDir map[string]*plugin.Bundle
}

func (bs *bundles) add(b *plugin.Bundle) error {
	dir, err := filepath.Abs(b.Dir)
	if err != nil {
		return err
	}
	bs.dirs = append(bs.dirs, dir)
	bs.byDir[dir] = b
	return nil
}

// launchBundles finds each --plugin bundle for the harness.
func launchBundles(names []string, d *adapter.Descriptor, r *adapter.Registry) (*bundles, error) {
	bs := &bundles{byDir: map[string]*plugin.Bundle{}}
	for _, name := range names {
		b, err := plugin.FindBundle(name, d, r)
		if err != nil {
			return nil, launchUsage("--plugin %s: %v", name, err)
		}
		if err := bs.add(b); err != nil {
			return nil, err
		}
	}
	return bs, nil
}

// launchBabysit is the babysit run of a --babysit or --run-id launch (nil
// otherwise): it settles the mode (a.mode), reads --inputs and adds the
// babysitter bundle when no --plugin named it.
func launchBabysit(a *launchArgs, d *adapter.Descriptor, r *adapter.Registry, bs *bundles) (*launch.Babysit, error) {
	if a.babysit == "" && a.runID == "" {
		return nil, nil
	}
	mode, why := babysitMode(d)
	switch {
	case !a.modeSet:
		a.mode = mode
	case a.mode == launch.AgentDriven && mode == launch.BridgeHooks:
		return nil, launchUsage("--mode agent-driven cannot drive a babysitter run on %s: %s; use --mode bridge-hooks", d.ID, why)
	}
	babysit := &launch.Babysit{Entry: a.babysit, RunID: a.runID, RunsDir: os.Getenv("SITTER_RUNS_DIR"), Interactive: a.interactive}
	if a.inputs != "" {
		b, err := readInput(a.inputs)
		if err != nil {
			return nil, launchUsage("--inputs: %v", err)
		}
		if !json.Valid(b) {
			return nil, launchUsage("--inputs %s is not JSON", a.inputs)
		}
		babysit.Inputs = b
	}
	for _, b := range bs.byDir {
		if b.Marker.Plugin == "babysitter" {
			return babysit, nil
		}
	}
	b, err := plugin.FindBundle("babysitter", d, r)
	if err != nil {
		return nil, launchUsage("a babysit launch needs the babysitter plugin: %v; pass --plugin DIR (artifacts/babysitter/%s of a sitter checkout)", err, d.ID)
	}
	return babysit, bs.add(b)
}

// launchOptions is what launch.Run gets: the flags, the target and what
// the steps before found, with installing a bundle into the overlay.
func launchOptions(a launchArgs, t launchTo, prompt string, bs *bundles, babysit *launch.Babysit, e *env) launch.Options {
	var sessions launch.SessionStore
	if ts, ok := transcript.Lookup(t.d.ID); ok {
		sessions = launch.SessionStore{Location: ts.Location, Store: ts.Store, HomeEnv: ts.HomeEnv, Resume: ts.Resume}
	}
	var params []launch.KV
	for _, pr := range t.p.Params {
		params = append(params, launch.KV{Name: pr.Name, Value: pr.Env})
	}
	o := launch.Options{
		Spec:          t.spec,
		Provider:      launch.Provider{ID: t.p.ID, Protocol: t.p.Protocol, BaseURL: t.p.BaseURL, KeyEnv: t.p.KeyEnv, DefaultModel: t.p.DefaultModel, Params: params},
		Proxy:         t.proxy,
		Mode:          a.mode,
		Model:         a.model,
		Upstream:      a.upstream,
		Routes:        t.routes,
		UnsetEnv:      routedUnsetEnv(t.routes, t.d.ID),
		Prompt:        prompt,
		MaxIterations: a.maxIterations,
		MaxTurns:      a.maxTurns,
		Workspace:     a.workspace,
		Bundles:       bs.dirs,
		KeepState:     a.keepState,
		Bin:           a.bin,
		InstallCmd:    agents.InstallFix(t.d),
		SitterBin:     sibling.Find("sitter"), // the hook binary, next to sitter-host
		Env:           os.Environ(),
		Stdin:         e.stdin,
		Stdout:        e.stdout,
		Stderr:        e.stderr,
		JSON:          a.json,
		IdleTimeout:   a.idleTimeout,
		Timeout:       a.timeout,
		Babysit:       babysit,
		Sessions:      sessions,
		StopBlock:     stopBlock(t.d, t.spec.Bridge.Stop.Event),
		Install: func(bundle, home, workspace string) (func() error, error) {
			b := bs.byDir[bundle]
			opts := plugin.Options{Scope: "project", Dir: workspace, Home: home, DataHome: filepath.Join(home, ".local", "share")}
			if _, err := plugin.Install(b, t.d, opts); err != nil {
				return nil, err
			}
			return func() error {
				_, err := plugin.Uninstall(b.Marker.Plugin, t.d, opts)
				return err
			}, nil
		},
	}
	if t.proxy {
		o.ProxyBin = sibling.Find("sitter-proxy")
	}
	return o
}
