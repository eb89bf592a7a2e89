package verbs

import "syscall"

// gatewayAttr: the kernel sends the gateway SIGTERM when sitter proxy dies,
// however it dies (SIGKILL included), so the gateway never outlives it.
func gatewayAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
