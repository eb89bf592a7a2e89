package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"sitter.dev/sitter/runtime/redact"
)

// Policy says what a handler error turns into.
type Policy string

const (
	// FailOpen ignores a failed handler (with a diagnostic).
	FailOpen Policy = "open"
	// FailClosed turns a failed handler into a deny (block on stop phases).
	FailClosed Policy = "closed"
)

// ParsePolicy reads an --on-error value; "" is fail-open.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", FailOpen:
		return FailOpen, nil
	case FailClosed:
		return FailClosed, nil
	}
	return FailOpen, fmt.Errorf("unknown error policy %q (want open or closed)", s)
}

// DefaultTimeout bounds a handler that sets no Timeout.
const DefaultTimeout = 30 * time.Second

// MaxTimeout is the longest timeout a handler may set: a hook holds up
// its agent's turn while it runs.
const MaxTimeout = 24 * time.Hour

// ParseTimeout reads a handler's timeout ("10s", "1500ms", "2m"): a Go
// duration above zero and at most MaxTimeout. It is the one rule for
// plugin.yaml (the generator), sitter plugin verify and sitter hook.
func ParseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && tooLong(s):
		return 0, fmt.Errorf("%q is longer than 24h, the most a handler may run", s)
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration (want a number and a unit, like 10s or 1500ms)", s)
	case d <= 0:
		return 0, fmt.Errorf("%q is not above zero (a handler needs time to run; leave timeout out for the %s default)", s, DefaultTimeout)
	case d > MaxTimeout:
		return 0, fmt.Errorf("%q is longer than 24h, the most a handler may run", s)
	}
	return d, nil
}

// tooLong reports whether s is digits and a unit that ParseDuration
// refuses only for overflowing a time.Duration ("99999999999999999999m").
func tooLong(s string) bool {
	unit := strings.TrimLeft(s, "0123456789")
	if unit == s {
		return false
	}
	switch unit {
	case "ns", "us", "µs", "ms", "s", "m", "h":
		return true
	}
	return false
}

// DefaultReason is the reason of a deny or block whose handlers gave none:
// several harnesses reject an empty reason.
const DefaultReason = "blocked by a sitter handler"

// maxOutput caps what is kept of a handler's stdout and of its stderr. A
// handler that writes more is killed (its whole process group) at once,
// and its outcome is an output error under its error policy: an answer
// cut at the cap is no answer, and letting the handler run on only to
// discard what it writes would spend CPU and time for nothing.
const maxOutput = 16 << 20

// waitDelay is how long Wait keeps reading a handler's pipes after the
// handler exited or was killed: a stray grandchild holding them open (a
// background job that inherited stdout) must not delay the hook. What the
// handler wrote before it exited is in the pipe already; the copy drains
// it well within this grace.
var waitDelay = 100 * time.Millisecond

// maxEnvValue caps the values sitter exports to handlers. Linux refuses an
// exec whose single environment string exceeds 128 KiB (MAX_ARG_STRLEN),
// and any exec whose environment holds a NUL: a hostile session_id would
// make every handler fail to start. A longer value is not exported at
// all (a cut one would name a different session); the full value is in
// the event on stdin.
const maxEnvValue = 4 << 10

// Handler is one command that answers hook events.
type Handler struct {
	Command string
	Timeout time.Duration
	OnError Policy
	// Kinds restricts the handler to tool events of these tool kinds;
	// empty matches every event. Events without a tool always match.
	Kinds []string
	// Watch restricts the handler to fileChanged events about these
	// files (WatchMatches): paths relative to the project, or absolute;
	// empty matches every file.
	Watch []string
	// Redact gives the handler the event with secrets (API keys, tokens,
	// private keys, key=value credentials) masked in every string,
	// the native payload included. Its updatedInput, written from masked
	// input, would carry the masks: a redacting handler should not rewrite.
	Redact bool
	// Plugin names the plugin bundle the handler comes from, for the
	// lines about it; empty for a --handler handler.
	Plugin string
	// Invalid says what is wrong with the handler's entry in its table
	// (a timeout that does not parse, no command): such a handler is
	// never run; where it matches the event, its outcome is an
	// ErrInvalid error under its OnError, and the other handlers run.
	Invalid string
}

