package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store/natsstore"
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
	env = slices.Clip(env) // shared by parallel callers: appends must copy
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

// A session drives a run of the store: run create --store binds it, the
// stop check (sitter-host's, since the session names a store) blocks with
// the run's next step named by id and --store, and the binding and the
// decision are journaled in the store, where another machine reads them.
func TestStoreSessionStopCheck(t *testing.T) {
	needSDK(t)
	url := natsServer(t)
	env := sideEnv(t)
	a, b := storeMachine(t, env, url), storeMachine(t, env, url)
	ws := workspace(t, sideCases[0].proc, sideCases[0].inputs())
	created := a.run(t, ws, "run:create", "--process-id", "side", "--entry", "./proc.mjs#process", "--inputs", "inputs.json", "--harness", "claude-code", "--session-id", "s1", "--json")
	res, _ := created.Stdout.(map[string]any)
	id, _ := res["runId"].(string)
	if created.Code != 0 || id == "" || res["session"] == nil {
		t.Fatalf("run:create --store with a session: %+v", created)
	}
	if it := a.run(t, ws, "run:iterate", id, "--json"); it.Code != 0 {
		t.Fatalf("run:iterate: %+v", it)
	}
	if d, r := storeStopCheck(t, a, ws, "s1"); d != "block" || !strings.Contains(r, "sitter run iterate "+id+" --store '"+url+"'") {
		t.Errorf("stop check of the stored run: %s %q; want a block naming the run by id and --store (created: %+v)", d, r, created)
	}
	evs := b.run(t, t.TempDir(), "run:events", id, "--json")
	var types []string
	for _, e := range evs.Stdout.(map[string]any)["events"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if got := strings.Join(types, " "); !strings.Contains(got, "SESSION_BOUND") || !strings.HasSuffix(got, "STOP_HOOK_INVOKED") {
		t.Errorf("the store's journal, read on another machine: %s; want the binding and the stop decision", got)
	}
}

// A session on another machine that takes a stored run (session start
// --run-id) ends the first session's drive: the first machine cannot
// release its session, so its next stop check reads the binding in the
// store's journal and lets its agent stop.
func TestStoreTakeoverAcrossMachines(t *testing.T) {
	needSDK(t)
	url := natsServer(t)
	env := sideEnv(t)
	a := storeMachine(t, env, url)
	b := storeMachine(t, append(env, "SITTER_STATE_DIR="+t.TempDir()), url) // its own sessions
	ws := workspace(t, sideCases[0].proc, sideCases[0].inputs())
	created := a.run(t, ws, "run:create", "--process-id", "side", "--entry", "./proc.mjs#process", "--inputs", "inputs.json", "--harness", "claude-code", "--session-id", "m1s", "--json")
	id, _ := created.Stdout.(map[string]any)["runId"].(string)
	if created.Code != 0 || id == "" {
		t.Fatalf("run:create --store with a session: %+v", created)
	}
	if it := a.run(t, ws, "run:iterate", id, "--json"); it.Code != 0 {
		t.Fatalf("run:iterate: %+v", it)
	}
	stop := func() (decision, reason string) { return storeStopCheck(t, a, ws, "m1s") }
	if d, r := stop(); d != "block" {
		t.Fatalf("before the takeover: %s %q, want a block", d, r)
	}
	if st := b.run(t, t.TempDir(), "session:start", "--run-id", id, "--harness", "codex", "--session-id", "m2s"); st.Code != 0 {
		t.Fatalf("session start --run-id on machine B: %+v", st)
	}
	if d, r := stop(); d == "block" {
		t.Errorf("after machine B took the run: %s %q; want machine A's session let go", d, r)
	}
	evs := b.run(t, t.TempDir(), "run:events", id, "--json")
	all, _ := evs.Stdout.(map[string]any)["events"].([]any)
	if len(all) == 0 {
		t.Fatalf("run:events: %+v", evs)
	}
	last, _ := all[len(all)-1].(map[string]any)
	data, _ := last["data"].(map[string]any)
	if last["type"] != "STOP_HOOK_INVOKED" || data["row"] != "run-taken" || data["decision"] != "allow" || !strings.Contains(fmt.Sprint(data["reason"]), "codex/m2s") {
		t.Errorf("the store's last event: %v; want machine A's stop decision, run-taken, naming codex/m2s", last)
	}
	if st := a.run(t, ws, "session:state", "--harness", "claude-code", "--session-id", "m1s", "--json"); st.Code != 0 || st.Stdout.(map[string]any)["active"] != false {
		t.Errorf("machine A's session after the takeover: %+v; want it inactive", st)
	}
}

// storeStopCheck runs machine m's stop check for the Claude Code session id in
// ws and returns its decision and reason ("" for a session let go).
func storeStopCheck(t *testing.T, m cli, ws, id string) (decision, reason string) {
	t.Helper()
	cmd := m.cmd("session:stop-check")
	cmd.Dir, cmd.Stdin = ws, strings.NewReader(`{"version":"sitter.hook.v1","harness":"claude-code","nativeEvent":"Stop","phase":"stop","session":{"id":"`+id+`"}}`)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("session stop-check: %v\n%s%s", err, out, errb.String())
	}
	var dec struct{ Decision, Reason string }
	json.Unmarshal(out, &dec)
	return dec.Decision, dec.Reason
}

