package host

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"sitter.dev/sitter/runtime/internal/sibling"
)

// proxyStopGrace is how long the gateway has to shut down after the first
// forwarded signal before it is killed.
const proxyStopGrace = 10 * time.Second

// runProxy hands `sitter proxy …` to the sitter-proxy binary installed
// next to sitter (or on PATH). The gateway needs net/http and crypto/tls,
// whose start-up cost (≈1.2 ms on a 2-core machine, measured with
// hookbench) every hook call would otherwise pay: the hook binary stays
// free of them.
//
// The gateway holds the upstream key and serves a port, so it must not
// outlive `sitter proxy`: SIGINT, SIGTERM and SIGHUP are forwarded to it
// (SIGHUP as SIGTERM: the gateway shuts down gracefully on SIGINT and
// SIGTERM) and sitter proxy exits only once the gateway did; it is killed
// when it has not stopped proxyStopGrace after the first signal. Should
// sitter proxy itself die without a chance to forward (SIGKILL), the
// gateway gets SIGTERM from the kernel on Linux (Pdeathsig, gatewayAttr),
// and on any OS stops by itself within a second once re-parented.
func runProxy(args []string, stdout, stderr io.Writer) int {
	bin := sibling.Find("sitter-proxy")
	if bin == "" {
		fmt.Fprintln(stderr, "sitter proxy: sitter-proxy not found next to sitter or on PATH: build it with `make build` (go build ./runtime/cmd/sitter-proxy)")
		return 2
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.SysProcAttr = gatewayAttr()
	// Elsewhere (and as a second guard), the gateway stops once it finds
	// itself re-parented (runtime/cmd/sitter-proxy/parent.go).
	cmd.Env = append(os.Environ(), "SITTER_PROXY_PARENT="+strconv.Itoa(os.Getpid()))
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// Pdeathsig fires when the thread that started the child ends, not the
	// process: keep this goroutine on its thread until the child is waited
	// for, so that no other goroutine can lock that thread and exit with it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var kill <-chan time.Time
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case s := <-sigs:
			if s == syscall.SIGHUP {
				s = syscall.SIGTERM
			}
			if cmd.Process.Signal(s) != nil {
				cmd.Process.Kill() // no signals to forward on this OS
			}
			if kill == nil {
				kill = time.After(proxyStopGrace)
			}
		case <-kill:
			fmt.Fprintf(stderr, "sitter proxy: the gateway did not stop within %s: killed\n", proxyStopGrace)
			cmd.Process.Kill()
		}
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				return 128 + int(st.Signal())
			}
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 1
	}
	return 0
}