// ErrorKind classifies a handler error.
type ErrorKind string

const (
	ErrStart    ErrorKind = "start"    // the command could not be started
	ErrExit     ErrorKind = "exit"     // non-zero exit other than 2
	ErrTimeout  ErrorKind = "timeout"  // killed after Handler.Timeout
	ErrCanceled ErrorKind = "canceled" // the hook call itself was canceled
	ErrOutput   ErrorKind = "output"   // stdout is not a result
	ErrConflict ErrorKind = "conflict" // a second updatedInput writer
	ErrInternal ErrorKind = "internal" // sitter could not run the handler
	ErrInvalid  ErrorKind = "invalid"  // the handler's entry is unusable (Handler.Invalid): not run
)

// HandlerError is why a handler produced no usable result.
type HandlerError struct {
	Kind   ErrorKind
	Detail string
}

func (e *HandlerError) Error() string { return e.Detail }

// Outcome is what one handler of a call produced: a result, an error, or
// nothing because its kinds did not match the event.
type Outcome struct {
	Handler Handler
	Result  Result
	Err     *HandlerError
	Skipped bool
	// Latency is how long the handler ran (zero when skipped).
	Latency time.Duration
	// Unknown are the top-level keys of an accepted result that no
	// result field reads (UnknownKeys): a typo's, or a newer contract's.
	Unknown []string
}

// Run runs the handlers for one event and merges their results. The
// diagnostics are one line each, for stderr.
func Run(ctx context.Context, ev Event, hs []Handler) (Result, []string) {
	return Merge(ev.Phase, RunHandlers(ctx, ev, hs))
}

// RunHandlers runs the handlers that match ev concurrently, each as
// `/bin/sh -c Command` with ev as JSON on stdin, and returns their outcomes
// in handler order. The event is encoded once: every handler reads the
// same bytes (through its own reader), so a large event costs its size
// once, not once per handler.
func RunHandlers(ctx context.Context, ev Event, hs []Handler) []Outcome {
	outs := make([]Outcome, len(hs))
	var run []int
	for i, h := range hs {
		outs[i].Handler = h
		if !h.matches(ev) {
			outs[i].Skipped = true
			continue
		}
		if h.Invalid != "" {
			outs[i].Err = &HandlerError{ErrInvalid, h.Invalid}
			continue
		}
		run = append(run, i)
	}
	if len(run) == 0 {
		return outs
	}
	// No HTML escaping: a handler grepping the event for `a && b` should
	// find it as written.
	in, err := encodeEvent(ev)
	if err != nil {
		for _, i := range run {
			outs[i].Err = &HandlerError{ErrInternal, "cannot encode the event: " + err.Error()}
		}
		return outs
	}
	var masked eventJSON // the redacted event, made once if a handler asks
	for _, i := range run {
		if hs[i].Redact {
			m, _, err := redact.JSON(in.bytes())
			if err != nil {
				// Never hand such a handler the unmasked event.
				m = []byte("{}\n")
			}
			masked = eventJSON{append(bytes.TrimSuffix(m, []byte("\n")), '\n')}
			break
		}
	}
	input := func(h Handler) eventJSON {
		if h.Redact {
			return masked
		}
		return in
	}
	env := os.Environ()
	env = exportEnv(env, "SITTER_HARNESS", ev.Harness)
	env = exportEnv(env, "SITTER_PHASE", ev.Phase)
	// A session id longer than maxEnvValue (or holding a NUL) is not
	// exported: the handler finds it, whole, in the event on stdin.
	env = exportEnv(env, "SITTER_SESSION_ID", ev.Session.ID)
	env = exportEnv(env, "SITTER_NATIVE_EVENT", ev.NativeEvent)
	// Handlers call sitter's own verbs ("$SITTER_BIN" guard) without
	// depending on PATH.
	if self, err := os.Executable(); err == nil {
		env = exportEnv(env, "SITTER_BIN", self)
	}
	if len(run) == 1 {
		i := run[0]
		outs[i] = runGuarded(ctx, hs[i], ev.Phase, input(hs[i]), env)
		return outs
	}
	var wg sync.WaitGroup
	for _, i := range run {
		wg.Go(func() { outs[i] = runGuarded(ctx, hs[i], ev.Phase, input(hs[i]), env) })
	}
	wg.Wait()
	return outs
}

