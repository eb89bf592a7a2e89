// Command chaos runs sitter's fault suite: every test named TestChaos* in
// the module (concurrency, floods, hung and escaping handlers, signals,
// cut upstream streams, symlinks, the redaction corpus), and prints a
// table of the cases tried and their outcome. It exits 1 when a case
// failed or when no case ran.
//
// It first builds nats-server from the Go module (internal/natsproc)
// and names it in $SITTER_TEST_NATS_SERVER, so the run store's chaos case
// (runtime/store/natsstore TestChaosNATSProcess) runs against a real
// nats-server process, killed with SIGKILL and restarted mid-run.
//
//	go run ./runtime/cmd/chaos [-run REGEXP] [packages]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"sitter.dev/sitter/internal/natsproc"
)

// event is one line of `go test -json`.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type result struct {
	pkg, test, action string
	elapsed           float64
	output            []string
}

func main() {
	os.Exit(chaos())
}

func chaos() int {
	run := flag.String("run", "", "only the TestChaos cases matching this regexp (after the TestChaos prefix)")
	flag.Parse()
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	pattern := "^TestChaos" + *run
	tmp, err := os.MkdirTemp("", "sitter-chaos-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	natsServer, err := natsproc.Build(tmp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		return 2
	}
	args := append([]string{"test", "-json", "-count=1", "-run", pattern}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "SITTER_TEST_NATS_SERVER="+natsServer)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	results, buildFailed := collect(out)
	waitErr := cmd.Wait()
	failed := report(os.Stdout, results, time.Since(start))
	switch {
	case len(results) == 0:
		fmt.Fprintln(os.Stderr, "chaos: no TestChaos case ran")
		return 1
	case failed > 0 || buildFailed:
		return 1
	case waitErr != nil:
		fmt.Fprintf(os.Stderr, "chaos: go test: %v\n", waitErr)
		return 1
	}
	return 0
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
	os.Exit(2)
}

// collect reads `go test -json` and keeps the top-level and subtest
// results of TestChaos cases with the output of the failed ones.
func collect(r io.Reader) (map[string]*result, bool) {
	results := map[string]*result{}
	buildFailed := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Test == "" {
			// A package that fails with no failed case did not build (or
			// crashed outside a test): the suite did not run there.
			if e.Action == "fail" && !pkgCaseFailed(results, e.Package) {
				fmt.Fprintf(os.Stderr, "chaos: package %s failed outside its cases (build failure?)\n", e.Package)
				buildFailed = true
			}
			continue
		}
		key := e.Package + " " + e.Test
		res := results[key]
		if res == nil {
			res = &result{pkg: e.Package, test: e.Test}
			results[key] = res
		}
		switch e.Action {
		case "pass", "fail", "skip":
			res.action, res.elapsed = e.Action, e.Elapsed
		case "output":
			res.output = append(res.output, e.Output)
		}
	}
	return results, buildFailed
}

func pkgCaseFailed(results map[string]*result, pkg string) bool {
	for _, r := range results {
		if r.pkg == pkg && r.action == "fail" {
			return true
		}
	}
	return false
}

// report prints the table and the failures; it returns the failed count.
func report(w io.Writer, results map[string]*result, took time.Duration) int {
	keys := make([]string, 0, len(results))
	for k := range results {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "package\tcase\tresult\ttime")
	passed, failed, skipped := 0, 0, 0
	for _, k := range keys {
		r := results[k]
		switch r.action {
		case "pass":
			passed++
		case "skip":
			skipped++
		default:
			failed++
			if r.action == "" {
				r.action = "no result"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2fs\n", strings.TrimPrefix(r.pkg, "sitter.dev/sitter/"), r.test, r.action, r.elapsed)
	}
	tw.Flush()
	for _, k := range keys {
		if r := results[k]; r.action != "pass" && r.action != "skip" {
			fmt.Fprintf(w, "\n--- %s %s:\n%s", r.pkg, r.test, strings.Join(r.output, ""))
		}
	}
	fmt.Fprintf(w, "\nchaos: %d cases tried in %s\n", len(keys), took.Round(time.Second))
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return failed
}
