package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
	"sitter.dev/sitter/runtime/store/natsstore"
)

// cmdFlags is a parsed command line: positionals and flags, in any order.
type cmdFlags struct {
	pos   []string
	vals  map[string]string
	bools map[string]bool
	usage string // the command's usage, for usageFail
	verb  string // the command's path after "sitter", for usageFail
	// storeDir is this machine's copy of a run of a shared store, which
	// <runDir> names while a verb runs on it (withStore).
	storeDir string
}

func (f *cmdFlags) has(name string) bool { _, ok := f.vals[name]; return ok }

// out prints v as indented JSON, or text when --json is absent.
func out(stdout, stderr io.Writer, asJSON bool, v any, text string) int {
	if asJSON {
		return writeJSON(stdout, stderr, v)
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		fmt.Fprintf(stderr, "sitter: %v\n", err)
		return 1
	}
	return 0
}

func fail(stderr io.Writer, verb string, err error) int {
	fmt.Fprintf(stderr, "sitter: %s: %v\n", verb, err)
	return 1
}

// runsDir is --runs-dir, else $SITTER_RUNS_DIR, else .a5c/runs.
func (f *cmdFlags) runsDir() string {
	if d := f.vals["runs-dir"]; d != "" {
		return d
	}
	return runs.DefaultRunsDir()
}

// runDir resolves <runDir>: a run directory, or a run id in the runs dir.
// For one that is neither it returns the path the SDK would read and the
// error the SDK prints for it (Node's, for the missing run.json); "" when
// no <runDir> was given.
func (f *cmdFlags) runDir() (string, error) {
	if len(f.pos) == 0 {
		return "", errors.New("a run directory (or run id) is required")
	}
	if f.storeDir != "" {
		return f.storeDir, nil
	}
	if d, err := runs.ResolveDir(f.pos[0], f.runsDir()); err == nil {
		return d, nil
	}
	d := sdkRunDir(f.pos[0], f.runsDir())
	err := fmt.Errorf("ENOENT: no such file or directory, open '%s'", filepath.Join(d, runs.MetadataFile))
	if os.Getenv("SITTER_STORE") != "" && !f.has("store") {
		// A verb without --store, given a stored run's id.
		err = fmt.Errorf("%w ($SITTER_STORE is set, but sitter %s acts on local runs only)", err, f.verb)
	}
	return d, err
}

// sdkRunDir is the run directory the SDK reads for arg: an absolute path
// as is; a path that starts with the runs dir from the working directory;
// else in the runs dir, unless only the path from the working directory
// exists.
func sdkRunDir(arg, runsDir string) string {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	if filepath.IsAbs(arg) {
		return filepath.Clean(arg)
	}
	base, a := filepath.ToSlash(filepath.Clean(runsDir)), filepath.ToSlash(filepath.Clean(arg))
	if a == base || strings.HasPrefix(a, base+"/") {
		return abs(arg)
	}
	std := abs(filepath.Join(runsDir, arg))
	if _, err := os.Stat(std); err != nil {
		if _, err := os.Stat(arg); err == nil {
			return abs(arg)
		}
	}
	return std
}

// sdkFail reports a failure as the SDK's run and task verbs do: one
// "[run:status] …" line on stderr and exit code 1.
func sdkFail(stderr io.Writer, verb, format string, a ...any) int {
	fmt.Fprintf(stderr, "[%s] %s\n", strings.Replace(verb, " ", ":", 1), fmt.Sprintf(format, a...))
	return 1
}

// sdkVerbs are the run and task verbs the npm babysitter SDK has: a
// usage error there exits 1, as the SDK's does; sitter's own (run list,
// export, import, session list, worker, …) exit 2, as every verb.
var sdkVerbs = []string{"run create", "run status", "run events", "run iterate", "run rebuild-state", "run repair", "task list", "task show", "task post"}

