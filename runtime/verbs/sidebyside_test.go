package verbs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sdkVersion is the npm SDK whose CLI sitter's run and task verbs match.
const sdkVersion = "0.0.187"

// sdkDir is where the npm SDK is installed for comparison, never inside
// the repository: $SITTER_SDK_DIR, else ~/.cache/sitter-npm/babysitter.
func sdkDir() string {
	if d := os.Getenv("SITTER_SDK_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "sitter-npm", "babysitter")
}

// needSDK returns the SDK's CLI. Without it (or without node) the test
// skips, saying how to install it, except in CI (CI set), where a
// comparison that silently does not run is a failure.
func needSDK(t *testing.T) string {
	t.Helper()
	sdk := sdkDir()
	bin := filepath.Join(sdk, "node_modules", ".bin", "babysitter")
	why := ""
	if _, err := exec.LookPath("node"); err != nil {
		why = "node is not on PATH"
	} else if _, err := os.Stat(bin); err != nil {
		why = fmt.Sprintf("the npm SDK is not installed in %s (npm install --prefix %s @a5c-ai/babysitter-sdk@%s, or set SITTER_SDK_DIR)", sdk, sdk, sdkVersion)
	}
	switch {
	case why == "":
		return bin
	case os.Getenv("CI") != "":
		t.Fatalf("CI needs the side-by-side comparison: %s", why)
	default:
		t.Skip(why)
	}
	return ""
}

// cli runs one verb, named as the SDK names it (run:create, task:post …).
type cli struct {
	name string
	cmd  func(verb string, args ...string) *exec.Cmd
}

// sideEnv is a clean environment for both CLIs: no session, state, runs
// dir or SDK setting of the caller's leaks in.
func sideEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SITTER_") || strings.HasPrefix(k, "BABYSITTER_") || strings.HasPrefix(k, "CLAUDE") || k == "XDG_STATE_HOME" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+t.TempDir(), "SITTER_STATE_DIR="+t.TempDir(), "SITTER_CACHE_DIR="+t.TempDir())
	// Clipped: parallel subtests append to it, and an append into spare
	// capacity would let one command's variable overwrite another's.
	return slices.Clip(env)
}

func newCLIs(t *testing.T, bin string) (sdk, sitter cli) {
	env := sideEnv(t)
	sdk = cli{"sdk", func(verb string, args ...string) *exec.Cmd {
		if verb == "task:show" {
			// The SDK prints a task's definition and result only when
			// secrets may be logged; sitter always prints them.
			args = append(args, "--verbose")
		}
		cmd := exec.Command(bin, append([]string{verb}, args...)...)
		cmd.Env = append(env, "BABYSITTER_ALLOW_SECRET_LOGS=true")
		return cmd
	}}
	sitter = cli{"sitter", func(verb string, args ...string) *exec.Cmd {
		noun, v, _ := strings.Cut(verb, ":")
		cmd := exec.Command(os.Args[0], append([]string{noun, v}, args...)...)
		cmd.Env = append(env, "SITTER_TEST_MAIN=1")
		return cmd
	}}
	return sdk, sitter
}

// step is one CLI call: its exit code, stdout (parsed when JSON) and stderr.
type step struct {
	Verb   string
	Code   int
	Stdout any
	Stderr string
}

func (c cli) run(t *testing.T, ws, verb string, args ...string) step {
	t.Helper()
	cmd := c.cmd(verb, args...)
	cmd.Dir = ws
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	s := step{Verb: verb, Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		s.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %s %v: %v", c.name, verb, args, err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &s.Stdout); err != nil {
		s.Stdout = stdout.String()
	}
	return s
}

// sideCase is a process both CLIs drive to its end.
type sideCase struct {
	name   string
	proc   string
	inputs func() string // the inputs file, computed once per CLI; nil for none
	// post gives the result flags of an effect of a kind.
	post func(kind string) []string
	// timed: the process depends on the clock (a sleep until a time
	// from inputs); when the CLIs take different paths, one of them may
	// have reached the sleep after its time on a loaded machine, and the
	// case is driven again (at most timedTries times).
	timed bool
}

const timedTries = 3

