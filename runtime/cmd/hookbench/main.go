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
	flag.Parse()
	if *n < 200 {
		fatalf("-n %d: need at least 200 runs for a stable median and p90", *n)
	}
	miss, err := measure(*n, *warm, *pkg, os.Stdout)
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

func measure(n, warm int, pkg string, out io.Writer) (miss bool, err error) {
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
	return miss, nil
}
