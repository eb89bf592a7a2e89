//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
	gentranscript "sitter.dev/sitter/generated/transcript"
)

// babysitProcess has a shell effect and an agent effect.
const babysitProcess = `import { defineTask } from '@a5c-ai/babysitter-sdk';
export const build = defineTask('build', () => ({ kind: 'shell', title: 'Build', shell: { command: 'echo built > built.txt' } }));
export const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { prompt: 'Review the build: ' + args.out } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, {});
  const r = await ctx.task(review, { out: 'built.txt' });
  return { b, r };
}
`

// babysitPrompt is what a user types: the skill's name and the task, not
// the session or the harness.
const babysitPrompt = "Use the babysit skill to orchestrate this task as a babysitter run, non-interactively: build the project, then review the build. BABYSIT-TASK"

// babysitBreakpointProcess asks a human between the two effects.
const babysitBreakpointProcess = `import { defineTask } from '@a5c-ai/babysitter-sdk';
export const build = defineTask('build', () => ({ kind: 'shell', title: 'Build', shell: { command: 'echo built > built.txt' } }));
export const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { prompt: 'Review the build: ' + args.out } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, {});
  const ok = await ctx.breakpoint({ question: 'Ship it?' }, { label: 'approve' });
  const r = await ctx.task(review, { out: 'built.txt' });
  return { b, ok, r };
}
`

// humanApproval marks the human's answer to a breakpoint.
const humanApproval = "APPROVED-BY-HUMAN"

// The commands a stop hook's reason names, as written: a run of a shared
// store is named `<runId> --store 'URL'` (docs/store.md).
var (
	iterateCmdRE = regexp.MustCompile("sitter run iterate (\\S+(?: --store '[^']*')?) --json")
	statusCmdRE  = regexp.MustCompile("sitter run status (\\S+(?: --store '[^']*')?) --json")
)

// babysitAgent is a scripted agent that follows the babysit skill as
// written, one step a turn: it loads the guide, writes the process and
// creates the run (no session or harness flags), then ends its turn; from
// then on it acts only on what the last message tells it: a stop hook's
// reason (iterate, or fetch the proof), an iterate result (execute the
// next effect and post it, or give the completion proof), and ends its
// turn after every post. guides records the guide headers it loaded.
func babysitAgent(process string, guides *[]string) llmscript.Script {
	return scriptedAgent(agentOptions{process: process, processID: "demo", guides: guides})
}

// agentOptions vary the scripted agent: the process and its id, a hook
// before it creates the run, and what it does after posting a result
// (nil: end the turn).
type agentOptions struct {
	process, processID string
	guides             *[]string
	runID              *string // if set, the id run create printed
	// selfDrive: the agent drives the loop itself as the guide's step 4
	// says, naming the run by the runDir run create printed: it iterates
	// right after creating the run and again after every post, and ends
	// its turn only with the completion proof.
	selfDrive    bool
	beforeCreate func()
	afterPost    func() llmscript.Turn
}

var resumeRE = regexp.MustCompile(`resume the babysitter run (\S+)`)

