//go:build unix

package audit

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// openNoFollow opens a file of the state dir with raw system calls (no
// poller set-up, as in appendFile), refusing a symbolic link in the last
// path element: O_NOFOLLOW makes open fail with ELOOP instead of writing
// through the link to wherever it points.
func openNoFollow(path string, flag int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ELOOP {
			return -1, &os.PathError{Op: "open", Path: path, Err: ErrSymlink}
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// StateFile is a file of the state dir opened without following a link
// and held under an exclusive flock(2). The kernel drops the lock when
// the holder dies, so a killed hook call never leaves it taken.
type StateFile struct {
	fd   int
	path string
}

// LockState opens (creating) the file at path without following a link
// and takes its exclusive lock, waiting at most wait; ErrLockBusy when
// the lock stays taken. A holder that removed the file while holding it
// (Remove) leaves the waiter with an orphan inode: the waiter sees that
// the path no longer names its file and opens it again.
func LockState(path string, wait time.Duration) (*StateFile, error) {
	deadline := time.Now().Add(wait)
	for {
		fd, err := openNoFollow(path, syscall.O_RDWR|syscall.O_CREAT, 0o600)
		if err != nil {
			return nil, err
		}
		err = flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == syscall.EWOULDBLOCK || err == syscall.EAGAIN {
			// Sleep in the kernel until the holder lets go: many waiters
			// polling would starve the holder on a busy machine.
			err = flockWait(fd, time.Until(deadline))
		}
		if err == nil {
			var held, named syscall.Stat_t
			if syscall.Fstat(fd, &held) == nil && syscall.Lstat(path, &named) == nil &&
				held.Dev == named.Dev && held.Ino == named.Ino {
				return &StateFile{fd: fd, path: path}, nil
			}
			syscall.Close(fd) // removed or replaced under us: open again
			continue
		}
		if err == ErrLockBusy {
			return nil, &os.PathError{Op: "lock", Path: path, Err: ErrLockBusy}
		}
		syscall.Close(fd)
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
}

func flock(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); err != syscall.EINTR {
			return err
		}
	}
}

// flockWait takes fd's exclusive lock, blocking at most wait; on
// ErrLockBusy fd is no longer the caller's: it is closed (releasing the
// lock should it come later) once the blocked call returns.
func flockWait(fd int, wait time.Duration) error {
	if wait <= 0 {
		syscall.Close(fd)
		return ErrLockBusy
	}
	done := make(chan error, 1)
	go func() { done <- flock(fd, syscall.LOCK_EX) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		go func() {
			<-done
			syscall.Close(fd)
		}()
		return ErrLockBusy
	}
}

// ReadAll reads the whole file from its start.
func (f *StateFile) ReadAll() ([]byte, error) {
	var b []byte
	buf := make([]byte, 512)
	for off := int64(0); ; {
		n, err := syscall.Pread(f.fd, buf, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = append(b, buf[:n]...)
		off += int64(n)
	}
}

// Replace makes b the file's content. Under the lock no one reads it
// half-written; a crash in between leaves a torn file, which its reader
// must take as corrupt.
func (f *StateFile) Replace(b []byte) error {
	if err := syscall.Ftruncate(f.fd, 0); err != nil {
		return &os.PathError{Op: "truncate", Path: f.path, Err: err}
	}
	for off := int64(0); len(b) > 0; {
		n, err := syscall.Pwrite(f.fd, b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: f.path, Err: err}
		}
		b = b[n:]
		off += int64(n)
	}
	return nil
}

// Remove deletes the file while still holding its lock.
func (f *StateFile) Remove() error {
	if err := syscall.Unlink(f.path); err != nil && !errors.Is(err, syscall.ENOENT) {
		return &os.PathError{Op: "remove", Path: f.path, Err: err}
	}
	return nil
}

// Close releases the lock.
func (f *StateFile) Close() error {
	if f == nil || f.fd < 0 {
		return nil
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}
