package host

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"sitter.dev/sitter/runtime/internal/sibling"
)

// runProxy hands `sitter proxy …` to the sitter-proxy binary installed
// next to sitter (or on PATH). The gateway needs net/http and crypto/tls,
// whose start-up cost (≈1.2 ms on a 2-core machine, measured with
// hookbench) every hook call would otherwise pay: the hook binary stays
// free of them.
func runProxy(args []string, stdout, stderr io.Writer) int {
	bin := sibling.Find("sitter-proxy")
	if bin == "" {
		fmt.Fprintln(stderr, "sitter proxy: sitter-proxy not found next to sitter or on PATH: build it with `make build` (go build ./runtime/cmd/sitter-proxy)")
		return 2
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 1
	}
	return 0
}
