package main

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

// parentEnv names the process that started this gateway (set by sitter
// proxy). On Linux the kernel stops the gateway when that parent dies
// (Pdeathsig); everywhere, a gateway that finds itself re-parented stops
// as on SIGTERM, so that it never serves, key loaded, with nobody left to
// stop it.
const parentEnv = "SITTER_PROXY_PARENT"

func init() {
	want, err := strconv.Atoi(os.Getenv(parentEnv))
	if err != nil || want <= 0 {
		return // started by hand: its owner is whoever started it
	}
	go watchParent(want, 250*time.Millisecond)
}

// watchParent polls the parent pid and stops the process once it changed.
func watchParent(want int, every time.Duration) {
	for {
		if os.Getppid() != want {
			if p, err := os.FindProcess(os.Getpid()); err != nil || p.Signal(syscall.SIGTERM) != nil {
				os.Exit(1) // no signals on this OS
			}
			return
		}
		time.Sleep(every)
	}
}