// exportEnv appends name=value unless exec could not pass it (see
// maxEnvValue).
func exportEnv(env []string, name, value string) []string {
	if len(value) > maxEnvValue || strings.IndexByte(value, 0) >= 0 {
		return env
	}
	return append(env, name+"="+value)
}

func (h Handler) matches(ev Event) bool {
	if len(h.Watch) > 0 && ev.Phase == "fileChanged" && !WatchMatches(h.Watch, ev.File, ev.Session) {
		return false
	}
	if len(h.Kinds) == 0 || ev.Tool == nil {
		return true
	}
	for _, k := range h.Kinds {
		if k == ev.Tool.Kind {
			return true
		}
	}
	return false
}

// runGuarded runs one handler; a panic becomes a handler error, since a
// panic in a goroutine could not be recovered by the caller.
func runGuarded(ctx context.Context, h Handler, phase string, in eventJSON, env []string) (o Outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = Outcome{Handler: h, Err: &HandlerError{ErrInternal, fmt.Sprintf("internal error: %v", p)}}
		}
	}()
	start := time.Now()
	o = runOne(ctx, h, phase, in, env)
	o.Latency = time.Since(start)
	return o
}

// errFlood is why a handler was killed for writing more than maxOutput.
var errFlood = errors.New("output over the cap")

func runOne(ctx context.Context, h Handler, phase string, in eventJSON, env []string) Outcome {
	o := Outcome{Handler: h}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hctx, kill := context.WithCancelCause(tctx)
	defer kill(nil)

	cmd := exec.CommandContext(hctx, "/bin/sh", "-c", h.Command)
	cmd.Stdin = in.reader()
	cmd.Env = env
	// A flood on either stream kills the handler; the copy goes on
	// discarding until the pipe closes.
	flood := func() { kill(errFlood) }
	stdout, stderr := &capped{onOver: flood}, &capped{onOver: flood}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The handler gets its own process group so that a timeout kills
	// everything it started, not only the shell; on Linux the group also
	// dies with sitter (see setGroup and holdGroup).
	setGroup(cmd)
	cmd.WaitDelay = waitDelay
	err := cmd.Start()
	if err == nil {
		// Against a SIGKILL of sitter: the handler's whole group dies with
		// it (see holdGroup). Started after the handler, so that the
		// handler does not wait for it.
		hold := holdGroup(cmd.Process.Pid)
		err = cmd.Wait()
		hold.release()
	}

	// Wait has returned: the copies into stdout and stderr are done.
	for _, c := range []struct {
		name string
		out  *capped
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if c.out.over {
			o.Err = &HandlerError{ErrOutput, fmt.Sprintf("%s exceeds %d MiB; handler killed", c.name, maxOutput>>20)}
			return o
		}
	}
	var exit *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: the handler exited 0 but left a process holding its
		// output open; what it wrote before exiting counts.
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		o.Result = Result{Decision: Canonical(phase, Deny), Reason: string(ValidUTF8(trimSpace(stderr.Bytes())))}
		return o
	case ctx.Err() != nil:
		o.Err = &HandlerError{ErrCanceled, "hook call canceled: " + context.Cause(ctx).Error()}
		return o
	case tctx.Err() != nil:
		o.Err = &HandlerError{ErrTimeout, "timed out after " + timeout.String()}
		return o
	case exit != nil:
		d := exit.String()
		if s := stderrLine(stderr.Bytes()); s != "" {
			d += ": " + s
		}
		o.Err = &HandlerError{ErrExit, d}
		return o
	default:
		o.Err = &HandlerError{ErrStart, err.Error()}
		return o
	}
	r, perr := ParseResult(stdout.Bytes())
	if perr != nil {
		o.Err = &HandlerError{ErrOutput, perr.Error()}
		return o
	}
	o.Result = r
	o.Unknown = UnknownKeys(stdout.Bytes())
	return o
}

