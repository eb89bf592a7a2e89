//go:build unix

package hook

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A handler that answers and exits while a background child keeps its
// stdout open costs the hook a short grace, not seconds.
func TestChaosStrayChildDoesNotDelay(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := Handler{Command: `sleep 3 & echo $! > ` + shellQuote(pidFile) + `; echo '{"decision":"allow","reason":"ok"}'`}
	t.Cleanup(func() { killPidFile(pidFile) })
	start := time.Now()
	outs := RunHandlers(testCtx(t), shellEvent("preToolUse"), []Handler{h})
	if d := time.Since(start); d > time.Second {
		t.Errorf("the hook waited %v for the handler's background child", d)
	}
	if outs[0].Err != nil || outs[0].Result.Decision != Allow {
		t.Errorf("outcome = %+v, err %v; want the handler's allow", outs[0].Result, outs[0].Err)
	}
}

func killPidFile(path string) {
	b, _ := os.ReadFile(path)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// A hung handler, and the children it started, are killed at its timeout:
// the outcome is a timeout error (the error policy decides), and no
// process of its group is left running.
func TestChaosHungHandlerKilledWithItsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := Handler{Command: `sleep 30 & echo $! > ` + shellQuote(pidFile) + `; sleep 30`, Timeout: 300 * time.Millisecond}
	t.Cleanup(func() { killPidFile(pidFile) })
	outs := RunHandlers(testCtx(t), shellEvent("preToolUse"), []Handler{h})
	if outs[0].Err == nil || outs[0].Err.Kind != ErrTimeout {
		t.Fatalf("outcome = %+v, err %+v; want a timeout error", outs[0].Result, outs[0].Err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the handler's child pid was not recorded: %q", b)
	}
	// The kill of the group is synchronous with the outcome; allow the
	// kernel to reap it (a zombie is dead too).
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil || zombie(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the hung handler's child %d is still running", pid)
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}
