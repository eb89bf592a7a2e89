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
	pause := 200 * time.Microsecond
	for {
		fd, err := openNoFollow(path, syscall.O_RDWR|syscall.O_CREAT, 0o600)
		if err != nil {
			return nil, err
		}
		for {
			err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
			if err != syscall.EINTR {
				break
			}
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
		syscall.Close(fd)
		if err != syscall.EWOULDBLOCK && err != syscall.EAGAIN {
			return nil, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		if time.Now().After(deadline) {
			return nil, &os.PathError{Op: "lock", Path: path, Err: ErrLockBusy}
		}
		time.Sleep(pause)
		pause = min(pause*2, 10*time.Millisecond)
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
