package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store"
)

var jsrtCache string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "sitter-jsrt-")
	if err != nil {
		panic(err)
	}
	jsrtCache = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: process replay needs Node ≥ 20.6")
	}
	t.Setenv("SITTER_CACHE_DIR", jsrtCache)
}

// startServer runs a single JetStream server on loopback with its store
// in a temp dir.
func startServer(t *testing.T) *server.Server {
	t.Helper()
	o := &server.Options{ServerName: "s1", Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// machine is one machine's connection: its own cache dir, no shared files.
func machine(t *testing.T, url string, o Options) *Store {
	t.Helper()
	o.CacheDir = t.TempDir()
	s, err := Open(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

const steps = `import { defineTask } from '@a5c-ai/babysitter-sdk';
import { label } from './lib/label.mjs';
const step = defineTask('step', (args) => ({ kind: 'shell', title: label(args.i), shell: { command: 'echo ' + args.i } }));
export async function process(inputs, ctx) {
  const out = [];
  for (let i = 0; i < inputs.n; i++) out.push(await ctx.task(step, { i }));
  return out;
}
`

const labelLib = "export function label(i) { return 'step ' + i; }\n"

// writeProcess writes the process and its imported helper in a project
// directory of "machine A".
func writeProcess(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "lib"), 0o755)
	if err := os.WriteFile(filepath.Join(ws, "proc.mjs"), []byte(steps), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "lib", "label.mjs"), []byte(labelLib), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(ws, "proc.mjs")
}

func iterate(ctx context.Context, s store.Store, id string) (*run.IterateResult, error) {
	var res *run.IterateResult
	err := store.Do(ctx, s, id, true, func(dir string) error {
		var stderr strings.Builder
		r, err := run.Iterate(ctx, dir, run.IterateOptions{Stderr: &stderr, Timeout: time.Minute})
		if err == nil && r.RuntimeError {
			err = fmt.Errorf("runtime error: %s\n%s", r.Error, stderr.String())
		}
		res = r
		return err
	})
	return res, err
}

func post(ctx context.Context, s store.Store, id, effectID, value string) error {
	return store.Do(ctx, s, id, true, func(dir string) error {
		_, err := run.Post(ctx, dir, effectID, run.PostOptions{Status: "ok", Value: json.RawMessage(value)})
		return err
	})
}

// drive iterates and posts until the run completes; a post another
// driver made first is refused, as a second post always is.
func drive(ctx context.Context, s store.Store, id string) (*run.IterateResult, error) {
	for range 100 {
		r, err := iterate(ctx, s, id)
		if err != nil {
			return nil, err
		}
		if r.Status != run.StatusWaiting {
			return r, nil
		}
		for _, a := range r.NextActions {
			var def struct{ Shell struct{ Command string } }
			json.Unmarshal(a.TaskDef, &def)
			v, _ := json.Marshal(strings.TrimPrefix(def.Shell.Command, "echo "))
			if err := post(ctx, s, id, a.EffectID, string(v)); err != nil && !strings.Contains(err.Error(), "not in status requested") && !errors.Is(err, run.ErrAlreadyResolved) {
				return nil, err
			}
		}
	}
	return nil, errors.New("run did not complete in 100 rounds")
}

// loadFresh reads run id as a machine that never saw it does.
func loadFresh(t *testing.T, url, id string) *run.State {
	t.Helper()
	c := machine(t, url, Options{})
	var st *run.State
	err := store.Do(context.Background(), c, id, false, func(dir string) error {
		var err error
		st, err = run.Load(dir)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkJournal says what is wrong with a finished run's journal: every
// effect requested once and resolved once, nothing after completion.
func checkJournal(st *run.State, n int) error {
	requested, resolved := map[string]int{}, map[string]int{}
	keys := map[string]int{}
	for _, ev := range st.Journal.Events {
		var d struct{ EffectID, InvocationKey string }
		json.Unmarshal(ev.Data, &d)
		switch ev.Type {
		case journal.EffectRequested:
			requested[d.EffectID]++
			keys[d.InvocationKey]++
		case journal.EffectResolved:
			resolved[d.EffectID]++
		}
	}
	if st.Status != run.StatusCompleted {
		return fmt.Errorf("status %s", st.Status)
	}
	if len(requested) != n || len(keys) != n {
		return fmt.Errorf("%d effects requested (%d keys), want %d", len(requested), len(keys), n)
	}
	for id, c := range requested {
		if c != 1 || resolved[id] != 1 {
			return fmt.Errorf("effect %s requested %d times, resolved %d times", id, c, resolved[id])
		}
	}
	for k, c := range keys {
		if c != 1 {
			return fmt.Errorf("invocation %s requested %d times", k, c)
		}
	}
	if last := st.Journal.Head(); last.Type != journal.RunCompleted {
		return fmt.Errorf("last event %s", last.Type)
	}
	return nil
}

// A run created on machine A is driven to completion from machine B,
// which has none of A's files: the process (and the helper it imports)
// and the inputs travel with the run.
func TestRunMovesBetweenMachines(t *testing.T) {
	needNode(t)
	runMovesBetweenMachines(t, startServer(t).ClientURL())
}

func runMovesBetweenMachines(t *testing.T, url string) {
	ctx := context.Background()
	a, b := machine(t, url, Options{}), machine(t, url, Options{})
	entry := writeProcess(t)
	_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: entry + "#process", Inputs: json.RawMessage(`{"n": 3}`)})
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Dir(entry)) // machine A is gone
	os.RemoveAll(a.o.CacheDir)
	r, err := drive(ctx, b, m.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.Output); got != "[\n  \"0\",\n  \"1\",\n  \"2\"\n]\n" && compact(got) != `["0","1","2"]` {
		t.Errorf("output %s", got)
	}
	if r.CompletionProof != m.CompletionProof {
		t.Errorf("completion proof %q, want the one made at create %q", r.CompletionProof, m.CompletionProof)
	}
	st := loadFresh(t, url, m.RunID)
	if err := checkJournal(st, 3); err != nil {
		t.Error(err)
	}
}

func compact(s string) string {
	var v any
	json.Unmarshal([]byte(s), &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// Two drivers race on one run, each on its own machine: one journal, no
// event duplicated or missing.
func TestRacingDrivers(t *testing.T) {
	needNode(t)
	racingDrivers(t, startServer(t).ClientURL())
}

func racingDrivers(t *testing.T, url string) {
	ctx := context.Background()
	for _, noLease := range []bool{false, true} {
		t.Run(fmt.Sprintf("noLease=%t", noLease), func(t *testing.T) {
			a := machine(t, url, Options{NoLease: noLease})
			b := machine(t, url, Options{NoLease: noLease})
			_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: writeProcess(t) + "#process", Inputs: json.RawMessage(`{"n": 4}`)})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, s := range []*Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = drive(ctx, s, m.RunID)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := checkJournal(loadFresh(t, url, m.RunID), 4); err != nil {
				t.Error(err)
			}
		})
	}
}

// The writer that commits second, from the same start, is refused and
// replays its step on the run as the first one left it: the same effect
// is not requested twice, the same result is not posted twice.
func TestLosingWriterReplays(t *testing.T) {
	needNode(t)
	srv := startServer(t)
	ctx := context.Background()
	a := machine(t, srv.ClientURL(), Options{NoLease: true})
	b := machine(t, srv.ClientURL(), Options{NoLease: true})
	_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: writeProcess(t) + "#process", Inputs: json.RawMessage(`{"n": 2}`)})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := a.Checkout(ctx, m.RunID, true)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.Checkout(ctx, m.RunID, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []store.Checkout{ca, cb} {
		if _, err := run.Iterate(ctx, c.Dir(), run.IterateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ca.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cb.Commit(ctx); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second commit from the same start: %v, want ErrConflict", err)
	}
	ca.Release()
	cb.Release()
	r, err := iterate(ctx, b, m.RunID) // b re-reads: a's effect is pending
	if err != nil {
		t.Fatal(err)
	}
	st := loadFresh(t, srv.ClientURL(), m.RunID)
	if n := len(st.Effects); n != 1 || len(r.NextActions) != 1 || r.NextActions[0].EffectID != st.Effects[0].EffectID {
		t.Fatalf("after the lost commit: %d effects in the journal, b sees %+v", n, r.NextActions)
	}
	// Both post the same effect from the same start: one result counts.
	eff := r.NextActions[0].EffectID
	ca, _ = a.Checkout(ctx, m.RunID, true)
	cb, _ = b.Checkout(ctx, m.RunID, true)
	for i, c := range []store.Checkout{ca, cb} {
		if _, err := run.Post(ctx, c.Dir(), eff, run.PostOptions{Status: "ok", Value: json.RawMessage(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ca.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cb.Commit(ctx); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second post from the same start: %v, want ErrConflict", err)
	}
	ca.Release()
	cb.Release()
	if err := post(ctx, b, m.RunID, eff, "1"); err == nil || !strings.Contains(err.Error(), "resolved") {
		t.Fatalf("b's post replayed on a's: %v, want it refused as already resolved", err)
	}
	st = loadFresh(t, srv.ClientURL(), m.RunID)
	res, err := st.Result(st.Effect(eff))
	if err != nil {
		t.Fatal(err)
	}
	if string(res["value"]) != "0" {
		t.Errorf("the result that counts is %s, want a's (0)", res["value"])
	}
}

// A publish stored whose acknowledgement was lost is retried with the same
// id and expectation: the server refuses it as out of order (it checks the
// sequence before the id), and the writer recognises its own message
// rather than losing a commit it made. Another writer's message at that
// place is still a conflict.
func TestPublishAckLost(t *testing.T) {
	needNode(t)
	srv := startServer(t)
	ctx := context.Background()
	a := machine(t, srv.ClientURL(), Options{})
	_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: writeProcess(t) + "#process"})
	if err != nil {
		t.Fatal(err)
	}
	co, err := a.Checkout(ctx, m.RunID, true)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Release()
	c := co.(*checkout)
	before := c.m.Seq
	if err := c.publish(ctx, "notes.txt", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	after := c.m.Seq
	c.m.Seq, c.n = before, c.n-1 // the ack was lost
	if err := c.publish(ctx, "notes.txt", []byte("x"), false); err != nil || c.m.Seq != after {
		t.Fatalf("the retried publish: %v (sequence %d, want %d)", err, c.m.Seq, after)
	}
	c.m.Seq = before // a new message expecting a place already taken
	if err := c.publish(ctx, "other.txt", []byte("y"), false); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a different message at a taken place: %v, want ErrConflict", err)
	}
}
