package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"time"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/hookcli"
)

// maxPayload caps what is read from stdin.
const maxPayload = 64 << 20

// pluginHandlersFile is the handler table of a plugin bundle.
const pluginHandlersFile = "sitter-handlers.json"

// pluginMarkerFile marks a bundle and names its plugin (runtime/plugin's
// MarkerFile, which the hook binary does not link).
const pluginMarkerFile = ".sitter-bundle.json"

// hookArgs are the parsed arguments of `sitter hook`.
type hookArgs struct {
	harness, event string
	handlers       []string
	timeout        time.Duration
	onError        hook.Policy
	stopCap        string // "" = not given
	plugin         string
	redact         bool // --handler handlers get the event with secrets masked
	help           bool // -h or --help: print the usage, answer nothing
	badFlag        bool // an unknown flag: a mistake in the registration, exit 1
}

// parseHookArgs reads flags before or after the positional arguments. It
// parses everything it can even after an error, so that --on-error closed
// still applies to the answer about a bad flag.
func parseHookArgs(args []string) (hookArgs, error) {
	a := hookArgs{onError: hook.FailOpen}
	var pos []string
	var errs []error
	flagsDone := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if flagsDone || arg == "-" || !strings.HasPrefix(arg, "-") {
			pos = append(pos, arg)
			continue
		}
		if arg == "--" {
			flagsDone = true
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if name == "redact" && !hasVal {
			a.redact = true
			continue
		}
		if (arg == "-h" || arg == "--help") && !hasVal {
			a.help = true
			continue
		}
		switch name {
		case "handler", "plugin", "timeout", "on-error", "stop-cap":
		default:
			a.badFlag = true
			errs = append(errs, fmt.Errorf("unknown flag %s", arg))
			continue
		}
		if !hasVal {
			if i+1 == len(args) {
				errs = append(errs, fmt.Errorf("flag --%s needs a value", name))
				continue
			}
			i++
			val = args[i]
		}
		switch name {
		case "handler":
			a.handlers = append(a.handlers, val)
		case "plugin":
			a.plugin = val
		case "timeout":
			d, err := hook.ParseTimeout(val)
			if err != nil {
				errs = append(errs, fmt.Errorf("--timeout %v", err))
				continue
			}
			a.timeout = d
		case "on-error":
			p, err := hook.ParsePolicy(val)
			if err != nil {
				errs = append(errs, fmt.Errorf("--on-error: %w", err))
				continue
			}
			a.onError = p
		case "stop-cap":
			if _, err := hook.StopCap(val); err != nil {
				errs = append(errs, fmt.Errorf("--stop-cap: %w", err))
				continue
			}
			a.stopCap = val
		}
	}
	switch len(pos) {
	case 0:
		errs = append(errs, errors.New("missing <harness> (usage: sitter hook <harness> <native-event> [flags])"))
	case 1:
		a.harness = pos[0]
	case 2:
		a.harness, a.event = pos[0], pos[1]
	default:
		a.harness, a.event = pos[0], pos[1]
		errs = append(errs, fmt.Errorf("unexpected arguments %q", pos[2:]))
	}
	if a.event == "-" {
		a.event = ""
	}
	if len(errs) > 0 {
		return a, errs[0]
	}
	return a, nil
}

// hookCall is one run of `sitter hook`: everything it writes goes through
// answer or fail, once, at the end.
type hookCall struct {
	stdout, stderr io.Writer
	start          time.Time
	harness, event string // as given, for the audit of a call that did not resolve
	onError        hook.Policy
	desc           *adapter.Descriptor // set once harness and event resolved
	ev             hook.Event          // phase etc., set with desc
	refused        bool                // fail answered a fail-closed deny
	stopCap        int                 // the stop guard's cap let this stop through
}

