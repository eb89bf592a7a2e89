package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
)

const remoteProc = `import { defineTask } from '@a5c-ai/babysitter-sdk';
const build = defineTask('build', () => ({ kind: 'shell', remote: true, shell: { command: 'make' } }));
export async function process(inputs, ctx) {
  return await ctx.task(build, {});
}
`

// A worker killed in the middle of an effect leaves it on the queue: the
// next worker gets it and its result is posted once; a duplicate queue
// message of a resolved effect is dropped without running it again.
func TestWorkerKilledMidEffect(t *testing.T) {
	needNode(t)
	workerKilledMidEffect(t, startServer(t).ClientURL())
}

func workerKilledMidEffect(t *testing.T, url string) {
	ctx := context.Background()
	a := machine(t, url, Options{})
	ws := t.TempDir()
	entry := filepath.Join(ws, "proc.mjs")
	os.WriteFile(entry, []byte(remoteProc), 0o644)
	_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: entry + "#process"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := iterate(ctx, a, m.RunID) // requests the effect: the commit enqueues it
	if err != nil || len(r.NextActions) != 1 {
		t.Fatalf("iterate: %+v, %v", r, err)
	}
	eff := r.NextActions[0].EffectID

	var runs atomic.Int32
	started := make(chan struct{})
	w1 := machine(t, url, Options{})
	kctx, kill := context.WithCancel(ctx)
	done1 := make(chan int)
	go func() {
		n, _ := w1.Work(kctx, WorkOptions{AckWait: 2 * time.Second, Do: func(ctx context.Context, _ json.RawMessage) run.PostOptions {
			runs.Add(1)
			close(started)
			<-ctx.Done() // killed mid-effect
			return run.PostOptions{}
		}})
		done1 <- n
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the first worker got no effect from the queue")
	}
	kill()
	if n := <-done1; n != 0 {
		t.Fatalf("the killed worker reported %d effects done", n)
	}

	w2 := machine(t, url, Options{})
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n, err := w2.Work(wctx, WorkOptions{Max: 1, AckWait: 2 * time.Second, Do: func(context.Context, json.RawMessage) run.PostOptions {
		runs.Add(1)
		return run.PostOptions{Status: "ok", Value: json.RawMessage(`"built"`)}
	}})
	if err != nil || n != 1 {
		t.Fatalf("second worker: %d effects, %v", n, err)
	}

	// A duplicate of the item (a re-enqueue after the duplicate window).
	b, _ := json.Marshal(WorkItem{m.RunID, eff, "shell"})
	if _, err := a.workStream(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.js.Publish(ctx, WorkPrefix+"shell", b); err != nil {
		t.Fatal(err)
	}
	n, err = w2.Work(wctx, WorkOptions{Max: 1, AckWait: 2 * time.Second, Do: func(context.Context, json.RawMessage) run.PostOptions {
		runs.Add(1)
		return run.PostOptions{Status: "ok", Value: json.RawMessage(`"again"`)}
	}})
	if err != nil || n != 1 {
		t.Fatalf("worker on the duplicate: %d, %v", n, err)
	}
	if got := runs.Load(); got != 2 {
		t.Errorf("the effect ran %d times, want 2 (the killed run and the redelivery)", got)
	}
	r, err = iterate(ctx, a, m.RunID)
	if err != nil || r.Status != run.StatusCompleted || compact(string(r.Output)) != `"built"` {
		t.Fatalf("after the workers: %+v, %v", r, err)
	}
	st := loadFresh(t, url, m.RunID)
	resolved := 0
	for _, ev := range st.Journal.Events {
		if ev.Type == journal.EffectResolved {
			resolved++
		}
	}
	if resolved != 1 {
		t.Errorf("%d EFFECT_RESOLVED in the journal, want 1", resolved)
	}
}

// A writer that dies between committing the request of a remote effect
// and enqueueing it leaves the effect pending and off the queue; a worker
// finds it when it starts (its reconciliation), enqueues it and runs it
// once. A reconciliation while the item is on the queue enqueues nothing.
func TestWriterDiesBeforeEnqueue(t *testing.T) {
	needNode(t)
	writerDiesBeforeEnqueue(t, startServer(t).ClientURL())
}

func writerDiesBeforeEnqueue(t *testing.T, url string) {
	ctx := context.Background()
	a := machine(t, url, Options{})
	ws := t.TempDir()
	entry := filepath.Join(ws, "proc.mjs")
	os.WriteFile(entry, []byte(remoteProc), 0o644)
	died := errors.New("the writer died")
	lostEnqueue := func() string {
		t.Helper()
		_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: entry + "#process"})
		if err != nil {
			t.Fatal(err)
		}
		a.diesBeforeEnqueue = died
		_, err = iterate(ctx, a, m.RunID)
		a.diesBeforeEnqueue = nil
		if !errors.Is(err, died) {
			t.Fatalf("iterate: %v, want the simulated death", err)
		}
		st := loadFresh(t, url, m.RunID)
		if p := st.Pending(); len(p) != 1 {
			t.Fatalf("after the commit: %d pending effects, want 1", len(p))
		}
		return m.RunID
	}
	onQueue := func() int {
		t.Helper()
		q, err := a.queued(ctx, []string{"shell"})
		if err != nil {
			t.Fatal(err)
		}
		return len(q)
	}

	id := lostEnqueue()
	if n := onQueue(); n != 0 {
		t.Fatalf("%d items on the queue after the writer died, want 0", n)
	}
	var runs atomic.Int32
	w := machine(t, url, Options{})
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n, err := w.Work(wctx, WorkOptions{Max: 1, Do: func(context.Context, json.RawMessage) run.PostOptions {
		runs.Add(1)
		return run.PostOptions{Status: "ok", Value: json.RawMessage(`"built"`)}
	}})
	if err != nil || n != 1 || runs.Load() != 1 {
		t.Fatalf("the worker: %d effects done, %d runs, %v; want 1, 1", n, runs.Load(), err)
	}
	r, err := iterate(ctx, a, id)
	if err != nil || r.Status != run.StatusCompleted || compact(string(r.Output)) != `"built"` {
		t.Fatalf("after the worker: %+v, %v", r, err)
	}
	if k, err := newReconciler().pass(ctx, w, []string{"shell"}, io.Discard); err != nil || k != 0 {
		t.Errorf("a pass after the effect was resolved enqueued %d, %v; want 0", k, err)
	}

	id2 := lostEnqueue()
	rec := newReconciler()
	if k, err := rec.pass(ctx, w, []string{"shell"}, io.Discard); err != nil || k != 1 {
		t.Fatalf("first pass: %d enqueued, %v; want 1", k, err)
	}
	if k, err := rec.pass(ctx, w, []string{"shell"}, io.Discard); err != nil || k != 0 {
		t.Errorf("second pass: %d enqueued, %v; want 0", k, err)
	}
	// A new worker's pass reads every run again; the item is on the queue.
	if k, err := newReconciler().pass(ctx, w, []string{"shell"}, io.Discard); err != nil || k != 0 {
		t.Errorf("a new worker's pass: %d enqueued, %v; want 0", k, err)
	}
	// A worker of other kinds leaves it alone.
	if k, err := newReconciler().pass(ctx, w, []string{"agent"}, io.Discard); err != nil || k != 0 {
		t.Errorf("a pass for kind agent: %d enqueued, %v; want 0", k, err)
	}
	if n := onQueue(); n != 1 {
		t.Errorf("%d items of run %s on the queue, want 1", n, id2)
	}
}

