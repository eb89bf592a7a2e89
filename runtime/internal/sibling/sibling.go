// Package sibling finds sitter's companion binaries (sitter, sitter-host,
// sitter-proxy), which are installed side by side.
package sibling

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Find returns the executable name next to the running binary, else the
// one on PATH; "" when there is neither.
func Find(name string) string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}