// runHook answers one hook call. Whatever happens, the harness gets an
// answer it accepts: the no-op, a fail-closed deny, or the merged result.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer, reg func() *adapter.Registry) (code int) {
	c := &hookCall{stdout: stdout, stderr: stderr, start: time.Now(), onError: hook.FailOpen}
	defer func() {
		if p := recover(); p != nil {
			code = c.fail(fmt.Sprintf("internal error: %v", p))
		}
	}()

	a, argErr := parseHookArgs(args)
	if a.help {
		fmt.Fprint(stdout, hookcli.HookUsage())
		return 0
	}
	c.onError, c.harness, c.event = a.onError, a.harness, a.event
	payload, readErr := readPayload(stdin)
	if readErr == nil {
		// A pretty-printed payload is compacted in place, so that the
		// event's raw values share its bytes instead of compacted copies.
		payload = hook.CompactPayload(payload)
	}
	// Resolve even after an argument error: with the event known, a
	// fail-closed answer can still be rendered.
	var d *adapter.Descriptor
	var spec *adapter.EventSpec
	var resErr error
	if a.harness != "" {
		d, spec, resErr = resolveEvent(reg(), a.harness, a.event, payload, readErr)
		if spec == nil && d != nil && a.onError == hook.FailClosed && readErr == nil {
			spec = refusableEvent(d, payload)
		}
	}
	if spec != nil {
		c.desc = d
		c.ev = hook.Event{Version: hook.Version, Harness: d.ID, NativeEvent: spec.Name, Phase: spec.Phase, Support: spec.Support}
	}
	switch {
	case argErr != nil && a.badFlag:
		// An unknown flag is a mistake in the registration: it must show,
		// but a hook never breaks its harness, and exit 2 is "block" to
		// Claude Code, Codex and Gemini CLI. So: the answer the policy
		// says, the usage line, and exit 1, a non-blocking hook error in
		// every harness; a fail-closed deny keeps its own exit code (a
		// harness ignores the stdout of a hook that exits 1).
		code := c.fail("hook: " + argErr.Error())
		fmt.Fprintf(stderr, "usage: %s (sitter hook --help)\n", hookcli.HookSynopsis)
		if c.refused {
			return code
		}
		return 1
	case argErr != nil:
		return c.fail("hook: " + argErr.Error())
	case resErr != nil:
		return c.fail(resErr.Error())
	case readErr != nil:
		return c.fail(readErr.Error())
	}
	if d.Normalize == nil {
		return c.fail(d.ID + " has no normalizer: regenerate the registry (make generate)")
	}
	ev, err := d.Normalize(payload, spec.Name)
	if err != nil {
		return c.fail(fmt.Sprintf("%s %s: %v", d.ID, spec.Name, err))
	}
	fillEvent(&ev, c.ev, payload)
	c.ev = ev

	handlers, watch, err := collectHandlers(a, ev.Phase)
	if err != nil {
		return c.fail(err.Error())
	}
	res := hook.Result{Decision: hook.Noop}
	var diags []string
	var audited []audit.Handler
	rules := d.EventRules(ev.NativeEvent)
	if len(handlers) > 0 {
		// A catchable signal kills the handlers' process groups before
		// sitter goes; against SIGKILL, see hook.setGroup.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		res, diags, audited = runHandlers(ctx, ev, rules, handlers, a.plugin)
		stop()
	}
	if hook.IsStopPhase(ev.Phase) {
		res, diags, c.stopCap = guardStop(ev, res, a.stopCap, diags)
	}
	if rules != nil && rules.Watch != nil {
		// Where the harness watches files only when told to (Claude
		// Code's SessionStart), the files the plugin's fileChanged
		// handlers watch are announced on every such event.
		res.WatchPaths = hook.AddPaths(res.WatchPaths, watch...)
	}
	res.WatchPaths, diags = absWatch(res.WatchPaths, ev.Session, diags)
	out := hook.Render(ev, res, rules)
	if r := spec.Replaces; r != nil {
		// No bundle registers this event (atlas replaces): someone did by
		// hand, and the harness is about to read sitter's answer as a
		// result it cannot be. Say so where the harness shows hook errors.
		diags = append(diags, fmt.Sprintf("sitter: %s %s: a hook here replaces %s and must give back %s, which sitter's answer cannot say; register sitter here only inside a command that gives that back itself (sitter atlas show %s)", d.ID, spec.Name, r.What, r.Output, d.ID))
	}
	diags = c.audit(res, audited, "", out.Halted, diags)
	return c.answer(out, diags)
}

