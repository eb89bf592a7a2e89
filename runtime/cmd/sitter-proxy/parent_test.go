package main

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestChaosGatewayOrphaned: a gateway whose parent is not the one named in
// SITTER_PROXY_PARENT (it was re-parented: sitter proxy died) stops on its
// own; one whose parent is still there keeps running.
func TestChaosGatewayOrphaned(t *testing.T) {
	if os.Getenv("SITTER_TEST_GATEWAY_CHILD") == "1" {
		time.Sleep(2 * time.Second) // init's watcher runs meanwhile
		os.Exit(0)
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM")
	}
	for _, c := range []struct {
		name    string
		parent  int
		stopped bool
	}{{"orphaned", os.Getpid() + 1<<20, true}, {"parent alive", os.Getpid(), false}} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestChaosGatewayOrphaned$")
			cmd.Env = append(os.Environ(), "SITTER_TEST_GATEWAY_CHILD=1", parentEnv+"="+strconv.Itoa(c.parent))
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if c.stopped {
				if err == nil || took > 1500*time.Millisecond {
					t.Errorf("orphaned gateway ran on: err %v after %s", err, took)
				}
			} else if err != nil || took < 1500*time.Millisecond {
				t.Errorf("gateway with its parent stopped: err %v after %s", err, took)
			}
		})
	}
}
