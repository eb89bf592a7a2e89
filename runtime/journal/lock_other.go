//go:build !unix

package journal

import (
	"errors"
	"io/fs"
	"os"
)

// Without flock the lock is the file's existence (as in the SDK); a lock
// whose pid is dead is removed and taken.
func tryAcquire(path, owner string) (*Lock, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		b, rerr := os.ReadFile(path)
		if rerr == nil && !heldByOther(b) {
			os.Remove(path)
		}
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := writeInfo(f, owner); err != nil {
		f.Close()
		os.Remove(path)
		return nil, false, err
	}
	return &Lock{f: f, path: path}, false, nil
}

// PIDAlive reports whether process pid exists (a lock's holder, a
// launch's mark).
func PIDAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
