//go:build !unix

package launch

import (
	"os"
	"os/exec"
)

func setGroup(cmd *exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, s os.Signal, group bool) { cmd.Process.Signal(s) }
