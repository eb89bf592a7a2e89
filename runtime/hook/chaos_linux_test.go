//go:build linux

package hook

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary, re-executed, run one handler and
// block: the stand-in for a `sitter hook` process that gets killed.
const helperEnv = "SITTER_HOOK_TEST_HELPER_HANDLER"

func TestHelperHandlerProcess(t *testing.T) {
	cmd := os.Getenv(helperEnv)
	if cmd == "" {
		t.Skip("helper process for TestChaosHandlerDiesWithSitter")
	}
	RunHandlers(context.Background(), shellEvent("preToolUse"), []Handler{{Command: cmd, Timeout: time.Minute}})
	os.Exit(0)
}

// SIGKILL to the process running the handlers (sitter hook) kills the
// handler and every process of its group: nothing it started outlives
// the hook call it answers, except a child it detached on purpose.
func TestChaosHandlerDiesWithSitter(t *testing.T) {
	for _, c := range []struct {
		name string
		// handler writes its shell's pid to $1 and the processes that
		// must die to $2, one a line.
		handler string
	}{
		{"exec", `echo $$ > "$1"; exec sleep 30`},
		{"background child", `sleep 30 & echo $! > "$2"; echo $$ > "$1"; wait`},
		{"foreground grandchild", `echo $$ > "$1"; sh -c 'echo $$ > "$1"; sleep 30; true' sh "$2"; true`},
		{"pipeline", `echo $$ > "$1"; sleep 30 | sleep 31 & sleep 32 & echo $! >> "$2"; wait`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			shellFile, childFile, nohupFile := filepath.Join(dir, "shell"), filepath.Join(dir, "children"), filepath.Join(dir, "nohup")
			// Every case also starts a nohup'd child: detached on purpose,
			// it may outlive sitter (it ignores the SIGHUP).
			h := fmt.Sprintf(`set -- %s %s; nohup sleep 30 >/dev/null 2>&1 & echo $! > %s; %s`,
				shellQuote(shellFile), shellQuote(childFile), shellQuote(nohupFile), c.handler)
			helper := exec.Command(os.Args[0], "-test.run=^TestHelperHandlerProcess$")
			helper.Env = append(os.Environ(), helperEnv+"="+h)
			// Its own session, as a hook call's is apart from init's
			// (holdGroup needs that; the test's session may share init's).
			helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			shell := waitPid(t, shellFile)
			pgid, err := syscall.Getpgid(shell)
			if err != nil {
				t.Fatal(err)
			}
			nohup := waitPid(t, nohupFile)
			// nohup ignores SIGHUP, then execs sleep: until then a SIGHUP
			// would kill it.
			waitComm(t, nohup, "sleep")
			t.Cleanup(func() {
				helper.Process.Kill()
				helper.Wait()
				syscall.Kill(-pgid, syscall.SIGKILL)
			})
			if c.name != "exec" {
				waitPid(t, childFile)
			}
			// Let every process of the group start, and the handler run
			// past holdDelay: its sentinel is in the group, stopped.
			time.Sleep(100 * time.Millisecond)
			waitStoppedMember(t, pgid)
			before := groupMembers(pgid)
			if len(before) < 2 {
				t.Fatalf("group %d has %v before the kill", pgid, before)
			}
			if err := helper.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			helper.Wait()
			deadline := time.Now().Add(3 * time.Second)
			for {
				var left []string
				for _, p := range groupMembers(pgid) {
					if p != nohup {
						left = append(left, procLine(p))
					}
				}
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("3s after a SIGKILL of its sitter, the handler's group still has:\n%s", strings.Join(left, "\n"))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !alive(nohup) {
				t.Errorf("the nohup'd child %d died with sitter", nohup)
			}
		})
	}
}

// A handler that answers while a background child of its own runs on
// (output elsewhere, so that it does not hold the call): the child still
// runs after the call, as it would under the harness alone, and nothing
// else of the handler's group is left (no sentinel).
func TestHandlerBackgroundChildOutlivesCall(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() { killPidFile(pidFile) })
	h := Handler{Command: `sleep 30 >/dev/null 2>&1 & echo $! > ` + shellQuote(pidFile) + `; echo '{"decision":"allow"}'`}
	outs := RunHandlers(testCtx(t), shellEvent("preToolUse"), []Handler{h})
	if outs[0].Err != nil || outs[0].Result.Decision != Allow {
		t.Fatalf("outcome = %+v, err %v", outs[0].Result, outs[0].Err)
	}
	pid := waitPid(t, pidFile)
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if !alive(pid) {
		t.Fatalf("the handler's background child %d died with the call", pid)
	}
	if m := groupMembers(pgid); len(m) != 1 || m[0] != pid {
		var l []string
		for _, p := range m {
			l = append(l, procLine(p))
		}
		t.Errorf("the handler's group holds more than its background child:\n%s", strings.Join(l, "\n"))
	}
}

// waitComm waits until process pid runs the program comm.
func waitComm(t *testing.T, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(b)) == comm {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d does not run %s", pid, comm)
}

// waitStoppedMember waits up to 10 s for a stopped process in group
// pgid: the sentinel of holdGroup.
func waitStoppedMember(t *testing.T, pgid int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for _, p := range groupMembers(pgid) {
			if procState(p) == "T" {
				return
			}
		}
	}
	t.Fatalf("no stopped sentinel in group %d", pgid)
}

// procState is the state letter of /proc/<pid>/stat ("T": stopped).
func procState(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) {
		return string(b[i+2])
	}
	return "?"
}

// groupMembers lists the live (not zombie) processes of process group pgid.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func procLine(pid int) string {
	cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return fmt.Sprintf("%d %s: %s", pid, procState(pid), strings.ReplaceAll(string(cmd), "\x00", " "))
}

func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); strings.HasSuffix(string(b), "\n") && s != "" {
			pid, err := strconv.Atoi(strings.Fields(s)[0])
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the handler did not start")
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
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// A handler that answers within holdDelay costs no sentinel process; one
// that runs longer gets its stopped sentinel, which release ends.
func TestHoldGroupStartsLate(t *testing.T) {
	if !orphanRuleApplies() {
		t.Skip("init shares this session: holdGroup starts no sentinel here")
	}
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "30")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	fast := holdGroup(start().Process.Pid)
	fast.release()
	if fast.pid != 0 {
		t.Errorf("a sentinel started for a handler released at once")
	}

	c := start()
	slow := holdGroup(c.Process.Pid)
	waitStoppedMember(t, c.Process.Pid)
	slow.mu.Lock()
	p := slow.pid
	slow.mu.Unlock()
	if p == 0 {
		t.Fatal("no sentinel recorded for a handler that ran past holdDelay")
	}
	slow.release()
	if alive(p) {
		t.Errorf("the sentinel %d outlived release", p)
	}
}
