//go:build unix

package plugin

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir holds an exclusive lock on dir (or, while dir does not exist
// yet, on its nearest existing parent) until unlock is called, so that
// installs into one project or home wait for each other instead of racing
// their copies and config merges. The lock is flock(2) on the folder
// itself: nothing is written for it, and it goes with the process.
func lockDir(dir string) (unlock func(), err error) {
	for {
		f, err := os.Open(dir)
		if os.IsNotExist(err) && filepath.Dir(dir) != dir {
			dir = filepath.Dir(dir)
			continue
		}
		if err != nil {
			return nil, err
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
			if err != syscall.EINTR {
				break
			}
		}
		if err != nil {
			f.Close()
			return nil, &os.PathError{Op: "lock", Path: dir, Err: err}
		}
		return func() { f.Close() }, nil
	}
}
