//go:build unix

package launch

import (
	"os"
	"os/exec"
	"syscall"
)

// setGroup starts a headless harness in its own process group, so that a
// signal reaches every process it started.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup forwards s to the harness's process group (or, for an
// interactive harness sharing sitter's terminal group, to the harness).
func signalGroup(cmd *exec.Cmd, s os.Signal, group bool) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		cmd.Process.Signal(s)
		return
	}
	if group {
		syscall.Kill(-cmd.Process.Pid, sig)
		return
	}
	cmd.Process.Signal(sig)
}
