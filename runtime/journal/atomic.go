package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// CrashPoint, when set, is called at every step of a durable write with the
// step's name. Fault-injection tests set it (through the sitter binary's
// SITTER_FAULT_INJECT) to kill the process at chosen points; it is nil in
// normal use.
var CrashPoint func(point string)

func crash(point string) {
	if CrashPoint != nil {
		CrashPoint(point)
	}
}

// tempPrefix marks files that are not yet part of the run.
const tempPrefix = ".tmp-"

// WriteFileAtomic replaces path with data: temp file in the same directory,
// fsync, rename, fsync of the directory. Readers see the old or the new
// content, never a torn file; after a crash the new content is either
// complete or absent.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := createTemp(dir, tempPrefix+filepath.Base(path)+"-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	crash("temp-created")
	half := len(data) / 2
	if _, err := f.Write(data[:half]); err != nil {
		return fail(err)
	}
	crash("temp-half-written")
	if _, err := f.Write(data[half:]); err != nil {
		return fail(err)
	}
	crash("temp-written")
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	crash("temp-synced")
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	crash("renamed")
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync dir: %w", path, err)
	}
	crash("dir-synced")
	return nil
}

// ReplaceFile replaces path with data as WriteFileAtomic does but without
// fsync: readers see the old or the new content, never a torn file, and a
// crash of the process loses nothing; a power loss may leave the old
// content (or, on some file systems, an empty file). For data that can be
// rebuilt or that only counts (caches, a session's iteration counter),
// written where a fsync would cost more than the work it records.
func ReplaceFile(path string, data []byte) error {
	f, err := createTemp(filepath.Dir(path), tempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
