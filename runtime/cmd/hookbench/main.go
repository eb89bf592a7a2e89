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
//
// Then it measures the peak RSS of a hook call fed a 50 MB payload (-mem
// MB) with 0, 1 and 20 handlers that read the event: with one handler at
// most 3× the payload, and no growth per extra handler beyond a pipe
// buffer (64 KiB).
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"sitter.dev/sitter/runtime/internal/bench"
)

//go:embed testdata/PreToolUse.json
var payload []byte

// target is the no-handler hook's allowed median over the floor's.
const target = 1.3

func main() {
	n := flag.Int("n", 300, "timed runs of each variant (at least 200)")
	warm := flag.Int("warmup", 10, "untimed runs of each variant first")
	strict := flag.Bool("strict", false, "exit 1 when the no-handler hook misses the target")
	pkg := flag.String("pkg", "sitter.dev/sitter/runtime/cmd/sitter", "package of the sitter binary")
	memMB := flag.Int("mem", 50, "payload size in MB for the peak RSS measure (0: skip it)")
	flag.Parse()
	if *n < 200 {
		fatalf("-n %d: need at least 200 runs for a stable median and p90", *n)
	}
	miss, err := measure(*n, *warm, *pkg, *memMB, os.Stdout)
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

func measure(n, warm int, pkg string, memMB int, out io.Writer) (miss bool, err error) {
	tmp, err := os.MkdirTemp("", "hookbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)

	sitter := filepath.Join(tmp, "sitter")
	if err := bench.GoBuild("", sitter, pkg); err != nil {
		return false, err
	}
	floor := filepath.Join(tmp, "floorbin")
	if err := bench.GoProgram(filepath.Join(tmp, "floor"), floor, bench.FloorMain); err != nil {
		return false, err
	}
	in := filepath.Join(tmp, "PreToolUse.json")
	if err := os.WriteFile(in, payload, 0o644); err != nil {
		return false, err
	}
	// The audit log and stop counters go to the bench's own state dir.
	state := "SITTER_STATE_DIR=" + filepath.Join(tmp, "state")
	hook := []string{sitter, "hook", "claude-code", "PreToolUse"}
	vs := []*bench.Variant{
		{Name: "floor (copy stdin to stdout)", Argv: []string{floor}, In: in},
		{Name: "sitter hook, no handler", Argv: hook, In: in, Env: []string{state}},
		{Name: "  the same, audit log off", Argv: hook, In: in, Env: []string{state, "SITTER_AUDIT=0"}},
		{Name: "sitter hook, --handler true", Argv: append(slices.Clone(hook), "--handler", "true"), In: in, Env: []string{state}},
	}
	if err := bench.Measure(vs, warm, n); err != nil {
		return false, err
	}
	bench.Table(out, vs)
	r := bench.Ratio(vs[1].Median(), vs[0].Median())
	verdict, miss := bench.Verdict(r, target)
	fmt.Fprintf(out, "\n%d interleaved runs each; target: no-handler hook ≤ %.1f× floor: %.2f× %s\n", n, target, r, verdict)
	if memMB > 0 {
		memMiss, err := peakRSS(tmp, sitter, state, memMB, out)
		if err != nil {
			return miss, err
		}
		miss = miss || memMiss
	}
	return miss, nil
}

// Peak RSS targets: with one handler at most memFactor× the payload; each
// extra handler at most a pipe buffer more.
const (
	memFactor  = 3.0
	pipeBuffer = 64 << 10
)

// peakRSS measures a hook call fed a PreToolUse payload of mb MB with 0, 1
// and 20 handlers that read the event (the median of 3 runs each).
func peakRSS(tmp, sitter, state string, mb int, out io.Writer) (miss bool, err error) {
	in := filepath.Join(tmp, "big.json")
	big := append([]byte(`{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo `), bytes.Repeat([]byte("x"), mb<<20)...)
	big = append(big, `"}}`...)
	if err := os.WriteFile(in, big, 0o644); err != nil {
		return false, err
	}
	size := int64(len(big))
	rss := map[int]int64{}
	for _, handlers := range []int{0, 1, 20} {
		argv := []string{sitter, "hook", "claude-code", "PreToolUse", "--timeout", "2m"}
		for range handlers {
			argv = append(argv, "--handler", "cat >/dev/null")
		}
		var runs []int64
		for range 3 {
			r, err := bench.PeakRSS(argv, []string{state, "SITTER_AUDIT=0"}, in)
			if err != nil {
				return false, fmt.Errorf("peak RSS with %d handlers: %w", handlers, err)
			}
			runs = append(runs, r)
		}
		slices.Sort(runs)
		rss[handlers] = runs[1]
	}
	perHandler := float64(rss[20]-rss[1]) / 19
	fmt.Fprintf(out, "\npeak RSS, %d MB payload (median of 3): 0 handlers %s, 1 handler %s (%.2f× payload), 20 handlers %s (%+.0f KiB per extra handler)\n",
		mb, mib(rss[0]), mib(rss[1]), float64(rss[1])/float64(size), mib(rss[20]), perHandler/1024)
	v1, m1 := bench.Verdict(float64(rss[1])/float64(size), memFactor)
	v20, m20 := bench.Verdict(perHandler, pipeBuffer)
	fmt.Fprintf(out, "target: 1 handler ≤ %.0f× payload: %s; per extra handler ≤ %d KiB: %s\n", memFactor, v1, pipeBuffer>>10, v20)
	return m1 || m20, nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