// The runDir a stored run's verbs print (this machine's copy of the run)
// names the run as its id does: the babysit guide and skill have the
// agent pass it back to iterate and post. A path that is no copy of the
// store's run is refused with the two ways to name one.
func TestStoreRunNamedByItsCopy(t *testing.T) {
	needSDK(t)
	url := natsServer(t)
	env := sideEnv(t)
	a, b := storeMachine(t, env, url), storeMachine(t, env, url)
	c := sideCases[0]
	ws := workspace(t, c.proc, c.inputs())
	created := a.run(t, ws, "run:create", "--process-id", "side", "--entry", "./proc.mjs#process", "--inputs", "inputs.json", "--json")
	res, _ := created.Stdout.(map[string]any)
	id, _ := res["runId"].(string)
	dir, _ := res["runDir"].(string)
	if created.Code != 0 || id == "" || filepath.Base(dir) != id {
		t.Fatalf("run:create --store: %+v", created)
	}
	it := a.run(t, ws, "run:iterate", dir, "--json")
	itRes, _ := it.Stdout.(map[string]any)
	acts, _ := itRes["nextActions"].([]any)
	if it.Code != 0 || len(acts) != 1 {
		t.Fatalf("run:iterate <runDir> of a stored run: %+v", it)
	}
	act := acts[0].(map[string]any)
	kind, _ := act["kind"].(string)
	if p := a.run(t, ws, "task:post", append([]string{dir, act["effectId"].(string)}, append(c.post(kind), "--json")...)...); p.Code != 0 {
		t.Fatalf("task:post <runDir> of a stored run: %+v", p)
	}
	// Posted to the store: another machine reads it by id.
	evs := b.run(t, t.TempDir(), "run:events", id, "--json")
	var types []string
	for _, e := range evs.Stdout.(map[string]any)["events"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if !slices.Contains(types, "EFFECT_RESOLVED") {
		t.Errorf("the post by runDir did not reach the store: %v", types)
	}
	// Not a copy of this store's run: refused, named.
	local := filepath.Join(ws, ".a5c", "runs", id)
	bad := a.run(t, ws, "run:iterate", local, "--json")
	if bad.Code == 0 || !strings.Contains(bad.Stderr, local+" is not a run of the shared store") || !strings.Contains(bad.Stderr, "--store ''") {
		t.Errorf("run:iterate of a path outside the store's copies: %+v", bad)
	}
}

// With $SITTER_STORE set, the babysit guide says where runs live, names
// them by id in the loop, and lists no local runs (the verbs would not
// find them).
func TestStoreBabysitGuide(t *testing.T) {
	env := sideEnv(t)
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".a5c", "runs"), 0o755)
	for _, withStore := range []bool{false, true} {
		cmd := exec.Command(os.Args[0], "instructions", "babysit", "--harness", "claude-code", "--json")
		cmd.Dir, cmd.Env = ws, append(slices.Clip(env), "SITTER_TEST_MAIN=1")
		if withStore {
			cmd.Env = append(cmd.Env, "SITTER_STORE=nats://127.0.0.1:1")
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("instructions babysit: %v", err)
		}
		var g struct {
			Context      struct{ SharedStore bool }
			Instructions string
		}
		json.Unmarshal(out, &g)
		store := strings.Contains(g.Instructions, "Runs live in the shared store that $SITTER_STORE names")
		byID := strings.Contains(g.Instructions, "`sitter run iterate <runId> --json`") && strings.Contains(g.Instructions, "`sitter task post <runId> <effectId>")
		local := strings.Contains(g.Instructions, "runs in .a5c/runs")
		if g.Context.SharedStore != withStore || store != withStore || byID != withStore || local == withStore {
			t.Errorf("SITTER_STORE set: %t; the guide: sharedStore %t, names the store %t, names runs by id %t, lists local runs %t:\n%s",
				withStore, g.Context.SharedStore, store, byID, local, g.Instructions)
		}
	}
}

