//go:build unix

package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockWait bounds how long an install waits for another one into the
// same place.
var lockWait = 30 * time.Second

// lockDir holds an exclusive lock on dir (or, while dir does not exist
// yet, on its nearest existing parent) until unlock is called, so that
// installs into one project or home wait for each other instead of racing
// their copies and config merges. The lock is flock(2) on the folder
// itself: nothing is written for it, and it goes with the process.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	for os.IsNotExist(err) && filepath.Dir(dir) != dir {
		dir = filepath.Dir(dir)
		f, err = os.Open(dir)
	}
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() { f.Close() }, nil
		case err != syscall.EWOULDBLOCK && err != syscall.EINTR:
			f.Close()
			return nil, &os.PathError{Op: "lock", Path: dir, Err: err}
		case time.Now().After(deadline):
			f.Close()
			return nil, fmt.Errorf("%s: another sitter plugin install or uninstall has held it for %s; try again when it is done", dir, lockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
