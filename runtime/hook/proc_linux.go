//go:build linux

package hook

import (
	"os"
	"sync"
	"syscall"
)

// setDeathSignal has the kernel SIGKILL the handler's shell when sitter
// dies, however it dies. The signal follows the shell across exec (so
// `sh -c 'exec long-job'` is covered) but not to the processes the shell
// forks: those holdGroup covers.
//
// Pdeathsig fires when the thread that forked the child exits, not only
// the process; the Go runtime ends a thread only when a goroutine that
// locked it exits locked, which sitter's hook path never does.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

// holdGroup makes a SIGKILL of sitter, which no code of sitter's sees,
// take every process of the handler's group with it, not only the shell
// (the parent-death signal reaches sitter's direct children only): a
// handler's `sleep 5` in `sh -c 'do_thing; sleep 5'`, or a `job &` it
// started, would otherwise run on.
//
// It uses the POSIX orphaned-process-group rule: when a process group
// loses its last member whose parent is outside the group but in the
// same session, and a member of the group is stopped, the kernel sends
// SIGHUP and SIGCONT to every member. holdGroup starts a sentinel, a
// stopped /bin/sh, in the handler's group as a child of sitter. While
// sitter lives, the shell and the sentinel (sitter's children) keep the
// group from being orphaned; when sitter dies they are re-parented and
// the group is orphaned with the sentinel stopped: every member gets
// SIGHUP. A child the handler detached on purpose is spared: `nohup`
// ignores SIGHUP, `setsid` leaves the group.
//
// Nothing else changes for the handler: no terminal, no new session, no
// signal while sitter lives. release kills the sentinel with SIGKILL,
// which ends its stop without orphaning anything stopped: a background
// child a handler leaves behind when it answers runs on as before.
//
// The rule needs the new parent (init, or the nearest subreaper) to be in
// another session than sitter's. Where init shares sitter's session (a
// container whose init runs the harness in its own session) the group
// would never count as orphaned and the sentinel would stay stopped, so
// holdGroup does nothing there; a subreaper in sitter's session cannot be
// seen from here (see the README's limits).
func holdGroup(pgid int) *groupHold {
	if !orphanRuleApplies() {
		return nil
	}
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "kill -STOP $$"}, &os.ProcAttr{
		Env: []string{},
		// In the handler's group; no parent-death signal (a signal at
		// sitter's death would end the stop before the group is orphaned).
		Sys: &syscall.SysProcAttr{Setpgid: true, Pgid: pgid},
	})
	if err != nil {
		// The handler has exited and been reaped with its whole group, or
		// /bin/sh cannot start: the handler runs unguarded, as before.
		return nil
	}
	// The shell stops itself too; this stops it before its start-up.
	p.Signal(syscall.SIGSTOP)
	return &groupHold{p}
}

type groupHold struct{ p *os.Process }

// release ends the sentinel once the handler has been waited for.
func (h *groupHold) release() {
	if h == nil {
		return
	}
	h.p.Kill()
	h.p.Wait()
}

// orphanRuleApplies reports whether init is in another session than
// sitter (checked once a process).
var orphanRuleApplies = sync.OnceValue(func() bool {
	own, _, e1 := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	initSID, _, e2 := syscall.RawSyscall(syscall.SYS_GETSID, 1, 0, 0)
	return e1 == 0 && e2 == 0 && own != initSID
})
