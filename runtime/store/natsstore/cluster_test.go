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

// A 3-node cluster loses the node that leads the run stream in the middle
// of a run: the run completes, and every step a command reported done
// before the loss is in the journal.
func TestClusterLosesANode(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster")
	}
	needNode(t)
	srvs := startCluster(t, 3)
	nodes := map[string]string{} // name: client URL
	for _, s := range srvs {
		nodes[s.Name()] = s.ClientURL()
	}
	clusterLosesANode(t, nodes, func(name string) error {
		for _, s := range srvs {
			if s.Name() == name {
				s.Shutdown()
				return nil
			}
		}
		return fmt.Errorf("no node %s", name)
	}, nil)
}

// clusterLosesANode drives a run on the cluster of nodes (name: client
// URL) and, after three steps, kills the node leading the run stream.
// With restart, the node is started again after one more step (on its
// store) and must come back as a current replica of the stream. The run
// must complete on the nodes left, with one journal: every effect
// requested and resolved once, checksums and links valid, every post a
// command reported done in it.
func clusterLosesANode(t *testing.T, nodes map[string]string, kill, restart func(name string) error) {
	var urls []string
	for _, u := range nodes {
		urls = append(urls, u)
	}
	url := strings.Join(urls, ",") + "?replicas=3"
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
	info, err := a.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	killed := ""
	if info.Cluster != nil {
		killed = info.Cluster.Leader
	}
	if _, ok := nodes[killed]; !ok {
		t.Fatalf("no node leads the run stream (%q)", killed)
	}
	if err := kill(killed); err != nil {
		t.Fatal(err)
	}
	var r *run.IterateResult
	for i := range 10 {
		if r = step(); r.Status != run.StatusWaiting {
			break
		}
		if i == 0 && restart != nil {
			if err := restart(killed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r.Status != run.StatusCompleted {
		t.Fatalf("after losing %s the run ended %s", killed, r.Status)
	}
	var live []string
	for name, u := range nodes {
		if name != killed || restart != nil {
			live = append(live, u)
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
	info, err = a.stream.Info(ctx)
	if err != nil || info.Config.Replicas != 3 {
		t.Errorf("the run stream after a client without ?replicas= connected: %v, %v; want 3 replicas kept", info, err)
	}
	if len(acked) != 6 {
		t.Errorf("%d posts acknowledged, want 6", len(acked))
	}
	if restart != nil {
		// The restarted node catches up with what was stored without it.
		deadline := time.Now().Add(20 * time.Second)
		for !currentReplica(ctx, a, killed) {
			if time.Now().After(deadline) {
				t.Fatalf("the restarted node %s is not a current replica of the run stream after 20s", killed)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// currentReplica says whether node is a caught-up member of the run
// stream's group.
func currentReplica(ctx context.Context, s *Store, node string) bool {
	info, err := s.stream.Info(ctx)
	if err != nil || info.Cluster == nil {
		return false
	}
	if info.Cluster.Leader == node {
		return true
	}
	for _, p := range info.Cluster.Replicas {
		if p.Name == node && p.Current && !p.Offline {
			return true
		}
	}
	return false
}