func scriptedAgent(o agentOptions) llmscript.Script {
	b64 := base64.StdEncoding.EncodeToString([]byte(o.process))
	file := ".a5c/processes/" + o.processID + ".mjs"
	create := "mkdir -p .a5c/processes && echo " + b64 + " | base64 -d > " + file + " && " +
		"sitter run create --process-id " + o.processID + " --entry " + file + "#process --json"
	approved := false // the human's answer to a breakpoint came in
	runDir := ""      // selfDrive: the runDir run create printed
	return func(q *llmscript.Request) llmscript.Turn {
		in := q.LastInput()
		if strings.Contains(strings.Join(in, "\n"), humanApproval) {
			approved = true
		}
		if obj := lastJSON(in); obj != nil {
			switch {
			case obj["nextActions"] != nil || obj["completionProof"] != nil && (obj["status"] != nil || obj["state"] != nil):
				return afterIterate(obj, approved, runDir)
			case obj["runId"] != nil && obj["runDir"] != nil && obj["entry"] != nil:
				if o.runID != nil {
					*o.runID, _ = obj["runId"].(string)
				}
				if o.selfDrive {
					runDir, _ = obj["runDir"].(string)
					return llmscript.Turn{Shell: "sitter run iterate " + runDir + " --json"}
				}
				return llmscript.Turn{Text: "The run is created. Ending my turn."}
			case obj["effectId"] != nil || obj["status"] == "ok":
				if o.afterPost != nil {
					return o.afterPost()
				}
				if o.selfDrive {
					return llmscript.Turn{Shell: "sitter run iterate " + runDir + " --json"}
				}
				return llmscript.Turn{Text: "Posted the result. Ending my turn."}
			}
		}
		text := strings.Join(in, "\n")
		switch {
		case strings.Contains(text, "# Babysit: orchestrate a run with sitter ("):
			*o.guides = append(*o.guides, guideHeader(text))
			if o.beforeCreate != nil {
				o.beforeCreate()
			}
			return llmscript.Turn{Shell: create}
		case resumeRE.MatchString(text) && !strings.Contains(text, "is bound to this session ("):
			// The resume command, as written: bind the run to this session.
			return llmscript.Turn{Shell: "sitter session start --run-id " + resumeRE.FindStringSubmatch(text)[1]}
		case statusCmdRE.MatchString(text):
			return llmscript.Turn{Shell: "sitter run status " + statusCmdRE.FindStringSubmatch(text)[1] + " --json"}
		case iterateCmdRE.MatchString(text):
			return llmscript.Turn{Shell: "sitter run iterate " + iterateCmdRE.FindStringSubmatch(text)[1] + " --json"}
		case strings.Contains(text, "BABYSIT-TASK"):
			return llmscript.Turn{Shell: "sitter instructions babysit"}
		}
		return llmscript.Turn{Text: "Nothing to do. Ending my turn."}
	}
}

// afterIterate executes the first next action, or gives the proof; it
// posts to run, else to the run iterate named.
func afterIterate(obj map[string]any, approved bool, run string) llmscript.Turn {
	if p, _ := obj["completionProof"].(string); p != "" && (obj["status"] == "completed" || obj["state"] == "completed") {
		return llmscript.Turn{Text: "The run is complete: built and reviewed. <promise>" + p + "</promise>"}
	}
	acts, _ := obj["nextActions"].([]any)
	if len(acts) == 0 {
		return llmscript.Turn{Text: "Nothing to execute. Ending my turn."}
	}
	a, _ := acts[0].(map[string]any)
	id, _ := a["effectId"].(string)
	// iterate names its run in metadata.runId (the SDK's shape).
	meta, _ := obj["metadata"].(map[string]any)
	runDir, _ := meta["runId"].(string)
	if runDir == "" {
		runDir, _ = obj["runId"].(string)
	}
	if run != "" {
		runDir = run
	}
	post := "sitter task post " + runDir + " " + id + " --status ok --json --value-inline "
	switch a["kind"] {
	case "breakpoint": // a human must answer: ask, and end the turn
		if !approved {
			return llmscript.Turn{Text: "The run waits at a breakpoint: Ship it? Please answer yes or no."}
		}
		return llmscript.Turn{Shell: post + `'{"approved":true,"response":"yes"}'`}
	case "shell":
		def, _ := a["taskDef"].(map[string]any)
		sh, _ := def["shell"].(map[string]any)
		cmd, _ := sh["command"].(string)
		return llmscript.Turn{Shell: cmd + ` && ` + post + `'{"exitCode":0}'`}
	default: // agent: the agent does the work itself, then posts it
		return llmscript.Turn{Shell: post + `'{"review":"LGTM"}'`}
	}
}

// lastJSON is the last JSON object among the strings (a harness may wrap a
// command's output in text of its own).
func lastJSON(in []string) map[string]any {
	for i := len(in) - 1; i >= 0; i-- {
		s := in[i]
		a, b := strings.Index(s, "{"), strings.LastIndex(s, "}")
		if a < 0 || b < a {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(s[a:b+1]), &m) == nil {
			return m
		}
	}
	return nil
}

func guideHeader(text string) string {
	i := strings.Index(text, "# Babysit: orchestrate a run with sitter (")
	line, _, _ := strings.Cut(text[i:], "\n")
	return line
}

