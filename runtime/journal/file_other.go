//go:build !unix

package journal

import "os"

// file is an os.File elsewhere than on unix (see file_unix.go).
type file = os.File

func createTemp(dir, pattern string) (*file, error) { return os.CreateTemp(dir, pattern) }

// syncDir fsyncs a directory, making the names in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile is os.ReadFile.
func ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
