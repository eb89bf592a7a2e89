//go:build e2e

package e2e

import (
	"fmt"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
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

var (
	iterateCmdRE = regexp.MustCompile("sitter run iterate (\\S+) --json")
	statusCmdRE  = regexp.MustCompile("sitter run status (\\S+) --json")
)

// babysitAgent is a scripted agent that follows the babysit skill as
// written, one step a turn: it loads the guide, writes the process and
// creates the run (no session or harness flags), then ends its turn; from
// then on it acts only on what the last message tells it: a stop hook's
// reason (iterate, or fetch the proof), an iterate result (execute the
// next effect and post it, or give the completion proof), and ends its
// turn after every post. guides records the guide headers it loaded.
func babysitAgent(process string, guides *[]string) llmscript.Script {
	b64 := base64.StdEncoding.EncodeToString([]byte(process))
	create := "mkdir -p .a5c/processes && echo " + b64 + " | base64 -d > .a5c/processes/demo.mjs && " +
		"sitter run create --process-id demo --entry .a5c/processes/demo.mjs#process --json"
	return func(q *llmscript.Request) llmscript.Turn {
		in := q.LastInput()
		if obj := lastJSON(in); obj != nil {
			switch {
			case obj["nextActions"] != nil || obj["completionProof"] != nil && (obj["status"] != nil || obj["state"] != nil):
				return afterIterate(obj)
			case obj["runId"] != nil && obj["runDir"] != nil && obj["entry"] != nil:
				return llmscript.Turn{Text: "The run is created. Ending my turn."}
			case obj["effectId"] != nil || obj["status"] == "ok":
				return llmscript.Turn{Text: "Posted the result. Ending my turn."}
			}
		}
		text := strings.Join(in, "\n")
		switch {
		case strings.Contains(text, "# Babysit: orchestrate a run with sitter ("):
			*guides = append(*guides, guideHeader(text))
			return llmscript.Turn{Shell: create}
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

// afterIterate executes the first next action, or gives the proof.
func afterIterate(obj map[string]any) llmscript.Turn {
	if p, _ := obj["completionProof"].(string); p != "" && (obj["status"] == "completed" || obj["state"] == "completed") {
		return llmscript.Turn{Text: "The run is complete: built and reviewed. <promise>" + p + "</promise>"}
	}
	acts, _ := obj["nextActions"].([]any)
	if len(acts) == 0 {
		return llmscript.Turn{Text: "Nothing to execute. Ending my turn."}
	}
	a, _ := acts[0].(map[string]any)
	id, _ := a["effectId"].(string)
	runDir, _ := obj["runDir"].(string)
	if runDir == "" {
		runDir, _ = obj["runId"].(string)
	}
	post := "sitter task post " + runDir + " " + id + " --status ok --json --value-inline "
	switch a["kind"] {
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
	dir := filepath.Dir(runs[0])
	cmd := exec.Command(sitter(t), "run", "events", dir, "--json")
	cmd.Env = baseEnv(t, home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sitter run events: %v\n%s", err, out)
	}
	var evs struct{ Events []journalEvent }
	if err := json.Unmarshal(out, &evs); err != nil {
		t.Fatal(err)
	}
	return dir, evs.Events
}

// checkLoop asserts a finished babysitter loop: the guide of this harness,
// the run bound to the session that created it, exactly one RUN_COMPLETED,
// at least two stop-hook continuations that reached the model, and the
// completion proof ending the session.
func checkLoop(t *testing.T, harness string, llm *llmscript.Server, project, home string, guides []string) {
	t.Helper()
	if len(guides) == 0 || !strings.Contains(guides[0], "("+harness+",") {
		t.Errorf("the agent loaded guide %q, want %s's", guides, harness)
	}
	_, evs := runJournal(t, project, home)
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

// babysitRunners are the six runnable harnesses with the babysitter
// bundle loaded the way a user loads it.
func babysitRun(t *testing.T, harness string, llm *llmscript.Server, project, home, prompt string) runResult {
	bundle := filepath.Join(repo(t), "artifacts", "babysitter", harness)
	env := babysitEnv(t, home)
	switch harness {
	case "claude-code":
		return claudeRunEnv(t, llm, project, home, env, prompt, "--plugin-dir", bundle)
	case "codex":
		pluginInstall(t, bundle, harness, project, home)
		return codexRun(t, llm, project, home, env, prompt)
	case "gemini-cli":
		pluginInstall(t, bundle, harness, project, home)
		return geminiRun(t, llm, project, home, env, prompt)
	case "copilot":
		pluginInstall(t, bundle, harness, project, home)
		return copilotRun(t, llm, project, home, env, prompt)
	case "opencode":
		pluginInstall(t, bundle, harness, project, home)
		return opencodeLoop(t, llm, project, home, env, prompt)
	case "pi":
		pluginInstall(t, bundle, harness, project, home)
		return piRun(t, llm, project, home, env, prompt)
	}
	t.Fatalf("no runner for %s", harness)
	return runResult{}
}

var babysitHarnesses = []string{"claude-code", "codex", "gemini-cli", "copilot", "opencode", "pi"}

// TestBabysitLoop: in each real harness, an agent that follows the skill
// literally creates a run without naming its session, ends its turn after
// every step, and the stop hook (or the bridge) drives it to completion.
func TestBabysitLoop(t *testing.T) {
	for _, h := range babysitHarnesses {
		t.Run(h, func(t *testing.T) {
			tmp := t.TempDir()
			project, home := filepath.Join(tmp, "project"), filepath.Join(tmp, "home")
			os.MkdirAll(project, 0o755)
			os.MkdirAll(home, 0o755)
			var guides []string
			llm := startLLM(t, babysitAgent(babysitProcess, &guides))
			r := babysitRun(t, h, llm, project, home, babysitPrompt)
			if r.err != nil {
				t.Errorf("%s: %v\n%s\n%s", h, r.err, r.stdout, r.stderr)
			}
			checkLoop(t, h, llm, project, home, guides)
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
