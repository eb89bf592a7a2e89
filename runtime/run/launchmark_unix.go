//go:build unix

package run

import "syscall"

// processAlive: signal 0 reaches pid (EPERM: it exists, another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