// usageFail answers a missing or extra argument: a line naming the
// arguments missing (or extra) by the usage line, then the usage; exit 1
// for a verb the SDK has (its code), else 2.
func usageFail(stderr io.Writer, f *cmdFlags) int {
	var want []string
	if _, line, ok := strings.Cut(f.usage, "Usage:\n"); ok {
		line, _, _ = strings.Cut(line, "\n")
		for _, w := range strings.Fields(line) {
			if strings.HasPrefix(w, "<") {
				want = append(want, w)
			}
		}
	}
	var err error
	switch {
	case len(f.pos) < len(want):
		err = fmt.Errorf("missing %s", strings.Join(want[len(f.pos):], " "))
	case len(f.pos) > len(want):
		err = fmt.Errorf("unexpected arguments %q", f.pos[len(want):])
	}
	return flagFail(stderr, f, err)
}

// flagFail answers a usage error of a verb (a flag value that cannot be
// right, an argument missing or extra): the line saying err (none when
// nil), then the usage; exit 1 for a verb the SDK has (its code), else 2.
func flagFail(stderr io.Writer, f *cmdFlags, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "sitter: %s: %v\n\n", f.verb, err)
	}
	fmt.Fprint(stderr, f.usage)
	if slices.Contains(sdkVerbs, f.verb) {
		return 1
	}
	return 2
}

// outCompact is out with the JSON on one line, as the SDK prints `run
// status`, `task show` and `task post`.
func outCompact(stdout, stderr io.Writer, asJSON bool, v any, text string) int {
	if !asJSON {
		return out(stdout, stderr, false, v, text)
	}
	return writeJSONLine(stdout, stderr, v)
}

// runFlags are the flags of each run subcommand ("name=usage" takes a
// value, "name?usage" is a boolean).
var (
	runsDirFlag = "runs-dir=the runs folder `DIR` ($SITTER_RUNS_DIR, default .a5c/runs)"
	jsonOut     = "json?print the answer as JSON"
)

// runArgNote says what <runDir> is, in every run and task subcommand.
const runArgNote = "<runDir> is a run directory or a run id in --runs-dir ($SITTER_RUNS_DIR, default .a5c/runs)."