// babysitEnv puts sitter on the agent's PATH as a user does: in the
// environment and in ~/.profile (a harness whose shell tool runs a login
// shell gets the system's PATH back from /etc/profile).
func babysitEnv(t *testing.T, home string) []string {
	bin := filepath.Dir(sitter(t))
	profile := "export PATH=\"" + bin + ":$PATH\"\n"
	if err := os.WriteFile(filepath.Join(home, ".profile"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// projectHome makes a test's temporary directory with an empty project
// and an empty home in it.
func projectHome(t *testing.T) (tmp, project, home string) {
	t.Helper()
	tmp = t.TempDir()
	project, home = filepath.Join(tmp, "project"), filepath.Join(tmp, "home")
	os.MkdirAll(project, 0o755)
	os.MkdirAll(home, 0o755)
	return tmp, project, home
}

// journalEvent is one run journal event as `sitter run events --json` prints it.
type journalEvent struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// runJournal reads the single run of a project through sitter itself
// (which verifies every checksum).
func runJournal(t *testing.T, project, home string) (string, []journalEvent) {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(project, ".a5c", "runs", "*", "run.json"))
	if len(runs) != 1 {
		t.Errorf("want exactly one run in %s, found %d", project, len(runs))
		return "", nil
	}
	return readJournal(t, filepath.Dir(runs[0]), home)
}

// runOf is the run directory of a process id in a project.
func runOf(t *testing.T, project, processID string) string {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(project, ".a5c", "runs", "*", "run.json"))
	for _, r := range runs {
		b, _ := os.ReadFile(r)
		var m struct{ ProcessID string }
		if json.Unmarshal(b, &m) == nil && m.ProcessID == processID {
			return filepath.Dir(r)
		}
	}
	out, _ := exec.Command("find", filepath.Join(project, ".a5c", "runs"), "-name", "run.json").CombinedOutput()
	t.Fatalf("no run of process %s in %s:\n%s", processID, project, out)
	return ""
}

func readJournal(t *testing.T, dir, home string) (string, []journalEvent) {
	t.Helper()
	return dir, sitterEvents(t, home, dir)
}

// sitterEvents is `sitter run events <args> --json` (args: the run and,
// for a stored run, --store URL).
func sitterEvents(t *testing.T, home string, args ...string) []journalEvent {
	t.Helper()
	cmd := exec.Command(sitter(t), append(append([]string{"run", "events"}, args...), "--json")...)
	cmd.Env = baseEnv(t, home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sitter run events: %v\n%s", err, out)
	}
	var evs struct{ Events []journalEvent }
	if err := json.Unmarshal(out, &evs); err != nil {
		t.Fatal(err)
	}
	return evs.Events
}

// runSource is where checkLoop reads the run a loop drove: the single run
// in the project's runs dir, or, with store set, the run *runID of that
// shared store (the project must then hold no run).
type runSource struct {
	project, store string
	runID          *string
}

func (s runSource) journal(t *testing.T, home string) []journalEvent {
	t.Helper()
	if s.store == "" {
		_, evs := runJournal(t, s.project, home)
		return evs
	}
	if runs, _ := filepath.Glob(filepath.Join(s.project, ".a5c", "runs", "*")); len(runs) != 0 {
		t.Errorf("the run of store %s left run directories in the project: %v", s.store, runs)
	}
	if *s.runID == "" {
		t.Errorf("the agent never saw the id of the run it created")
		return nil
	}
	return sitterEvents(t, home, *s.runID, "--store", s.store)
}

// checkLoop asserts a finished babysitter loop, its run read from src: the
// guide of this harness, the run bound to the session that created it,
// exactly one RUN_COMPLETED, at least two stop-hook continuations that
// reached the model, the completion proof ending the session, and the
// shell effect's file in the project.
func checkLoop(t *testing.T, harness string, llm *llmscript.Server, src runSource, home string, guides []string) {
	t.Helper()
	project := src.project
	if len(guides) == 0 || !strings.Contains(guides[0], "("+harness+",") {
		t.Errorf("the agent loaded guide %q, want %s's", guides, harness)
	}
	evs := src.journal(t, home)
	count := map[string]int{}
	var blocks, allows []journalEvent
	for _, e := range evs {
		count[e.Type]++
		if e.Type == "STOP_HOOK_INVOKED" {
			if e.Data["decision"] == "block" {
				blocks = append(blocks, e)
			} else {
				allows = append(allows, e)
			}
		}
	}
	// The session is found the way the atlas says the harness hands it
	// to the agent's shell (agentEnv), else by process ancestry.
	wantVia := "ancestry"
	if hasAgentEnv(t, harness) {
		wantVia = "env"
	}
	for _, e := range evs {
		if e.Type == "SESSION_BOUND" && e.Data["via"] != wantVia {
			t.Errorf("the run was bound via %v, want %s", e.Data["via"], wantVia)
		}
	}
	if count["SESSION_BOUND"] != 1 {
		t.Errorf("SESSION_BOUND events = %d, want 1 (the run create the agent typed binds its session)", count["SESSION_BOUND"])
	}
	if count["RUN_COMPLETED"] != 1 {
		t.Errorf("RUN_COMPLETED events = %d, want 1; journal: %v", count["RUN_COMPLETED"], count)
	}
	if len(blocks) < 2 {
		t.Errorf("stop-hook continuations = %d, want at least 2", len(blocks))
	}
	reached := 0
	for _, q := range llm.Requests() {
		if q.Contains("Babysitter run") && (q.Contains("is not finished") || q.Contains("completed. To finish")) {
			reached++
		}
	}
	if reached < 2 {
		t.Errorf("stop-hook reasons reached the model in %d requests, want at least 2", reached)
	}
	if len(allows) == 0 || allows[len(allows)-1].Data["row"] != "completion-proof" {
		t.Errorf("the session did not end on the completion proof: %v", allows)
	}
	if b, err := os.ReadFile(filepath.Join(project, "built.txt")); err != nil || strings.TrimSpace(string(b)) != "built" {
		t.Errorf("the shell effect did not run in the project: built.txt = %q, %v", b, err)
	}
	if t.Failed() {
		for i, q := range llm.Requests() {
			t.Logf("request %d last input: %q", i, q.LastInput())
		}
	}
}

// babysitRun runs one session of a harness with the babysitter bundle
// loaded the way a user loads it.
func babysitRun(t *testing.T, harness string, llm *llmscript.Server, project, home, prompt string, extra ...string) runResult {
	bundle := filepath.Join(repo(t), "artifacts", "babysitter", harness)
	// extra: environment entries (NAME=value), and for Claude Code also
	// arguments (--continue).
	env, args := babysitEnv(t, home), []string{"--plugin-dir", bundle}
	for _, e := range extra {
		if strings.HasPrefix(e, "-") {
			args = append(args, e)
		} else {
			env = append(env, e)
		}
	}
	if harness == "claude-code" { // loaded for the session, as the README shows
		return claudeRunEnv(t, llm, project, home, env, prompt, args...)
	}
	run, ok := babysitRunners[harness]
	if !ok {
		t.Fatalf("no runner for %s", harness)
	}
	pluginInstall(t, bundle, harness, project, home)
	return run(t, llm, project, home, env, prompt)
}

// babysitRunners run one session of the harnesses whose bundle is
// registered with sitter plugin install.
var babysitRunners = map[string]runner{
	"codex": codexRun, "gemini-cli": geminiRun, "copilot": copilotRun, "opencode": opencodeLoop, "pi": piRun,
}

var babysitHarnesses = []string{"claude-code", "codex", "gemini-cli", "copilot", "opencode", "pi"}

// TestBabysitLoop: in each real harness, an agent that follows the skill
// literally creates a run without naming its session, ends its turn after
// every step, and the stop hook (or the bridge) drives it to completion.
func TestBabysitLoop(t *testing.T) {
	for _, h := range babysitHarnesses {
		t.Run(h, func(t *testing.T) {
			_, project, home := projectHome(t)
			var guides []string
			llm := startLLM(t, babysitAgent(babysitProcess, &guides))
			r := babysitRun(t, h, llm, project, home, babysitPrompt)
			if r.err != nil {
				t.Errorf("%s: %v\n%s\n%s", h, r.err, r.stdout, r.stderr)
			}
			checkLoop(t, h, llm, runSource{project: project}, home, guides)
			checkWritten(t, h, project, home)
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
		})
	}
}

// hasAgentEnv reports whether the atlas declares how the harness hands
// variables to the agent's shell.
func hasAgentEnv(t *testing.T, harness string) bool {
	out, err := exec.Command(sitter(t), "atlas", "show", harness, "--json").Output()
	if err != nil {
		t.Fatalf("sitter atlas show %s: %v", harness, err)
	}
	var d struct {
		Descriptor struct {
			AgentEnv any `json:"agentEnv"`
		} `json:"descriptor"`
		AgentEnv any `json:"agentEnv"`
	}
	json.Unmarshal(out, &d)
	return d.Descriptor.AgentEnv != nil || d.AgentEnv != nil
}

// opencodeLoop runs a prompt on `opencode serve` (under a plain `opencode
// run` the process exits on the first idle, before the bridge's follow-up
// prompt) and waits until the session's stop was allowed after the run
// completed, or two minutes.
func opencodeLoop(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	url := opencodeServe(t, llm, project, home, more)
	_, env := opencodeSetup(t, llm, project, home, more)
	r := runCLI(t, project, env, 3*time.Minute, install(t, clis["opencode"]), "run", "--attach", url, "-m", "fake/fake-model", prompt)
	if r.err != nil {
		return r
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if loopEnded(project) {
			return r
		}
		time.Sleep(200 * time.Millisecond) // the server runs on: poll its run journal
	}
	r.err = fmt.Errorf("the babysitter loop did not end within 2 minutes on opencode serve")
	return r
}

// loopEnded reports whether the project's run has a stop allowed after
// RUN_COMPLETED (read without sitter: only the file names matter here).
func loopEnded(project string) bool {
	files, _ := filepath.Glob(filepath.Join(project, ".a5c", "runs", "*", "journal", "*.json"))
	completed := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		switch {
		case strings.Contains(string(b), `"RUN_COMPLETED"`):
			completed = true
		case completed && strings.Contains(string(b), `"STOP_HOOK_INVOKED"`) && strings.Contains(string(b), `"allow"`):
			return true
		}
	}
	return false
}

