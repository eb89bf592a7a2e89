//go:build !unix

package launch

import "errors"

func ptySupported() error {
	return errors.New("mode bridge-interactive needs a Unix pseudo-terminal")
}

func (l *launcher) interactive() (int, error) { return 2, ptySupported() }
