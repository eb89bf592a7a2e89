package run

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"sitter.dev/sitter/runtime/journal"
)

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: process replay tests need Node ≥ 20.6")
	}
	t.Setenv("SITTER_CACHE_DIR", cacheDir)
}

var cacheDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "sitter-jsrt-")
	if err != nil {
		panic(err)
	}
	cacheDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// newRun writes src as a process file and creates a run of it.
func newRun(t *testing.T, src string, inputs string) (dir, entry string) {
	t.Helper()
	ws := t.TempDir()
	entry = filepath.Join(ws, "proc.mjs")
	if err := os.WriteFile(entry, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := CreateOptions{RunsDir: filepath.Join(ws, ".a5c", "runs"), ProcessID: "p", Entry: entry + "#process"}
	if inputs != "" {
		o.Inputs = json.RawMessage(inputs)
	}
	dir, _, err := Create(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return dir, entry
}

func iterate(t *testing.T, dir string) *IterateResult {
	t.Helper()
	var stderr strings.Builder
	r, err := Iterate(context.Background(), dir, IterateOptions{Stderr: &stderr, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("iterate: %v\n%s", err, stderr.String())
	}
	if r.RuntimeError {
		t.Fatalf("runtime error: %s\n%s", r.Error, stderr.String())
	}
	return r
}

func postOK(t *testing.T, dir, effectID, value string) {
	t.Helper()
	if _, err := Post(context.Background(), dir, effectID, PostOptions{Status: "ok", Value: json.RawMessage(value)}); err != nil {
		t.Fatal(err)
	}
}

func eventTypes(t *testing.T, dir string) []string {
	t.Helper()
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ts []string
	for _, e := range s.Journal.Events {
		ts = append(ts, e.Type)
	}
	return ts
}

type action struct{ Kind, Label, TaskID string }

func actions(r *IterateResult) []action {
	var as []action
	for _, a := range r.NextActions {
		as = append(as, action{a.Kind, a.Label, a.TaskID})
	}
	return as
}

const twoSteps = `import { defineTask } from '@a5c-ai/babysitter-sdk';
const build = defineTask('build', (args) => ({ kind: 'shell', title: 'Build', shell: { command: 'make ' + args.target } }));
const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { prompt: 'review ' + args.out } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, { target: inputs.target });
  const r = await ctx.task(review, { out: b.out });
  return { b, r };
}
`

// Replay is deterministic: iterating again without new results asks for
// the same effect (same id, same key) and journals nothing.
func TestReplayDeterminism(t *testing.T) {
	needNode(t)
	dir, _ := newRun(t, twoSteps, `{"target": "all"}`)
	r1 := iterate(t, dir)
	n := len(eventTypes(t, dir))
	r2 := iterate(t, dir)
	if r1.Status != StatusWaiting || len(r1.NextActions) != 1 {
		t.Fatalf("first iterate: %+v", r1)
	}
	// As in the SDK, a new effect shows the definition the process built,
	// a pending one its stored task.json (the definition and the SDK's keys).
	if diff := cmp.Diff(r1.NextActions, r2.NextActions, cmpopts.IgnoreFields(Action{}, "TaskDef")); diff != "" {
		t.Errorf("second iterate asks differently (-first +second):\n%s", diff)
	}
	var stored struct {
		Shell  struct{ Command string } `json:"shell"`
		Effect string                   `json:"effectId"`
	}
	if json.Unmarshal(r2.NextActions[0].TaskDef, &stored); stored.Shell.Command != "make all" || stored.Effect != r1.NextActions[0].EffectID {
		t.Errorf("second iterate's task definition: %s", r2.NextActions[0].TaskDef)
	}
	if got := len(eventTypes(t, dir)); got != n {
		t.Errorf("second iterate journaled %d events", got-n)
	}
	var def struct {
		Shell struct{ Command string } `json:"shell"`
	}
	json.Unmarshal(r1.NextActions[0].TaskDef, &def)
	if def.Shell.Command != "make all" {
		t.Errorf("task def command %q, want the inputs applied", def.Shell.Command)
	}
	postOK(t, dir, r1.NextActions[0].EffectID, `{"out": "bin/x"}`)
	r3 := iterate(t, dir)
	if diff := cmp.Diff([]action{{"agent", "Review", "review"}}, actions(r3)); diff != "" {
		t.Fatalf("after posting build (-want +got):\n%s", diff)
	}
	postOK(t, dir, r3.NextActions[0].EffectID, `"LGTM"`)
	r4 := iterate(t, dir)
	if r4.Status != StatusCompleted || r4.CompletionProof == "" {
		t.Fatalf("final iterate: %+v", r4)
	}
	if diff := cmp.Diff(`{"b":{"out":"bin/x"},"r":"LGTM"}`, compactJSON(r4.Output)); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	want := []string{journal.RunCreated, journal.EffectRequested, journal.EffectResolved, journal.EffectRequested, journal.EffectResolved, journal.RunCompleted}
	if diff := cmp.Diff(want, eventTypes(t, dir)); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
	// A completed run stays completed.
	if r := iterate(t, dir); r.Status != StatusCompleted || r.CompletionProof != r4.CompletionProof {
		t.Errorf("iterate after completion: %+v", r)
	}
}

func compactJSON(r json.RawMessage) string {
	var v any
	json.Unmarshal(r, &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// parallel.all and parallel.map ask for every branch at once; results
// come back in call order whatever order they were posted in.
func TestParallelEffects(t *testing.T) {
	needNode(t)
	dir, _ := newRun(t, `import { defineTask } from '@a5c-ai/babysitter-sdk';
const t = defineTask('t', (args) => ({ kind: 'agent', title: 'T' + args.i }));
export async function process(inputs, ctx) {
  const [a, b] = await ctx.parallel.all([() => ctx.task(t, { i: 1 }, { label: 'a' }), () => ctx.task(t, { i: 2 }, { label: 'b' })]);
  const m = await ctx.parallel.map([3, 4, 5], (i) => ctx.task(t, { i }));
  return [a, b, ...m];
}
`, "")
	r := iterate(t, dir)
	if diff := cmp.Diff([]action{{"agent", "a", "t"}, {"agent", "b", "t"}}, actions(r)); diff != "" {
		t.Fatalf("parallel.all (-want +got):\n%s", diff)
	}
	if r.NextActions[0].SchedulerHints["pendingCount"] != 2 {
		t.Errorf("scheduler hints: %v", r.NextActions[0].SchedulerHints)
	}
	postOK(t, dir, r.NextActions[1].EffectID, `"B"`)
	r = iterate(t, dir)
	if diff := cmp.Diff([]action{{"agent", "a", "t"}}, actions(r)); diff != "" {
		t.Fatalf("after posting b (-want +got):\n%s", diff)
	}
	postOK(t, dir, r.NextActions[0].EffectID, `"A"`)
	r = iterate(t, dir)
	if len(r.NextActions) != 3 {
		t.Fatalf("parallel.map asked for %d effects, want 3", len(r.NextActions))
	}
	// Same task, same label, same args shape: the occurrence count keeps
	// the keys apart.
	keys := map[string]bool{}
	for _, a := range r.NextActions {
		keys[a.InvocationKey] = true
	}
	if len(keys) != 3 {
		t.Errorf("invocation keys collide: %v", keys)
	}
	for i := len(r.NextActions) - 1; i >= 0; i-- {
		postOK(t, dir, r.NextActions[i].EffectID, `"m`+string(rune('3'+i))+`"`)
	}
	r = iterate(t, dir)
	if r.Status != StatusCompleted || compactJSON(r.Output) != `["A","B","m3","m4","m5"]` {
		t.Fatalf("final: %s %s", r.Status, r.Output)
	}
}

func TestBreakpoint(t *testing.T) {
	needNode(t)
	dir, _ := newRun(t, `export async function process(inputs, ctx) {
  const answer = await ctx.breakpoint({ question: 'Ship?' }, { label: 'approve' });
  return answer.approved ? 'shipped' : 'held';
}
`, "")
	r := iterate(t, dir)
	if diff := cmp.Diff([]action{{"breakpoint", "approve", "__sdk.breakpoint"}}, actions(r)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	s, _ := Load(dir)
	if s.PendingByKind()["breakpoint"] != 1 {
		t.Errorf("pending by kind: %v", s.PendingByKind())
	}
	postOK(t, dir, r.NextActions[0].EffectID, `{"approved": true}`)
	if r = iterate(t, dir); compactJSON(r.Output) != `"shipped"` {
		t.Fatalf("output %s", r.Output)
	}
}

// A task error reaches the process as a thrown Error; a process that
// does not catch it fails the run.
func TestTaskErrors(t *testing.T) {
	needNode(t)
	src := `import { defineTask } from '@a5c-ai/babysitter-sdk';
const t = defineTask('t', () => ({ kind: 'shell', shell: { command: 'false' } }));
export async function process(inputs, ctx) {
  try { await ctx.task(t, {}, { label: 'first' }); } catch (e) { if (!inputs.rethrow) return 'caught: ' + e.message; throw e; }
  return 'no error';
}
`
	for _, tc := range []struct {
		inputs, status, want string
	}{
		{`{"rethrow": false}`, StatusCompleted, `"caught: exit 1"`},
		{`{"rethrow": true}`, StatusFailed, `exit 1`},
	} {
		dir, _ := newRun(t, src, tc.inputs)
		r := iterate(t, dir)
		if _, err := Post(context.Background(), dir, r.NextActions[0].EffectID, PostOptions{Status: "error", Error: json.RawMessage(`{"name":"Error","message":"exit 1"}`)}); err != nil {
			t.Fatal(err)
		}
		r = iterate(t, dir)
		if r.Status != tc.status {
			t.Fatalf("%s: status %s, want %s (%s)", tc.inputs, r.Status, tc.status, r.Error)
		}
		got := string(r.Output)
		if tc.status == StatusFailed {
			got = string(r.Error)
			if ts := eventTypes(t, dir); ts[len(ts)-1] != journal.RunFailed {
				t.Errorf("last event %s, want RUN_FAILED", ts[len(ts)-1])
			}
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %s, want %s", tc.inputs, got, tc.want)
		}
	}
}

// A changed process file is journaled once; effects keep their identity
// when a call is added before them (keys do not depend on position).
func TestProcessCodeChange(t *testing.T) {
	needNode(t)
	dir, entry := newRun(t, twoSteps, `{"target": "all"}`)
	r1 := iterate(t, dir)
	changed := strings.Replace(twoSteps, "  const b = await", "  await ctx.parallel.all([]);\n  const b = await", 1)
	if err := os.WriteFile(entry, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := iterate(t, dir)
	if !r2.CodeChanged {
		t.Error("iterate did not report the code change")
	}
	if r2.NextActions[0].EffectID != r1.NextActions[0].EffectID {
		t.Errorf("the pending effect changed identity: %s → %s", r1.NextActions[0].EffectID, r2.NextActions[0].EffectID)
	}
	if r3 := iterate(t, dir); r3.CodeChanged {
		t.Error("an unchanged file was reported changed")
	}
	n := 0
	for _, ty := range eventTypes(t, dir) {
		if ty == journal.ProcessCodeHashChanged {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d PROCESS_CODE_HASH_CHANGED events, want 1", n)
	}
}

func TestHaltAndSleep(t *testing.T) {
	needNode(t)
	dir, _ := newRun(t, `export async function process(inputs, ctx) {
  await ctx.sleepUntil(inputs.until);
  ctx.log('woke');
  ctx.halt('enough');
}
`, `{"until": "2999-01-01T00:00:00Z"}`)
	r := iterate(t, dir)
	if len(r.NextActions) != 1 || r.NextActions[0].Kind != "sleep" || r.NextActions[0].SchedulerHints["sleepUntilEpochMs"] == nil {
		t.Fatalf("sleep: %+v", r.NextActions)
	}
	later, err := Iterate(context.Background(), dir, IterateOptions{Now: func() time.Time { return time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if later.Status != StatusHalted || later.HaltReason != "enough" || len(later.Logs) != 1 || later.Logs[0] != "woke" {
		t.Fatalf("after the sleep: %+v", later)
	}
	want := []string{journal.RunCreated, journal.EffectRequested, journal.EffectResolved, journal.RunHalted}
	if diff := cmp.Diff(want, eventTypes(t, dir)); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}

// A process that does not load is a runtime error, journaled, and the run
// goes on once the file is fixed.
func TestProcessRuntimeError(t *testing.T) {
	needNode(t)
	dir, entry := newRun(t, "export async function process( {\n", "")
	r, err := Iterate(context.Background(), dir, IterateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.RuntimeError || r.Status != StatusFailed {
		t.Fatalf("iterate a broken module: %+v", r)
	}
	os.WriteFile(entry, []byte("export async function process() { return 42; }\n"), 0o644)
	if r := iterate(t, dir); r.Status != StatusCompleted || string(r.Output) != "42\n" && compactJSON(r.Output) != "42" {
		t.Fatalf("after the fix: %+v", r)
	}
	want := []string{journal.RunCreated, journal.ProcessRuntimeError, journal.ProcessCodeHashChanged, journal.RunCompleted}
	if diff := cmp.Diff(want, eventTypes(t, dir)); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}

func TestShimMode(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(src), 0o644)
		return p
	}
	write("lib/b.mjs", `import { defineTask } from "@a5c-ai/babysitter-sdk";`)
	write("lib/c.mjs", `import fs from 'node:fs'; export const x = 1;`)
	for _, tc := range []struct{ name, src, want string }{
		{"none.mjs", `import { x } from './lib/c.mjs';`, ""},
		{"entry.mjs", `import { x } from './lib/c.mjs'; import { defineTask } from '@a5c-ai/babysitter-sdk';`, "vm"},
		{"nested.mjs", `import { x } from './lib/b.mjs';`, "hook"},
		{"missing.mjs", `import { x } from './lib/nope.mjs';`, "hook"},
	} {
		if got := shimMode(write(tc.name, tc.src)); got != tc.want {
			t.Errorf("%s: shimMode = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The three ways a process reaches the SDK import all run: from the entry
// (vm linking), from a helper module (resolve hook), and from an entry
// that also imports a bare package (falls back to the hook).
func TestSDKImportModes(t *testing.T) {
	needNode(t)
	for name, files := range map[string]map[string]string{
		"entry": {"proc.mjs": "import { defineTask } from '@a5c-ai/babysitter-sdk';\nimport { join } from 'node:path';\nimport { label } from './lib.mjs';\nconst t = defineTask('t', () => ({ kind: 'agent', title: label + join('a', 'b') }));\nexport async function process(i, ctx) { return [await ctx.task(t, {}), import.meta.url.endsWith('/proc.mjs')]; }\n",
			"lib.mjs": "export const label = 'L';\n"},
		"helper": {"proc.mjs": "import { t } from './lib.mjs';\nexport async function process(i, ctx) { return [await ctx.task(t, {}), true]; }\n",
			"lib.mjs": "import { defineTask } from '@a5c-ai/babysitter-sdk';\nexport const t = defineTask('t', () => ({ kind: 'agent', title: 'La/b' }));\n"},
		"bare package": {"proc.mjs": "import { defineTask } from '@a5c-ai/babysitter-sdk';\nimport { label } from 'fakepkg';\nconst t = defineTask('t', () => ({ kind: 'agent', title: label }));\nexport async function process(i, ctx) { return [await ctx.task(t, {}), true]; }\n",
			"node_modules/fakepkg/package.json": `{"name": "fakepkg", "type": "module", "exports": "./index.mjs"}`,
			"node_modules/fakepkg/index.mjs":    "export const label = 'La/b';\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir, entry := newRun(t, files["proc.mjs"], "")
			for name, src := range files {
				if name == "proc.mjs" {
					continue
				}
				p := filepath.Join(filepath.Dir(entry), filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(src), 0o644)
			}
			r := iterate(t, dir)
			if len(r.NextActions) != 1 || r.NextActions[0].Label != "La/b" {
				t.Fatalf("%+v", r)
			}
			postOK(t, dir, r.NextActions[0].EffectID, `"ok"`)
			if r := iterate(t, dir); compactJSON(r.Output) != `["ok",true]` {
				t.Fatalf("output %s (%s)", r.Output, r.Error)
			}
		})
	}
}

// The SDK's other intrinsics: ctx.orchestratorTask is an effect; ctx.hook
// runs nothing and says so in the logs.
func TestOrchestratorTaskAndHook(t *testing.T) {
	needNode(t)
	dir, _ := newRun(t, `export async function process(inputs, ctx) {
  await ctx.hook('on-breakpoint', {});
  return await ctx.orchestratorTask({ plan: 1 }, { label: 'plan' });
}
`, "")
	r := iterate(t, dir)
	if diff := cmp.Diff([]action{{"orchestrator_task", "plan", "__sdk.orchestratorTask"}}, actions(r)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if len(r.Logs) != 1 || !strings.Contains(r.Logs[0], "ctx.hook(on-breakpoint) skipped") {
		t.Errorf("logs %q", r.Logs)
	}
	postOK(t, dir, r.NextActions[0].EffectID, `"planned"`)
	if r := iterate(t, dir); compactJSON(r.Output) != `"planned"` {
		t.Fatalf("output %s", r.Output)
	}
}

// run create's check: the named export must be a function; the error
// names the exports the module has.
func TestCheckEntry(t *testing.T) {
	needNode(t)
	ws := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(ws, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := write("f.mjs", twoSteps+"export const build2 = 1;\n")
	g := write("g.mjs", "export default async function (inputs, ctx) { return 1; }\n")
	h := write("h.mjs", "const run = async (inputs, ctx) => 1;\nexport { run as process };\n")
	bad := write("bad.mjs", "export const x = ;\n")
	imp := write("imp.mjs", "import { x } from './bad.mjs';\nexport { x as process };\n")
	for _, tc := range []struct{ entry, want string }{
		{f + "#process", ""},
		{f, ""},
		{g, ""},
		{h + "#process", ""}, // not plainly declared: Node answers
		{f + "#typo", `export "typo" not found in ` + f + `; it exports: build2, process`},
		{f + "#build2", `export "build2" of ` + f + ` is a number, not a function; it exports: build2, process`},
		{g + "#process", `export "process" not found in ` + g + `; it exports: default`},
		{bad + "#process", "did not load: " + bad + ":1:18: Unexpected token ';'"},
		{imp + "#process", "did not load: " + bad + ":1:18: Unexpected token ';'"}, // the imported module's error
		{filepath.Join(ws, "nope.mjs"), "process entry file not found"},
	} {
		err := CheckEntry(context.Background(), tc.entry)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.entry, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.entry, err, tc.want)
		}
	}
}

// A process with a syntax error fails iterate with where the error is,
// file:line:col, which Node's import error does not say.
func TestIterateSyntaxErrorLocated(t *testing.T) {
	needNode(t)
	dir, entry := newRun(t, "export async function process(inputs, ctx) {\n  const x = ;\n}\n", "")
	r, err := Iterate(context.Background(), dir, IterateOptions{Stderr: io.Discard, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r.Error)
	if want := entry + ":2:13: Unexpected token ';'"; !r.RuntimeError || !strings.Contains(string(b), want) {
		t.Errorf("iterate: runtimeError %t, error %s; want it to name %q", r.RuntimeError, b, want)
	}
}

// A process whose entry is fine but which imports a module with a syntax
// error, directly or through another module, fails iterate with where
// that module's error is; the run's state (what the stop hook shows)
// says the same. A SyntaxError no file holds gets no invented location.
func TestIterateImportSyntaxErrorLocated(t *testing.T) {
	needNode(t)
	broken := "export function helper(x) {\n  const y = 1;\n  const z = ;\n  return x;\n}\n"
	for _, tc := range []struct {
		name  string
		entry string
		files map[string]string
		want  string // after "the process module did not load: ", with WS for the workspace
	}{
		{"direct", "import { helper } from './lib/helper.mjs';\nexport async function process(inputs, ctx) { return helper(inputs); }\n",
			map[string]string{"lib/helper.mjs": broken}, "WS/lib/helper.mjs:3:13: Unexpected token ';'"},
		{"nested", "import { b } from './b.mjs';\nexport async function process(inputs, ctx) { return b(); }\n",
			map[string]string{"b.mjs": "export { helper as b } from './lib/c.mjs';\n", "lib/c.mjs": broken}, "WS/lib/c.mjs:3:13: Unexpected token ';'"},
		{"not in a file", "JSON.parse('{');\nexport async function process(inputs, ctx) { return 1; }\n",
			nil, "Expected property name or '}' in JSON at position 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, entry := newRun(t, tc.entry, "")
			ws := filepath.Dir(entry)
			for name, src := range tc.files {
				p := filepath.Join(ws, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Iterate(context.Background(), dir, IterateOptions{Stderr: io.Discard, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var e struct{ Message string }
			if err := json.Unmarshal(r.Error, &e); err != nil {
				t.Fatal(err)
			}
			want := "the process module did not load: " + strings.ReplaceAll(tc.want, "WS", ws)
			if !r.RuntimeError || e.Message != want {
				t.Errorf("iterate: runtimeError %t, message %q; want %q", r.RuntimeError, e.Message, want)
			}
			s, err := LoadSummary(dir)
			if err != nil {
				t.Fatal(err)
			}
			if s.RuntimeError != want {
				t.Errorf("the run's runtime error is %q, want %q", s.RuntimeError, want)
			}
		})
	}
}

// Effects get the SDK's invocation keys (processId:stepId:taskId), and a
// run journaled under sitter's earlier keys (task, label, argument shape,
// occurrence) goes on where it was.
func TestInvocationKeys(t *testing.T) {
	needNode(t)
	dir, _ := newRun(t, twoSteps, `{"target": "all"}`)
	shape := sha256Hex(`{"target":string}`)[:16]
	legacy := []NewEffect{{Key: "p:build::" + shape + ":1", TaskID: "build", Kind: "shell", Label: "Build", Args: json.RawMessage(`{"target":"all"}`)}}
	es, err := RequestEffects(context.Background(), dir, legacy)
	if err != nil {
		t.Fatal(err)
	}
	postOK(t, dir, es[0].EffectID, `{"out": "bin"}`)
	r := iterate(t, dir)
	if len(r.NextActions) != 1 || r.NextActions[0].TaskID != "review" {
		t.Fatalf("the legacy effect was not found again: %+v", r.NextActions)
	}
	if got := r.NextActions[0].InvocationKey; got != "p:S000002:review" {
		t.Errorf("new effect key %q, want the SDK's p:S000002:review", got)
	}
}

// Posted errors are stored in the SDK's shape.
func TestSerializeEffectError(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":"Boom","message":"m","stack":"s","data":{"x":1},"extra":2}`: `{"name":"Boom","message":"m","stack":"s","data":{"x":1}}`,
		`{"name":null}`:   `{"name":"Error","message":"Task failed"}`,
		`{"message":"m"}`: `{"name":"Object","message":"{\"message\":\"m\"}","data":{"message":"m"}}`,
		`[1, 2]`:          `{"name":"Array","message":"[1,2]","data":[1,2]}`,
		`"exit 1"`:        `{"name":"Error","message":"exit 1"}`,
		`42`:              `{"name":"Error","message":"42"}`,
	} {
		got, err := serializeEffectError(json.RawMessage(in))
		if err != nil || string(got) != want {
			t.Errorf("%s: %s %v, want %s", in, got, err, want)
		}
	}
	if _, err := serializeEffectError(json.RawMessage(`{`)); err == nil {
		t.Error("invalid JSON was taken")
	}
}
