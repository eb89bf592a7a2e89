// Command stopbench measures what the babysitter stop hook costs on top of
// starting any Go program: it builds sitter, sitter-host and a floor
// program (a Go program that only copies stdin to stdout), makes runs
// whose journals hold 1,000 events (one effect still pending, so the check
// really decides: it blocks), binds a session to each with a cap of 1e9
// iterations, then times, interleaved so that machine noise hits all
// alike, the floor and `sitter session stop-check` with the session's
// canonical Stop event on stdin, the way the babysitter plugin's stop
// handler calls it:
//
//   - with nothing journaled since the last check (the target);
//   - with a result posted since the last check, as in a babysitter loop
//     (an effect requested as run iterate journals it, then its result
//     posted with run.Post, what sitter task post runs);
//   - with the same events journaled since the last check by another
//     writer, behind the replay cache (as the npm SDK's task:post leaves
//     them);
//   - with the run's replay cache removed before each run (a full replay);
//   - with -host, sitter-host called directly;
//   - for a session that no run is bound to: sitter's start-up, the event
//     read and the state looked up, what every stop check pays before it
//     does its own work.
//
// The report splits the target's time over the floor into that start-up,
// the durable writes (the sync floor) and the rest, the check's own work.
//
// Every stop-check appends STOP_HOOK_INVOKED to its run, so a journal
// grows by one event per call: the report says how many the target's held
// at the first and the last timed call.
//
// Run it from inside the sitter module:
//
//	go run ./runtime/cmd/stopbench [-n 200] [-events 1000] [-host] [-src DIR] [-strict]
//
// -src builds the two binaries from another checkout (an older commit, to
// compare). The target is a stop-check within 1.5× the floor's median; a
// miss is informational unless -strict.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/bench"
	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// target is the stop-check's allowed median over the floor's.
const target = 1.5

// syncFloorMain is the least a stop check that records its decision
// durably must do besides starting: add one journal file as
// journal.WriteFileAtomic does (temp file, fsync, rename, fsync of the
// directory), as the babysitter SDK's own stop hook does for its
// STOP_HOOK_INVOKED, and replace the session's state file (its iteration
// counter) as journal.ReplaceFile does (temp file, rename).
const syncFloorMain = `package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		panic(err)
	}
	write(filepath.Join(os.Args[1], "sessions"), "state.json", in, false)
	write(filepath.Join(os.Args[1], "journal"), strconv.Itoa(os.Getpid())+".json", in, true)
	os.Stdout.Write(in)
}

func write(dir, name string, b []byte, durable bool) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	f, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		panic(err)
	}
	if _, err := f.Write(b); err != nil {
		panic(err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			panic(err)
		}
	}
	f.Close()
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		panic(err)
	}
	if !durable {
		return
	}
	d, err := os.Open(dir)
	if err != nil {
		panic(err)
	}
	if err := d.Sync(); err != nil {
		panic(err)
	}
	d.Close()
}
`

func main() {
	n := flag.Int("n", 200, "timed runs of each variant (at least 200)")
	warm := flag.Int("warmup", 10, "untimed runs of each variant first")
	events := flag.Int("events", 1000, "journal events of the bound run")
	strict := flag.Bool("strict", false, "exit 1 when the stop-check misses the target")
	host := flag.Bool("host", false, "also time sitter-host session stop-check (no exec from sitter)")
	src := flag.String("src", "", "build sitter and sitter-host from the sitter module in this directory (default: this one), e.g. an older checkout to compare")
	flag.Parse()
	if *n < 200 {
		fatalf("-n %d: need at least 200 runs for a stable median and p90", *n)
	}
	if *events < 3 {
		fatalf("-events %d: need at least 3 (RUN_CREATED, one pending effect and one more)", *events)
	}
	miss, err := measure(*n, *warm, *events, *host, *src, os.Stdout)
	if err != nil {
		fatalf("%v", err)
	}
	if miss && *strict {
		os.Exit(1)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "stopbench: "+format+"\n", args...)
	os.Exit(2)
}

