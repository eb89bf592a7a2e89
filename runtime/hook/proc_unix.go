//go:build unix

package hook

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd in its own process group and makes cancellation kill
// the whole group: `sh -c 'sleep 100 & sleep 100'` must not outlive it.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