// newRunCmd is `sitter run …`: babysitter runs, as the npm SDK's run:*
// verbs (same checks, words, JSON and exit codes).
func newRunCmd(e *env) *cobra.Command {
	ctx := context.Background()
	withDir := func(c *cobra.Command) *cobra.Command {
		c.Long = c.Short + ".\n\n" + runArgNote
		return c
	}
	stored := func(c *cobra.Command) *cobra.Command {
		c.Long += storeNote
		return c
	}
	return group(&cobra.Command{
		Use:   "run",
		Short: "Drive a babysitter run: create, iterate, inspect, repair",
		Long: `A babysitter run is a process (a JavaScript module) whose effects the agent
carries out; its journal is in the run directory. These verbs are the npm SDK's
run:* verbs (same checks, words, JSON and exit codes).

` + runArgNote,
		Example: `  sitter run create --process-id demo --entry process.mjs#main --inputs in.json --json
  sitter run iterate 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --json
  sitter run list`,
	},
		flagged("create", "Create a run of a process",
			"  sitter run create --process-id demo --entry ./process.mjs#main --inputs inputs.json --json\n  sitter run create --process-id demo --entry p.mjs --harness claude-code --session-id 5f0c --prompt \"ship it\"",
			[]string{"process-id=the process `ID` (required)", "entry=the process function, `FILE#export` (required)", "inputs=the inputs, a JSON `FILE` (- reads stdin)",
				"run-id=the run's `ID` (default: a new ULID)", runsDirFlag, "harness=bind the run to a session of `HARNESS`", "session-id=bind the run to session `ID`",
				"prompt=the user's request `TEXT`, kept with the run", "max-iterations=at most `N` stop-hook iterations of the session bound (default 256)",
				"non-interactive?the run answers its own breakpoints", storeFlag, jsonOut},
			func(_ *cobra.Command, f *cmdFlags) int { return runCreate(ctx, f, e.reg, e.stdout, e.stderr) }),
		flagged("list", "List this project's runs: status, driving session, last activity, a process file that failed to run",
			"  sitter run list\n  sitter run list --runs-dir .a5c/runs --json",
			[]string{runsDirFlag, jsonOut},
			func(_ *cobra.Command, f *cmdFlags) int { return runList(f, e.stdout, e.stderr) }),
		stored(withDir(flagged("iterate <runDir>", "Replay the process and run it to its next pending effects",
			"  sitter run iterate 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --json\n  sitter run iterate .a5c/runs/01JB7ZK3Q8X4M2N5P6R7S8T9V0 --timeout 2m",
			[]string{runsDirFlag, "timeout=how long the process may run, a Go duration `D`", storeFlag, jsonOut},
			func(_ *cobra.Command, f *cmdFlags) int {
				return withStore(ctx, f, "run iterate", true, e.stdout, e.stderr, func(o, eo io.Writer) int { return runIterate(ctx, f, o, eo) })
			}))),
		stored(withDir(flagged("status <runDir>", "Show a run's status and pending effects",
			"  sitter run status 01JB7ZK3Q8X4M2N5P6R7S8T9V0\n  sitter run status .a5c/runs/01JB7ZK3Q8X4M2N5P6R7S8T9V0 --json",
			[]string{runsDirFlag, storeFlag, jsonOut},
			func(_ *cobra.Command, f *cmdFlags) int {
				return withStore(ctx, f, "run status", false, e.stdout, e.stderr, func(o, eo io.Writer) int { return runStatus(f, o, eo) })
			}))),
		stored(withDir(flagged("events <runDir>", "Print a run's journal events",
			"  sitter run events 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --limit 20\n  sitter run events 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --type SESSION_BOUND --json",
			[]string{runsDirFlag, "type=only events of type `TYPE`", "limit=the last `N` events only", storeFlag, jsonOut},
			func(_ *cobra.Command, f *cmdFlags) int {
				return withStore(ctx, f, "run events", false, e.stdout, e.stderr, func(o, eo io.Writer) int { return runEvents(f, o, eo) })
			}))),
		withDir(flagged("rebuild-state <runDir>", "Rebuild a run's state cache from its journal",
			"  sitter run rebuild-state 01JB7ZK3Q8X4M2N5P6R7S8T9V0\n  sitter run rebuild-state 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --json",
			[]string{runsDirFlag, jsonOut},
			func(_ *cobra.Command, f *cmdFlags) int { return runRebuildState(f, e.stdout, e.stderr) })),
		withDir(flagged("repair <runDir>", "Quarantine a run's torn or tampered journal files",
			"  sitter run repair 01JB7ZK3Q8X4M2N5P6R7S8T9V0\n  sitter run repair 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --json",
			[]string{runsDirFlag, jsonOut},
			func(_ *cobra.Command, f *cmdFlags) int { return runRepair(ctx, f, e.stdout, e.stderr) })),
		newRunExportCmd(e),
		newRunImportCmd(e),
	)
}

// loadRun is the <runDir> of a run subcommand, or the exit status of
// why there is none (the usage for a missing one, as the SDK).
func loadRun(f *cmdFlags, verb string, stderr io.Writer) (*runs.State, string, int) {
	return loadRunSDK(f, verb, "", stderr)
}

// loadRunSDK is loadRun for a verb the SDK has, which says why in the
// SDK's words: noRun begins its message for a run that is not there
// ("" for sitter's own words).
func loadRunSDK(f *cmdFlags, verb, noRun string, stderr io.Writer) (*runs.State, string, int) {
	dir, err := f.runDir()
	if dir == "" {
		return nil, "", usageFail(stderr, f)
	}
	why := func(sdkMsg string, err error) (*runs.State, string, int) {
		if noRun == "" {
			return nil, "", fail(stderr, verb, err)
		}
		return nil, "", sdkFail(stderr, verb, "%s %s: %v", sdkMsg, dir, err)
	}
	if err != nil {
		return why(noRun, err)
	}
	st, err := runs.Load(dir)
	if err != nil {
		return why("unable to read run at", err)
	}
	return st, dir, 0
}

