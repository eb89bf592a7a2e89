//go:build !unix

package audit

import "os"

// appendFile appends b with one write on an O_APPEND file.
func appendFile(path string, b []byte) error {
	if err := refuseLink(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openRead opens a log file for reading, refusing a symbolic link.
func openRead(path string) (*os.File, error) {
	if err := refuseLink(path); err != nil {
		return nil, err
	}
	return os.Open(path)
}
