//go:build unix && !linux

package hook

import "syscall"

// setDeathSignal: only Linux has a parent-death signal; elsewhere a
// handler survives a SIGKILLed sitter (a catchable signal still kills its
// process group).
func setDeathSignal(attr *syscall.SysProcAttr) {}

// holdGroup: the orphaned-group sentinel (see proc_linux.go) is proven on
// Linux only.
func holdGroup(pgid int) *groupHold { return nil }

type groupHold struct{}

func (h *groupHold) release() {}