// resolveEvent finds the descriptor and the event spec of a call. An empty
// event name falls back to the one the payload carries.
func resolveEvent(reg *adapter.Registry, harness, event string, payload []byte, readErr error) (*adapter.Descriptor, *adapter.EventSpec, error) {
	d, _, err := reg.Resolve(harness)
	if err != nil {
		return nil, nil, err
	}
	if event == "" {
		if readErr != nil {
			return d, nil, readErr
		}
		// The generated normalizer knows where this harness's payload
		// names its event (the atlas's eventName paths).
		ev, err := d.Normalize(payload, "")
		if event = ev.NativeEvent; event == "" {
			if err != nil && !errors.Is(err, hook.ErrUnknownEvent) {
				return d, nil, err
			}
			return d, nil, fmt.Errorf("no native event given and none in the %s payload", d.ID)
		}
	}
	spec, ok := d.Event(event)
	if !ok {
		return d, nil, fmt.Errorf("unknown event %q for %s; see 'sitter atlas show %s'", event, d.ID, d.ID)
	}
	return d, spec, nil
}

// refusableEvent is, for a call whose event sitter does not know, the
// event whose answer a fail-closed refusal can still be written in: the
// one the payload names, when the descriptor knows it and it is a
// pre-tool event. The harness wrote the payload for the event it asks
// about, so its answer format is the one the harness reads; the pre-tool
// deny is the refusal that matters (it stops the action). A stop phase's
// block would skip the stop guard's cap and could trap the session, and
// other phases' deny mean less, so they are left at the no-op. A payload
// that names no known event has no answer format at all: a guessed one
// might be ignored or misread, so sitter answers the no-op and says why
// (see fail).
func refusableEvent(d *adapter.Descriptor, payload []byte) *adapter.EventSpec {
	if d.Normalize == nil {
		return nil
	}
	ev, _ := d.Normalize(payload, "")
	if ev.NativeEvent == "" {
		return nil
	}
	spec, ok := d.Event(ev.NativeEvent)
	if !ok || spec.Phase != "preToolUse" {
		return nil
	}
	return spec
}

// runHandlers runs the call's handlers once (hook.RunHandlers encodes the
// event once for all of them) and merges their outcomes for the event's
// render rules (a fail-closed error refuses only where the event can); the
// audit gets each handler's decision, error or warning (unknown result
// keys) and latency, and the plugin of a failed or warned one. plugin is the --plugin folder, if any.
func runHandlers(ctx context.Context, ev hook.Event, rules *hook.Rules, hs []hook.Handler, plugin string) (hook.Result, []string, []audit.Handler) {
	outs := hook.RunHandlers(ctx, ev, hs)
	namePlugin(outs, plugin)
	res, diags := hook.MergeFor(ev, rules, outs)
	ah := make([]audit.Handler, len(outs))
	for i, o := range outs {
		ah[i] = audit.Handler{Command: o.Handler.Command, Skipped: o.Skipped, LatencyMs: ms(o.Latency)}
		if !o.Skipped {
			ah[i].Decision = string(o.Result.Decision)
			if ah[i].Decision == "" {
				ah[i].Decision = "noop"
			}
		}
		if o.Err != nil {
			ah[i].Error = string(o.Err.Kind) + ": " + o.Err.Detail
			ah[i].Plugin = o.Handler.Plugin
		} else if len(o.Unknown) > 0 {
			ah[i].Warning = o.Warning()
			ah[i].Plugin = o.Handler.Plugin
		}
	}
	return res, diags, ah
}

