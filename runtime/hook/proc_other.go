//go:build !unix

package hook

import "os/exec"

// setGroup: without process groups, cancellation kills the shell only.
func setGroup(cmd *exec.Cmd) {}

// holdGroup: no process groups here.
func holdGroup(pgid int) *groupHold { return nil }

type groupHold struct{}

func (h *groupHold) release() {}
