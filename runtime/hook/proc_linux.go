//go:build linux

package hook

import (
	"strconv"
	"sync"
	"syscall"
	"time"
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
// the group is orphaned with the sentinel stopped: the kernel continues
// it, and it sends SIGHUP to every member (sentinelScript; the kernel's
// own SIGHUP does not reach every member on every kernel). A child the
// handler detached on purpose is spared: `nohup` ignores SIGHUP, `setsid`
// leaves the group.
//
// Nothing else changes for the handler: no terminal, no new session, no
// signal while sitter lives. release kills the sentinel with SIGKILL,
// which ends its stop without orphaning anything stopped: a background
// child a handler leaves behind when it answers runs on as before.
//
// The sentinel starts only once the handler has run for holdDelay: most
// handlers answer sooner and so cost no extra process, while a harness
// kills a hook with SIGKILL past its timeout, seconds in (Codex). A
// SIGKILL within a handler's first holdDelay takes only its shell.
//
// The rule needs the new parent (init, or the nearest subreaper) to be in
// another session than sitter's. Where init shares sitter's session (a
// container whose init runs the harness in its own session) the group
// would never count as orphaned and the sentinel would stay stopped, so
// holdGroup does nothing there; a subreaper in sitter's session cannot be
// seen from here (see docs/contract.md, "Limits and signals").
func holdGroup(pgid int) *groupHold {
	if !orphanRuleApplies() {
		return nil
	}
	h := &groupHold{}
	h.timer = time.AfterFunc(holdDelay, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if !h.released {
			h.pid = startSentinel(pgid)
		}
	})
	return h
}

// holdDelay is how long a handler runs before holdGroup starts its
// sentinel.
const holdDelay = 50 * time.Millisecond

// sentinelScript is the sentinel: while its parent is sitter ($1) it
// stops itself; once continued with another parent (sitter died and the
// group was orphaned) it sends SIGHUP to its group itself, ignoring it
// (trap) so as to live to do so. The kernel's own SIGHUP to an orphaned
// group is not enough everywhere: on a 6.18 Firecracker guest it reached
// the stopped member alone, while SIGCONT reached every member. A stray
// SIGCONT while sitter lives stops it again. The parent is read from
// /proc/$$/stat (field 4) with builtins only: the environment is empty,
// so no PATH. The parent is checked before the first stop: sitter may
// already be gone when the script starts.
const sentinelScript = `trap '' HUP
p=$1
while :; do
	read -r s < /proc/$$/stat || break
	set -- $s
	[ "$4" = "$p" ] || break
	kill -STOP $$
done
kill -HUP 0`

// startSentinel starts the sentinel, a /bin/sh that stops itself
// (sentinelScript), in process group pgid and returns its pid; 0 when it
// cannot (the group is gone: the handler has exited and been reaped with
// all it started; or /bin/sh cannot start: the handler runs unguarded, as
// before). Plain syscalls, not os.StartProcess: no pidfd or Process to
// keep per sentinel.
func startSentinel(pgid int) int {
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", sentinelScript, "sh", strconv.Itoa(syscall.Getpid())}, &syscall.ProcAttr{
		Env: []string{},
		// In the handler's group; no parent-death signal (a signal at
		// sitter's death would end the stop before the group is orphaned).
		Sys: &syscall.SysProcAttr{Setpgid: true, Pgid: pgid},
	})
	if err != nil {
		return 0
	}
	// The shell stops itself once its trap is set: stopped from here
	// before that, the kernel's SIGHUP at sitter's death would kill it
	// before it could signal its group.
	return pid
}

type groupHold struct {
	timer    *time.Timer
	mu       sync.Mutex
	released bool
	pid      int // the sentinel's, once started
}

// release ends the sentinel, or keeps it from starting, once the handler
// has been waited for.
func (h *groupHold) release() {
	if h == nil {
		return
	}
	h.timer.Stop()
	h.mu.Lock()
	h.released = true
	pid := h.pid
	h.mu.Unlock()
	if pid != 0 {
		syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
	}
}

// orphanRuleApplies reports whether init is in another session than
// sitter (checked once a process).
var orphanRuleApplies = sync.OnceValue(func() bool {
	own, _, e1 := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	initSID, _, e2 := syscall.RawSyscall(syscall.SYS_GETSID, 1, 0, 0)
	return e1 == 0 && e2 == 0 && own != initSID
})
