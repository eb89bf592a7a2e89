package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// cmdFlags is a parsed command line: positionals and flags, in any order.
type cmdFlags struct {
	pos   []string
	vals  map[string]string
	bools map[string]bool
}

// parseFlags reads --name value, --name=value and boolean --name; valued
// lists the flags that take a value, boolean those that do not.
func parseFlags(args []string, valued, boolean string) (*cmdFlags, error) {
	f := &cmdFlags{vals: map[string]string{}, bools: map[string]bool{}}
	takes := map[string]bool{}
	for _, n := range strings.Fields(valued) {
		takes[n] = true
	}
	isBool := map[string]bool{"json": true}
	for _, n := range strings.Fields(boolean) {
		isBool[n] = true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			f.pos = append(f.pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			f.pos = append(f.pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case takes[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				val = args[i]
			}
			f.vals[name] = val
		case isBool[name] && !hasVal:
			f.bools[name] = true
		default:
			return nil, fmt.Errorf("unknown flag %s", a)
		}
	}
	return f, nil
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

func (f *cmdFlags) runDir(verb string) (string, error) {
	if len(f.pos) == 0 {
		return "", fmt.Errorf("usage: sitter %s <runDir>", verb)
	}
	return runs.ResolveDir(f.pos[0], f.runsDir())
}

const runUsage = `Usage:
  sitter run create --process-id ID --entry FILE#export [--inputs F] [--run-id ID] [--runs-dir D]
                    [--harness H --session-id S] [--prompt P] [--non-interactive] [--json]
  sitter run list [--runs-dir D] [--json]     runs of this project: status, driving session, last activity
  sitter run iterate <runDir> [--timeout D] [--json]
  sitter run status <runDir> [--json]
  sitter run events <runDir> [--type T] [--limit N] [--json]
  sitter run rebuild-state <runDir> [--json]
  sitter run repair <runDir> [--json]
<runDir> is a run directory or a run id in --runs-dir ($SITTER_RUNS_DIR, default .a5c/runs).
`

// runRun is `sitter run …`.
func runRun(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, runUsage)
		return 2
	}
	verb := "run " + args[0]
	f, err := parseFlags(args[1:], "process-id entry inputs run-id runs-dir harness session-id prompt timeout type limit max-iterations", "non-interactive")
	if err != nil {
		fmt.Fprintf(stderr, "sitter: %s: %v\n%s", verb, err, runUsage)
		return 2
	}
	ctx := context.Background()
	asJSON := f.bools["json"]
	switch args[0] {
	case "create":
		return runCreate(ctx, f, stdout, stderr)
	case "list":
		return runList(f, stdout, stderr)
	}
	dir, err := f.runDir(verb)
	if err != nil {
		return fail(stderr, verb, err)
	}
	switch args[0] {
	case "iterate":
		o := runs.IterateOptions{Stderr: stderr}
		if t := f.vals["timeout"]; t != "" {
			if o.Timeout, err = time.ParseDuration(t); err != nil {
				return fail(stderr, verb, fmt.Errorf("--timeout: %w", err))
			}
		}
		res, err := runs.Iterate(ctx, dir, o)
		if err != nil {
			return fail(stderr, verb, err)
		}
		code := out(stdout, stderr, asJSON, res, iterateText(res))
		if res.RuntimeError && code == 0 {
			code = 1
		}
		return code
	case "status":
		st, err := runs.Load(dir)
		if err != nil {
			return fail(stderr, verb, err)
		}
		return out(stdout, stderr, asJSON, statusJSON(st), statusText(st))
	case "events":
		st, err := runs.Load(dir)
		if err != nil {
			return fail(stderr, verb, err)
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
		type event struct {
			Seq        int             `json:"seq"`
			ULID       string          `json:"ulid"`
			Type       string          `json:"type"`
			RecordedAt string          `json:"recordedAt"`
			Filename   string          `json:"filename"`
			Path       string          `json:"path"`
			Data       json.RawMessage `json:"data"`
		}
		list := []event{}
		var b strings.Builder
		for _, e := range evs {
			list = append(list, event{e.Seq, e.ULID, e.Type, e.RecordedAt, e.File, runs.JournalDir + "/" + e.File, e.Data})
			fmt.Fprintf(&b, "%06d %s %s %s\n", e.Seq, e.RecordedAt, e.Type, compact(e.Data, 120))
		}
		return out(stdout, stderr, asJSON, map[string]any{"events": list}, b.String())
	case "rebuild-state":
		st, err := runs.Load(dir)
		if err != nil {
			return fail(stderr, verb, err)
		}
		if err := st.Snapshot("rebuild"); err != nil {
			return fail(stderr, verb, err)
		}
		seq := 0
		if h := st.Journal.Head(); h != nil {
			seq = h.Seq
		}
		return out(stdout, stderr, asJSON, map[string]any{"stateVersion": seq, "status": st.Status, "pendingByKind": st.PendingByKind()},
			fmt.Sprintf("[run:rebuild-state] stateVersion=%d status=%s\n", seq, st.Status))
	case "repair":
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
		return out(stdout, stderr, asJSON, map[string]any{"quarantined": moved, "quarantineDir": q}, text)
	}
	fmt.Fprintf(stderr, "sitter: unknown command %q\n%s", verb, runUsage)
	return 2
}

func runCreate(ctx context.Context, f *cmdFlags, stdout, stderr io.Writer) int {
	o := runs.CreateOptions{
		RunsDir: f.runsDir(), RunID: f.vals["run-id"], ProcessID: f.vals["process-id"], Entry: f.vals["entry"],
		Harness: f.vals["harness"], SessionID: f.vals["session-id"], Prompt: f.vals["prompt"], NonInteractive: f.bools["non-interactive"],
	}
	if p := f.vals["inputs"]; p != "" {
		b, err := readInput(p)
		if err != nil {
			return fail(stderr, "run create", fmt.Errorf("--inputs: %w", err))
		}
		if !json.Valid(b) {
			return fail(stderr, "run create", fmt.Errorf("--inputs %s is not JSON", p))
		}
		o.Inputs = b
	}
	dir, m, err := runs.Create(ctx, o)
	if err != nil {
		return fail(stderr, "run create", err)
	}
	res := map[string]any{"runId": m.RunID, "runDir": dir, "entry": m.Entrypoint.ImportPath + "#" + m.Entrypoint.ExportName}
	text := fmt.Sprintf("[run:create] runId=%s runDir=%s entry=%s#%s\n", m.RunID, dir, m.Entrypoint.ImportPath, m.Entrypoint.ExportName)
	if sess, line := bindCreated(ctx, f, o, dir, m, stderr); sess != nil {
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
func bindCreated(ctx context.Context, f *cmdFlags, o runs.CreateOptions, dir string, m *runs.Metadata, stderr io.Writer) (map[string]any, string) {
	max := 0
	if v := f.vals["max-iterations"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fmt.Fprintf(stderr, "sitter: run create: --max-iterations %q is not a count; using the default\n", v)
			n = 0
		}
		max = n
	}
	c := session.Caller{Harness: o.Harness, SessionID: o.SessionID, Via: "flags"}
	if c.Harness == "" || c.SessionID == "" {
		found, err := session.Discover()
		if err != nil {
			fmt.Fprintf(stderr, "sitter: run create: run %s is not bound to a session: %v; bind one with `sitter session bind --run-id %s --harness H --session-id S`\n", m.RunID, err, m.RunID)
			return nil, ""
		}
		c = found
	}
	st, err := bindRun(ctx, c.Harness, c.SessionID, c.Cwd, dir, "", max, c.Via)
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

func iterateText(r *runs.IterateResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[run:iterate] status=%s", r.Status)
	if r.CodeChanged {
		b.WriteString(" (process code changed)")
	}
	b.WriteString("\n")
	for _, a := range r.NextActions {
		fmt.Fprintf(&b, "  %s [%s] %s (task %s)\n", a.EffectID, a.Kind, a.Label, a.TaskID)
	}
	if r.CompletionProof != "" {
		fmt.Fprintf(&b, "[run:iterate] completionProof=%s\n", r.CompletionProof)
	}
	if len(r.Error) > 0 {
		fmt.Fprintf(&b, "[run:iterate] error=%s\n", compact(r.Error, 400))
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "[run:iterate] reason=%s\n", r.Reason)
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

// statusJSON is `run status --json`, the SDK's shape plus sitter's fields.
func statusJSON(st *runs.State) map[string]any {
	pending := st.PendingByKind()
	var last any
	if h := st.Journal.Head(); h != nil {
		last = map[string]any{"seq": h.Seq, "ulid": h.ULID, "type": h.Type, "recordedAt": h.RecordedAt, "filename": h.File, "path": runs.JournalDir + "/" + h.File, "data": h.Data}
	}
	var proof any
	if st.Status == runs.StatusCompleted {
		proof = st.Meta.CompletionProof
	}
	total := 0
	for _, n := range pending {
		total += n
	}
	return map[string]any{
		"state": st.Status, "runId": st.Meta.RunID, "processId": st.Meta.ProcessID, "lastEvent": last,
		"pendingByKind":         pending,
		"pendingEffectsSummary": map[string]any{"totalPending": total, "countsByKind": pending},
		"completionProof":       proof, "events": len(st.Journal.Events), "partialWrites": nonNil(st.Journal.Partial),
	}
}

func statusText(st *runs.State) string {
	var b strings.Builder
	last := "none"
	if h := st.Journal.Head(); h != nil {
		last = fmt.Sprintf("%s#%06d %s", h.Type, h.Seq, h.RecordedAt)
	}
	fmt.Fprintf(&b, "[run:status] state=%s last=%s", st.Status, last)
	pending := st.PendingByKind()
	for _, k := range sortedCounts(pending) {
		fmt.Fprintf(&b, " pending[%s]=%d", k, pending[k])
	}
	if st.Status == runs.StatusCompleted {
		fmt.Fprintf(&b, " completionProof=%s", st.Meta.CompletionProof)
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
