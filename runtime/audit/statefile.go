package audit

import (
	"errors"
	"io"
	"os"
	"time"
)

// The files of sitter's state dir (this log, its rotation lock, the stop
// counters) are opened without following a symbolic link in their last
// path element: whoever can plant a link there must not get sitter to
// write through it to a file elsewhere. A link is refused with ErrSymlink.
var ErrSymlink = errors.New("is a symbolic link; sitter does not open state files through links")

// ErrLockBusy says a state file's lock stayed taken for the whole wait.
var ErrLockBusy = errors.New("lock is busy")

// RotateLockWait bounds the wait for the rotation lock. A holder keeps it
// for a stat and a few renames; a hook call that still cannot have it
// appends without rotating and says so.
const RotateLockWait = 2 * time.Second

// Name is the file's path.
func (f *StateFile) Name() string { return f.path }

// OpenNoFollow opens a file of the state dir for reading, refusing a
// symbolic link at path (a link planted there is not followed to a file
// elsewhere).
func OpenNoFollow(path string) (*os.File, error) { return openRead(path) }

// ReadNoFollow reads a whole file of the state dir, refusing a symbolic
// link at path.
func ReadNoFollow(path string) ([]byte, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
