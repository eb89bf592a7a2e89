//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"sitter.dev/sitter/runtime/launch"
)

// tty drives a harness's terminal UI in a pseudo-terminal for cases that
// need keystrokes (a prompt typed in, a permission dialog answered, a
// slash command, an interrupt): it keeps an emulated screen (answering
// the terminal's status queries) that a case waits on.
type tty struct {
	t      *testing.T
	f      *os.File
	cmd    *exec.Cmd
	mu     sync.Mutex
	screen *launch.Screen
	// notify wakes a waitFor on new output.
	notify chan struct{}
	done   chan struct{}
	err    error
}

// startTTY runs bin with args in dir under a 200×50 pseudo-terminal; the
// process group is killed when the test ends.
func startTTY(t *testing.T, dir string, env []string, bin string, args ...string) *tty {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var e []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != "TERM" && k != "COLUMNS" && k != "LINES" {
			e = append(e, kv)
		}
	}
	cmd.Env = append(e, "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	d := &tty{t: t, f: f, cmd: cmd, screen: launch.NewScreen(50, 200), notify: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				d.mu.Lock()
				d.screen.Write(buf[:n])
				rep := d.screen.Replies()
				d.mu.Unlock()
				if len(rep) > 0 {
					f.Write(rep)
				}
				select {
				case d.notify <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { d.err = cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s screen at the end:\n%s", filepath.Base(bin), d.raw())
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
		}
		// A harness may start helpers outside its process group (Claude
		// Code's shell snapshot): left running, they write into the
		// test's home while its TempDir is removed ("directory not
		// empty", seen once in TestClaudeTUI/directory-added).
		killByHome(envValue(cmd.Env, "HOME"))
		f.Close()
	})
	return d
}

// text is the screen now, blanks and newlines folded to one space.
func (d *tty) text() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(strings.Fields(d.screen.Text()), " ")
}

// raw is the screen now, as shown.
func (d *tty) raw() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.screen.Text()
}

// waitFor waits until cond holds on the folded screen, checked on each
// output and every 200 ms (files the harness writes change without
// output), failing the test at the timeout or when the harness exits
// first.
func (d *tty) waitFor(what string, timeout time.Duration, cond func(screen string) bool) {
	d.t.Helper()
	deadline := time.After(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond(d.text()) {
		select {
		case <-d.done:
			if cond(d.text()) {
				return
			}
			d.t.Fatalf("the harness exited (%v) before %s; screen:\n%s", d.err, what, d.raw())
		case <-d.notify:
		case <-tick.C:
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s; screen:\n%s", what, d.raw())
		}
	}
}

// waitScreen waits until the folded screen matches the regexp.
func (d *tty) waitScreen(pattern string, timeout time.Duration) {
	d.t.Helper()
	re := regexp.MustCompile(pattern)
	d.waitFor("the screen to show "+pattern, timeout, re.MatchString)
}

// send types keys ("\r" is Enter, "\x1b" Escape, "\x03" Ctrl-C).
func (d *tty) send(keys string) {
	d.t.Helper()
	if _, err := d.f.Write([]byte(keys)); err != nil {
		d.t.Fatalf("write to the terminal: %v", err)
	}
}

// typeLine types text, waits a moment for the UI to take it, then Enter.
func (d *tty) typeLine(text string) {
	d.t.Helper()
	d.send(text)
	time.Sleep(500 * time.Millisecond)
	d.send("\r")
}

// typeShown types text, waits until the screen shows it (the editor has
// it), then presses Enter: for a TUI that drops keys typed while it
// redraws.
func (d *tty) typeShown(text string) {
	d.t.Helper()
	d.send(text)
	folded := strings.Join(strings.Fields(text), " ")
	d.waitFor("the typed text on the screen", time.Minute, func(s string) bool { return strings.Contains(s, folded) })
	time.Sleep(300 * time.Millisecond)
	d.send("\r")
}

// wait waits for the harness to exit, up to timeout; false if it did not.
func (d *tty) wait(timeout time.Duration) bool {
	select {
	case <-d.done:
		return true
	case <-time.After(timeout):
		return false
	}
}
