// Command runbench times one babysitter run cycle, create → iterate →
// post → iterate, for sitter and for the npm SDK (@a5c-ai/babysitter-sdk)
// in the same run, on the same process (one shell effect, then an agent
// effect), interleaved so that machine noise hits both alike, and prints
// the ratio of the medians. The target is sitter at least 10× faster.
//
// The SDK is looked up in $SITTER_SDK_DIR, else ~/.cache/sitter-npm/babysitter
// (npm install --prefix DIR @a5c-ai/babysitter-sdk); without it only
// sitter is timed. Run it from inside the sitter module:
//
//	go run ./runtime/cmd/runbench [-n 7] [-strict]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

const target = 10.0

const process = `import { defineTask } from '@a5c-ai/babysitter-sdk';
export const build = defineTask('build', (args) => ({ kind: 'shell', title: 'Build', shell: { command: 'echo ' + args.target } }));
export const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { prompt: 'review ' + args.out } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, { target: 'all' });
  const r = await ctx.task(review, { out: b.out });
  return { b, r };
}
`

// tool runs one CLI verb (SDK names: run:create, run:iterate, task:post).
type tool struct {
	name  string
	ws    string
	argv  func(verb string) []string
	env   []string
	times []time.Duration
}

func (t *tool) run(v any, verb string, args ...string) error {
	argv := append(t.argv(verb), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = t.ws, t.env
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = string(ee.Stderr)
		}
		return fmt.Errorf("%s %s: %v\n%s%s", t.name, verb, err, out, msg)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", t.name, verb, err, out)
		}
	}
	return nil
}

// cycle is create → iterate → post → iterate; the second iterate must
// ask for the agent effect.
func (t *tool) cycle() (time.Duration, error) {
	start := time.Now()
	var c struct{ RunDir string }
	if err := t.run(&c, "run:create", "--process-id", "bench", "--entry", "./proc.mjs#process", "--runs-dir", "runs", "--json"); err != nil {
		return 0, err
	}
	var it struct {
		NextActions []struct{ EffectID, Kind string }
	}
	if err := t.run(&it, "run:iterate", c.RunDir, "--json"); err != nil {
		return 0, err
	}
	if len(it.NextActions) != 1 || it.NextActions[0].Kind != "shell" {
		return 0, fmt.Errorf("%s: first iterate asked for %+v", t.name, it.NextActions)
	}
	if err := t.run(nil, "task:post", c.RunDir, it.NextActions[0].EffectID, "--status", "ok", "--value-inline", `{"out":"bin"}`, "--json"); err != nil {
		return 0, err
	}
	it.NextActions = nil
	if err := t.run(&it, "run:iterate", c.RunDir, "--json"); err != nil {
		return 0, err
	}
	if len(it.NextActions) != 1 || it.NextActions[0].Kind != "agent" {
		return 0, fmt.Errorf("%s: second iterate asked for %+v", t.name, it.NextActions)
	}
	return time.Since(start), nil
}

func main() {
	n := flag.Int("n", 7, "timed cycles of each tool")
	strict := flag.Bool("strict", false, "exit 1 when sitter misses the 10× target")
	flag.Parse()
	if _, err := exec.LookPath("node"); err != nil {
		fatalf("node is not on PATH: both tools run processes with Node")
	}
	tmp, err := os.MkdirTemp("", "runbench-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	// `sitter run …` as users type it: the sitter binary execs sitter-host.
	bin := filepath.Join(tmp, "sitter")
	if out, err := exec.Command("go", "build", "-o", tmp+"/", "sitter.dev/sitter/runtime/cmd/sitter", "sitter.dev/sitter/runtime/cmd/sitter-host").CombinedOutput(); err != nil {
		fatalf("build sitter: %v\n%s", err, out)
	}
	env := append(os.Environ(), "HOME="+filepath.Join(tmp, "home"), "SITTER_CACHE_DIR="+filepath.Join(tmp, "cache"))
	sitterWS := filepath.Join(tmp, "sitter-ws")
	tools := []*tool{{name: "sitter", ws: sitterWS, env: env, argv: func(verb string) []string {
		return append([]string{bin}, map[string][]string{"run:create": {"run", "create"}, "run:iterate": {"run", "iterate"}, "task:post": {"task", "post"}}[verb]...)
	}}}

	sdk := os.Getenv("SITTER_SDK_DIR")
	if sdk == "" {
		home, _ := os.UserHomeDir()
		sdk = filepath.Join(home, ".cache", "sitter-npm", "babysitter")
	}
	sdkBin := filepath.Join(sdk, "node_modules", ".bin", "babysitter")
	sdkWS := filepath.Join(tmp, "sdk-ws")
	if _, err := os.Stat(sdkBin); err == nil {
		tools = append(tools, &tool{name: "npm SDK", ws: sdkWS, env: env, argv: func(verb string) []string { return []string{sdkBin, verb} }})
	} else {
		fmt.Printf("runbench: the npm SDK is not installed in %s: timing sitter only (install it with: npm install --prefix %s @a5c-ai/babysitter-sdk)\n", sdk, sdk)
	}
	for _, t := range tools {
		os.MkdirAll(t.ws, 0o755)
		if err := os.WriteFile(filepath.Join(t.ws, "proc.mjs"), []byte(process), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	if len(tools) > 1 {
		if err := os.Symlink(filepath.Join(sdk, "node_modules"), filepath.Join(sdkWS, "node_modules")); err != nil {
			fatalf("%v", err)
		}
	}
	// One untimed cycle each: sitter writes its JS runtime to the cache,
	// both warm the page cache.
	for _, t := range tools {
		if _, err := t.cycle(); err != nil {
			fatalf("%v", err)
		}
	}
	for i := 0; i < *n; i++ {
		for _, t := range tools {
			d, err := t.cycle()
			if err != nil {
				fatalf("%v", err)
			}
			t.times = append(t.times, d)
		}
	}
	fmt.Printf("run cycle (create → iterate → post → iterate), median of %d:\n", *n)
	for _, t := range tools {
		fmt.Printf("  %-8s %8.1f ms  (min %.1f, max %.1f)\n", t.name, ms(median(t.times)), ms(slices.Min(t.times)), ms(slices.Max(t.times)))
	}
	if len(tools) < 2 {
		return
	}
	ratio := float64(median(tools[1].times)) / float64(median(tools[0].times))
	verdict := "meets"
	if ratio < target {
		verdict = "misses"
	}
	fmt.Printf("  sitter is %.1f× faster than the npm SDK (%s the %.0f× target)\n", ratio, verdict, target)
	if *strict && ratio < target {
		os.Exit(1)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "runbench: "+format+"\n", a...)
	os.Exit(1)
}
