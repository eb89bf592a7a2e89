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
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/internal/jsonpos"
	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
)

// newTaskCmd is `sitter task …`: the effects of a run, as the npm SDK's
// task:* verbs.
func newTaskCmd(e *env) *cobra.Command {
	long := func(c *cobra.Command, more string) *cobra.Command {
		c.Long = c.Short + ".\n\n" + runArgNote + more + storeNote
		return c
	}
	ctx := context.Background()
	return group(&cobra.Command{
		Use:   "task",
		Short: "The effects (tasks) of a run: list, show, post a result",
		Long: `The effects a run is waiting for, and their results, as the npm SDK's task:*
verbs (same checks, words, JSON and exit codes).

` + runArgNote,
		Example: `  sitter task list 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --pending
  sitter task post 01JB7ZK3Q8X4M2N5P6R7S8T9V0 01JB80A… --status ok --value-inline '{"done":true}' --json`,
	},
		long(flagged("post <runDir> <effectId>", "Post the result of an effect",
			"  sitter task post 01JB7ZK3Q8X4M2N5P6R7S8T9V0 01JB80AAAAAAAAAAAAAAAAAAAA --status ok --value result.json --json\n  sitter task post R1 01JB80AAAAAAAAAAAAAAAAAAAA --status error --error err.json",
			[]string{runsDirFlag, "status=the effect's `STATUS`: ok or error (required)", "value=the result value, a JSON `FILE` (- reads stdin)",
				"value-inline=the result value, inline `JSON`", "error=the error, a JSON `FILE` (- reads stdin)", "stdout-file=the task's stdout, a `FILE` kept with the result",
				"stderr-file=the task's stderr, a `FILE` kept with the result", "started-at=when the task started, an RFC 3339 `TIME`", "finished-at=when the task finished, an RFC 3339 `TIME`", storeFlag, "json?print the answer as JSON"},
			func(_ *cobra.Command, f *cmdFlags) int {
				return withStore(ctx, f, "task post", true, e.stdout, e.stderr, func(o, eo io.Writer) int { return taskPost(f, o, eo) })
			}),
			"\nPosting an error result exits 1, as the SDK's task:post does."),
		long(flagged("list <runDir>", "List a run's effects",
			"  sitter task list 01JB7ZK3Q8X4M2N5P6R7S8T9V0\n  sitter task list 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --pending --kind breakpoint --json",
			[]string{runsDirFlag, "pending?only the effects still waiting", "kind=only effects of kind `KIND`", storeFlag, "json?print the answer as JSON"},
			func(_ *cobra.Command, f *cmdFlags) int {
				return withStore(ctx, f, "task list", false, e.stdout, e.stderr, func(o, eo io.Writer) int { return taskList(f, o, eo) })
			}), ""),
		// --verbose is accepted for the SDK's command lines; sitter's task
		// show always prints the task and result (see taskShow).
		long(flagged("show <runDir> <effectId>", "Show an effect: its task and result",
			"  sitter task show 01JB7ZK3Q8X4M2N5P6R7S8T9V0 01JB80AAAAAAAAAAAAAAAAAAAA\n  sitter task show R1 01JB80AAAAAAAAAAAAAAAAAAAA --json",
			[]string{runsDirFlag, "verbose?accepted for the SDK's command lines (the task and result are always shown)", storeFlag, "json?print the answer as JSON"},
			func(_ *cobra.Command, f *cmdFlags) int {
				return withStore(ctx, f, "task show", false, e.stdout, e.stderr, func(o, eo io.Writer) int { return taskShow(f, o, eo) })
			}), ""),
	)
}

