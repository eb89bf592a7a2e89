package proxy

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// CheckListen refuses a listen address no listener could take: one
// without a port ("nonsense"), with a port outside 0–65535 (or no known
// service name), or with a host name that does not resolve.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		if ae, ok := err.(*net.AddrError); ok {
			err = errors.New(ae.Err) // the address is said by the caller
		}
		return fmt.Errorf("want HOST:PORT with a port from 0 to 65535, such as 127.0.0.1:8787 (0: any free port): %v", err)
	}
	if host != "" && net.ParseIP(host) == nil {
		if _, err := net.LookupHost(host); err != nil {
			if de, ok := err.(*net.DNSError); ok {
				err = errors.New(de.Err)
			}
			return fmt.Errorf("host %q does not resolve (%v): name a host of this machine or an IP address, such as 127.0.0.1", host, err)
		}
	}
	return nil
}

// CheckTokenFile refuses a token file path the token could not be
// written to: a directory, a symlink (live or dangling: the token is a
// secret written 0600, and a link would send it wherever the link
// points, so it is never followed: name the file itself), anything else
// that is no regular file, or a path whose directory does not exist (or
// is no directory). A regular file is the token of an earlier run, and
// is replaced.
func CheckTokenFile(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return errors.New("is a symlink; the token is never written through a link (it would land where the link points): name the file itself")
	case err == nil && fi.IsDir():
		return errors.New("is a directory: name a file, such as " + filepath.Join(path, "token"))
	case err == nil && !fi.Mode().IsRegular():
		return errors.New("is not a regular file: name a file")
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
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

// ServeFlags are the settings that decide what a gateway serves: one
// provider (--provider, with --model and --upstream) or a routes file
// (--routes, with --harness and --record).
type ServeFlags struct {
	Routes, Provider, Model, Upstream, Harness, Record string
}

// Known is what the atlas knows, for CheckServeFlags: the caller's tables
// (generated/providers), as every runtime library takes them.
type Known struct {
	Providers []string                         // provider ids
	Harnesses []string                         // harness ids
	HarnessID func(name string) (string, bool) // a harness id or alias to its id
}

// CheckServeFlags refuses settings that do not go together or that name
// a provider or harness the atlas does not know: the one check of `sitter
// proxy`, which says it before it starts the gateway, and of sitter-proxy.
func CheckServeFlags(f ServeFlags, k Known) error {
	if f.Routes != "" {
		if f.Provider != "" || f.Model != "" || f.Upstream != "" {
			return errors.New("--routes names the providers and models: drop --provider, --model and --upstream")
		}
		if f.Harness != "" {
			if _, ok := k.HarnessID(f.Harness); !ok {
				return fmt.Errorf("--harness: unknown harness %q (known: %s)", f.Harness, strings.Join(k.Harnesses, ", "))
			}
		}
		return nil
	}
	if f.Harness != "" || f.Record != "" {
		return errors.New("--harness and --record go with --routes")
	}
	if f.Provider == "" {
		return errors.New("--provider or --routes is required")
	}
	if !slices.Contains(k.Providers, f.Provider) {
		return fmt.Errorf("unknown provider %q (known: %s)", f.Provider, strings.Join(k.Providers, ", "))
	}
	return nil
}
