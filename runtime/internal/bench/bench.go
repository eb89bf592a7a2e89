// Package bench is what the command benchmarks (hookbench, stopbench)
// share: building release binaries and a floor program, timing variants
// interleaved so that machine noise hits all alike, and a table of
// medians against the floor.
package bench

import (
	"errors"
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

// FloorMain is the floor: a Go program that only copies stdin to stdout.
const FloorMain = `package main

import (
	"io"
	"os"
)

func main() { io.Copy(os.Stdout, os.Stdin) }
`

// Variant is one command to time.
type Variant struct {
	Name string
	Argv []string
	Env  []string // added to the environment
	Dir  string   // working directory ("" = this one)
	In   string   // file given as stdin
	// Want, when set, must appear in the answer of the check run.
	Want string
	// Prep, when set, runs before every run (untimed).
	Prep  func() error
	Times []time.Duration
}

// GoBuild builds pkg in dir ("" = here) as `make build` does: stripped and
// trimmed, as a release ships it.
func GoBuild(dir, out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = dir
	if dir != "" {
		// Another module (the floor, another checkout): outside any workspace.
		cmd.Env = append(os.Environ(), "GOWORK=off")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// GoProgram builds a one-file program, its own module in dir, into out.
func GoProgram(dir, out, src string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module floor\n\ngo 1.25\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return err
	}
	return GoBuild(dir, out, ".")
}

// Measure checks that every variant answers cleanly (exit 0, no stderr,
// Want in its stdout: timing an error path measures the wrong thing),
// runs each warm times untimed, then n times interleaved (A B C A B C …).
func Measure(vs []*Variant, warm, n int) error {
	for _, v := range vs {
		var stdout, stderr strings.Builder
		if _, err := v.run(&stdout, &stderr); err != nil || stderr.Len() > 0 {
			return fmt.Errorf("%s: %v %s", v.Name, err, strings.TrimSpace(stderr.String()))
		}
		if !strings.Contains(stdout.String(), v.Want) {
			return fmt.Errorf("%s: answered %q, want %s", v.Name, strings.TrimSpace(stdout.String()), v.Want)
		}
	}
	for i := 0; i < warm+n; i++ {
		for _, v := range vs {
			d, err := v.run(nil, nil)
			if err != nil {
				return fmt.Errorf("%s: %v", v.Name, err)
			}
			if i >= warm {
				v.Times = append(v.Times, d)
			}
		}
	}
	return nil
}

// run runs the variant with its input file as stdin (a file, not a pipe,
// so no copying goroutine adds noise), timed from start to exit.
func (v *Variant) run(stdout, stderr io.Writer) (time.Duration, error) {
	if v.Prep != nil {
		if err := v.Prep(); err != nil {
			return 0, fmt.Errorf("before the run: %w", err)
		}
	}
	cmd := exec.Command(v.Argv[0], v.Argv[1:]...)
	if v.In != "" {
		f, err := os.Open(v.In)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	cmd.Env = append(os.Environ(), v.Env...)
	cmd.Dir = v.Dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return d, fmt.Errorf("exit %d", exit.ExitCode())
	}
	return d, err
}

// Median is the variant's median time.
func (v *Variant) Median() time.Duration { return Quantile(v.Times, 0.5) }

// Table prints each variant's median, p90 and median over the first
// variant's (the floor).
func Table(w io.Writer, vs []*Variant) {
	floor := vs[0].Median()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "variant\tmedian\tp90\tmedian/floor\t\n")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f×\t\n", v.Name, MS(v.Median()), MS(Quantile(v.Times, 0.9)), Ratio(v.Median(), floor))
	}
	tw.Flush()
}

// Verdict is "PASS" when ratio is within target, else "MISS".
func Verdict(ratio, target float64) (string, bool) {
	if ratio > target {
		return "MISS", true
	}
	return "PASS", false
}

// Quantile is the q-quantile by the nearest-rank method; ds is not changed.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Ratio is a over b.
func Ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// MS formats a duration in milliseconds.
func MS(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
