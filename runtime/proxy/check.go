package proxy

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// CheckListen refuses a listen address no listener could take: one
// without a port ("nonsense") or with a port outside 0–65535 (or no known
// service name). A host that does not resolve is only found by listening.
func CheckListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		if ae, ok := err.(*net.AddrError); ok {
			err = errors.New(ae.Err) // the address is said by the caller
		}
		return fmt.Errorf("want HOST:PORT with a port from 0 to 65535, such as 127.0.0.1:8787 (0: any free port): %v", err)
	}
	return nil
}

// CheckTokenFile refuses a token file path whose directory does not
// exist (or is no directory): the token could never be written there.
func CheckTokenFile(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("its directory %s does not exist", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}
