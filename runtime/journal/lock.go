package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"sitter.dev/sitter/runtime/internal/jsonw"
)

// LockFile is the run lock's name inside a run directory (the SDK's).
const LockFile = "run.lock"

// lockInfo is the content of the lock file, as the SDK writes it.
type lockInfo struct {
	PID        int    `json:"pid"`
	Owner      string `json:"owner"`
	AcquiredAt string `json:"acquiredAt"`
}

// Lock is a held run lock.
type Lock struct {
	f    *os.File
	path string
}

// DefaultLockWait bounds the wait for a lock when the context has no
// deadline: longer than any sane holder (an iteration runs a process for
// at most its timeout), short enough that a hung holder is reported.
const DefaultLockWait = 3 * time.Minute

// ErrLockTimeout is returned when the lock stays busy until the context ends.
var ErrLockTimeout = errors.New("run lock is busy")

// Acquire takes the lock at path, waiting while another live process holds
// it. A lock file whose pid is dead is reclaimed. On unix the file is also
// flock()ed, so the kernel releases a lock whose holder was killed; the pid
// check covers writers that do not flock (the SDK creates run.lock with
// O_EXCL and deletes it when done).
func Acquire(ctx context.Context, path, owner string) (*Lock, error) {
	return AcquireWithin(ctx, path, owner, DefaultLockWait)
}

// AcquireWithin is Acquire waiting at most max when ctx has no deadline.
// A free lock is taken without setting up the wait: a timer would start
// the runtime's poller, which a stop check (one per turn of an agent)
// otherwise never needs.
func AcquireWithin(ctx context.Context, path, owner string, max time.Duration) (*Lock, error) {
	var wait time.Duration // 0 until the lock is found busy
	for {
		l, busy, err := tryAcquire(path, owner)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !busy {
			return l, nil
		}
		if wait == 0 {
			if _, ok := ctx.Deadline(); !ok {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, max)
				defer cancel()
			}
			wait = time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			holder := ""
			if info, err := readLock(path); err == nil {
				holder = fmt.Sprintf(" (held by pid %d, %s)", info.PID, info.Owner)
			}
			return nil, fmt.Errorf("lock %s%s: %w", path, holder, ErrLockTimeout)
		case <-t.C:
		}
		wait = min(wait*2, 20*time.Millisecond)
	}
}

func readLock(path string) (lockInfo, error) {
	var info lockInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	err = json.Unmarshal(b, &info)
	return info, err
}

// writeInfo records this process as the holder.
func writeInfo(f *os.File, owner string) error {
	// json.MarshalIndent's bytes, without its first-use cost (a stop
	// check takes the lock at every turn of an agent).
	e := jsonw.Enc{Indent: "  ", HTML: true, B: make([]byte, 0, 128+len(owner))}
	e.Open()
	e.KeyInt("pid", int64(os.Getpid()))
	e.KeyStr("owner", owner)
	e.KeyStr("acquiredAt", time.Now().UTC().Format(time.RFC3339Nano))
	e.Close()
	e.B = append(e.B, '\n')
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(e.B, 0)
	return err
}

// heldByOther reads a lock file's pid: true when a live process other than
// this one wrote it.
func heldByOther(b []byte) bool {
	var info lockInfo
	if len(b) == 0 || json.Unmarshal(b, &info) != nil || info.PID <= 0 || info.PID == os.Getpid() {
		return false
	}
	return PIDAlive(info.PID)
}

// Release drops the lock: the file is removed while still locked, so a
// waiter that opened it notices the stale inode and retries.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := os.Remove(l.path)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }
