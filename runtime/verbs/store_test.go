package verbs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// natsServer runs an in-process JetStream server on loopback.
func natsServer(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// storeMachine is sitter on one machine of a team: its own working dir
// and cache, the store in its environment.
func storeMachine(t *testing.T, env []string, url string) cli {
	cache := t.TempDir()
	return cli{"sitter", func(verb string, args ...string) *exec.Cmd {
		noun, v, _ := strings.Cut(verb, ":")
		cmd := exec.Command(os.Args[0], append([]string{noun, v}, args...)...)
		cmd.Env = append(env, "SITTER_TEST_MAIN=1", "SITTER_STORE="+url, "SITTER_STORE_CACHE="+cache)
		return cmd
	}}
}

// A run created through the CLI on machine A is driven to its end on
// machine B by its id alone, exported, and read by the npm SDK and by
// sitter's local verbs as the same run.
func TestStoreRunAcrossMachines(t *testing.T) {
	bin := needSDK(t)
	url := natsServer(t)
	env := sideEnv(t)
	a, b := storeMachine(t, env, url), storeMachine(t, env, url)
	c := sideCases[0]
	inputs := ""
	if c.inputs != nil {
		inputs = c.inputs()
	}
	wsA := workspace(t, c.proc, inputs)
	args := []string{"--process-id", "side", "--entry", "./proc.mjs#process", "--json"}
	if inputs != "" {
		args = append(args, "--inputs", "inputs.json")
	}
	created := a.run(t, wsA, "run:create", args...)
	id, _ := created.Stdout.(map[string]any)["runId"].(string)
	if created.Code != 0 || id == "" {
		t.Fatalf("run:create on A: %+v", created)
	}
	os.RemoveAll(wsA) // machine A is gone
	wsB := t.TempDir()
	os.Symlink(filepath.Join(sdkDir(), "node_modules"), filepath.Join(wsB, "node_modules"))
	status := ""
	for i := 0; i < 6; i++ {
		it := b.run(t, wsB, "run:iterate", id, "--json")
		res, _ := it.Stdout.(map[string]any)
		if it.Code != 0 || res == nil {
			t.Fatalf("run:iterate on B: %+v", it)
		}
		if status, _ = res["status"].(string); status != "waiting" {
			break
		}
		for _, x := range res["nextActions"].([]any) {
			act := x.(map[string]any)
			kind, _ := act["kind"].(string)
			waitSleep(act)
			p := b.run(t, wsB, "task:post", append([]string{id, act["effectId"].(string)}, append(c.post(kind), "--json")...)...)
			if p.Code != 0 {
				t.Fatalf("task:post on B: %+v", p)
			}
		}
	}
	if status != "completed" {
		t.Fatalf("the run ended %q on B, want completed", status)
	}
	exp := b.run(t, wsB, "run:export", id, "--to", "runs", "--json")
	if exp.Code != 0 {
		t.Fatalf("run:export: %+v", exp)
	}
	dir := filepath.Join(wsB, "runs", id)
	sdk, local := newCLIs(t, bin)
	for _, verb := range []string{"run:status", "task:list"} {
		x := sdk.run(t, wsB, verb, dir, "--json")
		y := local.run(t, wsB, verb, dir, "--json")
		if x.Code != 0 || y.Code != 0 {
			t.Fatalf("%s of the exported run: sdk %+v, sitter %+v", verb, x, y)
		}
		compareSteps(t, []step{x}, []step{y}, wsB, wsB)
	}
	st := sdk.run(t, wsB, "run:status", dir, "--json")
	if state, _ := st.Stdout.(map[string]any)["state"].(string); state != "completed" {
		t.Errorf("the npm SDK reads the exported run as %q, want completed", state)
	}
}
