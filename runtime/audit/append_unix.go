//go:build unix

package audit

import (
	"os"
	"syscall"
)

// appendFile appends b with one write(2) on an O_APPEND descriptor, so
// concurrent hook calls never interleave within a line. Raw system calls,
// not os.OpenFile: an os.File of a regular file makes the Go runtime set
// up its poller (epoll, an eventfd), which a hook call does not need. A
// symbolic link at path is refused (O_NOFOLLOW), never written through.
func appendFile(path string, b []byte) error {
	fd, err := openNoFollow(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT, 0o600)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		n, werr := syscall.Write(fd, b)
		if werr == syscall.EINTR {
			continue
		}
		if werr != nil {
			syscall.Close(fd)
			return &os.PathError{Op: "write", Path: path, Err: werr}
		}
		b = b[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// openRead opens a log file for reading, refusing a symbolic link.
func openRead(path string) (*os.File, error) {
	fd, err := openNoFollow(path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
