//go:build unix

package journal

import (
	"errors"
	"io"
	"os"
	"syscall"
)

func tryAcquire(path, owner string) (*Lock, bool, error) {
	fd, err := open(path, syscall.O_RDWR|syscall.O_CREAT, 0o644)
	if err != nil {
		return nil, false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path) // a blocking descriptor: not on the poller (see file_unix.go)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
			return nil, true, nil
		}
		return nil, false, err
	}
	// The holder before us may have removed the file after we opened it:
	// then we locked an orphan inode and must start over.
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, err
	}
	pi, err := os.Stat(path)
	if err != nil || !os.SameFile(fi, pi) {
		f.Close()
		return nil, true, nil
	}
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, false, err
	}
	if heldByOther(b) {
		f.Close()
		return nil, true, nil
	}
	if err := writeInfo(f, owner); err != nil {
		f.Close()
		return nil, false, err
	}
	return &Lock{f: f, path: path}, false, nil
}

// PIDAlive reports whether process pid exists (a lock's holder, a
// launch's mark).
func PIDAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
