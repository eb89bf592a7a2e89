//go:build unix

package journal

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// The stop check writes three files and reads four at every turn of an
// agent. os.File registers each file with the runtime's poller (five
// system calls a file, and the poller's own set-up on the first), which
// regular files gain nothing from: these are the same operations on a
// bare descriptor, with os's errors.

// file is a regular file opened without the poller.
type file struct {
	fd   int
	name string
}

// createTemp creates a new file in dir, named pattern with its last "*"
// replaced by a random number, as os.CreateTemp does.
func createTemp(dir, pattern string) (*file, error) {
	i := len(pattern) - 1
	for i >= 0 && pattern[i] != '*' {
		i--
	}
	if i < 0 {
		return nil, errors.New("createTemp: pattern has no *")
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, pattern[:i]+strconv.FormatUint(uint64(rand.Uint32()), 10)+pattern[i+1:])
		fd, err := open(name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL, 0o600)
		if err == nil {
			return &file{fd, name}, nil
		}
		if err != syscall.EEXIST {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		if try == 10000 {
			return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, pattern), Err: os.ErrExist}
		}
	}
}

func open(name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, perm)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func (f *file) Name() string { return f.name }

func (f *file) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Write(f.fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "write", Path: f.name, Err: err}
		}
		if m == 0 {
			return n, &os.PathError{Op: "write", Path: f.name, Err: syscall.EIO}
		}
		n += m
	}
	return n, nil
}

func (f *file) Sync() error {
	for {
		err := syscall.Fsync(f.fd)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "sync", Path: f.name, Err: err}
		}
		return nil
	}
}

func (f *file) Close() error {
	if err := syscall.Close(f.fd); err != nil {
		return &os.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// syncDir fsyncs a directory, making the names in it durable.
func syncDir(dir string) error {
	fd, err := open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f := &file{fd, dir}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile is os.ReadFile without the poller, for the files a stop check
// reads (run.json, the replay cache).
func ReadFile(name string) ([]byte, error) {
	fd, err := open(name, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	size := 512
	if syscall.Fstat(fd, &st) == nil && st.Size > 0 && st.Size < 1<<30 {
		size = int(st.Size) + 1 // one more byte, to see the end in one read
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return b, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}
