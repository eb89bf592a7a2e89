// Command hookbench measures what a hook call costs on top of starting any
// Go program: it builds the sitter binary and a floor program (a Go program
// that only copies stdin to stdout), then times, interleaved so that machine
// noise hits all alike, the floor, `sitter hook claude-code PreToolUse` with
// no handler and with one no-op handler, each fed a real PreToolUse payload.
//
// Run it from inside the sitter module:
//
//	go run ./runtime/cmd/hookbench [-n 300] [-strict]
//
// The target is a no-handler hook within 1.3× the floor's median; a miss is
// informational unless -strict.
package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

//go:embed testdata/PreToolUse.json
var payload []byte

// target is the no-handler hook's allowed median over the floor's.
const target = 1.3

const floorMain = `package main

import (
	"io"
	"os"
)

func main() { io.Copy(os.Stdout, os.Stdin) }
`

type variant struct {
	name  string
	argv  []string
	env   []string // added to the environment
	times []time.Duration
}

func main() {
	n := flag.Int("n", 300, "timed runs of each variant (at least 200)")
	warm := flag.Int("warmup", 10, "untimed runs of each variant first")
	strict := flag.Bool("strict", false, "exit 1 when the no-handler hook misses the target")
	pkg := flag.String("pkg", "sitter.dev/sitter/runtime/cmd/sitter", "package of the sitter binary")
	flag.Parse()
	if *n < 200 {
		fatalf("-n %d: need at least 200 runs for a stable median and p90", *n)
	}
	miss, err := bench(*n, *warm, *pkg, os.Stdout)
	if err != nil {
		fatalf("%v", err)
	}
	if miss && *strict {
		os.Exit(1)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hookbench: "+format+"\n", args...)
	os.Exit(2)
}

func bench(n, warm int, pkg string, out io.Writer) (miss bool, err error) {
	tmp, err := os.MkdirTemp("", "hookbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)

	sitter := filepath.Join(tmp, "sitter")
	if err := gobuild("", sitter, pkg); err != nil {
		return false, err
	}
	floorDir := filepath.Join(tmp, "floor")
	if err := os.MkdirAll(floorDir, 0o755); err != nil {
		return false, err
	}
	if err := os.WriteFile(filepath.Join(floorDir, "go.mod"), []byte("module floor\n\ngo 1.25\n"), 0o644); err != nil {
		return false, err
	}
	if err := os.WriteFile(filepath.Join(floorDir, "main.go"), []byte(floorMain), 0o644); err != nil {
		return false, err
	}
	floor := filepath.Join(tmp, "floorbin")
	if err := gobuild(floorDir, floor, "."); err != nil {
		return false, err
	}
	in := filepath.Join(tmp, "PreToolUse.json")
	if err := os.WriteFile(in, payload, 0o644); err != nil {
		return false, err
	}

	vs := []*variant{
		{name: "floor (copy stdin to stdout)", argv: []string{floor}},
		{name: "sitter hook, no handler", argv: []string{sitter, "hook", "claude-code", "PreToolUse"}},
		{name: "  the same, audit log off", argv: []string{sitter, "hook", "claude-code", "PreToolUse"}, env: []string{"SITTER_AUDIT=0"}},
		{name: "sitter hook, --handler true", argv: []string{sitter, "hook", "claude-code", "PreToolUse", "--handler", "true"}},
	}
	// The warm-up also checks that each variant answers cleanly: timing an
	// error path would measure the wrong thing.
	for _, v := range vs {
		var stderr strings.Builder
		if _, err := runOnce(v, in, &stderr); err != nil || stderr.Len() > 0 {
			return false, fmt.Errorf("%s: %v %s", v.name, err, strings.TrimSpace(stderr.String()))
		}
	}
	for range warm {
		for _, v := range vs {
			if _, err := runOnce(v, in, nil); err != nil {
				return false, fmt.Errorf("%s: %v", v.name, err)
			}
		}
	}
	// Interleaved: A B C A B C ...
	for range n {
		for _, v := range vs {
			d, err := runOnce(v, in, nil)
			if err != nil {
				return false, fmt.Errorf("%s: %v", v.name, err)
			}
			v.times = append(v.times, d)
		}
	}

	floorMed := quantile(vs[0].times, 0.5)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "variant\tmedian\tp90\tmedian/floor\t\n")
	for _, v := range vs {
		med := quantile(v.times, 0.5)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f×\t\n", v.name, ms(med), ms(quantile(v.times, 0.9)), ratio(med, floorMed))
	}
	tw.Flush()
	r := ratio(quantile(vs[1].times, 0.5), floorMed)
	verdict := "PASS"
	if r > target {
		verdict, miss = "MISS", true
	}
	fmt.Fprintf(out, "\n%d interleaved runs each; target: no-handler hook ≤ %.1f× floor: %.2f× %s\n", n, target, r, verdict)
	return miss, nil
}

func gobuild(dir, out, pkg string) error {
	// Both binaries are built as `make build` builds sitter: stripped and
	// trimmed, as a release would ship them.
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = dir
	if dir != "" {
		// The floor is its own module, outside any workspace.
		cmd.Env = append(os.Environ(), "GOWORK=off")
	}
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// runOnce runs argv with the payload file as stdin and times it from start
// to exit. A file, not a pipe, so no copying goroutine adds noise.
func runOnce(v *variant, in string, stderr io.Writer) (time.Duration, error) {
	argv := v.argv
	f, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = f
	// The audit log and stop counters go to the bench's own state dir.
	cmd.Env = append(append(os.Environ(), "SITTER_STATE_DIR="+filepath.Join(filepath.Dir(in), "state")), v.env...)
	if stderr != nil {
		cmd.Stderr = stderr
	}
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return d, fmt.Errorf("exit %d", exit.ExitCode())
	}
	return d, err
}

// quantile is the q-quantile by the nearest-rank method.
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
