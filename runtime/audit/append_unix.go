//go:build unix

package audit

import (
	"os"
	"syscall"
)

// appendFile appends b with one write(2) on an O_APPEND descriptor, so
// concurrent hook calls never interleave within a line. Raw system calls,
// not os.OpenFile: an os.File of a regular file makes the Go runtime set
// up its poller (epoll, an eventfd), which a hook call does not need.
func appendFile(path string, b []byte) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
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