// Workers of the same kinds share one consumer, whatever order --kinds
// names them in; a worker whose kinds overlap another consumer's without
// being the same set is refused with an error that names that consumer's
// kinds (the queue gives each subject to one consumer only).
func TestWorkerKindsOrder(t *testing.T) {
	url := startServer(t).ClientURL()
	nop := func(context.Context, json.RawMessage) run.PostOptions { return run.PostOptions{} }
	work := func(kinds ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		_, err := machine(t, url, Options{}).Work(ctx, WorkOptions{Kinds: kinds, Reconcile: ReconcileAtStart, Do: nop})
		return err
	}
	if err := work("shell", "node"); err != nil {
		t.Fatalf("--kinds shell,node: %v", err)
	}
	if err := work("node", "shell"); err != nil {
		t.Fatalf("--kinds node,shell after shell,node: %v", err)
	}
	if err := work("shell", "node", "shell"); err != nil {
		t.Fatalf("--kinds shell,node,shell: %v", err)
	}
	err := work("shell")
	if err == nil || !strings.Contains(err.Error(), "--kinds node,shell") {
		t.Fatalf("--kinds shell beside a node,shell consumer: %v, want an error naming --kinds node,shell", err)
	}

	// The kinds are free once no worker of the set that took them has
	// pulled for consumerIdle.
	idle := consumerIdle
	defer func() { consumerIdle = idle }()
	consumerIdle = time.Second
	if err := work("x", "y"); err != nil {
		t.Fatalf("--kinds x,y: %v", err)
	}
	if err := work("x"); err == nil || !strings.Contains(err.Error(), "free 1s after its last worker stops") {
		t.Fatalf("--kinds x while x,y's worker has just stopped: %v, want the overlap and when it ends", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for err := work("x"); err != nil; err = work("x") {
		if time.Now().After(deadline) {
			t.Fatalf("--kinds x long after x,y's last worker stopped: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	consumerIdle = idle

	// A consumer an earlier release named (kinds joined with "-", in the
	// order typed) is the same set's: its workers still run, and take it.
	ctx := context.Background()
	ws, err := machine(t, url, Options{}).workStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "sitter-worker-b-a", FilterSubjects: []string{WorkPrefix + "a", WorkPrefix + "b"}, AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if err := work("a", "b"); err != nil {
		t.Fatalf("--kinds a,b beside an earlier release's b-a consumer: %v", err)
	}
	// Kinds whose names join alike are other sets, with other consumers.
	if err := work("b-a"); err != nil {
		t.Fatalf("--kinds b-a beside an a,b consumer named sitter-worker-b-a: %v", err)
	}
	var names []string
	list := ws.ListConsumers(ctx)
	for c := range list.Info() {
		names = append(names, c.Name+"="+strings.Join(c.Config.FilterSubjects, "+"))
	}
	slices.Sort(names)
	want := []string{"sitter-worker-b-a=sitter.work.a+sitter.work.b", "sitter-worker-node,shell=sitter.work.node+sitter.work.shell"}
	names = slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, "sitter-worker-x") })
	if len(names) != 3 || !slices.Equal(names[1:], want) || !strings.HasPrefix(names[0], "sitter-worker-b-a-") || !strings.HasSuffix(names[0], "=sitter.work.b-a") {
		t.Errorf("consumers = %q, want one per set of kinds: %q and sitter-worker-b-a-<hash> for b-a", names, want)
	}
}
