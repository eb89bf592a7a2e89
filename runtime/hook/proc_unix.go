//go:build unix

package hook

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd in its own process group and makes cancellation kill
// the whole group: `sh -c 'sleep 100 & sleep 100'` must not outlive it.
// Where the OS can (Linux), the group also dies with sitter: a SIGKILL to
// `sitter hook`, which leaves no chance to kill the group, must not leave
// the handler or what it started running (see setDeathSignal, holdGroup).
func setGroup(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(attr)
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
