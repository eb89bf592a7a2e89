//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
	"sitter.dev/sitter/internal/natsproc"
)

var (
	natsOnce sync.Once
	natsBin  string
	natsErr  error
)

// natsServer starts a nats-server process built from the Go module (as
// make chaos does: internal/natsproc; a warm Go build cache makes the
// build take seconds) on a loopback port, its store in a temp dir.
func natsServer(t *testing.T) *natsproc.Server {
	t.Helper()
	natsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sitter-e2e-nats-")
		if err != nil {
			natsErr = err
			return
		}
		natsBin, natsErr = natsproc.Build(dir)
	})
	if natsErr != nil {
		t.Fatal(natsErr)
	}
	s, err := natsproc.Start(natsBin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// natsLoopHarnesses are the harnesses TestBabysitLoopNATS walks: those
// whose stop hook is native (it blocks a stop itself, no bridge).
var natsLoopHarnesses = []string{"claude-code", "codex"}

// TestBabysitLoopNATS: the babysitter loop of TestBabysitLoop with the
// run in a shared store. The user exports SITTER_STORE before starting
// the harness (docs/store.md), the agent follows the skill as written,
// and the stop hook drives the run in the store: nothing of the run is
// written to the project. Then "machine B", with none of the first
// machine's files, exports the run from the store and reads it.
func TestBabysitLoopNATS(t *testing.T) {
	srv := natsServer(t)
	for _, h := range natsLoopHarnesses {
		t.Run(h, func(t *testing.T) {
			tmp, project, home := projectHome(t)
			var guides []string
			var runID string
			llm := startLLM(t, scriptedAgent(agentOptions{process: babysitProcess, processID: "demo", guides: &guides, runID: &runID}))
			r := babysitRun(t, h, llm, project, home, babysitPrompt, "SITTER_STORE="+srv.URL)
			if r.err != nil {
				t.Errorf("%s: %v\n%s\n%s", h, r.err, r.stdout, r.stderr)
			}
			src := runSource{project: project, store: srv.URL, runID: &runID}
			checkLoop(t, h, llm, src, home, guides)
			if !llm.Any(func(q *llmscript.Request) bool {
				return q.Contains("Runs live in the shared store that $SITTER_STORE names")
			}) {
				t.Errorf("the guide the agent loaded does not say that its runs live in the store")
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				return
			}
			// Machine B: another home (so another store cache), no project.
			homeB, to := filepath.Join(tmp, "home-b"), filepath.Join(tmp, "exported")
			os.MkdirAll(homeB, 0o755)
			cmd := exec.Command(sitter(t), "run", "export", runID, "--to", to, "--store", srv.URL, "--json")
			cmd.Env = baseEnv(t, homeB)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sitter run export: %v\n%s", err, out)
			}
			want := types(src.journal(t, home))
			if got := types(sitterEvents(t, homeB, filepath.Join(to, runID))); !slices.Equal(got, want) {
				t.Errorf("the exported run's journal is\n%v\nwant the store's\n%v", got, want)
			}
		})
	}
}

// TestBabysitLoopNATSSelfDriven: the agent drives the loop on its own as
// the guide's step 4 says, with SITTER_STORE set: it names the run by the
// runDir run create printed (this machine's copy of the stored run) to
// iterate and post, and ends its turn only with the completion proof, so
// the stop hook never has to block.
func TestBabysitLoopNATSSelfDriven(t *testing.T) {
	srv := natsServer(t)
	_, project, home := projectHome(t)
	var guides []string
	var runID string
	llm := startLLM(t, scriptedAgent(agentOptions{process: babysitProcess, processID: "demo", guides: &guides, runID: &runID, selfDrive: true}))
	r := babysitRun(t, "claude-code", llm, project, home, babysitPrompt, "SITTER_STORE="+srv.URL)
	if r.err != nil {
		t.Errorf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	evs := runSource{project: project, store: srv.URL, runID: &runID}.journal(t, home)
	count := map[string]int{}
	for _, e := range evs {
		count[e.Type]++
		if e.Type == "STOP_HOOK_INVOKED" && e.Data["decision"] == "block" {
			t.Errorf("the stop hook had to block: %v", e.Data["reason"])
		}
	}
	if count["RUN_COMPLETED"] != 1 || count["EFFECT_RESOLVED"] != 2 {
		t.Errorf("journal in the store: %v; want RUN_COMPLETED 1 and both effects resolved", count)
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != "STOP_HOOK_INVOKED" || evs[len(evs)-1].Data["row"] != "completion-proof" {
		t.Errorf("the session did not end on the completion proof: %v", types(evs))
	}
	if b, err := os.ReadFile(filepath.Join(project, "built.txt")); err != nil || strings.TrimSpace(string(b)) != "built" {
		t.Errorf("the shell effect did not run in the project: built.txt = %q, %v", b, err)
	}
	if t.Failed() {
		for i, q := range llm.Requests() {
			t.Logf("request %d last input: %q", i, q.LastInput())
		}
		// What the hook calls did (the stop handler's exit and stderr).
		logHookTrail(t, home)
	}
}

func types(evs []journalEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}