// killHarness is a shell command that SIGKILLs the nearest ancestor named
// comm: the harness the agent's shell runs under (a crash mid-run).
func killHarness(comm string) string {
	return `p=$PPID; while [ "$p" -gt 1 ]; do if [ "$(cat /proc/$p/comm)" = "` + comm + `" ]; then kill -9 $p; break; fi; p=$(cut -d' ' -f4 /proc/$p/stat); done`
}

// TestBabysitResume: a run started in Claude Code, whose session is killed
// mid-run, is resumed by id from a Codex session with the resume command's
// words and finished there; the journal shows both sessions.
func TestBabysitResume(t *testing.T) {
	_, project, home := projectHome(t)
	var guides []string
	killed := false
	llm := startLLM(t, scriptedAgent(agentOptions{process: babysitProcess, processID: "demo", guides: &guides,
		afterPost: func() llmscript.Turn {
			killed = true
			return llmscript.Turn{Shell: killHarness("claude")}
		}}))
	r := babysitRun(t, "claude-code", llm, project, home, babysitPrompt)
	if !killed || r.err == nil {
		t.Fatalf("the Claude session was not killed mid-run (killed=%t, err=%v)\n%s\n%s", killed, r.err, r.stdout, r.stderr)
	}
	dir, evs := runJournal(t, project, home)
	for _, e := range evs {
		if e.Type == "RUN_COMPLETED" {
			t.Fatalf("the run completed in the first session")
		}
	}
	runID := filepath.Base(dir)
	// A new session in another harness, as /babysitter:resume words it.
	llm2 := startLLM(t, scriptedAgent(agentOptions{process: babysitProcess, processID: "demo", guides: &guides}))
	r2 := babysitRun(t, "codex", llm2, project, home, "Use the babysit skill to resume the babysitter run "+runID+" and continue the loop until it completes.")
	if r2.err != nil {
		t.Fatalf("codex: %v\n%s\n%s", r2.err, r2.stdout, r2.stderr)
	}
	_, evs = readJournal(t, dir, home)
	var bound, drove []string
	completed := 0
	for _, e := range evs {
		switch e.Type {
		case "SESSION_BOUND":
			bound = append(bound, fmt.Sprint(e.Data["harness"]))
			drove = append(drove, fmt.Sprintf("%s · <code>%s</code>", e.Data["harness"], e.Data["sessionId"]))
			if e.Data["harness"] == "codex" && e.Data["takenFrom"] == nil {
				t.Errorf("the codex binding does not name the session it took the run from: %v", e.Data)
			}
		case "RUN_COMPLETED":
			completed++
		}
	}
	if strings.Join(bound, ",") != "claude-code,codex" {
		t.Errorf("sessions bound in the journal: %v, want claude-code then codex", bound)
	}
	if completed != 1 {
		t.Errorf("RUN_COMPLETED = %d, want 1", completed)
	}
	last := evs[len(evs)-1]
	if last.Type != "STOP_HOOK_INVOKED" || last.Data["row"] != "completion-proof" || last.Data["harness"] != "codex" {
		t.Errorf("the loop did not end on the codex session's completion proof: %+v", last)
	}
	// sitter observe's run page names both sessions that drove the run,
	// each with its harness.
	page := observePage(t, baseEnv(t, home), project, "/run?path="+url.QueryEscape(dir))
	sessions := page[strings.Index(page, "<h2>Sessions and harnesses</h2>"):]
	sessions = sessions[:strings.Index(sessions, "</section>")]
	for _, d := range drove {
		if !strings.Contains(sessions, d) {
			t.Errorf("the observe run page's sessions lack %s:\n%s", d, sessions)
		}
	}
	if t.Failed() {
		for i, q := range llm2.Requests() {
			t.Logf("codex request %d last input: %q", i, q.LastInput())
		}
	}
}