// runEvents is `run events`.
func runEvents(f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "run events"
	st, _, c := loadRun(f, verb, stderr)
	if st == nil {
		return c
	}
	evs := st.Journal.Events
	if t := f.vals["type"]; t != "" {
		var keep []journal.Event
		for _, e := range evs {
			if e.Type == t {
				keep = append(keep, e)
			}
		}
		evs = keep
	}
	if l := f.vals["limit"]; l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return fail(stderr, verb, fmt.Errorf("--limit %q is not a count", l))
		}
		if n < len(evs) {
			evs = evs[len(evs)-n:]
		}
	}
	list := []eventJSON{}
	var b strings.Builder
	for _, e := range evs {
		list = append(list, newEventJSON(e))
		fmt.Fprintf(&b, "%06d %s %s %s\n", e.Seq, e.RecordedAt, e.Type, compact(e.Data, 120))
	}
	return out(stdout, stderr, f.bools["json"], map[string]any{"events": list}, b.String())
}

// runRebuildState is `run rebuild-state`.
func runRebuildState(f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "run rebuild-state"
	st, _, c := loadRun(f, verb, stderr)
	if st == nil {
		return c
	}
	if err := st.Snapshot(runs.RebuildManual); err != nil {
		return fail(stderr, verb, err)
	}
	seq := 0
	if h := st.Journal.Head(); h != nil {
		seq = h.Seq
	}
	return out(stdout, stderr, f.bools["json"], map[string]any{"stateVersion": seq, "status": st.Status, "pendingByKind": st.PendingByKind()},
		fmt.Sprintf("[run:rebuild-state] stateVersion=%d status=%s\n", seq, st.Status))
}

// runRepair is `run repair`: it reads the journal itself (a torn one
// does not load).
func runRepair(ctx context.Context, f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "run repair"
	dir, err := f.runDir()
	if dir == "" {
		return usageFail(stderr, f)
	}
	if err != nil {
		return fail(stderr, verb, err)
	}
	moved, q, err := runs.Repair(ctx, dir)
	if err != nil {
		return fail(stderr, verb, err)
	}
	if moved == nil {
		moved = []string{}
	}
	text := "[run:repair] journal is intact; nothing to quarantine\n"
	if len(moved) > 0 {
		text = fmt.Sprintf("[run:repair] quarantined %d file(s) into %s: %s\n", len(moved), q, strings.Join(moved, ", "))
	}
	return out(stdout, stderr, f.bools["json"], map[string]any{"quarantined": moved, "quarantineDir": q}, text)
}

func runCreate(ctx context.Context, f *cmdFlags, reg func() *adapter.Registry, stdout, stderr io.Writer) int {
	// The SDK's checks and words: a missing flag prints the usage too.
	for _, flag := range []string{"process-id", "entry"} {
		if f.vals[flag] == "" {
			fmt.Fprintf(stderr, "--%s is required for run:create\n", flag)
			return usageFail(stderr, f)
		}
	}
	if v := f.vals["max-iterations"]; v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return fail(stderr, "run create", fmt.Errorf("--max-iterations %q is not a count", v))
		}
	}
	if err := runs.CheckEntry(ctx, f.vals["entry"]); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	o := runs.CreateOptions{
		RunsDir: f.runsDir(), RunID: f.vals["run-id"], ProcessID: f.vals["process-id"], Entry: f.vals["entry"],
		Harness: f.vals["harness"], SessionID: f.vals["session-id"], Prompt: f.vals["prompt"], NonInteractive: f.bools["non-interactive"],
	}
	if p := f.vals["inputs"]; p != "" {
		b, err := readInput(p)
		if err != nil {
			return fail(stderr, "run create", fmt.Errorf("--inputs: %w", err))
		}
		if err := jsonFileError("--inputs", p, b); err != nil {
			return fail(stderr, "run create", err)
		}
		o.Inputs = b
	}
	url := f.storeURL()
	create := runs.Create
	if url != "" {
		create = func(ctx context.Context, o runs.CreateOptions) (string, *runs.Metadata, error) {
			return storeCreate(ctx, url, o)
		}
	}
	dir, m, err := create(ctx, o)
	if err != nil {
		return fail(stderr, "run create", err)
	}
	res := map[string]any{"runId": m.RunID, "runDir": dir, "entry": m.Entrypoint.ImportPath + "#" + m.Entrypoint.ExportName}
	text := fmt.Sprintf("[run:create] runId=%s runDir=%s entry=%s#%s\n", m.RunID, dir, m.Entrypoint.ImportPath, m.Entrypoint.ExportName)
	if sess, line := bindCreated(ctx, f, o, dir, m, reg, stderr); sess != nil {
		res["session"] = sess
		text += line
	}
	return out(stdout, stderr, f.bools["json"], res, text)
}

