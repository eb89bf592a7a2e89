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
