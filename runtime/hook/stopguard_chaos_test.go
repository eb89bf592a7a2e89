package hook

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sitter.dev/sitter/runtime/internal/testproc"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitter.dev/sitter/runtime/audit"
)

// stopChaosEnv makes this test binary one blocking stop call of session
// "chaos" (see TestStopGuardHelperProcess): the value is the state dir.
const stopChaosEnv = "SITTER_STOPGUARD_CHAOS_DIR"

// TestStopGuardHelperProcess is not a test: run by the chaos tests as a
// child process, it waits for its stdin to close (so that all children
// start before any counts), applies the guard to a blocking stop and
// prints the decision it got.
func TestStopGuardHelperProcess(t *testing.T) {
	dir := os.Getenv(stopChaosEnv)
	if dir == "" {
		t.Skip("helper process of the chaos tests")
	}
	io.Copy(io.Discard, os.Stdin)
	n, _ := strconv.Atoi(os.Getenv("STOPGUARD_CAP"))
	at, _ := strconv.ParseInt(os.Getenv("STOPGUARD_START"), 10, 64)
	var active *bool
	if a := os.Getenv("STOPGUARD_ACTIVE"); a != "" {
		b := a == "true"
		active = &b
	}
	// The wait is long: this case counts blocks, and on a loaded machine
	// (make chaos runs every package's cases at once) 200 processes
	// queueing for one lock can outlast StopLockWait, which lets stops
	// through by design (TestChaosStopCounterLockBusy proves that bound).
	g := StopGuard{Dir: dir, Cap: n, Start: time.Unix(0, at), LockWait: time.Minute}
	r, diags := g.Apply(stopEvent("chaos", active), Result{Decision: Block, Reason: "again"})
	fmt.Println(r.Decision)
	for _, d := range diags {
		if !strings.HasPrefix(d, "sitter: stop blocked ") {
			fmt.Fprintln(os.Stderr, d)
		}
	}
	os.Exit(0)
}

// 200 blocking stop calls of one session at once, cap N: exactly N blocks
// and 200-N let through. Without the lock, read-increment-write lost
// counts (the counter ended at 6-12) and no call was let through.
func TestChaosStopCapConcurrent(t *testing.T) {
	const calls, capN = 200, 20
	for _, c := range []struct{ name, active string }{
		{"claude-code, stop_hook_active true", "true"},
		{"a harness that does not say, one stop", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			start := strconv.FormatInt(time.Now().UnixNano(), 10)
			cs := testproc.Together(t, "TestStopGuardHelperProcess", calls, func(int) []string {
				return []string{stopChaosEnv + "=" + dir, "STOPGUARD_CAP=" + strconv.Itoa(capN), "STOPGUARD_START=" + start, "STOPGUARD_ACTIVE=" + c.active}
			})
			got := map[string]int{}
			for i, ch := range cs {
				if ch.Err != nil {
					t.Errorf("child %d: %v: %s", i, ch.Err, ch.Stderr.String())
				}
				if s := ch.Stderr.String(); s != "" {
					t.Errorf("child %d diagnostics: %s", i, s)
				}
				got[strings.TrimSpace(ch.Stdout.String())]++
			}
			if got["block"] != capN || got["noop"] != calls-capN || len(got) != 2 {
				t.Errorf("decisions %v, want %d block and %d noop", got, capN, calls-capN)
			}
		})
	}
}

// Two plugins block every stop of a session, their calls at each stop
// concurrent: the session stops once their blocks together pass the cap.
// It used to never stop: the call that passed the cap let the stop
// through and reset the count, and the other call blocked it again.
func TestChaosStopCapTwoPlugins(t *testing.T) {
	const capN = 5
	yes, no := true, false
	for _, c := range []struct {
		name   string
		active func(first bool) *bool
	}{
		{"claude-code", func(first bool) *bool {
			if first {
				return &no
			}
			return &yes
		}},
		{"a harness that does not say", func(bool) *bool { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := StopGuard{Dir: t.TempDir(), Cap: capN, Start: time.Now()}
			for chain := 0; chain < 3; chain++ {
				stops := 0
				for blocked := true; blocked; stops++ {
					if stops > 4*capN {
						t.Fatalf("chain %d: still blocked after %d stops", chain, stops)
					}
					g.Start = g.Start.Add(time.Minute)
					ev := stopEvent("s1", c.active(stops == 0))
					var wg sync.WaitGroup
					res := make([]Result, 2)
					for p := range res {
						wg.Add(1)
						go func() {
							defer wg.Done()
							res[p], _ = g.Apply(ev, Result{Decision: Block, Reason: fmt.Sprintf("plugin %d", p)})
						}()
					}
					wg.Wait()
					blocked = res[0].Decision == Block || res[1].Decision == Block
				}
				// ceil(cap/2) stops with two blocks each, then the stop let through
				if want := (capN+1)/2 + 1; stops != want {
					t.Errorf("chain %d: the session stopped at stop %d, want %d", chain, stops, want)
				}
			}
		})
	}
}

// A symbolic link planted at a stop counter is refused with a diagnostic:
// the file it points at is neither read nor written, the link stays, and
// the stop is let through (the guard cannot count).
func TestChaosStopCounterSymlink(t *testing.T) {
	dir := t.TempDir()
	g := StopGuard{Dir: dir, Cap: 3}
	path := g.path("claude-code", "s1")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "precious")
	const content = `{"harness":"claude-code","session":"s1","count":1}` + "\n"
	if err := os.WriteFile(outside, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, path); err != nil {
		t.Skip("no symlinks:", err)
	}
	for _, r := range []Result{{Decision: Block, Reason: "again"}, {Decision: Allow}} {
		got, diags := g.Apply(stopEvent("s1", nil), r)
		if got.Decision == Block || len(diags) != 1 || !strings.Contains(diags[0], "symbolic link") {
			t.Errorf("%s through a link: %+v, %q", r.Decision, got, diags)
		}
		if b, _ := os.ReadFile(outside); string(b) != content {
			t.Errorf("the file outside was changed: %q", b)
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link is gone: %v", err)
		}
	}
}

// A counter whose lock stays taken (a hung holder) lets the stop through
// with one diagnostic once the bounded wait is over, never a hang.
func TestChaosStopCounterLockBusy(t *testing.T) {
	g := StopGuard{Dir: t.TempDir(), Cap: 3}
	path := g.path("claude-code", "s1")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	held, err := audit.LockState(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	start := time.Now()
	got, diags := g.Apply(stopEvent("s1", nil), Result{Decision: Block, Reason: "again"})
	if d := time.Since(start); d > StopLockWait+time.Second {
		t.Errorf("waited %v", d)
	}
	if got.Decision != Noop || len(diags) != 1 || !strings.Contains(diags[0], "lock is busy") || !strings.HasSuffix(diags[0], "letting the session stop") {
		t.Errorf("busy lock: %+v, %q", got, diags)
	}
}