// bindCreated binds a new run to the session that created it: the one
// --harness/--session-id name, else the one this command runs in (its
// environment, or the harness process above it). The result is the SDK's
// `session` object ({harness, sessionId, stateFile} or {…, error}; via and
// maxIterations are sitter's), nil for a run created outside any session,
// which stays unbound (said on stderr).
func bindCreated(ctx context.Context, f *cmdFlags, o runs.CreateOptions, dir string, m *runs.Metadata, reg func() *adapter.Registry, stderr io.Writer) (map[string]any, string) {
	max := 0
	if v := f.vals["max-iterations"]; v != "" {
		max, _ = strconv.Atoi(v) // checked by runCreate
	}
	c := session.Caller{Harness: o.Harness, SessionID: o.SessionID, Via: "flags"}
	if c.Harness == "" || c.SessionID == "" {
		// A stored run is bound with its store named: without it, session
		// bind looks in the local runs dir.
		bind := "sitter session bind --run-id " + m.RunID
		if url := f.storeURL(); url != "" {
			bind += " --store " + shellQuote(natsstore.RedactURL(url))
		}
		bind += " --harness H --session-id S"
		found, err := session.Discover()
		if errors.Is(err, session.ErrNoCaller) {
			// A run made by hand, outside any agent: nothing is wrong.
			fmt.Fprintf(stderr, "sitter: run create: note: run %s is not bound to a session (this command runs under no harness session the babysitter plugin saw start): fine for a run you drive by hand (`sitter run iterate`); for a session's stop hook to drive it, `%s`\n", m.RunID, bind)
			return nil, ""
		}
		if err != nil {
			fmt.Fprintf(stderr, "sitter: run create: run %s is not bound to a session: %v; bind one with `%s`\n", m.RunID, err, bind)
			return nil, ""
		}
		c = found
	}
	d, _, err := reg().Resolve(c.Harness)
	if err != nil {
		// The SDK's answer: the run stays, unbound, and says why.
		msg := fmt.Sprintf("Unsupported harness: %s (known: %s)", c.Harness, strings.Join(reg().IDs(), ", "))
		fmt.Fprintf(stderr, "[run:create] Session binding error: %s\n", msg)
		return map[string]any{"harness": c.Harness, "sessionId": "", "error": msg}, ""
	}
	c.Harness = d.ID
	ref, url := dir, f.storeURL()
	if url != "" {
		ref = m.RunID // a run of the store: its copy is not in the project
	}
	st, err := bindRun(ctx, c.Harness, c.SessionID, c.Cwd, ref, "", url, max, c.Via)
	if err != nil {
		fmt.Fprintf(stderr, "[run:create] Session binding error: %v\n", err)
		return map[string]any{"harness": c.Harness, "sessionId": c.SessionID, "error": err.Error()}, ""
	}
	p, _ := session.Path(st.Harness, st.SessionID)
	return map[string]any{"harness": st.Harness, "sessionId": st.SessionID, "stateFile": p, "via": c.Via, "maxIterations": st.MaxIterations},
		fmt.Sprintf("[run:create] session=%s bound via %s stateFile=%s\n", st.SessionID, st.Harness, p)
}

// readInput reads a file, "-" being stdin.
func readInput(p string) ([]byte, error) {
	if p == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(p)
}

