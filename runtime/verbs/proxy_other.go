//go:build !linux

package verbs

import "syscall"

// gatewayAttr: no parent-death signal outside Linux; signals to sitter
// proxy are still forwarded (runProxy).
func gatewayAttr() *syscall.SysProcAttr { return nil }
