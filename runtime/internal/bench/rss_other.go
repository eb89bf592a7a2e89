//go:build !unix

package bench

import "errors"

// PeakRSS needs getrusage(2), which only unix systems have.
func PeakRSS(argv, env []string, in string) (int64, error) {
	return 0, errors.New("peak RSS is measured on unix systems only")
}
