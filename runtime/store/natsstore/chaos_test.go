package natsstore

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitter.dev/sitter/internal/natsproc"
	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/run"
)

// natsServerEnv names a nats-server binary (make chaos builds one from
// the Go module with internal/natsproc): TestChaosNATSProcess runs
// the store's tests against it as a separate process.
const natsServerEnv = "SITTER_TEST_NATS_SERVER"

// realServer starts the nats-server binary of $SITTER_TEST_NATS_SERVER
// on loopback with its store in a temp dir.
func realServer(t *testing.T) *natsproc.Server {
	t.Helper()
	bin := os.Getenv(natsServerEnv)
	if bin == "" {
		t.Skip(natsServerEnv + " is not set: make chaos (runtime/cmd/chaos) builds nats-server and sets it")
	}
	s, err := natsproc.Start(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// The store's cross-machine, race, killed-worker and lost-enqueue tests
// against a real nats-server process, the process killed with SIGKILL in
// the middle of a run and restarted on its store (the run completes, and
// every post a command reported done is in the journal), and the same for
// a node of a 3-process cluster.
func TestChaosNATSProcess(t *testing.T) {
	if os.Getenv(natsServerEnv) == "" {
		t.Skip(natsServerEnv + " is not set: make chaos (runtime/cmd/chaos) builds nats-server and sets it")
	}
	needNode(t)
	t.Run("machines", func(t *testing.T) { runMovesBetweenMachines(t, realServer(t).URL) })
	t.Run("racing", func(t *testing.T) { racingDrivers(t, realServer(t).URL) })
	t.Run("killedWorker", func(t *testing.T) { workerKilledMidEffect(t, realServer(t).URL) })
	t.Run("lostEnqueue", func(t *testing.T) { writerDiesBeforeEnqueue(t, realServer(t).URL) })
	t.Run("serverKilled", serverKilledMidRun)
	t.Run("auditAcrossRestart", auditAcrossRestart)
	t.Run("clusterNodeKilled", clusterNodeKilled)
}

// A cluster of three nats-server processes loses the node leading the run
// stream to SIGKILL mid-run; the node is restarted on its store a step
// later and catches up.
func clusterNodeKilled(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	srvs, err := natsproc.StartCluster(os.Getenv(natsServerEnv), dirs)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*natsproc.Server{}
	nodes := map[string]string{}
	for _, s := range srvs {
		t.Cleanup(s.Stop)
		byName[s.Name] = s
		nodes[s.Name] = s.URL
	}
	clusterLosesANode(t, nodes,
		func(name string) error { return byName[name].Kill() },
		func(name string) error { return byName[name].Restart() })
}

// The team audit across a SIGKILL of the server: what was shipped before
// stays, a ship after the restart goes on after it, nothing twice.
func auditAcrossRestart(t *testing.T) {
	srv := realServer(t)
	ctx := context.Background()
	log := audit.Config{Dir: t.TempDir(), MaxBytes: 2000, Keep: 10}
	appendEntries(t, log, 0, 5)
	c := dialT(t, srv.URL)
	if r, err := c.ShipAudit(ctx, ShipOptions{Log: log, Source: "m"}); err != nil || r.Shipped != 5 {
		t.Fatalf("before the kill: %+v, %v", r, err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	appendEntries(t, log, 5, 20) // the log rotates meanwhile
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if r, err := c.ShipAudit(ctx, ShipOptions{Log: log, Source: "m"}); err != nil || r.Shipped != 20 {
		t.Fatalf("after the restart: %+v, %v", r, err)
	}
	checkShipped(t, c, "m", 25)
}

func serverKilledMidRun(t *testing.T) {
	srv := realServer(t)
	ctx := context.Background()
	a := machine(t, srv.URL, Options{})
	const n = 6
	_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: writeProcess(t) + "#process", Inputs: json.RawMessage(`{"n": 6}`)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []string // posts a command reported done
	var posted atomic.Int32
	done := make(chan error, 1)
	go func() {
		for range 4 * n {
			r, err := iterate(ctx, a, m.RunID)
			if err != nil {
				done <- err
				return
			}
			if r.Status != run.StatusWaiting {
				if r.Status != run.StatusCompleted {
					t.Errorf("the run ended %s", r.Status)
				}
				done <- nil
				return
			}
			for _, act := range r.NextActions {
				err := post(ctx, a, m.RunID, act.EffectID, `"ok"`)
				if err != nil && !alreadyResolved(err) {
					done <- err
					return
				}
				mu.Lock()
				acked = append(acked, act.EffectID)
				mu.Unlock()
				posted.Add(1)
			}
		}
		done <- nil
	}()
	// Kill while the driver works, once a few steps are done; restart
	// after a pause in which its requests find no server.
	for posted.Load() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if k := posted.Load(); k >= n {
		t.Fatalf("the run was done (%d posts) before the kill", k)
	}
	time.Sleep(500 * time.Millisecond)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("driving across the server's restart: %v", err)
	}
	st := loadFresh(t, srv.URL, m.RunID)
	if err := checkJournal(st, n); err != nil {
		t.Error(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range acked {
		if e := st.Effect(id); e == nil || e.Status != run.ResolvedOK {
			t.Errorf("effect %s was posted (acknowledged) but the journal has it %v", id, e)
		}
	}
	if len(acked) != n {
		t.Errorf("%d posts acknowledged, want %d", len(acked), n)
	}
}
