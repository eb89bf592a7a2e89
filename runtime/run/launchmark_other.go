//go:build !unix

package run

import "os"

// processAlive: where there is no signal 0, a process that can be opened.
func processAlive(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