// taskEntry is an effect as the SDK's task:list and task:show print it.
type taskEntry struct {
	EffectID    string   `json:"effectId"`
	TaskID      string   `json:"taskId"`
	StepID      string   `json:"stepId"`
	Status      string   `json:"status"`
	Kind        string   `json:"kind,omitempty"`
	Label       string   `json:"label,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	TaskDefRef  string   `json:"taskDefRef"`
	InputsRef   *string  `json:"inputsRef"`
	ResultRef   *string  `json:"resultRef"`
	StdoutRef   *string  `json:"stdoutRef"`
	StderrRef   *string  `json:"stderrRef"`
	RequestedAt string   `json:"requestedAt,omitempty"`
	ResolvedAt  string   `json:"resolvedAt,omitempty"`
}

func newTaskEntry(e *runs.Effect) taskEntry {
	t := taskEntry{
		EffectID: e.EffectID, TaskID: orUnknown(e.TaskID), StepID: orUnknown(e.StepID), Status: orUnknown(e.Status),
		Kind: e.Kind, Label: e.Label, Labels: e.Labels, TaskDefRef: e.TaskDefRef,
		InputsRef: ref(e.InputsRef), ResultRef: ref(e.ResultRef), StdoutRef: ref(e.StdoutRef), StderrRef: ref(e.StderrRef),
		RequestedAt: e.RequestedAt, ResolvedAt: e.ResolvedAt,
	}
	if t.TaskDefRef == "" {
		t.TaskDefRef = runs.TasksDir + "/" + e.EffectID + "/task.json"
	}
	return t
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ref is a run-relative path, JSON null for none.
func ref(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// taskList is `task list`: the effects sorted by id, as the SDK lists them.
func taskList(f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "task list"
	st, _, code := loadRunSDK(f, verb, "unable to read run at", stderr)
	if st == nil {
		return code
	}
	tasks := []taskEntry{}
	for _, e := range st.Effects {
		if f.bools["pending"] && e.Status != runs.Requested {
			continue
		}
		if k := f.vals["kind"]; k != "" && !strings.EqualFold(k, e.Kind) {
			continue
		}
		tasks = append(tasks, newTaskEntry(e))
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].EffectID < tasks[j].EffectID })
	var b strings.Builder
	scope := "total"
	if f.bools["pending"] {
		scope = "pending"
	}
	fmt.Fprintf(&b, "[task:list] %s=%d\n", scope, len(tasks))
	for _, t := range tasks {
		label := ""
		if t.Label != "" {
			label = " " + t.Label
		}
		fmt.Fprintf(&b, "- %s [%s %s]%s (taskId=%s)\n", t.EffectID, orUnknown(t.Kind), t.Status, label, t.TaskID)
	}
	return out(stdout, stderr, f.bools["json"], map[string]any{"tasks": tasks}, b.String())
}

// largeResult is the SDK's limit for a result shown inline by task show.
const largeResult = 1 << 20

// taskShowJSON is `task show --json`. The SDK prints task and result only
// when BABYSITTER_ALLOW_SECRET_LOGS is set and --verbose given, null
// otherwise; sitter always prints them, as that unlocked SDK does,
// because its stop hook sends agents here for an effect's definition.
type taskShowJSON struct {
	Effect      taskEntry       `json:"effect"`
	Task        json.RawMessage `json:"task"`
	Result      json.RawMessage `json:"result"`
	LargeResult *string         `json:"largeResult"`
}

// taskShow is `task show`.
func taskShow(f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "task show"
	if len(f.pos) != 2 {
		return usageFail(stderr, f)
	}
	st, dir, code := loadRunSDK(f, verb, "unable to read run at", stderr)
	if st == nil {
		return code
	}
	e := st.Effect(f.pos[1])
	if e == nil {
		return sdkFail(stderr, verb, "effect %s not found in %s", f.pos[1], dir)
	}
	def, err := st.TaskDef(e)
	if err != nil {
		return sdkFail(stderr, verb, "task definition missing for effect %s", e.EffectID)
	}
	v := taskShowJSON{Effect: newTaskEntry(e), Task: def, Result: json.RawMessage("null")}
	result, large, err := readResult(dir, e)
	if err != nil {
		return sdkFail(stderr, verb, "result of effect %s: %v", e.EffectID, err)
	}
	if large {
		v.LargeResult = ref(resultRef(e))
	} else if result != nil {
		v.Result = result
	}
	text := fmt.Sprintf("[task:show] %s [%s %s] %s\n%s\n", e.EffectID, orUnknown(e.Kind), e.Status, e.Label, strings.TrimSpace(string(def)))
	if result != nil {
		text += "result: " + compact(result, 2000) + "\n"
	}
	return outCompact(stdout, stderr, f.bools["json"], v, text)
}

func resultRef(e *runs.Effect) string {
	if e.ResultRef != "" {
		return e.ResultRef
	}
	return runs.TasksDir + "/" + e.EffectID + "/result.json"
}

// readResult reads an effect's result.json: nil when there is none yet
// (or it is not JSON), large when it is over the SDK's inline limit.
func readResult(dir string, e *runs.Effect) (json.RawMessage, bool, error) {
	p := filepath.Join(dir, filepath.FromSlash(resultRef(e)))
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if fi.Size() > largeResult {
		return nil, true, nil
	}
	b, err := os.ReadFile(p)
	if err != nil || !json.Valid(b) {
		return nil, false, err
	}
	return b, false, nil
}

// taskPost is `task post`: the SDK's checks in the SDK's order and words.
func taskPost(f *cmdFlags, stdout, stderr io.Writer) int {
	const verb = "task post"
	if len(f.pos) != 2 {
		return usageFail(stderr, f)
	}
	if msg := postFlagError(f); msg != "" {
		return sdkFail(stderr, verb, "%s", msg)
	}
	dir, err := f.runDir()
	if err != nil {
		return sdkFail(stderr, verb, "unable to read run at %s: %v", dir, err)
	}
	o, err := postOptions(f)
	if err != nil {
		return thrown(stderr, f.bools["json"], err)
	}
	injectFaults()
	res, err := runs.Post(context.Background(), dir, f.pos[1], o)
	if err != nil {
		return sdkFail(stderr, verb, "%v", err)
	}
	v := postJSON{
		Status: res.Status, Committed: committed{res.ResultRef, res.StdoutRef, res.StderrRef, res.StartedAt, res.FinishedAt},
		StdoutRef: ref(res.StdoutRef), StderrRef: ref(res.StderrRef), ResultRef: ref(res.ResultRef), EffectID: res.EffectID, Seq: res.Seq,
	}
	text := "[task:post] status=" + res.Status
	for _, r := range []struct{ name, v string }{{"stdoutRef", res.StdoutRef}, {"stderrRef", res.StderrRef}, {"resultRef", res.ResultRef}} {
		if r.v != "" {
			text += " " + r.name + "=" + r.v
		}
	}
	code := outCompact(stdout, stderr, f.bools["json"], v, text+"\n")
	if code == 0 && res.Status == "error" {
		code = 1 // the SDK's task:post exits 1 after an error result
	}
	return code
}

// postJSON is `task post --json`: the SDK's fields, then sitter's (the
// effect and the journal seq of its EFFECT_RESOLVED).
type postJSON struct {
	Status    string    `json:"status"`
	Committed committed `json:"committed"`
	StdoutRef *string   `json:"stdoutRef"`
	StderrRef *string   `json:"stderrRef"`
	ResultRef *string   `json:"resultRef"`
	EffectID  string    `json:"effectId"`
	Seq       int       `json:"seq"`
}

type committed struct {
	ResultRef  string `json:"resultRef"`
	StdoutRef  string `json:"stdoutRef,omitempty"`
	StderrRef  string `json:"stderrRef,omitempty"`
	StartedAt  string `json:"startedAt"`
	FinishedAt string `json:"finishedAt"`
}

// postFlagError is the SDK's complaint about task post's flags, "" if none.
func postFlagError(f *cmdFlags) string {
	status := f.vals["status"]
	switch {
	case status == "":
		return "missing required --status <ok|error>"
	case status != "ok" && status != "error":
		return fmt.Sprintf("--status must be \"ok\" or \"error\" (received: %s)", status)
	case f.has("value") && f.has("value-inline"):
		return "cannot combine --value with --value-inline"
	case status == "error" && f.has("value-inline"):
		return "--value-inline is only supported with --status ok"
	case status == "ok" && !f.has("value") && !f.has("value-inline"):
		return "ok results require --value or --value-inline"
	}
	return ""
}

// postOptions reads the result from the flags.
func postOptions(f *cmdFlags) (runs.PostOptions, error) {
	o := runs.PostOptions{Status: f.vals["status"], StartedAt: f.vals["started-at"], FinishedAt: f.vals["finished-at"]}
	var err error
	switch {
	case f.has("value-inline"):
		o.Value = json.RawMessage(strings.TrimSpace(f.vals["value-inline"]))
	case f.has("value"):
		if o.Value, err = readJSONInput("--value", f.vals["value"], o.Status == "ok"); err != nil {
			return o, err
		}
	}
	if o.Status == "ok" {
		if err := checkJSON(o.Value); err != nil {
			return o, err
		}
	}
	if p := f.vals["error"]; p != "" {
		if o.Error, err = readJSONInput("--error", p, true); err != nil {
			return o, err
		}
	}
	for _, s := range []struct {
		flag string
		dst  **string
	}{{"stdout-file", &o.Stdout}, {"stderr-file", &o.Stderr}} {
		if p := f.vals[s.flag]; p != "" {
			b, err := readInput(p)
			if err != nil {
				return o, fmt.Errorf("--%s: %w", s.flag, err)
			}
			text := string(b)
			*s.dst = &text
		}
	}
	return o, nil
}

// readJSONInput reads the JSON file p (- reads stdin) of flag; when
// check, a file that is not JSON is an error that says where, file:line:col.
func readJSONInput(flag, p string, check bool) (json.RawMessage, error) {
	b, err := readInput(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if check {
		if err := jsonFileError(flag, p, b); err != nil {
			return nil, &syntaxError{err}
		}
	}
	return json.RawMessage(strings.TrimSpace(string(b))), nil
}

// jsonFileError says where the JSON file p given to flag is not JSON,
// "flag file:line:col: invalid JSON: …", or nil when it is.
func jsonFileError(flag, p string, b []byte) error {
	if p == "-" {
		p = "stdin"
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("%s %s is empty, not JSON", flag, p)
	}
	if e := jsonpos.Syntax(p, b); e != nil {
		return fmt.Errorf("%s %w", flag, e)
	}
	return nil
}

// syntaxError is a value that is not JSON, named as the SDK's JSON.parse
// names it.
type syntaxError struct{ err error }

func (e *syntaxError) Error() string { return e.err.Error() }

func checkJSON(raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return &syntaxError{fmt.Errorf("%q is not valid JSON: %w", string(raw), err)}
	}
	return nil
}

// thrown reports an error the way the SDK reports one it did not expect:
// with --json its structured error object on stderr, else "Error: …".
func thrown(stderr io.Writer, asJSON bool, err error) int {
	name := "Error"
	var se *syntaxError
	if errors.As(err, &se) {
		name = "SyntaxError"
	}
	if !asJSON {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	b, _ := json.Marshal(struct {
		Name                string   `json:"name"`
		Message             string   `json:"message"`
		Category            string   `json:"category"`
		CategoryDescription string   `json:"categoryDescription"`
		Suggestions         []string `json:"suggestions"`
		NextSteps           []string `json:"nextSteps"`
	}{name, err.Error(), "INTERNAL", "Internal error (please report as a bug)", []string{}, []string{}})
	fmt.Fprintf(stderr, "%s\n", b)
	return 1
}

// injectFaults arms SITTER_FAULT_INJECT=N for fault tests: the process
// SIGKILLs itself at the Nth step of its durable writes (temp file
// created, half written, written, synced, renamed, directory synced).
func injectFaults() {
	n, err := strconv.Atoi(os.Getenv("SITTER_FAULT_INJECT"))
	if err != nil || n <= 0 {
		return
	}
	journal.CrashPoint = func(string) {
		if n--; n == 0 {
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
			select {} // the kill is asynchronous: never run past the point
		}
	}
}
