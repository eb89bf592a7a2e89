// Command storebench compares the local run store with the NATS
// JetStream one (docs/store.md) in the same process on the same machine:
// journal appends per second and the time of a run cycle (iterate → post
// → iterate → post → iterate), on journals of 1k and 10k events, and the
// time a new machine takes to fetch such a run. The JetStream side talks
// to a real nats-server process built from the Go module (loopback, file
// storage in a temp dir). Run it from inside the sitter module:
//
//	go run ./runtime/cmd/storebench [-k 50] [-sizes 1000,10000]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sitter.dev/sitter/internal/natsproc"
	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store"
	"sitter.dev/sitter/runtime/store/natsstore"
)

const process = `import { defineTask } from '@a5c-ai/babysitter-sdk';
const build = defineTask('build', (args) => ({ kind: 'shell', title: 'Build', shell: { command: 'echo ' + args.target } }));
const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { prompt: 'review ' + args.out } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, { target: 'all' });
  const r = await ctx.task(review, { out: b.out });
  return { b, r };
}
`

func main() {
	k := flag.Int("k", 50, "appends timed per journal size")
	sizes := flag.String("sizes", "1000,10000", "journal lengths (events)")
	flag.Parse()
	if _, err := exec.LookPath("node"); err != nil {
		fatalf("node is not on PATH: a run cycle runs the process with Node")
	}
	tmp, err := os.MkdirTemp("", "storebench-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	os.Setenv("SITTER_CACHE_DIR", filepath.Join(tmp, "cache"))
	url, stop := natsServer(tmp)
	defer stop()
	ctx := context.Background()
	entry := filepath.Join(tmp, "proc.mjs")
	if err := os.WriteFile(entry, []byte(process), 0o644); err != nil {
		fatalf("%v", err)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "events\tstore\tappends/s\trun cycle\tnew machine fetch\t")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatalf("-sizes: %q is not a count", f)
		}
		id := fmt.Sprintf("bench-%d", n)
		base := filepath.Join(tmp, "base")
		dir, _, err := run.Create(ctx, run.CreateOptions{RunsDir: base, RunID: id, ProcessID: "bench", Entry: entry + "#process"})
		must(err)
		pad(ctx, dir, n)
		// The same run twice: one stays local, one goes to the store.
		local := filepath.Join(tmp, "local", id)
		must(os.CopyFS(local, os.DirFS(dir)))
		s, err := natsstore.Open(ctx, url, natsstore.Options{CacheDir: filepath.Join(tmp, "machine-a")})
		must(err)
		if _, err := s.Import(ctx, dir); err != nil {
			fatalf("import: %v", err)
		}

		lrate := rate(*k, func() {
			_, err := run.Append(ctx, local, journal.StopHookInvoked, map[string]any{"bench": true})
			must(err)
		})
		lcycle := cycle(ctx, func(fn func(string) error) error { return fn(local) })
		fmt.Fprintf(tw, "%d\tlocal\t%.0f\t%s\t-\t\n", n, lrate, ms(lcycle))

		jrate := rate(*k, func() {
			must(store.Do(ctx, s, id, true, func(d string) error {
				_, err := run.Append(ctx, d, journal.StopHookInvoked, map[string]any{"bench": true})
				return err
			}))
		})
		jcycle := cycle(ctx, func(fn func(string) error) error { return store.Do(ctx, s, id, true, fn) })
		b, err := natsstore.Open(ctx, url, natsstore.Options{CacheDir: filepath.Join(tmp, "machine-b")})
		must(err)
		start := time.Now()
		must(store.Do(ctx, b, id, false, func(string) error { return nil }))
		fetch := time.Since(start)
		fmt.Fprintf(tw, "%d\tjetstream\t%.0f\t%s\t%s\t\n", n, jrate, ms(jcycle), ms(fetch))
		s.Close()
		b.Close()
	}
	tw.Flush()
}

// pad fills a run's journal to n events with stop-check events, which
// replay counts and nothing else reads.
func pad(ctx context.Context, dir string, n int) {
	l, err := run.Lock(ctx, dir, "storebench")
	must(err)
	defer l.Release()
	for i := 1; i < n; i++ {
		_, err := l.Append(journal.StopHookInvoked, map[string]any{"pad": i})
		must(err)
	}
}

// rate is the appends per second of k calls.
func rate(k int, f func()) float64 {
	start := time.Now()
	for range k {
		f()
	}
	return float64(k) / time.Since(start).Seconds()
}

// cycle times iterate → post → iterate → post → iterate on the run that
// with reaches.
func cycle(ctx context.Context, with func(func(string) error) error) time.Duration {
	start := time.Now()
	for i := 0; ; i++ {
		var res *run.IterateResult
		must(with(func(d string) error {
			var err error
			res, err = run.Iterate(ctx, d, run.IterateOptions{})
			return err
		}))
		if res.Status != run.StatusWaiting || i == 3 {
			if res.Status != run.StatusCompleted {
				fatalf("the bench run ended %s", res.Status)
			}
			return time.Since(start)
		}
		for _, a := range res.NextActions {
			must(with(func(d string) error {
				_, err := run.Post(ctx, d, a.EffectID, run.PostOptions{Status: "ok", Value: json.RawMessage(`{"out":"bin"}`)})
				return err
			}))
		}
	}
}

// natsServer builds nats-server from the Go module and runs it on a free
// loopback port with JetStream in dir.
func natsServer(dir string) (string, func()) {
	bin, err := natsproc.Build(dir)
	must(err)
	srv, err := natsproc.Start(bin, filepath.Join(dir, "js"))
	must(err)
	return srv.URL, srv.Stop
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func must(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "storebench: "+format+"\n", a...)
	os.Exit(1)
}