func okValue(v string) func(string) []string {
	return func(string) []string { return []string{"--status", "ok", "--value-inline", v} }
}

var sideCases = []sideCase{{
	name: "shell and agent",
	proc: `import { defineTask } from '@a5c-ai/babysitter-sdk';
export const build = defineTask('build', (args) => ({ kind: 'shell', title: 'Build', shell: { command: 'echo ' + args.target } }));
export const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { name: 'reviewer', prompt: { task: 'review ' + args.out } } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, { target: inputs.target });
  const r = await ctx.task(review, { out: b.out });
  return { b, r };
}
`,
	inputs: func() string { return `{"target": "all"}` },
	post: func(kind string) []string {
		if kind == "shell" {
			return []string{"--status", "ok", "--value-inline", `{"out": "bin"}`}
		}
		return []string{"--status", "ok", "--value-inline", `"LGTM"`}
	},
}, {
	name: "breakpoint",
	proc: `export async function process(inputs, ctx) {
  const answer = await ctx.breakpoint({ question: 'Ship?' }, { label: 'approve' });
  return answer.approved ? 'shipped' : 'held';
}
`,
	post: okValue(`{"approved": true}`),
}, {
	name: "sleep until the near future",
	proc: `export async function process(inputs, ctx) {
  await ctx.sleepUntil(inputs.until);
  return 'awake';
}
`,
	// Late enough that the first iterate asks for the sleep, even on a
	// busy machine (an SDK call takes up to a second or two, several when the machine is loaded); the driver
	// waits for it, then posts its result as the SDK's harness does.
	inputs: func() string {
		return fmt.Sprintf(`{"until": %q}`, time.Now().Add(20*time.Second).UTC().Format(time.RFC3339Nano))
	},
	timed: true,
	post:  okValue(`{"slept": true}`),
}, {
	name: "sleep until the past",
	proc: `export async function process(inputs, ctx) {
  await ctx.sleepUntil('2000-01-01T00:00:00.000Z');
  return 'awake';
}
`,
}, {
	name: "parallel",
	proc: `import { defineTask } from '@a5c-ai/babysitter-sdk';
export const lint = defineTask('lint', (args) => ({ kind: 'shell', title: 'Lint ' + args.dir, shell: { command: 'lint ' + args.dir } }));
export const doc = defineTask('doc', () => ({ kind: 'agent', title: 'Docs', labels: ['writing', 'docs'], agent: { name: 'writer', prompt: { task: 'document' } } }));
export async function process(inputs, ctx) {
  const [a, b, c] = await ctx.parallel.all([() => ctx.task(lint, { dir: 'src' }), () => ctx.task(lint, { dir: 'test' }), () => ctx.task(doc, {})]);
  return { a, b, c };
}
`,
	post: okValue(`"done"`),
}, {
	name: "failing task",
	proc: `import { defineTask } from '@a5c-ai/babysitter-sdk';
export const deploy = defineTask('deploy', () => ({ kind: 'shell', title: 'Deploy', shell: { command: 'false' } }));
export async function process(inputs, ctx) {
  await ctx.task(deploy, {});
  return 'deployed';
}
`,
	post: func(string) []string { return []string{"--status", "error"} },
}}

