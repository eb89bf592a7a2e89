// Command genbench measures how `make generate` grows with the number of
// harnesses: it copies the repository twice (the files git lists), adds
// -add synthetic harnesses to the second copy (gen/testdata/synth/synth.cue
// under new ids), regenerates both once, then times `go run
// ./gen/cmd/sitter-gen` in each, interleaved, warm (the build cache and
// generated/ current, as a contributor's second run finds them).
//
// Run it from the repository root:
//
//	go run ./runtime/cmd/genbench [-n 5] [-add 8] [-strict]
//
// It prints the medians, the growth per added harness, and the target:
// `make generate` under 15 s warm with 15 or more harnesses (measured
// when the second copy has 15, else projected from the growth).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/internal/bench"
)

// target is the warm `make generate` allowed with targetHarnesses.
const (
	target          = 15 * time.Second
	targetHarnesses = 15
)

func main() {
	n := flag.Int("n", 5, "timed runs of each copy")
	add := flag.Int("add", 8, "synthetic harnesses added to the second copy")
	strict := flag.Bool("strict", false, "exit 1 when the target is missed")
	flag.Parse()
	if *n < 1 || *add < 1 {
		fatalf("-n and -add must be at least 1")
	}
	miss, err := measure(*n, *add, os.Stdout)
	if err != nil {
		fatalf("%v", err)
	}
	if miss && *strict {
		os.Exit(1)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "genbench: "+format+"\n", args...)
	os.Exit(2)
}

func measure(n, add int, out io.Writer) (miss bool, err error) {
	tmp, err := os.MkdirTemp("", "genbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	base, more := filepath.Join(tmp, "base"), filepath.Join(tmp, "more")
	for _, dir := range []string{base, more} {
		if err := copyRepo(".", dir); err != nil {
			return false, err
		}
	}
	synth, err := os.ReadFile(filepath.Join("gen", "testdata", "synth", "synth.cue"))
	if err != nil {
		return false, err
	}
	for i := 1; i <= add; i++ {
		f := filepath.Join(more, "atlas", "harnesses", fmt.Sprintf("synth%02d.cue", i))
		if err := os.WriteFile(f, renamed(synth, fmt.Sprintf("synth%02d", i)), 0o644); err != nil {
			return false, err
		}
	}
	had := harnesses(base)
	vs := []*bench.Variant{
		{Name: fmt.Sprintf("make generate, %d harnesses", had), Dir: base},
		{Name: fmt.Sprintf("make generate, %d harnesses", had+add), Dir: more},
	}
	for _, v := range vs {
		v.Argv = []string{"go", "run", "./gen/cmd/sitter-gen"}
		// The first run writes the new harnesses' files and fills the
		// build cache: what follows is a warm run.
		if b, err := run(v.Dir, v.Argv...); err != nil {
			return false, fmt.Errorf("%s: %v\n%s", v.Dir, err, b)
		}
	}
	if err := bench.Measure(vs, 1, n); err != nil {
		return false, err
	}
	fmt.Fprintln(out, "warm `make generate` (go run ./gen/cmd/sitter-gen), copies of this repository:")
	bench.Table(out, vs)
	b, m := vs[0].Median(), vs[1].Median()
	per := (m - b) / time.Duration(add)
	fmt.Fprintf(out, "\n%d interleaved runs each; growth per added harness: %s (%.1f%% of the %d-harness run)\n",
		n, per.Round(time.Millisecond), 100*float64(per)/float64(b), had)
	at, how := m, "measured"
	if had+add < targetHarnesses {
		at, how = b+per*time.Duration(targetHarnesses-had), "projected"
	} else if had >= targetHarnesses {
		at = b
	}
	verdict := "PASS"
	if at > target {
		verdict, miss = "MISS", true
	}
	fmt.Fprintf(out, "target: make generate ≤ %s warm with %d+ harnesses: %s (%s) %s\n", target, targetHarnesses, at.Round(10*time.Millisecond), how, verdict)
	return miss, nil
}

// renamed is the synthetic harness under another id: every word synth
// (its id, profile, layout and paths) and its alias.
func renamed(src []byte, id string) []byte {
	b := regexp.MustCompile(`\bsynth\b`).ReplaceAll(src, []byte(id))
	return bytes.ReplaceAll(b, []byte(`"syn"`), []byte(`"`+strings.Replace(id, "synth", "syn", 1)+`"`))
}

// harnesses counts the harness files of a copy.
func harnesses(root string) int {
	fs, _ := filepath.Glob(filepath.Join(root, "atlas", "harnesses", "*.cue"))
	return len(fs)
}

// copyRepo copies the files git lists in src to dst.
func copyRepo(src, dst string) error {
	list, err := exec.Command("git", "-C", src, "ls-files", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v (run genbench in a git checkout)", err)
	}
	for _, f := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(src, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		p := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func run(dir string, argv ...string) ([]byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}