// Merge folds the outcomes of one call, in handler order, into one result:
// the most restrictive decision wins (deny > block > ask > allow > noop,
// compared after Canonical for phase); the reasons of the handlers that
// decided the winning decision, or halted, and every userMessage and
// additionalContext concatenate; updatedInput has one writer; any halt
// wins. Handler errors go through their handler's policy.
func Merge(phase string, outs []Outcome) (Result, []string) {
	return merge(phase, nil, outs)
}

// MergeFor is Merge for event ev, answered through rules. Where the event
// has no refusal to write (no deny rule; on a stop phase, no block rule),
// a fail-closed handler error cannot refuse: it is ignored as under
// fail-open, and its line says why instead of claiming a refusal that the
// render would then drop.
func MergeFor(ev Event, rules *Rules, outs []Outcome) (Result, []string) {
	refusal := Canonical(ev.Phase, Deny)
	can := rules != nil && (refusal != Block && rules.Deny != nil || refusal == Block && rules.Block != nil)
	if can {
		return merge(ev.Phase, nil, outs)
	}
	return merge(ev.Phase, &noRefusal{ev.Harness, ev.NativeEvent, refusal}, outs)
}

// noRefusal names an event whose answer cannot refuse.
type noRefusal struct {
	harness, event string
	refusal        Decision
}

func (n *noRefusal) String() string {
	return n.harness + " " + n.event + " cannot " + string(n.refusal)
}

// merge is Merge; cannot, when set, is the event on which a fail-closed
// error cannot refuse.
func merge(phase string, cannot *noRefusal, outs []Outcome) (Result, []string) {
	var diags []string
	eff := make([]Result, 0, len(outs))
	writer := -1
	for i, o := range outs {
		if o.Skipped {
			continue
		}
		if len(o.Unknown) > 0 && o.Err == nil {
			diags = append(diags, unknownKeysLine(o))
		}
		r := o.Result
		herr := o.Err
		if herr == nil && len(r.UpdatedInput) > 0 {
			if writer < 0 {
				writer = i
			} else {
				herr = &HandlerError{ErrConflict, fmt.Sprintf("updatedInput conflicts with handler %s, which already rewrote the input", handlerName(outs[writer].Handler))}
				r.UpdatedInput = nil
			}
		}
		if herr != nil {
			msg := fmt.Sprintf("sitter: handler %s failed: %s", handlerName(o.Handler), oneLine(herr.Error()))
			if o.Handler.OnError != FailClosed || cannot != nil {
				if o.Handler.OnError != FailClosed {
					diags = append(diags, msg+" (ignored: fail-open)")
				} else {
					diags = append(diags, msg+" (fail-closed, not refused: "+cannot.String()+")")
				}
				if herr.Kind != ErrConflict {
					continue
				}
			} else {
				diags = append(diags, msg+" (refused: fail-closed)")
				r = Result{Decision: Deny, Reason: msg, UserMessage: r.UserMessage, AdditionalContext: r.AdditionalContext, Halt: r.Halt}
			}
		}
		r.Decision = Canonical(phase, r.Decision)
		eff = append(eff, r)
	}

	res := Result{Decision: Noop}
	for _, r := range eff {
		if r.Decision.rank() > res.Decision.rank() {
			res.Decision = r.Decision
		}
	}
	var reasons, msgs, ctxs []string
	for _, r := range eff {
		if r.Reason != "" && (r.Decision == res.Decision || r.Halt) {
			reasons = append(reasons, r.Reason)
		}
		if r.UserMessage != "" {
			msgs = append(msgs, r.UserMessage)
		}
		if r.AdditionalContext != "" {
			ctxs = append(ctxs, r.AdditionalContext)
		}
		res.Halt = res.Halt || r.Halt
		res.WatchPaths = AddPaths(res.WatchPaths, r.WatchPaths...)
	}
	res.Reason = strings.Join(reasons, "\n")
	res.UserMessage = strings.Join(msgs, "\n")
	res.AdditionalContext = strings.Join(ctxs, "\n")
	if writer >= 0 {
		res.UpdatedInput = outs[writer].Result.UpdatedInput
	}
	if (res.Decision == Deny || res.Decision == Block) && res.Reason == "" {
		res.Reason = DefaultReason
	}
	return res, diags
}