// namePlugin gives the plugin's handlers the plugin's name from the
// bundle's marker (.sitter-bundle.json), in place of the folder's name
// collectHandlers gave them, when a line may name them: a handler failed,
// answered unknown result keys, or two rewrote the input (a conflict). Only then is the marker read: a
// call whose handlers answer pays nothing for it.
func namePlugin(outs []hook.Outcome, dir string) {
	named, writers := false, 0
	for _, o := range outs {
		if len(o.Result.UpdatedInput) > 0 {
			writers++
		}
		named = named || o.Err != nil || len(o.Unknown) > 0 || writers > 1
	}
	if !named || dir == "" {
		return
	}
	name := markerPlugin(dir)
	if name == "" {
		return // no marker: the folder's name stands
	}
	for i := range outs {
		if outs[i].Handler.Plugin != "" {
			outs[i].Handler.Plugin = name
		}
	}
}

// markerPlugin is the plugin name in DIR/.sitter-bundle.json, or "".
func markerPlugin(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, pluginMarkerFile))
	if err != nil {
		return ""
	}
	var m struct {
		Plugin string `json:"plugin"`
	}
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return strings.TrimSpace(m.Plugin)
}

// fillEvent completes what a normalizer left out with what the descriptor
// knows, and keeps the native payload as raw.
func fillEvent(ev *hook.Event, known hook.Event, payload []byte) {
	if ev.Version == "" {
		ev.Version = known.Version
	}
	if ev.Harness == "" {
		ev.Harness = known.Harness
	}
	if ev.NativeEvent == "" {
		ev.NativeEvent = known.NativeEvent
	}
	if ev.Phase == "" {
		ev.Phase = known.Phase
	}
	if ev.Support == "" {
		ev.Support = known.Support
	}
	if len(ev.Raw) == 0 {
		ev.Raw = payload
	}
}

// readPayload reads stdin fully, up to maxPayload. A terminal is no payload:
// `sitter hook` typed by hand must not wait for input.
func readPayload(stdin io.Reader) ([]byte, error) {
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, errors.New("empty stdin: want the harness's JSON payload")
		}
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %v", err)
	}
	if len(b) > maxPayload {
		return nil, fmt.Errorf("stdin exceeds %d MiB", maxPayload>>20)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty stdin: want the harness's JSON payload")
	}
	return b, nil
}

// pluginTable is DIR/sitter-handlers.json.
type pluginTable struct {
	Handlers []tableEntry `json:"handlers"`
}

// tableEntry is one handler of a pluginTable.
type tableEntry struct {
	Phase   string   `json:"phase"`
	Command string   `json:"command"`
	Kinds   []string `json:"kinds"`
	Timeout string   `json:"timeout"`
	OnError string   `json:"onError"`
	Redact  bool     `json:"redact"`
	Watch   []string `json:"watch"`
	bad     string   // what of it did not decode ("" = all of it)
}

// decodeTable reads a handler table. A value of the wrong JSON type in an
// entry (`"timeout": 5`, a hand edit) spoils that entry alone: it is
// decoded as far as it goes and says what is wrong in bad. The table is
// decoded once more, entry by entry, only then.
func decodeTable(b []byte) (pluginTable, error) {
	var t pluginTable
	err := json.Unmarshal(b, &t)
	var te *json.UnmarshalTypeError
	if err == nil || !errors.As(err, &te) {
		return t, err
	}
	var raw struct {
		Handlers []json.RawMessage `json:"handlers"`
	}
	if json.Unmarshal(b, &raw) != nil {
		return t, errors.New(typeProblem(err)) // the list itself is of the wrong type
	}
	t.Handlers = make([]tableEntry, len(raw.Handlers))
	for i, r := range raw.Handlers {
		if err := json.Unmarshal(r, &t.Handlers[i]); err != nil {
			t.Handlers[i].bad = typeProblem(err)
		}
	}
	return t, nil
}

