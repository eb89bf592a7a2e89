package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
)

const taskUsage = `Usage:
  sitter task post <runDir> <effectId> --status ok|error (--value F | --value-inline JSON) [--error F]
                   [--stdout-file F] [--stderr-file F] [--started-at T] [--finished-at T] [--json]
  sitter task list <runDir> [--pending] [--kind K] [--json]
  sitter task show <runDir> <effectId> [--json]
F "-" reads stdin.
`

// runTask is `sitter task …`.
func runTask(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, taskUsage)
		return 2
	}
	verb := "task " + args[0]
	f, err := parseFlags(args[1:], "runs-dir status value value-inline error stdout-file stderr-file started-at finished-at kind", "pending")
	if err != nil {
		fmt.Fprintf(stderr, "sitter: %s: %v\n%s", verb, err, taskUsage)
		return 2
	}
	dir, err := f.runDir(verb)
	if err != nil {
		return fail(stderr, verb, err)
	}
	asJSON := f.bools["json"]
	switch args[0] {
	case "post":
		if len(f.pos) != 2 {
			fmt.Fprint(stderr, taskUsage)
			return 2
		}
		o := runs.PostOptions{Status: f.vals["status"], StartedAt: f.vals["started-at"], FinishedAt: f.vals["finished-at"]}
		switch {
		case f.has("value-inline"):
			o.Value = json.RawMessage(strings.TrimSpace(f.vals["value-inline"]))
		case f.has("value"):
			b, err := readInput(f.vals["value"])
			if err != nil {
				return fail(stderr, verb, fmt.Errorf("--value: %w", err))
			}
			o.Value = json.RawMessage(strings.TrimSpace(string(b)))
		}
		if p := f.vals["error"]; p != "" {
			b, err := readInput(p)
			if err != nil {
				return fail(stderr, verb, fmt.Errorf("--error: %w", err))
			}
			o.Error = json.RawMessage(strings.TrimSpace(string(b)))
		}
		for _, s := range []struct {
			flag string
			dst  **string
		}{{"stdout-file", &o.Stdout}, {"stderr-file", &o.Stderr}} {
			if p := f.vals[s.flag]; p != "" {
				b, err := readInput(p)
				if err != nil {
					return fail(stderr, verb, fmt.Errorf("--%s: %w", s.flag, err))
				}
				text := string(b)
				*s.dst = &text
			}
		}
		injectFaults()
		res, err := runs.Post(context.Background(), dir, f.pos[1], o)
		if err != nil {
			return fail(stderr, verb, err)
		}
		text := fmt.Sprintf("[task:post] status=%s resultRef=%s seq=%d\n", res.Status, res.ResultRef, res.Seq)
		return out(stdout, stderr, asJSON, map[string]any{
			"status": res.Status, "effectId": res.EffectID, "seq": res.Seq,
			"committed": map[string]any{"resultRef": res.ResultRef, "stdoutRef": omit(res.StdoutRef), "stderrRef": omit(res.StderrRef)},
			"resultRef": res.ResultRef, "stdoutRef": omit(res.StdoutRef), "stderrRef": omit(res.StderrRef),
		}, text)
	case "list":
		st, err := runs.Load(dir)
		if err != nil {
			return fail(stderr, verb, err)
		}
		tasks := []*runs.Effect{}
		for _, e := range st.Effects {
			if f.bools["pending"] && e.Status != runs.Requested {
				continue
			}
			if k := f.vals["kind"]; k != "" && !strings.EqualFold(k, e.Kind) {
				continue
			}
			tasks = append(tasks, e)
		}
		var b strings.Builder
		scope := "total"
		if f.bools["pending"] {
			scope = "pending"
		}
		fmt.Fprintf(&b, "[task:list] %s=%d\n", scope, len(tasks))
		for _, e := range tasks {
			fmt.Fprintf(&b, "- %s [%s %s] %s (taskId=%s)\n", e.EffectID, e.Kind, e.Status, e.Label, e.TaskID)
		}
		return out(stdout, stderr, asJSON, map[string]any{"tasks": tasks}, b.String())
	case "show":
		if len(f.pos) != 2 {
			fmt.Fprint(stderr, taskUsage)
			return 2
		}
		st, err := runs.Load(dir)
		if err != nil {
			return fail(stderr, verb, err)
		}
		e := st.Effect(f.pos[1])
		if e == nil {
			return fail(stderr, verb, fmt.Errorf("effect %s not found in %s", f.pos[1], dir))
		}
		def, err := st.TaskDef(e)
		if err != nil {
			return fail(stderr, verb, err)
		}
		var result json.RawMessage
		if e.Status != runs.Requested {
			ref := e.ResultRef
			if ref == "" {
				ref = runs.TasksDir + "/" + e.EffectID + "/result.json"
			}
			b, err := os.ReadFile(dir + "/" + ref)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail(stderr, verb, err)
			}
			if json.Valid(b) {
				result = b
			}
		}
		text := fmt.Sprintf("[task:show] %s [%s %s] %s\n%s\n", e.EffectID, e.Kind, e.Status, e.Label, strings.TrimSpace(string(def)))
		if result != nil {
			text += "result: " + compact(result, 2000) + "\n"
		}
		return out(stdout, stderr, asJSON, map[string]any{"effect": e, "task": def, "result": orNullRaw(result)}, text)
	}
	fmt.Fprintf(stderr, "sitter: unknown command %q\n%s", verb, taskUsage)
	return 2
}

// omit is a JSON null for an empty string.
func omit(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func orNullRaw(r json.RawMessage) any {
	if r == nil {
		return nil
	}
	return r
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
