//go:build unix

package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// answerWithin × Settle after a prompt appeared it is answered even if
// the output never goes quiet (an animation).
const answerWithin = 5

// drainWait bounds the wait for the terminal's last output after the
// harness exited (a leftover child may hold the terminal open).
const drainWait = 2 * time.Second

func ptySupported() error { return nil }

// interactive runs bridge-interactive mode (see interactive.go).
func (l *launcher) interactive() (int, error) {
	prompts, err := compilePrompts(l.o.Spec.Onboarding)
	if err != nil {
		return 2, err
	}
	plan, err := Prepare(l.o.Spec, l.conn, l.vals, Unattended)
	if err != nil {
		return 1, err
	}
	env := ptyEnv(l.env)
	var turns <-chan []byte
	if l.vals.TurnEndCommand != "" {
		fifo := filepath.Join(l.dir, "turn-end")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			return 1, fmt.Errorf("turn-end fifo: %v", err)
		}
		// Read and write: the hook's open never blocks, and a reader
		// never sees the end of the stream between two hooks.
		f, err := os.OpenFile(fifo, os.O_RDWR, 0)
		if err != nil {
			return 1, fmt.Errorf("turn-end fifo: %v", err)
		}
		defer f.Close()
		turns = readTurnEnds(f, l.o.Stderr)
		env = append(env, turnEndEnv+"="+fifo)
	}
	cmd := exec.Command(l.o.Bin, plan.Args...)
	cmd.Dir = l.vals.Workspace
	cmd.Env = env
	// pty.Start makes the harness a session leader with the terminal as
	// its controlling terminal: its own process group, which signals go to.
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: termRows, Cols: termCols})
	if err != nil {
		return 1, fmt.Errorf("start %s: %v", l.o.Bin, err)
	}
	defer tty.Close()
	pid := cmd.Process.Pid
	l.emit("spawn", "iteration", 1, "pid", pid, "argv", append([]string{l.o.Bin}, plan.Args...), "terminal", fmt.Sprintf("%dx%d", termCols, termRows))

	chunks, quit := make(chan []byte, 64), make(chan struct{})
	defer close(quit)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := tty.Read(buf)
			if n > 0 {
				select {
				case chunks <- buf[:n]:
				case <-quit:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	r := &ptyRun{l: l, tty: tty, pid: pid, prompts: prompts, answered: map[string]bool{},
		screen: NewScreen(termRows, termCols), hooked: turns != nil, last: time.Now(), start: time.Now()}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var werr error
loop:
	for {
		select {
		case c, ok := <-chunks:
			if !ok {
				chunks = nil // the terminal closed; the exit follows
				continue
			}
			r.output(c)
		case p, ok := <-turns:
			if !ok {
				turns = nil
				continue
			}
			r.turnEnd("hook", p)
		case s := <-l.sigs:
			l.emit("signal", "signal", s.String())
			if sig, ok := s.(syscall.Signal); ok {
				syscall.Kill(-pid, sig)
			}
			if r.ending == "" {
				r.ending, r.endedAt = "signal", time.Now()
			}
		case werr = <-done:
			break loop
		case now := <-tick.C:
			r.tick(now)
		}
	}
	// The output the harness wrote before it exited. A process of its
	// group that still holds the terminal is killed (the group outlives
	// the harness only while such a process is in it).
	timeout := time.After(drainWait)
	for killed := false; chunks != nil; {
		select {
		case c, ok := <-chunks:
			if !ok {
				chunks = nil
				break
			}
			r.output(c)
		case <-timeout:
			if killed {
				chunks = nil
				break
			}
			killed = true
			syscall.Kill(-pid, syscall.SIGKILL)
			timeout = time.After(drainWait)
		}
	}
	r.flush()
	harnessCode, err := waitCode(werr)
	if err != nil {
		return 1, err
	}
	code, by := harnessCode, "harness"
	switch r.ending {
	case "turn_end", "max_iterations":
		code, by = 0, "sitter"
	case "idle", "timeout":
		code, by = exitIdle, "sitter"
	case "signal":
		by = "signal"
	}
	l.emit("exit", "iteration", 1, "code", code, "harnessCode", harnessCode, "endedBy", by, "turns", r.turns)
	return code, nil
}

// readTurnEnds decodes the stop payloads the turn-end hook writes (one
// JSON value per stop). A payload that is not JSON still ends a turn;
// the stream cannot be followed after it, so later turns end by the idle
// timeout.
func readTurnEnds(f *os.File, stderr io.Writer) <-chan []byte {
	ch := make(chan []byte, 16)
	go func() {
		defer close(ch)
		dec := json.NewDecoder(f)
		for {
			var m json.RawMessage
			if err := dec.Decode(&m); err != nil {
				if !errors.Is(err, os.ErrClosed) {
					fmt.Fprintf(stderr, "sitter launch: turn-end hook payload: %v; later turns end by the idle timeout\n", err)
					ch <- nil
				}
				return
			}
			ch <- m
		}
	}()
	return ch
}

// ptyRun is the state of one bridge-interactive run.
type ptyRun struct {
	l        *launcher
	tty      *os.File
	pid      int
	prompts  []prompt
	answered map[string]bool
	pending  *prompt // matched, typed once the screen is quiet
	matched  time.Time
	strip    Stripper
	carry    []byte // an incomplete UTF-8 sequence for the next output event
	screen   *Screen
	hooked   bool      // a turn-end hook reports turns
	last     time.Time // the last output (or answer)
	turns    int
	lastTurn time.Time
	start    time.Time // the spawn, for Options.Timeout
	ending   string    // why sitter is ending the harness ("" = it is not)
	endedAt  time.Time
	killed   bool
}

// output handles a chunk of terminal output.
func (r *ptyRun) output(c []byte) {
	r.last = time.Now()
	r.screen.Write(c)
	if rep := r.screen.Replies(); len(rep) > 0 {
		r.tty.Write(rep)
	}
	text := append(r.carry, r.strip.Strip(c)...)
	text, r.carry = completeUTF8(text)
	r.carry = append([]byte(nil), r.carry...)
	if len(text) > 0 {
		r.l.emit("output", "text", string(text))
	}
	if r.pending == nil && r.ending == "" {
		screen := flat(r.screen.Text())
		for i := range r.prompts {
			if p := &r.prompts[i]; !r.answered[p.ID] && p.re.MatchString(screen) {
				r.pending, r.matched = p, r.last
				break
			}
		}
	}
}

func (r *ptyRun) flush() {
	text := append(r.carry, r.strip.Flush()...)
	r.carry = nil
	if len(text) > 0 {
		r.l.emit("output", "text", string(text))
	}
}

// turnEnd records the end of a turn (not once sitter is ending the
// harness: a stop racing the end is not a turn of the run).
func (r *ptyRun) turnEnd(source string, payload []byte) {
	if r.ending != "" {
		return
	}
	r.turns++
	r.lastTurn = time.Now()
	kv := []any{"turn", r.turns, "source", source}
	if source == "hook" {
		kv = append(kv, "native", r.l.o.Spec.TurnEnd.Event)
	}
	if len(payload) > 0 {
		kv = append(kv, "payload", json.RawMessage(payload))
	}
	r.l.emit("turn_end", kv...)
	if r.turns >= r.l.o.MaxIterations {
		r.l.emit("max_iterations", "iteration", r.turns)
		r.end("max_iterations")
	}
}

// tick answers a pending prompt once the screen is quiet, ends the
// harness once the output settled after a turn, or at the idle timeout,
// and kills the group when it outlives killGrace.
func (r *ptyRun) tick(now time.Time) {
	o := r.l.o
	if r.ending != "" {
		if !r.killed && now.Sub(r.endedAt) >= killGrace {
			r.killed = true
			r.l.emit("kill", "signal", "SIGKILL")
			syscall.Kill(-r.pid, syscall.SIGKILL)
		}
		return
	}
	quiet := now.Sub(r.last)
	switch {
	case o.Timeout > 0 && now.Sub(r.start) >= o.Timeout:
		r.l.emit("timeout", "after", o.Timeout.String(), "turns", r.turns)
		r.end("timeout")
	case r.pending != nil && (quiet >= o.Settle || now.Sub(r.matched) >= answerWithin*o.Settle):
		p := r.pending
		r.pending = nil
		if !p.re.MatchString(flat(r.screen.Text())) {
			return // gone by itself
		}
		r.answered[p.ID] = true
		r.tty.Write([]byte(p.Keys))
		r.l.emit("onboarding", "id", p.ID, "keys", p.Keys)
		r.last = now
	case r.turns > 0 && quiet >= o.Settle && now.Sub(r.lastTurn) >= o.Settle:
		r.end("turn_end")
	case quiet >= o.IdleTimeout:
		r.l.emit("idle", "quiet", o.IdleTimeout.String(), "screen", r.screen.Text())
		if !r.hooked {
			r.turnEnd("idle", nil)
			if r.ending == "" {
				r.end("turn_end")
			}
			return
		}
		r.end("idle")
	}
}

// end asks the harness's process group to terminate.
func (r *ptyRun) end(reason string) {
	r.ending, r.endedAt = reason, time.Now()
	r.l.emit("terminate", "reason", reason, "signal", "SIGTERM", "screen", r.screen.Text())
	syscall.Kill(-r.pid, syscall.SIGTERM)
}
