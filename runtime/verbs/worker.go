package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/hook"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store/natsstore"
)

// workerMaxOutput caps each stream of a remote effect: what is kept
// travels as one message of the run (docs/store.md), so a flood kills
// the command, as a hook handler's flood does.
const workerMaxOutput = 256 << 10

// newWorkerCmd is `sitter worker`.
func newWorkerCmd(e *env) *cobra.Command {
	c := flagged("worker", "Carry out the remote effects of a shared store's runs",
		"  sitter worker --store nats://127.0.0.1:4222\n  sitter worker --store nats://127.0.0.1:4222 --kinds shell --max 10",
		[]string{storeOnlyFlag("to work for"), "kinds=the effect `KINDS` to take, comma-separated (default shell)", "max=stop after `N` effects (default: until interrupted)",
			"ack-wait=how long an effect may go without a sign of life before another worker gets it, a Go duration `D` (default 30s)",
			"reconcile=how often to look for pending remote effects that are not on the queue and enqueue them, a Go duration `D` (default 1m; 0: only at start)", jsonOut},
		func(_ *cobra.Command, f *cmdFlags) int { return worker(f, e) })
	c.Long = c.Short + `.

A process marks an effect remote with "remote": true in its task definition;
iterating the run (with --store) puts it on the store's work queue. A worker
takes effects of its kinds from the queue, runs each (a shell effect: its
shell.command with /bin/sh -c, in the worker's directory, under the hook
handlers' rules: a timeout, 30s unless the definition sets timeoutMs, and a
cap on each output stream, 256 KiB here, over which the command is killed)
and posts the result: ok with {exitCode, stdout, stderr} when it exits 0,
an error otherwise. Delivery is at least once: an effect whose worker dies
is given to another, and a second post of an effect is refused, so each is
posted once. At start and every --reconcile, a worker enqueues the pending
remote effects of its kinds that are not on the queue (their writer died
between its commit and its enqueue).`
	c.Args = nArgs(0, 0, "")
	return c
}

func worker(f *cmdFlags, e *env) int {
	const verb = "worker"
	o := natsstore.WorkOptions{Log: e.stderr, Do: shellEffect}
	if k := f.vals["kinds"]; k != "" {
		o.Kinds = strings.Split(k, ",")
		for _, k := range o.Kinds {
			if err := natsstore.CheckKind(k); err != nil {
				return flagFail(e.stderr, f, err)
			}
		}
	}
	if v := f.vals["max"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return flagFail(e.stderr, f, fmt.Errorf("--max %q is not a count", v))
		}
		o.Max = n
	}
	if v := f.vals["ack-wait"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return flagFail(e.stderr, f, fmt.Errorf("--ack-wait %q: want a Go duration of at least 1s", v))
		}
		o.AckWait = d
	}
	if v := f.vals["reconcile"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d > 0 && d < time.Second) {
			return flagFail(e.stderr, f, fmt.Errorf("--reconcile %q: want a Go duration of at least 1s, or 0", v))
		}
		o.Reconcile = d
		if d == 0 {
			o.Reconcile = natsstore.ReconcileAtStart
		}
	}
	// The values given are checked first: what was typed wrong is named
	// before what is missing.
	url := f.storeURL()
	if url == "" {
		// A required flag missing: a usage error, as sitter proxy's.
		return flagFail(e.stderr, f, errors.New("--store (or $SITTER_STORE) names the store to work for"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := openStore(ctx, url)
	if err != nil {
		return fail(e.stderr, verb, err)
	}
	defer s.Close()
	n, err := s.Work(ctx, o)
	if err != nil {
		if n > 0 {
			fmt.Fprintf(e.stderr, "sitter worker: %d effect(s) done\n", n)
		}
		return fail(e.stderr, verb, err)
	}
	return out(e.stdout, e.stderr, f.bools["json"], map[string]any{"effects": n}, fmt.Sprintf("[worker] %d effect(s) done\n", n))
}

// shellEffect runs a shell effect's command and makes its result.
func shellEffect(ctx context.Context, def json.RawMessage) runs.PostOptions {
	var d struct {
		Kind      string `json:"kind"`
		TimeoutMs int64  `json:"timeoutMs"`
		Shell     struct {
			Command   string `json:"command"`
			TimeoutMs int64  `json:"timeoutMs"`
		} `json:"shell"`
	}
	json.Unmarshal(def, &d)
	failed := func(name, msg string, data any) runs.PostOptions {
		b, _ := json.Marshal(map[string]any{"name": name, "message": msg, "data": data})
		return runs.PostOptions{Status: "error", Error: b}
	}
	if d.Shell.Command == "" {
		return failed("WorkerError", fmt.Sprintf("the %s effect has no shell.command: a worker runs shell effects", d.Kind), nil)
	}
	timeout := hook.DefaultTimeout
	for _, ms := range []int64{d.TimeoutMs, d.Shell.TimeoutMs} {
		if ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hctx, kill := context.WithCancelCause(tctx)
	defer kill(nil)
	cmd := exec.CommandContext(hctx, "/bin/sh", "-c", d.Shell.Command)
	flood := func() { kill(errors.New("output over the cap")) }
	stdout, stderr := &capWriter{onOver: flood}, &capWriter{onOver: flood}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 2 * time.Second
	start := time.Now().UTC()
	err := cmd.Run()
	o := runs.PostOptions{StartedAt: start.Format("2006-01-02T15:04:05.000Z"), FinishedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}
	out, errOut := string(hook.ValidUTF8(stdout.buf.Bytes())), string(hook.ValidUTF8(stderr.buf.Bytes()))
	o.Stdout, o.Stderr = &out, &errOut
	code := 0
	var exit *exec.ExitError
	switch {
	case stdout.over || stderr.over:
		r := failed("ShellError", fmt.Sprintf("output over %d KiB; command killed", workerMaxOutput>>10), nil)
		r.Stdout, r.Stderr, r.StartedAt, r.FinishedAt = o.Stdout, o.Stderr, o.StartedAt, o.FinishedAt
		return r
	case ctx.Err() != nil:
		return runs.PostOptions{} // the worker is stopping: not a result
	case tctx.Err() != nil:
		r := failed("ShellError", "timed out after "+timeout.String(), nil)
		r.Stdout, r.Stderr, r.StartedAt, r.FinishedAt = o.Stdout, o.Stderr, o.StartedAt, o.FinishedAt
		return r
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return failed("ShellError", err.Error(), nil)
	}
	if code != 0 {
		r := failed("ShellError", fmt.Sprintf("exit status %d", code), map[string]any{"exitCode": code})
		r.Stdout, r.Stderr, r.StartedAt, r.FinishedAt = o.Stdout, o.Stderr, o.StartedAt, o.FinishedAt
		return r
	}
	o.Status = "ok"
	o.Value, _ = json.Marshal(map[string]any{"exitCode": 0, "stdout": out, "stderr": errOut})
	return o
}

// capWriter keeps at most workerMaxOutput bytes and calls onOver once
// when more come.
type capWriter struct {
	buf    bytes.Buffer
	over   bool
	onOver func()
}

func (c *capWriter) Write(p []byte) (int, error) {
	if room := workerMaxOutput - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		if !c.over {
			c.over = true
			c.onOver()
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}
