//go:build unix

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// PeakRSS runs argv with the file in as stdin and returns its peak
// resident set size in bytes (getrusage's ru_maxrss: KiB on Linux, bytes
// on Darwin).
func PeakRSS(argv, env []string, in string) (int64, error) {
	f, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = f
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, fmt.Errorf("no resource usage for %s", argv[0])
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss, nil
	}
	return ru.Maxrss * 1024, nil
}