// workspace makes a directory with the process as proc.mjs (and its
// inputs); the SDK resolves its own import through node_modules, sitter
// answers it itself.
func workspace(t *testing.T, proc, inputs string) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "proc.mjs"), []byte(proc), 0o644); err != nil {
		t.Fatal(err)
	}
	if inputs != "" {
		if err := os.WriteFile(filepath.Join(ws, "inputs.json"), []byte(inputs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(sdkDir(), "node_modules"), filepath.Join(ws, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return ws
}

// create makes a workspace and a run of the case's process in it.
func (c sideCase) create(t *testing.T, cl cli) step {
	t.Helper()
	inputs := ""
	if c.inputs != nil {
		inputs = c.inputs()
	}
	ws := workspace(t, c.proc, inputs)
	args := []string{"--process-id", "side", "--entry", "./proc.mjs#process", "--runs-dir", "runs", "--json"}
	if inputs != "" {
		args = append(args, "--inputs", "inputs.json")
	}
	return cl.run(t, ws, "run:create", args...)
}

// drive runs a case through one CLI: create, then iterate, status, list,
// and show and post each effect, until the run ends. It returns every
// step and the run directory.
func (c sideCase) drive(t *testing.T, cl cli) ([]step, string) {
	t.Helper()
	steps := []step{c.create(t, cl)}
	created, _ := steps[0].Stdout.(map[string]any)
	dir, _ := created["runDir"].(string)
	if dir == "" {
		t.Fatalf("%s run:create: %+v", cl.name, steps[0])
	}
	ws := wsOf(dir)
	steps = append(steps, cl.run(t, ws, "run:status", dir, "--json"))
	for i := 0; ; i++ {
		it := cl.run(t, ws, "run:iterate", dir, "--json")
		steps = append(steps, it, cl.run(t, ws, "run:status", dir, "--json"), cl.run(t, ws, "task:list", dir, "--json"))
		res, _ := it.Stdout.(map[string]any)
		if res["status"] != "waiting" || i == 5 {
			break
		}
		acts, _ := res["nextActions"].([]any)
		for _, a := range acts {
			act, _ := a.(map[string]any)
			steps = append(steps, c.resolve(t, cl, dir, act)...)
		}
	}
	return steps, dir
}

// resolve shows an effect and posts its result, once a sleep's time has
// come.
func (c sideCase) resolve(t *testing.T, cl cli, dir string, act map[string]any) []step {
	t.Helper()
	id, _ := act["effectId"].(string)
	kind, _ := act["kind"].(string)
	show := cl.run(t, wsOf(dir), "task:show", dir, id, "--json")
	waitSleep(act)
	args := append([]string{dir, id}, append(c.post(kind), "--json")...)
	return []step{show, cl.run(t, wsOf(dir), "task:post", args...)}
}

// waitSleep waits until a sleep effect's time has come.
func waitSleep(act map[string]any) {
	hints, _ := act["schedulerHints"].(map[string]any)
	if ms, ok := hints["sleepUntilEpochMs"].(float64); ok {
		time.Sleep(time.Until(time.UnixMilli(int64(ms))) + 50*time.Millisecond)
	}
}

// sitterOnly are the fields sitter prints that the SDK does not, per
// verb (see the comments on the JSON types in run.go and task.go).
var sitterOnly = map[string][]string{
	"run:iterate": {"output", "error", "haltReason", "runtimeError", "processCodeChanged", "logs"},
	"run:status":  {"runId", "processId", "events", "partialWrites"},
	"task:post":   {"effectId", "seq"},
}

// Stderr that differs by design: sitter's run create may say that the run
// is bound to no session.
var stderrNotCompared = map[string]bool{"run:create": true}

// verboseRE is a line the SDK's --verbose adds (see newCLIs).
var verboseRE = regexp.MustCompile(`(?m)^\[[a-z-]+:[a-z-]+\] verbose .*\n`)

var (
	ulidRE = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	hexRE  = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// normalizer replaces the values that legitimately differ between two
// runs by their shape: each ULID by the order it was first seen in (so
// that the same id in two places stays the same), timestamps, the
// completion proof, stack traces, epoch times, the workspace path.
type normalizer struct {
	ws    string
	ulids map[string]string
}

func (n *normalizer) value(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = n.value(k, x[k])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.value(key, e)
		}
		return out
	case float64:
		if strings.HasSuffix(key, "EpochMs") {
			return "<epoch-ms>"
		}
	case string:
		return n.text(key, x)
	}
	return v
}

func (n *normalizer) text(key, s string) string {
	switch {
	case key == "stack":
		return "<stack>"
	case key == "completionProof" && hexRE.MatchString(s):
		return "<proof>"
	}
	s = strings.ReplaceAll(s, n.ws, "<WS>")
	s = timeRE.ReplaceAllString(s, "<time>")
	return ulidRE.ReplaceAllStringFunc(s, func(u string) string {
		if n.ulids[u] == "" {
			n.ulids[u] = fmt.Sprintf("<ulid-%d>", len(n.ulids)+1)
		}
		return n.ulids[u]
	})
}

// normalize makes the steps of one CLI comparable; sitter's own fields
// are dropped from sitter's steps.
func normalize(steps []step, ws string, sitter bool) []step {
	n := &normalizer{ws: ws, ulids: map[string]string{}}
	out := make([]step, len(steps))
	for i, s := range steps {
		if m, ok := s.Stdout.(map[string]any); ok && sitter {
			m = copyMap(m)
			for _, k := range sitterOnly[s.Verb] {
				delete(m, k)
			}
			s.Stdout = m
		}
		s.Stdout = n.value("", s.Stdout)
		s.Stderr = n.text("", verboseRE.ReplaceAllString(s.Stderr, ""))
		if stderrNotCompared[s.Verb] {
			s.Stderr = ""
		}
		out[i] = s
	}
	return out
}

func copyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// wsOf is the workspace of a run directory (<ws>/runs/<id>).
func wsOf(runDir string) string { return filepath.Dir(filepath.Dir(runDir)) }

func verbs(ss []step) (v []string) {
	for _, s := range ss {
		v = append(v, s.Verb)
	}
	return v
}

// samePath says whether two drives ran the same verbs in the same order.
func samePath(a, b []step) bool { return slices.Equal(verbs(a), verbs(b)) }

func compareSteps(t *testing.T, sdk, sitter []step, sdkWS, sitterWS string) {
	t.Helper()
	if diff := cmp.Diff(verbs(sdk), verbs(sitter)); diff != "" {
		t.Fatalf("the CLIs took different paths (-sdk +sitter):\n%s", diff)
	}
	want, got := normalize(sdk, sdkWS, false), normalize(sitter, sitterWS, true)
	for i := range want {
		if diff := cmp.Diff(want[i], got[i]); diff != "" {
			t.Errorf("step %d (%s) differs (-sdk +sitter):\n%s", i+1, want[i].Verb, diff)
		}
	}
}

// Side by side with the npm SDK: every process is driven through both
// CLIs, and every field they print (stdout JSON, recursively, stderr and
// exit code) is the same, values that legitimately differ compared by
// shape. Then each CLI reads the other's run directory.
func TestSideBySideWithSDK(t *testing.T) {
	bin := needSDK(t)
	sdk, sitter := newCLIs(t, bin)
	for _, c := range sideCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.post == nil {
				c.post = okValue("null")
			}
			want, sdkDir := c.drive(t, sdk)
			got, sitterDir := c.drive(t, sitter)
			for try := 1; c.timed && try < timedTries && !samePath(want, got); try++ {
				t.Logf("try %d: the CLIs took different paths through a timed process; driving both again", try)
				want, sdkDir = c.drive(t, sdk)
				got, sitterDir = c.drive(t, sitter)
			}
			compareSteps(t, want, got, wsOf(sdkDir), wsOf(sitterDir))
			crossRead(t, sdk, sitter, sdkDir, sitterDir)
		})
	}
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		sideErrors(t, sdk, sitter)
	})
	t.Run("hand-over", func(t *testing.T) {
		t.Parallel()
		handOver(t, sdk, sitter)
	})
}