// Every verb that takes a store URL hides its password or token when it
// prints it: in the refusal of another scheme and in the failure to reach
// the store.
func TestStoreURLSecretsHidden(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	t.Setenv("SITTER_STORE_CACHE", t.TempDir())
	t.Setenv("SITTER_STORE", "")
	for _, u := range []string{"https://me:hunter2@127.0.0.1:1", "nats://me:hunter2@127.0.0.1:1", "nats://s3cr3ttoken@127.0.0.1:1"} {
		for _, args := range [][]string{
			{"run", "status", "r1"},
			{"run", "iterate", "r1"},
			{"task", "list", "r1"},
			{"run", "export", "r1"},
			{"session", "bind", "--run-id", "r1", "--harness", "claude-code", "--session-id", "s1"},
			{"worker"},
			{"audit", "tail"},
			{"audit", "query"},
			{"audit", "ship"},
		} {
			var out, errb bytes.Buffer
			code := Run(append(args, "--store", u), nil, &out, &errb, registry.Registry)
			msg := errb.String()
			if code != 1 || !strings.Contains(msg, "xxxxx@127.0.0.1:1") || strings.Contains(msg, "hunter2") || strings.Contains(msg, "s3cr3ttoken") {
				t.Errorf("%s --store %s: exit %d, %q; want exit 1 naming the store without its secret", strings.Join(args, " "), u, code, msg)
			}
		}
	}
}

// completedStoredRun puts a completed run, done-1, in a store of its own
// (made without Node) and points $SITTER_STORE at it; run calls sitter.
func completedStoredRun(t *testing.T) (run func(args ...string) (string, int)) {
	t.Helper()
	url := natsServer(t)
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	t.Setenv("SITTER_STORE_CACHE", t.TempDir())
	t.Setenv("SITTER_STORE", url)
	ws := t.TempDir()
	entry := filepath.Join(ws, "p.mjs")
	os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644)
	dir, _, err := runs.Create(context.Background(), runs.CreateOptions{RunsDir: filepath.Join(ws, "runs"), ProcessID: "p", Entry: entry, RunID: "done-1"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(runs.OutputRef)), []byte("null\n"), 0o644)
	j, err := journal.Load(filepath.Join(dir, runs.JournalDir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.Append(filepath.Join(dir, runs.JournalDir), j.Head(), journal.RunCompleted, map[string]any{"outputRef": runs.OutputRef}); err != nil {
		t.Fatal(err)
	}
	run = func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(args, nil, &out, &errb, registry.Registry)
		return errb.String(), code
	}
	if msg, code := run("run", "import", dir); code != 0 {
		t.Fatalf("run import: exit %d, %s", code, msg)
	}
	return run
}

// session bind --store says "no run" only of a run that is not in the
// store, once; a run that is there but cannot be driven is said as such.
func TestStoreBindSaysWhy(t *testing.T) {
	run := completedStoredRun(t)
	bind := []string{"session", "bind", "--harness", "claude-code", "--session-id", "s1", "--run-id"}
	if msg, code := run(append(bind, "done-1")...); code != 1 || msg != "sitter: session bind: run done-1 is already completed: nothing to drive\n" {
		t.Errorf("bind of a completed run: exit %d, %q", code, msg)
	}
	if msg, code := run(append(bind, "nosuch-1")...); code != 1 || strings.Count(msg, "no run") != 1 || !strings.Contains(msg, "no run nosuch-1 in the store") {
		t.Errorf("bind of a missing run: exit %d, %q; want one 'no run nosuch-1 in the store'", code, msg)
	}
}

