//go:build linux

package hook

import (
	"context"
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
// handler too: it must not outlive the hook call it answers.
func TestChaosHandlerDiesWithSitter(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperHandlerProcess$")
	helper.Env = append(os.Environ(), helperEnv+"=echo $$ > "+shellQuote(pidFile)+"; exec sleep 30")
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		helper.Process.Kill()
		helper.Wait()
		killPidFile(pidFile)
	})
	pid := waitPid(t, pidFile)
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("handler %d still runs 3s after its sitter was SIGKILLed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); strings.HasSuffix(string(b), "\n") && s != "" {
			pid, err := strconv.Atoi(s)
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