func measure(n, warm, events int, withHost bool, src string, out io.Writer) (miss bool, err error) {
	tmp, err := os.MkdirTemp("", "stopbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)

	bin := filepath.Join(tmp, "bin")
	sitter, host := filepath.Join(bin, "sitter"), filepath.Join(bin, "sitter-host")
	if err := bench.GoBuild(src, sitter, "./runtime/cmd/sitter"); err != nil {
		return false, err
	}
	if err := bench.GoBuild(src, host, "./runtime/cmd/sitter-host"); err != nil {
		return false, err
	}
	floor := filepath.Join(tmp, "floorbin")
	if err := bench.GoProgram(filepath.Join(tmp, "floor"), floor, bench.FloorMain); err != nil {
		return false, err
	}
	syncFloor := filepath.Join(tmp, "syncfloorbin")
	if err := bench.GoProgram(filepath.Join(tmp, "syncfloor"), syncFloor, syncFloorMain); err != nil {
		return false, err
	}
	// On tmpfs, fsync costs nothing: what is left is the check's own work.
	shm := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if shm, err = os.MkdirTemp("/dev/shm", "stopbench-"); err != nil {
			shm = ""
		} else {
			defer os.RemoveAll(shm)
		}
	}

	fmt.Fprintf(out, "building runs of %d journal events…\n", events)
	t0 := time.Now()
	vs := []*bench.Variant{{Name: "floor (copy stdin to stdout)", Argv: []string{floor}}}
	var targetDir string // the run the target variant checks
	type sessionRun struct {
		name, session string
		base          string // the run's and the state dir's directory
		argv          []string
		prep          func(dir string) error
	}
	srs := []sessionRun{
		{name: "sitter session stop-check", session: "bench-sitter", argv: []string{sitter, "session", "stop-check"}},
		{name: "  the same, a result posted since the last check", session: "bench-post", argv: []string{sitter, "session", "stop-check"}, prep: postWithSitter},
		{name: "  the same, journaled by another writer since", session: "bench-tail", argv: []string{sitter, "session", "stop-check"}, prep: postBehind},
		{name: "  the same, no replay cache", session: "bench-nocache", argv: []string{sitter, "session", "stop-check"}, prep: dropCache},
	}
	if shm != "" {
		srs = append(srs, sessionRun{name: "  the same, run and state on tmpfs", session: "bench-tmpfs", base: shm, argv: []string{sitter, "session", "stop-check"}})
	}
	if withHost {
		srs = append(srs, sessionRun{name: "sitter-host session stop-check", session: "bench-host", argv: []string{host, "session", "stop-check"}})
	}
	for _, sr := range srs {
		base := sr.base
		if base == "" {
			base = tmp
		}
		// The fixture binds the session in this process's state dir.
		stateDir := filepath.Join(base, "state")
		if err := os.Setenv("SITTER_STATE_DIR", stateDir); err != nil {
			return false, err
		}
		dir, in, err := fixture(base, sr.session, events)
		if err != nil {
			return false, err
		}
		v := &bench.Variant{Name: sr.name, Argv: sr.argv, In: in, Env: []string{"SITTER_STATE_DIR=" + stateDir}, Want: `"decision":"block"`}
		if sr.prep != nil {
			v.Prep = func() error { return sr.prep(dir) }
		}
		if targetDir == "" {
			targetDir = dir
		}
		vs = append(vs, v)
	}
	os.Setenv("SITTER_STATE_DIR", filepath.Join(tmp, "state"))
	// The same call for a session no run is bound to: sitter starts,
	// reads the event, finds no state and answers nothing. What the
	// target costs over it is the check's own work.
	unbound, err := unboundEvent(vs[1].In, tmp)
	if err != nil {
		return false, err
	}
	startup := &bench.Variant{Name: "sitter session stop-check, no run bound (start-up)", Argv: []string{sitter, "session", "stop-check"}, In: unbound, Env: []string{"SITTER_STATE_DIR=" + filepath.Join(tmp, "state")}}
	syncV := &bench.Variant{Name: "sync floor (a durable journal file, a replaced file)", Argv: []string{syncFloor, filepath.Join(tmp, "syncfloor-data")}}
	vs = append(vs, startup, syncV)
	vs[0].In, syncV.In = vs[1].In, vs[1].In // the floors read the same event
	fmt.Fprintf(out, "built in %s\n\n", time.Since(t0).Round(time.Millisecond))

	// Measure checks that each variant answers cleanly and that the
	// stop-check blocks: timing an error path or an early allow would
	// measure the wrong thing. Every check appends an event: count them.
	before := countEvents(targetDir)
	if err := bench.Measure(vs, warm, n); err != nil {
		return false, err
	}
	first, last := before+1+warm, countEvents(targetDir)-1 // the check run and the warm-up came first
	// The last call must still have blocked: the cap was never hit.
	if st, _, err := session.Read("claude-code", srs[0].session); err != nil || st == nil || !st.Active {
		return false, fmt.Errorf("the session was released during the timed runs (%+v, %v)", st, err)
	}

	bench.Table(out, vs)
	r := bench.Ratio(vs[1].Median(), vs[0].Median())
	verdict, miss := bench.Verdict(r, target)
	fmt.Fprintf(out, "\n%d interleaved runs each; the bound run's journal held %d events at the first timed stop-check, %d at the last\n", n, first, last)
	fmt.Fprintf(out, "(a result posted: an effect requested, then its result posted with run.Post (sitter task post) before each run;\n")
	fmt.Fprintf(out, " another writer: the same events journaled behind the replay cache, as the npm SDK writes them;\n")
	fmt.Fprintf(out, " no replay cache: its files removed before each run; sync floor: the floor plus the writes every check makes: one durable journal file, one replaced state file)\n")
	sr := bench.Ratio(vs[1].Median(), syncV.Median())
	sv, _ := bench.Verdict(sr, target)
	fmt.Fprintf(out, "target: stop-check (1,000-event run) ≤ %.1f× floor: %.2f× %s\n", target, r, verdict)
	fmt.Fprintf(out, "        the same over the sync floor (what journaling the decision durably costs on this disk): %.2f× %s\n", sr, sv)
	fmt.Fprintf(out, "where the time goes, in medians over the floor's: starting sitter and looking the session up (no run bound) %+.2f×; the durable writes (sync floor) %+.2f×; the rest, the check's own reads, decision and writes, %+.2f×\n",
		bench.Ratio(startup.Median(), vs[0].Median())-1, bench.Ratio(syncV.Median(), vs[0].Median())-1,
		bench.Ratio(vs[1].Median()-startup.Median()-syncV.Median()+vs[0].Median(), vs[0].Median()))
	return miss, nil
}