// TestBabysitTwoSessions: two Codex sessions in one project at once, each
// creating its own run while both harness processes are alive: each run is
// bound to the session that created it and driven only by it.
func TestBabysitTwoSessions(t *testing.T) {
	tmp, project, home := projectHome(t)
	// Both agents reach the create step before either creates its run.
	var ready sync.WaitGroup
	ready.Add(2)
	barrier := func() {
		ready.Done()
		ch := make(chan struct{})
		go func() { ready.Wait(); close(ch) }()
		select {
		case <-ch:
		case <-time.After(time.Minute):
		}
	}
	// Each session has its own harness config (its own fake model); both
	// share the user's sitter state, as two terminals of one user do.
	state := "SITTER_STATE_DIR=" + filepath.Join(home, ".sitter-state")
	// The bundle is installed once, before either session starts.
	pluginInstall(t, filepath.Join(repo(t), "artifacts", "babysitter", "codex"), "codex", project, home)
	ids := []string{"alpha", "beta"}
	results := make([]runResult, 2)
	var wg sync.WaitGroup
	for i, id := range ids {
		own := filepath.Join(tmp, "home-"+id)
		os.MkdirAll(own, 0o755)
		var guides []string
		llm := startLLM(t, scriptedAgent(agentOptions{process: babysitProcess, processID: id, guides: &guides, beforeCreate: barrier}))
		env := append(babysitEnv(t, own), state)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = codexRun(t, llm, project, own, env, babysitPrompt)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return // a session's set-up failed and said why
	}
	sessions := map[string]string{}
	for i, id := range ids {
		if testing.Verbose() {
			t.Logf("codex %s:\n%s\n%s", id, results[i].stdout, results[i].stderr)
		}
		if results[i].err != nil {
			t.Fatalf("codex %s: %v\n%s\n%s", id, results[i].err, results[i].stdout, results[i].stderr)
		}
		_, evs := readJournal(t, runOf(t, project, id), home)
		var bound string
		completed := 0
		for _, e := range evs {
			switch e.Type {
			case "SESSION_BOUND":
				bound = fmt.Sprint(e.Data["sessionId"])
			case "STOP_HOOK_INVOKED":
				if s := fmt.Sprint(e.Data["sessionId"]); s != bound {
					t.Errorf("run %s: a stop of session %s, but the run is bound to %s", id, s, bound)
				}
			case "RUN_COMPLETED":
				completed++
			}
		}
		if bound == "" || completed != 1 {
			t.Errorf("run %s: bound to %q, RUN_COMPLETED %d", id, bound, completed)
		}
		sessions[id] = bound
	}
	if sessions["alpha"] == sessions["beta"] {
		t.Errorf("both runs bound to session %s", sessions["alpha"])
	}
}