// handOver: a run the SDK created is continued by sitter and finished by
// the SDK, which needs the same invocation keys in both.
func handOver(t *testing.T, sdk, sitter cli) {
	c := sideCases[0]
	created, _ := c.create(t, sdk).Stdout.(map[string]any)
	dir, _ := created["runDir"].(string)
	ws := wsOf(dir)
	next := func(cl cli) (status, id, kind string) {
		t.Helper()
		it := cl.run(t, ws, "run:iterate", dir, "--json")
		res, _ := it.Stdout.(map[string]any)
		status, _ = res["status"].(string)
		if acts, _ := res["nextActions"].([]any); len(acts) == 1 {
			a := acts[0].(map[string]any)
			id, kind = a["effectId"].(string), a["kind"].(string)
		}
		return status, id, kind
	}
	var kinds []string
	for _, cl := range []cli{sdk, sitter} {
		status, id, kind := next(cl)
		if status != "waiting" || id == "" {
			t.Fatalf("%s iterate of the handed-over run: %s %q", cl.name, status, id)
		}
		kinds = append(kinds, kind)
		if s := cl.run(t, ws, "task:post", append([]string{dir, id}, append(c.post(kind), "--json")...)...); s.Code != 0 {
			t.Fatalf("%s task:post: %+v", cl.name, s)
		}
	}
	if diff := cmp.Diff([]string{"shell", "agent"}, kinds); diff != "" {
		t.Errorf("effects of the handed-over run (-want +got):\n%s", diff)
	}
	if status, _, _ := next(sdk); status != "completed" {
		t.Errorf("the SDK finished the run sitter continued as %q", status)
	}
}