// The --store of a verb that only works on a store says it is required;
// the run and task verbs' says the local runs dir is the default.
func TestStoreFlagText(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker"}, "the shared run store URL to work for, nats://host:port ($SITTER_STORE; required)"},
		{[]string{"run", "export"}, "the shared run store URL to export from, nats://host:port ($SITTER_STORE; required)"},
		{[]string{"run", "import"}, "the shared run store URL to import into, nats://host:port ($SITTER_STORE; required)"},
		{[]string{"run", "status"}, "the shared run store URL, nats://host:port ($SITTER_STORE; default: the local runs dir)"},
	} {
		var out, errb bytes.Buffer
		if code := Run(append(c.args, "--help"), nil, &out, &errb, registry.Registry); code != 0 {
			t.Fatalf("%v --help: exit %d, %s", c.args, code, errb.String())
		}
		var line string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "--store URL") {
				line = l
			}
		}
		if !strings.HasSuffix(line, c.want) {
			t.Errorf("%v --help: --store reads %q, want %q", c.args, line, c.want)
		}
	}
}

// An export onto a copy already there is refused, said once.
func TestStoreExportOntoCopy(t *testing.T) {
	run := completedStoredRun(t)
	to := t.TempDir()
	if msg, code := run("run", "export", "done-1", "--to", to); code != 0 {
		t.Fatalf("run export: exit %d, %s", code, msg)
	}
	want := "sitter: run export: " + filepath.Join(to, "done-1") + " already holds a run\n"
	if msg, code := run("run", "export", "done-1", "--to", to); code != 1 || msg != want {
		t.Errorf("run export again: exit %d, %q; want %q", code, msg, want)
	}
}

// run create --store outside any session says how to bind the run, with
// the store in the command (without it, session bind looks for the run in
// the local runs dir and finds none), the URL's secret hidden.
func TestStoreCreateBindHint(t *testing.T) {
	url := natsServer(t)
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	t.Setenv("SITTER_STORE_CACHE", t.TempDir())
	t.Setenv("SITTER_STORE", "")
	t.Setenv("SITTER_HARNESS", "")
	t.Setenv("SITTER_SESSION_ID", "")
	ws := t.TempDir()
	entry := filepath.Join(ws, "p.mjs")
	os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644)
	secret := strings.Replace(url, "nats://", "nats://me:hunter2@", 1)
	for _, u := range []string{url, secret} {
		var out, errb bytes.Buffer
		id := fmt.Sprintf("hint-%d", len(u))
		code := Run([]string{"run", "create", "--store", u, "--process-id", "p", "--entry", entry, "--run-id", id}, nil, &out, &errb, registry.Registry)
		want := "`sitter session bind --run-id " + id + " --store " + shellQuote(natsstore.RedactURL(u)) + " --harness H --session-id S`"
		if msg := errb.String(); code != 0 || !strings.Contains(msg, want) || strings.Contains(msg, "hunter2") {
			t.Errorf("run create --store %s: exit %d, stderr %q; want a note with %s", u, code, msg, want)
		}
	}
}

// rebuild-state and repair, given a run id while $SITTER_STORE is set,
// say that they act on local runs only (the store's run is not theirs to
// find); without the variable their answer is the SDK's.
func TestStoreLocalOnlyVerbsSaySo(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, verb := range []string{"rebuild-state", "repair"} {
		for _, url := range []string{"nats://127.0.0.1:1", ""} {
			t.Setenv("SITTER_STORE", url)
			var out, errb bytes.Buffer
			code := Run([]string{"run", verb, "stored-1"}, nil, &out, &errb, registry.Registry)
			msg := errb.String()
			said := strings.Contains(msg, "($SITTER_STORE is set, but sitter run "+verb+" acts on local runs only)")
			if code != 1 || !strings.Contains(msg, "ENOENT") || said != (url != "") {
				t.Errorf("SITTER_STORE=%q run %s stored-1: exit %d, %q", url, verb, code, msg)
			}
		}
	}
}