// fixture makes a run whose journal holds exactly events events
// (RUN_CREATED, effects requested and resolved, one effect still
// pending), binds session to it with a cap the timed runs never reach,
// and writes the canonical Stop event of session to a file.
func fixture(tmp, sessionID string, events int) (dir, in string, err error) {
	ws := filepath.Join(tmp, "ws-"+sessionID)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return "", "", err
	}
	entry := filepath.Join(ws, "process.mjs")
	if err := os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644); err != nil {
		return "", "", err
	}
	ctx := context.Background()
	dir, m, err := run.Create(ctx, run.CreateOptions{RunsDir: filepath.Join(ws, "runs"), ProcessID: "bench", Entry: entry})
	if err != nil {
		return "", "", err
	}
	// 1 + requested + resolved = events, one effect pending (two for an
	// odd count).
	requested := (events + 1) / 2
	resolved := events - 1 - requested
	var effs []run.NewEffect
	for i := range requested {
		kind := "shell"
		if i%3 == 1 {
			kind = "agent"
		}
		effs = append(effs, run.NewEffect{Key: fmt.Sprintf("step-%04d", i), TaskID: "task-" + kind, Kind: kind, Label: fmt.Sprintf("step %d", i)})
	}
	es, err := run.RequestEffects(ctx, dir, effs)
	if err != nil {
		return "", "", err
	}
	if err := resolve(ctx, dir, es[:resolved]); err != nil {
		return "", "", err
	}
	if got := countEvents(dir); got != events {
		return "", "", fmt.Errorf("fixture journal holds %d events, want %d", got, events)
	}
	if _, _, err := session.Bind("claude-code", sessionID, m.RunID, dir, 1_000_000_000); err != nil {
		return "", "", err
	}
	ev := hook.Event{Version: hook.Version, Harness: "claude-code", NativeEvent: "Stop", Phase: "stop", Support: "native",
		Session:              hook.Session{ID: sessionID, Cwd: ws, TranscriptPath: filepath.Join(ws, "transcript.jsonl")},
		LastAssistantMessage: "I ran the next step; the review is still pending."}
	b, err := json.Marshal(ev)
	if err != nil {
		return "", "", err
	}
	in = filepath.Join(tmp, sessionID+".json")
	return dir, in, os.WriteFile(in, append(b, '\n'), 0o644)
}

