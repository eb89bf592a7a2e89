package natsstore

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"sitter.dev/sitter/runtime/run"
)

// startCluster runs n JetStream servers clustered on loopback in this
// process.
func startCluster(t *testing.T, n int) []*server.Server {
	t.Helper()
	ports := make([]int, n)
	var routes []string
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	var srvs []*server.Server
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "sitter-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		}
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		t.Cleanup(s.Shutdown)
		srvs = append(srvs, s)
	}
	for _, s := range srvs {
		if !s.ReadyForConnections(20 * time.Second) {
			t.Fatal("a cluster node did not start")
		}
	}
	return srvs
}

func clusterURL(srvs []*server.Server) string {
	var urls []string
	for _, s := range srvs {
		urls = append(urls, s.ClientURL())
	}
	return strings.Join(urls, ",") + "?replicas=3"
}

// A 3-node cluster loses the node that leads the run stream in the middle
// of a run: the run completes, and every step a command reported done
// before the loss is in the journal.
func TestClusterLosesANode(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster")
	}
	needNode(t)
	srvs := startCluster(t, 3)
	url := clusterURL(srvs)
	ctx := context.Background()
	var a *Store
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The cluster elects its JetStream leader after the nodes meet.
		s, err := Open(ctx, url, Options{CacheDir: t.TempDir()})
		if err == nil {
			a = s
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer a.Close()
	_, m, err := a.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: writeProcess(t) + "#process", Inputs: json.RawMessage(`{"n": 6}`)})
	if err != nil {
		t.Fatal(err)
	}
	var acked []string // effects whose post a command reported done
	step := func() *run.IterateResult {
		t.Helper()
		r, err := iterate(ctx, a, m.RunID)
		if err != nil {
			t.Fatal(err)
		}
		for _, act := range r.NextActions {
			if err := post(ctx, a, m.RunID, act.EffectID, `"ok"`); err != nil {
				t.Fatal(err)
			}
			acked = append(acked, act.EffectID)
		}
		return r
	}
	for range 3 {
		step()
	}
	killed := ""
	for _, s := range srvs {
		if s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, StreamName) {
			killed = s.Name()
			s.Shutdown()
			break
		}
	}
	if killed == "" {
		t.Fatal("no node leads the run stream")
	}
	var r *run.IterateResult
	for range 10 {
		if r = step(); r.Status != run.StatusWaiting {
			break
		}
	}
	if r.Status != run.StatusCompleted {
		t.Fatalf("after losing %s the run ended %s", killed, r.Status)
	}
	var live []string
	for _, s := range srvs {
		if s.Name() != killed {
			live = append(live, s.ClientURL())
		}
	}
	st := loadFresh(t, strings.Join(live, ","), m.RunID)
	if err := checkJournal(st, 6); err != nil {
		t.Error(err)
	}
	for _, id := range acked {
		if e := st.Effect(id); e == nil || e.Status != run.ResolvedOK {
			t.Errorf("effect %s was posted (acknowledged) but the journal has it %v", id, e)
		}
	}
	info, err := a.stream.Info(ctx)
	if err != nil || info.Config.Replicas != 3 {
		t.Errorf("the run stream after a client without ?replicas= connected: %v, %v; want 3 replicas kept", info, err)
	}
	if len(acked) != 6 {
		t.Errorf("%d posts acknowledged, want 6", len(acked))
	}
}