// unknownKeysLine warns of the keys of an accepted result that no result
// field reads: the result stands as decoded (a newer contract's key must
// not break the hook), but a typo such as "decison" shows.
func unknownKeysLine(o Outcome) string {
	return "sitter: handler " + handlerName(o.Handler) + " answered " + o.Warning() +
		" (ignored; known: " + strings.Join(resultKeys[:], ", ") + ")"
}

// Warning says what is wrong with an accepted result: its unknown keys
// (at most five named, secrets masked); "" when nothing is.
func (o Outcome) Warning() string {
	if len(o.Unknown) == 0 {
		return ""
	}
	const most = 5
	var b strings.Builder
	b.WriteString("unknown result key")
	if len(o.Unknown) > 1 {
		b.WriteString("s")
	}
	for i, k := range o.Unknown[:min(len(o.Unknown), most)] {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ = redact.String(k) // before shortening, as in quoteCmd
		fmt.Fprintf(&b, " %q", shorten(k, 64))
	}
	if n := len(o.Unknown) - most; n > 0 {
		fmt.Fprintf(&b, " and %d more", n)
	}
	return b.String()
}

// capped keeps at most maxOutput bytes of a handler's stream and discards
// the rest, so a chatty handler cannot exhaust memory; the first byte past
// the cap calls onOver. Its ReadFrom (which io.Copy, as exec uses it,
// prefers) reads straight into the kept bytes, within the cap: a silent
// handler costs a small buffer, not io.Copy's 32 KiB. (bytes.Buffer's
// ReadFrom, which capped once inherited, ignored the cap.)
type capped struct {
	buf    []byte
	over   bool
	onOver func()
}

// grow makes room for more bytes, by doubling but never past the cap; it
// reports false when the cap is reached.
func (c *capped) grow(need int) bool {
	if need > maxOutput {
		return false
	}
	if need > cap(c.buf) {
		n := min(max(2*cap(c.buf), need, 512), maxOutput)
		c.buf = append(make([]byte, 0, n), c.buf...)
	}
	return true
}

func (c *capped) overflow() {
	if !c.over {
		c.over = true
		if c.onOver != nil {
			c.onOver()
		}
	}
}

func (c *capped) Write(p []byte) (int, error) {
	if c.over {
		return len(p), nil
	}
	q := p
	if room := maxOutput - len(c.buf); len(q) > room {
		q = q[:room]
	}
	c.grow(len(c.buf) + len(q))
	c.buf = append(c.buf, q...)
	if len(q) < len(p) {
		c.overflow()
	}
	return len(p), nil
}