// runIterate is `run iterate`; like the SDK's, every failure is one
// "[run:iterate] Error: …" line and exit code 1.
func runIterate(ctx context.Context, f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "run iterate"
	dir, err := f.runDir()
	if dir == "" {
		return usageFail(stderr, f)
	}
	if err != nil {
		return sdkFail(stderr, verb, "Error: %v", err)
	}
	o := runs.IterateOptions{Stderr: stderr}
	if t := f.vals["timeout"]; t != "" {
		if o.Timeout, err = time.ParseDuration(t); err != nil {
			return sdkFail(stderr, verb, "Error: --timeout: %v", err)
		}
	}
	res, err := runs.Iterate(ctx, dir, o)
	if err != nil {
		return sdkFail(stderr, verb, "Error: %v", err)
	}
	code := out(stdout, stderr, f.bools["json"], res, iterateText(res))
	if res.RuntimeError && code == 0 {
		code = 1
	}
	return code
}

// iterateText is the SDK's line, then what sitter adds: the effects to
// do, the error or halt reason, the process's log lines.
func iterateText(r *runs.IterateResult) string {
	var b strings.Builder
	done := ""
	if r.IterationCount > 0 {
		done = fmt.Sprintf(" (%d completed)", r.IterationCount)
	}
	fmt.Fprintf(&b, "[run:iterate] iteration=%d%s status=%s action=%s reason=%s\n", r.Iteration, done, r.Status, r.Action, r.Reason)
	if r.CompletionProof != "" {
		fmt.Fprintf(&b, "[run:iterate] completionProof=%s\n", r.CompletionProof)
	}
	if r.CodeChanged {
		b.WriteString("[run:iterate] the process code changed since the last iteration\n")
	}
	for _, a := range r.NextActions {
		fmt.Fprintf(&b, "  %s [%s] %s (task %s)\n", a.EffectID, a.Kind, a.Label, a.TaskID)
	}
	if len(r.Error) > 0 {
		fmt.Fprintf(&b, "[run:iterate] error=%s\n", compact(r.Error, 400))
	}
	if r.HaltReason != "" {
		fmt.Fprintf(&b, "[run:iterate] haltReason=%s\n", r.HaltReason)
	}
	for _, l := range r.Logs {
		fmt.Fprintf(&b, "[log] %s\n", l)
	}
	return b.String()
}

func compact(raw json.RawMessage, max int) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	s := b.String()
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// runStatus is `run status`.
func runStatus(f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "run status"
	st, dir, code := loadRunSDK(f, verb, "unable to read run metadata at", stderr)
	if st == nil {
		return code
	}
	// Like the SDK, status goes on without the snapshot, saying so.
	c, err := runs.ReadStateCache(dir)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "[run:status] unable to read state cache at %s: %v (continuing without metadata)\n", dir, err)
	case c == nil:
		fmt.Fprintf(stderr, "[run:status] state cache snapshot missing at %s (continuing without metadata)\n", dir)
	}
	v := newRunStatus(st, c)
	return outCompact(stdout, stderr, f.bools["json"], v, v.text(st))
}

// runStatusJSON is `run status --json`: the SDK's fields, then sitter's.
type runStatusJSON struct {
	State                 string         `json:"state"`
	LastEvent             *eventJSON     `json:"lastEvent"`
	PendingByKind         map[string]int `json:"pendingByKind"`
	PendingEffectsSummary pendingSummary `json:"pendingEffectsSummary"`
	NeedsMoreIterations   bool           `json:"needsMoreIterations"`
	Metadata              statusMetadata `json:"metadata"`
	CompletionProof       *string        `json:"completionProof"`

	// Sitter's: the run, the journal's length and the temp files that
	// interrupted writes left (`sitter run repair` quarantines them).
	RunID         string   `json:"runId"`
	ProcessID     string   `json:"processId"`
	Events        int      `json:"events"`
	PartialWrites []string `json:"partialWrites"`
	// ProcessError: the process file could not run at the last iterate.
	ProcessError string `json:"processError,omitempty"`
}

// eventJSON is a journal event as the SDK prints it.
type eventJSON struct {
	Seq        int             `json:"seq"`
	ULID       string          `json:"ulid"`
	Type       string          `json:"type"`
	RecordedAt string          `json:"recordedAt"`
	Filename   string          `json:"filename"`
	Path       string          `json:"path"`
	Data       json.RawMessage `json:"data"`
}