// typeProblem says which field of an entry has the wrong JSON type.
func typeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	if te.Field == "" {
		return "is " + jsonKind(te.Value) + ", want an object"
	}
	want := map[string]string{"string": "a string", "[]string": "a list of strings", "bool": "true or false"}[te.Type.String()]
	switch {
	case want != "":
	case te.Type.Kind() == reflect.Slice:
		want = "a list"
	case te.Type.Kind() == reflect.Struct:
		want = "an object"
	default:
		want = te.Type.String()
	}
	return te.Field + ": is " + jsonKind(te.Value) + ", want " + want
}

// jsonKind is "a number", "an array", … for the Value of an
// UnmarshalTypeError.
func jsonKind(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "":
		return "of the wrong type"
	}
	return "a " + v
}

// collectHandlers lists the handlers of this call: the plugin's own table
// (those of this phase) first, then --handler, in order; and the files
// the table's fileChanged handlers watch. An entry of the table that is
// wrong is a handler that fails (hook.Handler.Invalid); only a table that
// is missing or does not parse is an error.
func collectHandlers(a hookArgs, phase string) (hs []hook.Handler, watch []string, err error) {
	if a.plugin != "" {
		dir, err := filepath.Abs(a.plugin)
		if err != nil {
			return nil, nil, fmt.Errorf("--plugin %s: %v", a.plugin, err)
		}
		// Handlers find their plugin's files through this, as Claude's
		// find theirs through CLAUDE_PLUGIN_ROOT.
		os.Setenv("SITTER_PLUGIN_DIR", dir)
		path := filepath.Join(dir, pluginHandlersFile)
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Every bundle has its table: a registration naming a folder
			// without one runs nothing, which must not pass unseen.
			if _, derr := os.Stat(dir); errors.Is(derr, fs.ErrNotExist) {
				return nil, nil, fmt.Errorf("--plugin %s: no such folder", dir)
			}
			return nil, nil, fmt.Errorf("--plugin %s: no %s in it (not a sitter plugin bundle)", dir, pluginHandlersFile)
		case err != nil:
			return nil, nil, fmt.Errorf("plugin handlers: %v", err)
		default:
			t, err := decodeTable(b)
			if err != nil {
				return nil, nil, fmt.Errorf("plugin handlers %s: %v", path, err)
			}
			for i, h := range t.Handlers {
				if h.Phase == "fileChanged" {
					watch = hook.AddPaths(watch, h.Watch...)
				}
				// An entry whose phase did not decode may be this call's.
				if h.Phase != phase && !(h.bad != "" && h.Phase == "") {
					continue
				}
				// The folder's name for now; a failure reads the
				// plugin's own from the marker (namePlugin).
				hd := hook.Handler{Command: h.Command, Timeout: a.timeout, OnError: a.onError, Kinds: h.Kinds, Redact: h.Redact, Watch: h.Watch, Plugin: filepath.Base(dir)}
				// A bad entry (a bundle edited by hand: the generator and
				// sitter plugin verify refuse it) fails alone, as a failed
				// handler, under its own onError if that reads, else the
				// hook's: the table's other handlers still run.
				var bad []string
				if h.bad != "" {
					bad = append(bad, h.bad)
				}
				if h.OnError != "" {
					if p, err := hook.ParsePolicy(h.OnError); err != nil {
						bad = append(bad, "onError: "+err.Error())
					} else {
						hd.OnError = p
					}
				}
				if h.Timeout != "" {
					if d, err := hook.ParseTimeout(h.Timeout); err != nil {
						bad = append(bad, "timeout: "+err.Error())
					} else {
						hd.Timeout = d
					}
				}
				if strings.TrimSpace(h.Command) == "" {
					bad = append(bad, "no command")
				}
				if len(bad) > 0 {
					hd.Invalid = fmt.Sprintf("%s handler %d: %s; sitter plugin verify %s says what is wrong", pluginHandlersFile, i, strings.Join(bad, "; "), dir)
				}
				hs = append(hs, hd)
			}
		}
	}
	for _, cmd := range a.handlers {
		hs = append(hs, hook.Handler{Command: cmd, Timeout: a.timeout, OnError: a.onError, Redact: a.redact})
	}
	return hs, watch, nil
}

