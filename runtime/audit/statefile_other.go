//go:build !unix

package audit

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
)

// refuseLink fails when path is a symbolic link (no O_NOFOLLOW here: the
// check and the open are two steps).
func refuseLink(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &os.PathError{Op: "open", Path: path, Err: ErrSymlink}
	}
	return nil
}

// StateFile is a file of the state dir held under a lock. Without
// flock(2) the lock is a path+".lock" file created exclusively; one older
// than staleLock is taken to be left by a killed holder and removed.
type StateFile struct {
	f    *os.File
	lock string
	path string
}

const staleLock = 30 * time.Second

// LockState opens (creating) the file at path and takes its lock, waiting
// at most wait; ErrLockBusy when the lock stays taken.
func LockState(path string, wait time.Duration) (*StateFile, error) {
	if err := refuseLink(path); err != nil {
		return nil, err
	}
	lock := path + ".lock"
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		l, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			l.Close()
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if fi, err := os.Lstat(lock); err == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(lock)
			continue
		}
		if time.Now().After(deadline) {
			return nil, &os.PathError{Op: "lock", Path: path, Err: ErrLockBusy}
		}
		time.Sleep(pause)
		pause = min(pause*2, 10*time.Millisecond)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		os.Remove(lock)
		return nil, err
	}
	return &StateFile{f: f, lock: lock, path: path}, nil
}

// ReadAll reads the whole file from its start.
func (f *StateFile) ReadAll() ([]byte, error) {
	if _, err := f.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f.f)
}

// Replace makes b the file's content.
func (f *StateFile) Replace(b []byte) error {
	if err := f.f.Truncate(0); err != nil {
		return err
	}
	_, err := f.f.WriteAt(b, 0)
	return err
}

// Remove deletes the file while still holding its lock.
func (f *StateFile) Remove() error {
	f.f.Close()
	if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Close releases the lock.
func (f *StateFile) Close() error {
	if f == nil || f.lock == "" {
		return nil
	}
	err := f.f.Close()
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	os.Remove(f.lock)
	f.lock = ""
	return err
}
