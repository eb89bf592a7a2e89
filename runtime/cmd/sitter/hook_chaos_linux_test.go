//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitter.dev/sitter/generated/registry"
)

// Signals to `sitter hook` (Linux: the handler's shell carries the
// parent-death signal there only).

// helperEnv makes the test binary, re-executed, a `sitter hook` call with
// this handler.
const helperEnv = "SITTER_CHAOS_HOOK_HANDLER"

func TestHelperHookProcess(t *testing.T) {
	h := os.Getenv(helperEnv)
	if h == "" {
		t.Skip("helper process of TestChaosSignalKillsHandlers")
	}
	in := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	os.Exit(run([]string{"hook", "claude-code", "PreToolUse", "--timeout", "1m", "--handler", h},
		strings.NewReader(in), os.Stdout, os.Stderr, registry.Registry))
}

// A signal to `sitter hook` leaves no handler process behind: SIGTERM,
// SIGINT and SIGHUP kill the handler's process group before sitter exits;
// SIGKILL, which sitter cannot catch, still takes the handler's shell
// (Linux: the parent-death signal) and its background child (the
// orphaned-group SIGHUP, see hook.holdGroup) with it.
func TestChaosSignalKillsHandlers(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Setenv("SITTER_STATE_DIR", t.TempDir())
			dir := t.TempDir()
			shell, child := filepath.Join(dir, "shell"), filepath.Join(dir, "child")
			// The shell records itself and a background child, then waits.
			h := fmt.Sprintf("sleep 30 & echo $! > %s; echo $$ > %s; wait", child, shell)
			helper := exec.Command(os.Args[0], "-test.run=^TestHelperHookProcess$")
			helper.Env = append(os.Environ(), helperEnv+"="+h)
			// Its own session, as a hook call's is apart from init's (the
			// SIGKILL case needs that; the test's session may share init's).
			helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			var pids []int
			t.Cleanup(func() {
				helper.Process.Kill()
				helper.Wait()
				for _, p := range pids {
					syscall.Kill(p, syscall.SIGKILL)
				}
			})
			pids = append(pids, waitPid(t, shell), waitPid(t, child))
			if sig == syscall.SIGKILL {
				// The handler has run long enough to get its sentinel
				// (hook.holdGroup starts it late).
				waitSentinel(t, pids[0])
			}
			if err := helper.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			helper.Wait()
			deadline := time.Now().Add(3 * time.Second)
			for _, p := range pids {
				for alive(p) {
					if time.Now().After(deadline) {
						t.Fatalf("handler process %d still runs 3s after %s to sitter hook", p, sig)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

// waitSentinel waits up to 10 s for a stopped process in the group of
// pid: the sentinel hook.holdGroup keeps there.
func waitSentinel(t *testing.T, pid int) {
	t.Helper()
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			p, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			b, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			i := strings.LastIndexByte(string(b), ')')
			if g, err := syscall.Getpgid(p); err == nil && g == pgid && i > 0 && i+2 < len(b) && b[i+2] == 'T' {
				return
			}
		}
	}
	t.Fatalf("no stopped sentinel in the handler's group %d", pgid)
}

func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); s != "" && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the handler did not write %s", path)
	return 0
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