// absWatch makes the paths a harness is asked to watch absolute, relative
// ones against the project's root (the session's projectDir, else its
// cwd); without either they are dropped, with a diagnostic.
func absWatch(paths []string, s hook.Session, diags []string) ([]string, []string) {
	if len(paths) == 0 {
		return paths, diags
	}
	root := s.ProjectDir
	if root == "" {
		root = s.Cwd
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		switch {
		case filepath.IsAbs(p):
			out = hook.AddPaths(out, filepath.Clean(p))
		case root == "":
			diags = append(diags, fmt.Sprintf("sitter: watch path %q is relative and the event names no project or cwd; dropped", p))
		default:
			out = hook.AddPaths(out, filepath.Join(root, p))
		}
	}
	return out, diags
}

// guardStop applies the stop-loop guard; its failures are diagnostics. It
// returns the cap when the guard let a blocked stop through at it, else 0.
func guardStop(ev hook.Event, res hook.Result, flagCap string, diags []string) (hook.Result, []string, int) {
	capStr, from := flagCap, "--stop-cap"
	if capStr == "" {
		capStr, from = os.Getenv("SITTER_STOP_CAP"), "SITTER_STOP_CAP"
	}
	n := hook.DefaultStopCap
	if capStr != "" {
		var err error
		if n, err = hook.StopCap(capStr); err != nil {
			diags = append(diags, fmt.Sprintf("sitter: %s: %v; using %d", from, err, n))
		}
	}
	dir, err := hook.StateDir()
	if err != nil {
		diags = append(diags, "sitter: stop guard: "+err.Error())
	}
	res, more, capped := hook.StopGuard{Dir: dir, Cap: n}.ApplyCapped(ev, res)
	if !capped {
		n = 0
	}
	return res, append(diags, more...), n
}

// answer writes a rendered answer and the diagnostics, all valid UTF-8.
func (c *hookCall) answer(out hook.Output, diags []string) int {
	c.stdout.Write(hook.ValidUTF8(out.Stdout))
	var e bytes.Buffer
	e.Write(hook.ValidUTF8(out.Stderr))
	for _, d := range append(diags, out.Diags...) {
		e.WriteString(strings.ToValidUTF8(d, "\uFFFD"))
		e.WriteByte('\n')
	}
	c.stderr.Write(e.Bytes())
	return out.Exit
}

// fail answers a call sitter could not handle: the no-op and one line on
// stderr, or with --on-error closed the event's deny (block on stop
// phases) when the event can say one.
func (c *hookCall) fail(why string) (code int) {
	msg := "sitter: " + strings.ToValidUTF8(strings.Join(strings.Fields(why), " "), "\uFFFD")
	if c.onError == hook.FailClosed && c.desc != nil {
		out, ok := c.refuse(msg)
		if ok {
			c.refused = true
			diags := c.audit(hook.Result{Decision: hook.Deny, Reason: msg}, nil, msg, out.Halted, nil)
			return c.answer(out, append([]string{msg + " (refused: fail-closed)"}, diags...))
		}
	}
	diags := c.audit(hook.Result{Decision: hook.Noop}, nil, msg, false, nil)
	// Say why fail-closed did not refuse.
	line := msg
	switch {
	case c.onError != hook.FailClosed:
	case c.desc == nil:
		// No harness or no event known to write a deny in (see
		// refusableEvent).
		line += " (not refused: no known harness event to answer in)"
	default:
		line += fmt.Sprintf(" (not refused: %s %s cannot deny)", c.ev.Harness, c.ev.NativeEvent)
	}
	fmt.Fprintln(c.stderr, strings.Join(append([]string{line}, diags...), "\n"))
	return 0
}

// refuse renders a deny with reason; a panic or an event that cannot deny
// leaves the no-op.
func (c *hookCall) refuse(reason string) (out hook.Output, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	out = c.desc.Render(c.ev, hook.Result{Decision: hook.Deny, Reason: reason})
	return out, len(out.Stdout) > 0 || out.Exit != 0
}