// unboundEvent writes, next to the bound session's Stop event in, the
// same event for a session that no run is bound to (and that has no
// state at all), and returns its file.
func unboundEvent(in, dir string) (string, error) {
	b, err := os.ReadFile(in)
	if err != nil {
		return "", err
	}
	ev, err := hook.DecodeEvent(b)
	if err != nil {
		return "", err
	}
	ev.Session.ID = "bench-unbound"
	if b, err = json.Marshal(ev); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "bench-unbound.json")
	return out, os.WriteFile(out, append(b, '\n'), 0o644)
}

// resolve journals an ok result for each effect, one journal load for
// all (run.Post loads the journal once per result, which makes a large
// fixture slow to build). The results' files are not written: the stop
// check reads only the journal.
func resolve(ctx context.Context, dir string, es []*run.Effect) error {
	lock, err := journal.Acquire(ctx, filepath.Join(dir, journal.LockFile), "stopbench")
	if err != nil {
		return err
	}
	defer lock.Release()
	jdir := filepath.Join(dir, run.JournalDir)
	j, err := journal.Load(jdir)
	if err != nil {
		return err
	}
	head := j.Head()
	for _, e := range es {
		ev, err := journal.Append(jdir, head, journal.EffectResolved, resolved(e.EffectID))
		if err != nil {
			return err
		}
		head = &ev
	}
	return nil
}

func resolved(effectID string) map[string]any {
	return map[string]any{"effectId": effectID, "status": "ok", "resultRef": "tasks/" + effectID + "/result.json"}
}

// head is the last event of a journal, from its file names.
func head(jdir string) (*journal.Event, error) {
	names, _, err := journal.Names(jdir)
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("journal %s: no head (%v)", jdir, err)
	}
	f := names[len(names)-1]
	seq, rest, _ := strings.Cut(f, ".")
	ulid, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(seq)
	if err != nil {
		return nil, err
	}
	return &journal.Event{Seq: n, ULID: ulid, File: f}, nil
}

// postWithSitter does what a babysitter loop does between two stop
// checks: an effect requested (run iterate journals it without the
// replay cache) and its result posted through sitter's run.Post (the
// pending effect stays pending).
func postWithSitter(dir string) error {
	ctx := context.Background()
	es, err := run.RequestEffects(ctx, dir, []run.NewEffect{{Key: "between-" + journal.NewULID(""), TaskID: "task-shell", Kind: "shell", Label: "between checks"}})
	if err != nil {
		return err
	}
	_, err = run.Post(ctx, dir, es[0].EffectID, run.PostOptions{Status: "ok", Value: json.RawMessage(`{"ok":true}`)})
	return err
}

// postBehind journals the events of postWithSitter straight into the
// journal, as another writer (the npm SDK) would: an effect requested and
// its result, behind the replay cache.
func postBehind(dir string) error {
	jdir := filepath.Join(dir, run.JournalDir)
	h, err := head(jdir)
	if err != nil {
		return err
	}
	id := journal.NewULID("")
	ev, err := journal.Append(jdir, h, journal.EffectRequested, map[string]any{
		"effectId": id, "invocationKey": "between-" + id, "taskId": "task-shell", "kind": "shell", "label": "between checks"})
	if err != nil {
		return err
	}
	_, err = journal.Append(jdir, &ev, journal.EffectResolved, resolved(id))
	return err
}

// dropCache removes the run's replay cache: the check replays the journal.
func dropCache(dir string) error {
	files, _ := filepath.Glob(filepath.Join(dir, run.StateDir, "replay-*.json"))
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return nil
}

func countEvents(dir string) int {
	j, err := journal.Load(filepath.Join(dir, run.JournalDir))
	if err != nil {
		return -1
	}
	return len(j.Events)
}