func (c *capped) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	var discard []byte
	for {
		// Past the cap, or at it (one more byte is one too many), read
		// into a scratch buffer to throw away.
		drop := c.over || (len(c.buf) == cap(c.buf) && !c.grow(len(c.buf)+1))
		b := c.buf[len(c.buf):cap(c.buf)]
		if drop {
			if discard == nil {
				discard = make([]byte, 32<<10)
			}
			b = discard
		}
		n, err := r.Read(b)
		total += int64(n)
		switch {
		case n > 0 && drop:
			c.overflow()
		case n > 0:
			c.buf = c.buf[:len(c.buf)+n]
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (c *capped) Bytes() []byte { return c.buf }

// stderrLine is what a diagnostic shows of a failed handler's stderr: its
// first line, with secrets masked (sitter's stderr may end up in logs the
// audit log's masking is meant to spare) and invalid UTF-8 replaced.
func stderrLine(b []byte) string {
	// Mask before cutting: a secret split by the cut would slip through.
	// The head suffices for the first line.
	b = trimSpace(b)
	if len(b) > 64<<10 {
		b = b[:64<<10]
	}
	s, _ := redact.String(string(ValidUTF8(b)))
	return FirstLine([]byte(s))
}

// quoteCmd names a handler in a diagnostic: its secrets masked (the
// diagnostic goes to the harness, which shows and logs it, and a
// fail-closed reason to the model), quoted, and shortened so the
// diagnostic stays one readable line.
func quoteCmd(cmd string) string {
	masked, _ := redact.String(cmd) // before shortening: a cut secret would slip through
	return fmt.Sprintf("%q", shorten(masked, 80))
}

// handlerName names a handler in a diagnostic: its command (quoteCmd)
// and, for a plugin's handler, the plugin, plain when it is a plain word
// (as plugin names are), else quoted.
func handlerName(h Handler) string {
	if h.Plugin == "" {
		return quoteCmd(h.Command)
	}
	name := shorten(h.Plugin, 64)
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			name = fmt.Sprintf("%q", name)
			break
		}
	}
	return quoteCmd(h.Command) + " (plugin " + name + ")"
}

// FirstLine is the first non-empty line of b, trimmed and shortened to 200
// bytes: what a one-line message quotes of a command's output.
func FirstLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return shorten(l, 200)
		}
	}
	return ""
}

// oneLine folds s onto one line. A line as it is stays so: a quoted
// output in it keeps its spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t\v\f\u0085\u2028\u2029") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// shorten cuts s to at most n bytes, on a rune boundary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// WatchMatches reports whether file, a fileChanged event's file, is one
// of the watch entries. An absolute entry is the file itself. A relative
// one names a file of the project: where the harness names the project's
// root (the session's projectDir), the file under it; where it does not,
// the file under the session's cwd or under one of the cwd's parents (the
// agent may have moved into a folder of the project), so that notes.txt
// is never sub/notes.txt while the cwd is the project. A file the event
// does not name matches nothing; a relative file (as a harness may name
// it) matches the entry it equals.
func WatchMatches(watch []string, file string, s Session) bool {
	if file == "" {
		return false
	}
	file = filepath.Clean(file)
	for _, w := range watch {
		w = filepath.Clean(w)
		switch {
		case file == w:
			return true
		case filepath.IsAbs(w) || !filepath.IsAbs(file):
			continue
		case s.ProjectDir != "":
			if file == filepath.Join(s.ProjectDir, w) {
				return true
			}
			continue
		}
		root, ok := strings.CutSuffix(file, string(filepath.Separator)+w)
		if !ok {
			continue
		}
		if root == "" {
			root = string(filepath.Separator)
		}
		if s.Cwd == "" || Within(filepath.Clean(s.Cwd), root) {
			return true
		}
	}
	return false
}

// Within reports whether dir is root or inside it, lexically (no file
// system access: a hook call must not pay for one).
func Within(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// AddPaths appends to list the paths it does not hold yet.
func AddPaths(list []string, paths ...string) []string {
	for _, p := range paths {
		if p != "" && !slices.Contains(list, p) {
			list = append(list, p)
		}
	}
	return list
}
