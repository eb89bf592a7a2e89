//go:build unix && !linux

package hook

import "syscall"

// setDeathSignal: only Linux has a parent-death signal; elsewhere a
// handler survives a SIGKILLed sitter (a catchable signal still kills its
// process group).
func setDeathSignal(attr *syscall.SysProcAttr) {}