// crossRead checks that each CLI's run status and task list of the other
// CLI's run directory print what that CLI printed of its own.
func crossRead(t *testing.T, sdk, sitter cli, sdkDir, sitterDir string) {
	t.Helper()
	for _, verb := range []string{"run:status", "task:list"} {
		for _, dir := range []string{sdkDir, sitterDir} {
			ws := wsOf(dir)
			a := sdk.run(t, ws, verb, dir, "--json")
			b := sitter.run(t, ws, verb, dir, "--json")
			compareSteps(t, []step{a}, []step{b}, ws, ws)
		}
	}
}

// sideErrors compares the failures: a run directory that does not exist,
// an effect the run does not know, flags task post refuses.
func sideErrors(t *testing.T, sdk, sitter cli) {
	type errCase struct {
		name string
		verb string
		args func(runDir, effectID string) []string
	}
	cases := []errCase{
		{"iterate of a missing run dir", "run:iterate", func(string, string) []string { return []string{"runs/nope", "--json"} }},
		{"iterate of a missing run id", "run:iterate", func(string, string) []string { return []string{"nope", "--runs-dir", "runs", "--json"} }},
		{"status of a missing run dir", "run:status", func(string, string) []string { return []string{"runs/nope", "--json"} }},
		{"status of a missing run id", "run:status", func(string, string) []string { return []string{"nope", "--runs-dir", "runs"} }},
		{"post of an unknown effect", "task:post", func(dir, _ string) []string {
			return []string{dir, "01KUNKNQWN0000000000000000", "--status", "ok", "--value-inline", "1", "--json"}
		}},
		{"post without --status", "task:post", func(dir, id string) []string { return []string{dir, id, "--json"} }},
		{"post ok without a value", "task:post", func(dir, id string) []string { return []string{dir, id, "--status", "ok", "--json"} }},
		{"post error with an inline value", "task:post", func(dir, id string) []string {
			return []string{dir, id, "--status", "error", "--value-inline", "1", "--json"}
		}},
		{"show of an unknown effect", "task:show", func(dir, _ string) []string { return []string{dir, "01KUNKNQWN0000000000000000", "--json"} }},
	}
	// One waiting run per CLI, for the cases that need a run.
	setup := func(cl cli) (dir, effectID string) {
		created, _ := sideCases[0].create(t, cl).Stdout.(map[string]any)
		dir, _ = created["runDir"].(string)
		it, _ := cl.run(t, wsOf(dir), "run:iterate", dir, "--json").Stdout.(map[string]any)
		if acts, _ := it["nextActions"].([]any); len(acts) > 0 {
			effectID, _ = acts[0].(map[string]any)["effectId"].(string)
		}
		if effectID == "" {
			t.Fatalf("%s: no pending effect in %s", cl.name, dir)
		}
		return dir, effectID
	}
	sdkDir, sdkEffect := setup(sdk)
	sitterDir, sitterEffect := setup(sitter)
	for _, ec := range cases {
		t.Run(ec.name, func(t *testing.T) {
			want := sdk.run(t, wsOf(sdkDir), ec.verb, ec.args(sdkDir, sdkEffect)...)
			got := sitter.run(t, wsOf(sitterDir), ec.verb, ec.args(sitterDir, sitterEffect)...)
			if want.Code == 0 {
				t.Errorf("the SDK succeeded: %+v", want)
			}
			want.Verb, got.Verb = "error", "error"
			compareSteps(t, []step{want}, []step{got}, wsOf(sdkDir), wsOf(sitterDir))
		})
	}
}

