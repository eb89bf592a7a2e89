package host

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/runtime/journal"
)

// sdkDir is where the npm SDK is installed for comparison, never inside
// the repository: $SITTER_SDK_DIR, else ~/.cache/sitter-npm/babysitter
// (npm install --prefix "$dir" @a5c-ai/babysitter-sdk).
func sdkDir() string {
	if d := os.Getenv("SITTER_SDK_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "sitter-npm", "babysitter")
}

// sideProcess is the comparison process: one shell effect, one agent
// effect, then completion.
const sideProcess = `import { defineTask } from '@a5c-ai/babysitter-sdk';
export const build = defineTask('build', (args) => ({ kind: 'shell', title: 'Build', shell: { command: 'echo ' + args.target } }));
export const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { name: 'reviewer', prompt: { task: 'review ' + args.out } } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, { target: 'all' });
  const r = await ctx.task(review, { out: b.out });
  return { b, r };
}
`

type cycleTrace struct {
	Types []string
	Kinds []string
	Dir   string
	Proof string
}

// drive runs the comparison process through a CLI: create, then iterate
// and post until it completes. cli maps a verb (run:create, …) to argv.
func drive(t *testing.T, ws string, cli func(verb string, args ...string) *exec.Cmd) cycleTrace {
	t.Helper()
	runJSON := func(v any, verb string, args ...string) {
		t.Helper()
		cmd := cli(verb, args...)
		cmd.Dir = ws
		out, err := cmd.Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("%s %v: %v\n%s%s", verb, args, err, out, msg)
		}
		if v != nil {
			if err := json.Unmarshal(out, v); err != nil {
				t.Fatalf("%s: %v\n%s", verb, err, out)
			}
		}
	}
	var created struct{ RunDir string }
	runJSON(&created, "run:create", "--process-id", "side", "--entry", "./proc.mjs#process", "--runs-dir", "runs", "--json")
	var tr cycleTrace
	tr.Dir = created.RunDir
	values := []string{`{"out":"bin"}`, `"LGTM"`}
	for i := 0; i < 5; i++ {
		var it struct {
			Status          string
			CompletionProof string
			NextActions     []struct{ EffectID, Kind string }
		}
		runJSON(&it, "run:iterate", created.RunDir, "--json")
		if it.Status == "completed" {
			tr.Proof = it.CompletionProof
			break
		}
		if len(it.NextActions) != 1 || i >= len(values) {
			t.Fatalf("iteration %d: %+v", i, it)
		}
		tr.Kinds = append(tr.Kinds, it.NextActions[0].Kind)
		runJSON(nil, "task:post", created.RunDir, it.NextActions[0].EffectID, "--status", "ok", "--value-inline", values[i], "--json")
	}
	j, err := journal.Load(filepath.Join(created.RunDir, "journal"))
	if err != nil {
		t.Fatalf("journal of %s: %v", created.RunDir, err)
	}
	for _, e := range j.Events {
		tr.Types = append(tr.Types, e.Type)
	}
	return tr
}

// Side by side with the npm SDK: the same process gives the same journal
// event types and effect kinds, sitter verifies the SDK's journal, and
// the SDK's own run:status and task:list read sitter's run directory.
func TestSideBySideWithSDK(t *testing.T) {
	sdk := sdkDir()
	bin := filepath.Join(sdk, "node_modules", ".bin", "babysitter")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("the npm SDK is not installed in %s (install it with: npm install --prefix %s @a5c-ai/babysitter-sdk; or set SITTER_SDK_DIR)", sdk, sdk)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	home := t.TempDir()
	cache := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "SITTER_CACHE_DIR="+cache, "SITTER_TEST_MAIN=1")

	sdkWS, sitterWS := t.TempDir(), t.TempDir()
	for _, ws := range []string{sdkWS, sitterWS} {
		if err := os.WriteFile(filepath.Join(ws, "proc.mjs"), []byte(sideProcess), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The SDK resolves its own import from node_modules; sitter answers it.
	if err := os.Symlink(filepath.Join(sdk, "node_modules"), filepath.Join(sdkWS, "node_modules")); err != nil {
		t.Fatal(err)
	}
	sdkCLI := func(verb string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{verb}, args...)...)
		cmd.Env = env
		return cmd
	}
	sitterCLI := func(verb string, args ...string) *exec.Cmd {
		v := map[string][]string{"run:create": {"run", "create"}, "run:iterate": {"run", "iterate"}, "task:post": {"task", "post"}}[verb]
		cmd := exec.Command(os.Args[0], append(v, args...)...)
		cmd.Env = env
		return cmd
	}
	want := drive(t, sdkWS, sdkCLI)
	got := drive(t, sitterWS, sitterCLI)
	if diff := cmp.Diff(want.Types, got.Types); diff != "" {
		t.Errorf("journal event types (-sdk +sitter):\n%s", diff)
	}
	if diff := cmp.Diff(want.Kinds, got.Kinds); diff != "" {
		t.Errorf("effect kinds (-sdk +sitter):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shell", "agent"}, got.Kinds); diff != "" {
		t.Errorf("effect kinds (-want +got):\n%s", diff)
	}

	// babysitter run:status reads sitter's run directory.
	var status struct {
		State           string
		CompletionProof string
		LastEvent       struct{ Type string }
	}
	out, err := sdkCLI("run:status", got.Dir, "--json").Output()
	if err != nil {
		t.Fatalf("babysitter run:status %s: %v\n%s", got.Dir, err, out)
	}
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if status.State != "completed" || status.CompletionProof != got.Proof || status.LastEvent.Type != journal.RunCompleted {
		t.Errorf("babysitter run:status of sitter's run: %s", out)
	}
	var list struct {
		Tasks []struct{ Kind, Status string }
	}
	out, err = sdkCLI("task:list", got.Dir, "--json").Output()
	if err != nil || json.Unmarshal(out, &list) != nil {
		t.Fatalf("babysitter task:list %s: %v\n%s", got.Dir, err, out)
	}
	if len(list.Tasks) != 2 || list.Tasks[0].Status != "resolved_ok" || list.Tasks[1].Status != "resolved_ok" {
		t.Errorf("babysitter task:list of sitter's run: %s", out)
	}
}
