package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// writeTokenFile writes the client token to a new file, mode 0600. The
// file must not exist: an existing name, a symlink above all (even a
// dangling one), is refused rather than written through, so the token
// cannot be sent somewhere the caller did not name.
func writeTokenFile(path, token string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists (a file or a symlink); the token goes only to a new file: remove it or name another", path)
		}
		return err
	}
	// The umask may have taken bits away, never added: make it exactly 0600.
	werr := f.Chmod(0o600)
	if werr == nil {
		_, werr = f.WriteString(token + "\n")
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
	}
	return werr
}