// `run create --entry f.mjs#typo` fails with the exports the module has,
// exit code 1 as the SDK's run:create fails. (The SDK itself takes the
// typo when the module also exports `process`, and runs that: sitter
// refuses, since the user named another export.)
func TestRunCreateEntryTypo(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	ws := t.TempDir()
	src := `export const build = { id: 'build' };
export async function process(inputs, ctx) { return 1; }
`
	os.WriteFile(filepath.Join(ws, "f.mjs"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(ws, "g.mjs"), []byte("export const build = {};\n"), 0o644)
	env := sideEnv(t)
	create := func(entry string) selfRun {
		return runSelf(ws, env, "run", "create", "--process-id", "p", "--entry", entry, "--runs-dir", "runs", "--json")
	}
	for _, tc := range []struct{ entry, want string }{
		{"f.mjs#typo", `export "typo" not found in f.mjs; it exports: build, process`},
		{"f.mjs#build", `export "build" of f.mjs is a object, not a function; it exports: build, process`},
		{"g.mjs", `g.mjs exports no process function (neither "process" nor a default export); it exports: build`},
		{"nope.mjs#process", "process entry file not found"},
	} {
		got := create(tc.entry)
		if got.Code != 1 || got.Stdout != "" || !strings.Contains(got.Stderr, tc.want) {
			t.Errorf("run create --entry %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.entry, got.Code, got.Stdout, got.Stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, "runs")); len(entries) != 0 {
		t.Errorf("a refused entry left %d run(s)", len(entries))
	}
	if got := create("f.mjs"); got.Code != 0 {
		t.Errorf("run create --entry f.mjs (the process export): exit %d: %s", got.Code, got.Stderr)
	}
	// The SDK's exit code for an export that is not a process function.
	if bin := filepath.Join(sdkDir(), "node_modules", ".bin", "babysitter"); fileExists(bin) {
		cmd := exec.Command(bin, "run:create", "--process-id", "p", "--entry", "g.mjs#typo", "--runs-dir", "runs", "--json")
		cmd.Dir, cmd.Env = ws, env
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("the SDK's run:create of a missing export: %v, want exit code 1", err)
		}
	}
}

// selfRun is what a sitter verb run by runSelf answered.
type selfRun struct {
	Code           int
	Stdout, Stderr string
}

// runSelf runs a sitter verb in dir as this test binary (SITTER_TEST_MAIN),
// with env.
func runSelf(dir string, env []string, args ...string) selfRun {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir, cmd.Env = dir, append(env, "SITTER_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	s := selfRun{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		s.Code = ee.ExitCode()
	}
	return s
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestRunShowsProcessError: a process file that cannot run leaves the run
// created (the SDK's status, nothing ran), and run list and run status
// --json say why, until an iterate runs it.
func TestRunShowsProcessError(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "p.mjs"), []byte("export async function process( {\n"), 0o644)
	env := sideEnv(t)
	sitter := func(args ...string) selfRun { return runSelf(ws, env, args...) }
	sitter("run", "create", "--process-id", "p", "--entry", "p.mjs#process", "--run-id", "S1")
	if got := sitter("run", "iterate", "S1", "--json"); got.Code != 1 || !strings.Contains(got.Stdout, `"reason": "runtime-error"`) {
		t.Fatalf("iterate: exit %d, %s %s", got.Code, got.Stdout, got.Stderr)
	}
	if got := sitter("run", "list"); !strings.Contains(got.Stdout, "created") || !strings.Contains(got.Stdout, "process error: ") {
		t.Errorf("run list: %q, want the run created, with its process error", got.Stdout)
	}
	if got := sitter("run", "status", "S1", "--json"); !strings.Contains(got.Stdout, `"processError":"`) {
		t.Errorf("run status --json: %q, want processError", got.Stdout)
	}
	// Fixed, the run runs: the error is gone.
	os.WriteFile(filepath.Join(ws, "p.mjs"), []byte("export async function process() { return 1; }\n"), 0o644)
	sitter("run", "iterate", "S1", "--json")
	if got := sitter("run", "list", "--json"); strings.Contains(got.Stdout, "processError") || !strings.Contains(got.Stdout, `"status": "completed"`) {
		t.Errorf("run list after the fix: %q", got.Stdout)
	}
}
