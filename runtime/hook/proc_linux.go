//go:build linux

package hook

import "syscall"

// setDeathSignal has the kernel SIGKILL the handler's shell when sitter
// dies, however it dies. The signal follows the shell across exec (so
// `sh -c 'exec long-job'` is covered) but not to the processes the shell
// forks: those a SIGKILLed sitter cannot reach (a SIGTERM, SIGINT or
// SIGHUP one kills the whole process group first).
//
// Pdeathsig fires when the thread that forked the child exits, not only
// the process; the Go runtime ends a thread only when a goroutine that
// locked it exits locked, which sitter's hook path never does.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
