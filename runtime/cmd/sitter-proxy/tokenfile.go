package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"sitter.dev/sitter/runtime/proxy"
)

// writeTokenFile writes the client token to path, mode 0600, never
// through a symlink (live or dangling): a link is refused, so the token
// cannot be sent somewhere the caller did not name. An existing regular
// file (the token of an earlier run) is replaced: the token goes to a new
// file beside it, renamed over it, so the old file's mode and any hard
// link to it are left behind.
func writeTokenFile(path, token string) error {
	// Checked at start too (a usage error then); again here, as the path
	// may have changed since.
	if err := proxy.CheckTokenFile(path); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+strconv.Itoa(os.Getpid()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
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
	if werr == nil {
		werr = os.Rename(tmp, path) // rename replaces a link itself, never its target
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}
