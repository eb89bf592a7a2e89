//go:build !unix

package hook

import "os/exec"

// setGroup: without process groups, cancellation kills the shell only.
func setGroup(cmd *exec.Cmd) {}