func newEventJSON(e journal.Event) eventJSON {
	return eventJSON{e.Seq, e.ULID, e.Type, e.RecordedAt, e.File, runs.JournalDir + "/" + e.File, e.Data}
}

type pendingSummary struct {
	TotalPending int            `json:"totalPending"`
	CountsByKind map[string]int `json:"countsByKind"`
	// AutoRunnableCount counts "node" effects, which the SDK's hooks can
	// run without an agent.
	AutoRunnableCount int `json:"autoRunnableCount"`
}

// statusMetadata is the pending counts and, when there is one, what the
// state snapshot says (see runs.StateCache).
type statusMetadata struct {
	PendingEffectsByKind map[string]int  `json:"pendingEffectsByKind"`
	StateVersion         *int            `json:"stateVersion,omitempty"`
	JournalHead          json.RawMessage `json:"journalHead,omitempty"` // null in a snapshot without one
	StateRebuilt         bool            `json:"stateRebuilt,omitempty"`
	StateRebuildReason   string          `json:"stateRebuildReason,omitempty"`
}

func newRunStatus(st *runs.State, c *runs.StateCache) *runStatusJSON {
	pending := st.PendingByKind()
	v := &runStatusJSON{
		State: st.Status, PendingByKind: pending,
		PendingEffectsSummary: pendingSummary{CountsByKind: pending, AutoRunnableCount: pending["node"]},
		Metadata:              statusMetadata{PendingEffectsByKind: pending},
		RunID:                 st.Meta.RunID, ProcessID: st.Meta.ProcessID, Events: len(st.Journal.Events), PartialWrites: nonNil(st.Journal.Partial),
		ProcessError: st.RuntimeError,
	}
	for _, n := range pending {
		v.PendingEffectsSummary.TotalPending += n
	}
	v.NeedsMoreIterations = st.Status == runs.StatusWaiting && v.PendingEffectsSummary.AutoRunnableCount > 0
	if h := st.Journal.Head(); h != nil {
		e := newEventJSON(*h)
		v.LastEvent = &e
	}
	if st.Status == runs.StatusCompleted {
		v.CompletionProof = &st.Meta.CompletionProof
	}
	if c != nil {
		v.Metadata.StateVersion = &c.StateVersion
		v.Metadata.JournalHead, _ = json.Marshal(c.JournalHead)
		if c.RebuildReason != nil && *c.RebuildReason != "" {
			v.Metadata.StateRebuilt, v.Metadata.StateRebuildReason = true, *c.RebuildReason
		}
	}
	return v
}

// text is the SDK's status line, then sitter's line on interrupted writes.
func (v *runStatusJSON) text(st *runs.State) string {
	var b strings.Builder
	last := "none"
	if e := v.LastEvent; e != nil {
		last = fmt.Sprintf("%s#%06d %s", e.Type, e.Seq, e.RecordedAt)
	}
	fmt.Fprintf(&b, "[run:status] state=%s last=%s", v.State, last)
	m := v.Metadata
	if m.StateVersion != nil {
		fmt.Fprintf(&b, " stateVersion=%d", *m.StateVersion)
	}
	var head runs.CacheHead
	if json.Unmarshal(m.JournalHead, &head) == nil && head.ULID != "" {
		fmt.Fprintf(&b, " journalHead=#%06d journalHead.ulid=%s", head.Seq, head.ULID)
	}
	if m.StateRebuilt {
		fmt.Fprintf(&b, " stateRebuilt=true(%s)", m.StateRebuildReason)
	}
	fmt.Fprintf(&b, " pending[total]=%d", v.PendingEffectsSummary.TotalPending)
	for _, k := range sortedCounts(v.PendingByKind) {
		fmt.Fprintf(&b, " pending[%s]=%d", k, v.PendingByKind[k])
	}
	if v.CompletionProof != nil {
		fmt.Fprintf(&b, " completionProof=%s", *v.CompletionProof)
	}
	b.WriteString("\n")
	if n := len(st.Journal.Partial); n > 0 {
		fmt.Fprintf(&b, "[run:status] %d interrupted write(s) left temp files; `sitter run repair` quarantines them\n", n)
	}
	return b.String()
}

func sortedCounts(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