// written lists the files and symlinks under root, relative to it.
func written(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// harnessHomes are the harness's own state in HOME: what it writes there
// itself (config, sessions, logs, caches), as observed on the pinned CLIs.
var harnessHomes = map[string][]string{
	"claude-code": {".claude/", ".claude.json"},
	"codex":       {".codex/"},
	"gemini-cli":  {".gemini/"},
	"copilot":     {".copilot/"},
	"opencode":    {".config/opencode/", ".local/share/opencode/", ".local/state/opencode/", ".cache/opencode/"},
	"pi":          {".pi/"},
}

// checkWritten asserts that a babysitter session wrote nothing outside the
// project and the harness's own state dirs: in HOME only the harness's
// state, sitter's state dir and its JS runtime cache; in the project only
// the run, the shell effect's file, the installed bundle and the
// harness's project config (the atlas's presence dirs and files).
func checkWritten(t *testing.T, harness, project, home string) {
	t.Helper()
	allowHome := append([]string{".profile", ".sitter-state/", ".cache/sitter/"}, harnessHomes[harness]...)
	allowProject := []string{".a5c/", "built.txt", ".sitter/"}
	for _, p := range gentranscript.Presences {
		if p.Harness == harness {
			for _, d := range p.ProjectDirs {
				allowProject = append(allowProject, d+"/")
			}
			allowProject = append(allowProject, p.ProjectFiles...)
		}
	}
	for _, c := range []struct {
		root  string
		allow []string
	}{{home, allowHome}, {project, allowProject}} {
		for _, f := range written(t, c.root) {
			if !slices.ContainsFunc(c.allow, func(a string) bool { return f == a || strings.HasSuffix(a, "/") && strings.HasPrefix(f, a) }) {
				t.Errorf("%s wrote %s outside the project's and the harness's own files", harness, filepath.Join(c.root, f))
			}
		}
	}
}

// TestBabysitBreakpoint: interactive mode, as the SDK does it. At a
// breakpoint the agent asks the human and ends its turn; the stop hook
// lets the session stop (a human must act) instead of looping. The human
// answers in the same conversation (claude --continue); the agent posts
// the answer and the stop hook drives the run to completion.
func TestBabysitBreakpoint(t *testing.T) {
	_, project, home := projectHome(t)
	var guides []string
	llm := startLLM(t, scriptedAgent(agentOptions{process: babysitBreakpointProcess, processID: "demo", guides: &guides}))
	r := babysitRun(t, "claude-code", llm, project, home, babysitPrompt)
	if r.err != nil {
		t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	dir, evs := runJournal(t, project, home)
	last := evs[len(evs)-1]
	if last.Type != "STOP_HOOK_INVOKED" || last.Data["row"] != "breakpoints-only" || last.Data["decision"] != "allow" {
		t.Fatalf("the session did not stop at the breakpoint for the human: last event %+v", last)
	}
	// The human's answer, in the same conversation.
	r = babysitRun(t, "claude-code", llm, project, home, "Yes, ship it. "+humanApproval, "--continue")
	if r.err != nil {
		t.Fatalf("claude --continue: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	_, evs = readJournal(t, dir, home)
	completed := 0
	for _, e := range evs {
		if e.Type == "RUN_COMPLETED" {
			completed++
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "state", "output.json"))
	if completed != 1 || !strings.Contains(string(b), `"approved":true`) && !strings.Contains(string(b), `"approved": true`) {
		t.Errorf("RUN_COMPLETED = %d, output %s: the human's answer did not carry the run to completion", completed, b)
	}
	last = evs[len(evs)-1]
	if last.Type != "STOP_HOOK_INVOKED" || last.Data["row"] != "completion-proof" {
		t.Errorf("the second session did not end on the completion proof: %+v", last)
	}
	if t.Failed() {
		for i, q := range llm.Requests() {
			t.Logf("request %d last input: %q", i, q.LastInput())
		}
	}
}
