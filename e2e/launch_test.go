//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/launch"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/transcript"
)

// userHome is a HOME with config files of every harness in it, which no
// launch may change.
func userHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	files := map[string]string{
		".claude.json":                   `{"hasCompletedOnboarding":false,"userID":"mine"}`,
		".claude/settings.json":          `{"theme":"dark"}`,
		".codex/config.toml":             "model = \"my-own-model\"\n",
		".gemini/settings.json":          `{"theme":"mine"}`,
		".config/opencode/opencode.json": `{"model":"mine/mine"}`,
		".pi/agent/models.json":          `{"providers":{}}`,
		".copilot/settings.json":         `{}`,
	}
	for p, c := range files {
		p = filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// snapshot reads every file under dir (paths and bytes).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			m[p] = string(b)
		}
		return nil
	})
	return m
}

// sameTree checks that no file of before changed or went, and that no
// file was added. In the user's HOME a launch may add what it keeps
// there on purpose: sitter's state (baseEnv's SITTER_STATE_DIR: session
// states, the audit log) and files in a harness's own session store (the
// atlas's transcript location), which the overlay links to the user's.
func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		} else if a != b {
			t.Errorf("%s: %s changed:\n%s\n→\n%s", what, p, b, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && !(what == "user HOME" && launchKeeps(p)) {
			t.Errorf("%s: %s was created", what, p)
		}
	}
}

// launchKeeps says whether a file a launch added to the user's HOME is
// sitter's state or in a harness's session store.
func launchKeeps(p string) bool {
	if strings.Contains(p, "/.sitter-state/") {
		return true
	}
	for _, s := range gentranscript.Specs {
		root := launch.SessionStore{Location: s.Location, Store: s.Store}.Root()
		if root != "" && strings.Contains(p, "/"+root+"/") {
			return true
		}
	}
	return false
}

type launchEvent map[string]any

// runLaunch runs `sitter launch <args> --json` with home as the user's
// HOME and returns the NDJSON events.
func runLaunch(t *testing.T, home string, extraEnv []string, args ...string) ([]launchEvent, runResult) {
	t.Helper()
	env := append(baseEnv(t, home), extraEnv...)
	r := runCLI(t, t.TempDir(), env, 3*time.Minute, sitter(t), append([]string{"launch"}, append(args, "--json")...)...)
	var evs []launchEvent
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var e launchEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("launch stdout is not NDJSON: %q: %v\n%s", sc.Text(), err, r.stdout)
		}
		evs = append(evs, e)
	}
	return evs, r
}

func countEvents(evs []launchEvent, name string) int {
	n := 0
	for _, e := range evs {
		if e["type"] == name {
			n++
		}
	}
	return n
}

func eventOf(evs []launchEvent, name string) launchEvent {
	for _, e := range evs {
		if e["type"] == name {
			return e
		}
	}
	return nil
}

// launchCase runs one headless launch that must complete a shell tool
// call in the workspace, leave the user's HOME alone and remove its overlay.
func launchCase(t *testing.T, harness string, proxied bool, upstreamProto string, extraEnv []string, args ...string) (*llmscript.Server, []launchEvent) {
	t.Helper()
	bin := install(t, clis[harness])
	home, project := userHome(t), t.TempDir()
	before := snapshot(t, home)
	llm := startLLM(t, llmscript.ShellThenText("echo launched > launched.txt", "done"))
	base := append([]string{harness, "--bin", bin, "--workspace", project, "--prompt", "write the file"}, args...)
	for i, a := range base {
		base[i] = strings.ReplaceAll(a, "{llm}", llm.URL)
	}
	evs, r := runLaunch(t, home, extraEnv, base...)
	if r.err != nil {
		t.Fatalf("sitter launch %s: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(project, "launched.txt")); err != nil || string(b) != "launched\n" {
		t.Errorf("the tool call did not run: %q %v\n%s\n%s", b, err, r.stdout, r.stderr)
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Protocol == upstreamProto }) {
		t.Errorf("the %s upstream never received the tool result", upstreamProto)
	}
	if got := countEvents(evs, "proxy_started") == 1; got != proxied {
		t.Errorf("proxy started = %v, want %v\n%s", got, proxied, r.stdout)
	}
	if proxied && countEvents(evs, "proxy_stopped") != 1 {
		t.Errorf("the proxy was not stopped\n%s", r.stdout)
	}
	ex := eventOf(evs, "exit")
	if ex == nil || ex["code"] != float64(0) {
		t.Errorf("no exit event with code 0\n%s", r.stdout)
	}
	ov := eventOf(evs, "overlay")
	if ov == nil {
		t.Fatalf("no overlay event\n%s", r.stdout)
	}
	if dir, _ := ov["dir"].(string); dir == "" || exists(dir) {
		t.Errorf("overlay %v was not removed", ov["dir"])
	}
	sameTree(t, "user HOME", before, snapshot(t, home))
	return llm, evs
}

// TestLaunchClaudeOnOpenAI: Claude Code (Anthropic Messages) on an
// OpenAI-protocol provider: the proxy is started and a tool-call turn completes.
func TestLaunchClaudeOnOpenAI(t *testing.T) {
	launchCase(t, "claude-code", true, "chat", []string{"OPENAI_API_KEY=sk-upstream"},
		"--provider", "openai", "--upstream", "{llm}/v1")
}

// TestLaunchCodexOnAnthropic: Codex (Responses) on an Anthropic provider.
func TestLaunchCodexOnAnthropic(t *testing.T) {
	launchCase(t, "codex", true, "anthropic", []string{"ANTHROPIC_API_KEY=sk-upstream"},
		"--provider", "anthropic", "--upstream", "{llm}")
}

// TestLaunchGeminiPassThrough: Gemini CLI on a Gemini upstream talks to it
// directly: no proxy.
func TestLaunchGeminiPassThrough(t *testing.T) {
	llm, evs := launchCase(t, "gemini-cli", false, "gemini", []string{"GEMINI_API_KEY=sk-upstream"},
		"--provider", "gemini", "--upstream", "{llm}", "--model", geminiModel)
	if countEvents(evs, "pass_through") != 1 {
		t.Errorf("no pass_through event: %v", evs)
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.Protocol == "gemini" && q.Contains("write the file") }) {
		t.Errorf("the prompt did not reach the Gemini upstream directly")
	}
}

// stopBundle is a copy of the guard bundle for Codex whose only handler
// is a stop handler running cmd.
func stopBundle(t *testing.T, cmd string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "stopper")
	src := filepath.Join(repo(t), "artifacts", "guard", "codex")
	if out, err := exec.Command("cp", "-R", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	h, _ := json.Marshal(map[string]any{"handlers": []map[string]string{{"phase": "stop", "command": cmd}}})
	if err := os.WriteFile(filepath.Join(dst, "sitter-handlers.json"), h, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// bridgeCodex runs Codex in bridge-hooks mode with a stop handler.
func bridgeCodex(t *testing.T, handler string, maxIter int) (*llmscript.Server, []launchEvent, string) {
	t.Helper()
	bin := install(t, clis["codex"])
	home, project := userHome(t), t.TempDir()
	before := snapshot(t, home)
	llm := startLLM(t, llmscript.ShellThenText("echo one >> log.txt", "done"))
	evs, r := runLaunch(t, home, []string{"OPENAI_API_KEY=sk-upstream"},
		"codex", "--bin", bin, "--workspace", project, "--provider", "openai-responses", "--upstream", llm.URL+"/v1",
		"--mode", "bridge-hooks", "--max-iterations", fmt.Sprint(maxIter), "--plugin", stopBundle(t, handler), "--prompt", "write the log")
	if r.err != nil {
		t.Fatalf("sitter launch: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if countEvents(evs, "proxy_started") != 0 {
		t.Errorf("Codex speaks Responses: no proxy wanted\n%s", r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(project, "log.txt")); !bytes.HasPrefix(b, []byte("one\n")) {
		t.Errorf("the first run's tool call did not run: %q", b)
	}
	sameTree(t, "user HOME", before, snapshot(t, home))
	return llm, evs, r.stdout
}

func hookCalls(evs []launchEvent) []string {
	var hooks []string
	for _, e := range evs {
		if e["type"] == "hook" {
			s := fmt.Sprint(e["native"])
			if strings.Contains(fmt.Sprint(e["stdout"]), `"block"`) {
				s += ":block"
			}
			hooks = append(hooks, s)
		}
	}
	return hooks
}

const keepGoing = "keep going: check log.txt once more"

// TestLaunchBridgeHooksCodex: in bridge-hooks mode a stop handler that
// blocks once makes sitter resume the Codex session with the reason as
// the next prompt; at the next stop it lets the session end.
func TestLaunchBridgeHooksCodex(t *testing.T) {
	handler := `grep -q '"stopHookActive":true' || echo '{"decision":"block","reason":"` + keepGoing + `"}'`
	llm, evs, out := bridgeCodex(t, handler, 5)
	if n := countEvents(evs, "spawn"); n != 2 {
		t.Errorf("spawned codex %d times, want 2\n%s", n, out)
	}
	if countEvents(evs, "max_iterations") != 0 {
		t.Errorf("stopped by the cap, not by the handler\n%s", out)
	}
	// The second run resumed the first session: its request carries the
	// first prompt and the stop reason.
	if !llm.Any(func(q *llmscript.Request) bool { return q.Contains(keepGoing) && q.Contains("write the log") }) {
		t.Errorf("the stop reason did not reach the model in the resumed session")
	}
	want := []string{"SessionStart", "Stop:block", "Stop", "SessionEnd"}
	if got := hookCalls(evs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hook calls = %q, want %q", got, want)
	}
}

// TestLaunchBridgeHooksCodexMaxIterations: a stop handler that always
// blocks is stopped by --max-iterations.
func TestLaunchBridgeHooksCodexMaxIterations(t *testing.T) {
	_, evs, out := bridgeCodex(t, `echo '{"decision":"block","reason":"`+keepGoing+`"}'`, 3)
	if n := countEvents(evs, "spawn"); n != 3 {
		t.Errorf("spawned codex %d times, want 3 (--max-iterations 3)\n%s", n, out)
	}
	if countEvents(evs, "max_iterations") != 1 {
		t.Errorf("no max_iterations event\n%s", out)
	}
	want := []string{"SessionStart", "Stop:block", "Stop:block", "Stop:block", "SessionEnd"}
	if got := hookCalls(evs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hook calls = %q, want %q", got, want)
	}
}

// TestLaunchPluginGuard: --plugin loads the guard bundle for one run
// (Claude Code by --plugin-dir, Codex by sitter plugin install into the
// workspace): a recursive delete outside the project is refused, and the
// workspace holds no trace of the install afterwards.
func TestLaunchPluginGuard(t *testing.T) {
	for _, c := range []struct{ harness, provider, upstream string }{
		{"claude-code", "anthropic", ""},
		{"codex", "openai-responses", "/v1"},
	} {
		t.Run(c.harness, func(t *testing.T) {
			bin := install(t, clis[c.harness])
			tmp := t.TempDir()
			project, outside := filepath.Join(tmp, "project"), filepath.Join(tmp, "outside")
			os.MkdirAll(project, 0o755)
			os.MkdirAll(outside, 0o755)
			os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
			home := userHome(t)
			before, beforeWS := snapshot(t, home), snapshot(t, project)
			llm := startLLM(t, llmscript.ShellThenText("rm -rf "+outside, "done"))
			evs, r := runLaunch(t, home, []string{"ANTHROPIC_API_KEY=sk", "OPENAI_API_KEY=sk"},
				c.harness, "--bin", bin, "--workspace", project, "--provider", c.provider, "--upstream", llm.URL+c.upstream,
				"--plugin", filepath.Join(repo(t), "artifacts", "guard", c.harness), "--prompt", "clean up")
			if r.err != nil {
				t.Fatalf("sitter launch: %v\n%s\n%s", r.err, r.stdout, r.stderr)
			}
			if !exists(filepath.Join(outside, "keep.txt")) {
				t.Errorf("the guard did not stop rm -rf outside the project\n%s\n%s", r.stdout, r.stderr)
			}
			if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Contains("guard: recursive-delete") }) {
				t.Errorf("the guard's reason never reached the model")
			}
			if c.harness == "codex" && countEvents(evs, "plugin_installed") != 1 {
				t.Errorf("no plugin_installed event\n%s", r.stdout)
			}
			sameTree(t, "workspace", beforeWS, snapshot(t, project))
			sameTree(t, "user HOME", before, snapshot(t, home))
		})
	}
}

// launchBabysitProcess has a shell effect and an agent effect.
const launchBabysitProcess = `import { defineTask } from '@a5c-ai/babysitter-sdk';
const build = defineTask('build', (args) => ({ kind: 'shell', title: 'Build', shell: { command: 'echo ' + args.word + ' > shell.txt' } }));
const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { prompt: 'review the ' + args.word + ' build' } }));
export async function process(inputs, ctx) {
  const b = await ctx.task(build, { word: inputs.word });
  const r = await ctx.task(review, { word: inputs.word });
  return { b, r };
}
`

var launchBabysitRunDir = regexp.MustCompile(`Continue babysitter run \S+ \(([^)]+)\)`)

// launchLastUserTurn is what the conversation holds since the model's
// last turn: the text of its last tool result (tool true), or its text (a
// prompt, a stop hook's reason). Every protocol of the fake LLM: Anthropic
// messages, Chat Completions, Responses input items and Gemini contents.
func launchLastUserTurn(r *llmscript.Request) (text string, tool bool) {
	var body map[string]any
	if json.Unmarshal(r.Body, &body) != nil {
		return "", false
	}
	var items []any
	for _, k := range []string{"messages", "input", "contents"} {
		if v, ok := body[k].([]any); ok {
			items = v
			break
		}
	}
	from := 0
	for i := len(items) - 1; i >= 0; i-- {
		m, _ := items[i].(map[string]any)
		role, _ := m["role"].(string)
		typ, _ := m["type"].(string)
		if role == "assistant" || role == "model" || typ == "function_call" || typ == "reasoning" || typ == "custom_tool_call" || typ == "local_shell_call" {
			from = i + 1
			break
		}
	}
	strs := func(v any) string {
		var b strings.Builder
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				b.WriteString(x)
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for _, k := range []string{"text", "content", "output", "response", "llmContent", "parts"} {
					if e, ok := x[k]; ok {
						walk(e)
					}
				}
			}
		}
		walk(v)
		return b.String()
	}
	var texts []string
	for _, it := range items[from:] {
		m, _ := it.(map[string]any)
		switch typ, _ := m["type"].(string); {
		case m["role"] == "tool":
			text, tool = strs(m["content"]), true
			continue
		case typ == "function_call_output" || typ == "custom_tool_call_output":
			text, tool = strs(m["output"]), true
			continue
		}
		parts, _ := m["content"].([]any)
		if ps, ok := m["parts"].([]any); ok {
			parts = ps
		}
		found := false
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			switch {
			case pm["type"] == "tool_result":
				text, tool, found = strs(pm["content"]), true, true
			case pm["functionResponse"] != nil:
				fr, _ := pm["functionResponse"].(map[string]any)
				text, tool, found = strs(fr["response"]), true, true
			}
		}
		if !found {
			texts = append(texts, strs(m["content"])+strs(m["parts"]))
		}
	}
	if tool {
		return text, true
	}
	return strings.Join(texts, "\n"), false
}

// launchPostedMarker starts the text the scripted agent ends a turn with after
// posting a result: the stop hook must bring it back.
const launchPostedMarker = "Posted the result of "

// launchBabysitAgent is a scripted agent that follows the babysit prompt
// without being told more: it iterates the run named in the prompt, runs
// a shell effect's command and posts its result, answers an agent effect
// itself, ends its turn after every post (the stop hook must continue
// it), and when iterate reports the run completed, ends with the
// completion proof it printed.
func launchBabysitAgent(sitter string) llmscript.Script {
	return func(r *llmscript.Request) llmscript.Turn {
		m := launchBabysitRunDir.FindSubmatch(r.Body)
		if m == nil {
			return llmscript.Turn{Text: "ok"}
		}
		dir := string(m[1])
		iterate := sitter + " run iterate " + dir + " --json"
		text, tool := launchLastUserTurn(r)
		if !tool {
			return llmscript.Turn{Shell: iterate} // the prompt, or a stop hook's reason
		}
		var it struct {
			Status          string `json:"status"`
			CompletionProof string `json:"completionProof"`
			NextActions     []struct {
				EffectID string `json:"effectId"`
				Kind     string `json:"kind"`
				TaskDef  struct {
					Shell struct{ Command string } `json:"shell"`
				} `json:"taskDef"`
			} `json:"nextActions"`
		}
		// A harness may wrap the command's output in text of its own.
		if i := strings.Index(text, "{"); i >= 0 {
			json.NewDecoder(strings.NewReader(text[i:])).Decode(&it)
		}
		if it.Status == "" {
			if strings.Contains(text, "[task:post]") {
				return llmscript.Turn{Text: launchPostedMarker + "the effect; ending my turn."}
			}
			return llmscript.Turn{Text: "I could not read that: " + text}
		}
		switch {
		case it.Status == "completed":
			return llmscript.Turn{Text: "The run is complete. <promise>" + it.CompletionProof + "</promise>"}
		case it.Status == "waiting" && len(it.NextActions) > 0:
			a := it.NextActions[0]
			post := sitter + " task post " + dir + " " + a.EffectID + " --status ok --value-inline "
			if a.Kind == "shell" {
				return llmscript.Turn{Shell: a.TaskDef.Shell.Command + " && " + post + `'{"exitCode":0}'`}
			}
			return llmscript.Turn{Shell: post + `'"reviewed: looks good"'`}
		}
		return llmscript.Turn{Text: "The run is " + it.Status + "."}
	}
}

// launchBabysitProject is a workspace with the process and its inputs.
func launchBabysitProject(t *testing.T) (project, proc, inputs string) {
	t.Helper()
	project = t.TempDir()
	proc, inputs = filepath.Join(project, "proc.mjs"), filepath.Join(project, "inputs.json")
	os.WriteFile(proc, []byte(launchBabysitProcess), 0o644)
	os.WriteFile(inputs, []byte(`{"word":"babysat"}`), 0o644)
	return project, proc, inputs
}

// launchJournal reads a run's journal (checksums and sequence verified).
func launchJournal(t *testing.T, dir string) *run.State {
	t.Helper()
	st, err := run.Load(dir)
	if err != nil {
		t.Fatalf("run %s: %v", dir, err)
	}
	return st
}

func countJournal(st *run.State, typ string, match func(data string) bool) int {
	n := 0
	for _, e := range st.Journal.Events {
		if e.Type == typ && (match == nil || match(string(e.Data))) {
			n++
		}
	}
	return n
}

// TestLaunchClaudeBabysit: `sitter launch claude-code --babysit proc.mjs`
// creates the run, Claude Code's session is bound to it through
// SITTER_BABYSIT_RUN, and the babysitter plugin's stop hook drives a
// scripted agent that ends its turn after every step until the run
// completes and it gives the proof: exit 0, one RUN_COMPLETED. The
// session's transcript is in the user's own store, where `claude
// --resume` finds it.
func TestLaunchClaudeBabysit(t *testing.T) {
	bin := install(t, clis["claude-code"])
	home := userHome(t)
	before := snapshot(t, home)
	project, proc, inputs := launchBabysitProject(t)
	llm := startLLM(t, launchBabysitAgent(sitter(t)))
	evs, r := runLaunch(t, home, []string{"ANTHROPIC_API_KEY=sk-fake"},
		"claude-code", "--bin", bin, "--workspace", project, "--upstream", llm.URL,
		"--plugin", filepath.Join(repo(t), "artifacts", "babysitter", "claude-code"), "--babysit", proc, "--inputs", inputs)
	if r.err != nil {
		t.Fatalf("sitter launch: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	b := eventOf(evs, "babysit")
	if b == nil || b["code"] != float64(0) || b["status"] != "completed" {
		t.Fatalf("babysit event %v\n%s\n%s", b, r.stdout, r.stderr)
	}
	dir := fmt.Sprint(b["runDir"])
	if filepath.Dir(dir) != filepath.Join(project, ".a5c", "runs") {
		t.Errorf("run dir %s is not in the workspace's .a5c/runs", dir)
	}
	st := launchJournal(t, dir)
	if n := countJournal(st, journal.RunCompleted, nil); n != 1 {
		t.Errorf("%d RUN_COMPLETED events, want 1", n)
	}
	if countJournal(st, journal.SessionBound, func(d string) bool {
		return strings.Contains(d, `"via": "launch"`) || strings.Contains(d, `"via":"launch"`)
	}) != 1 {
		t.Errorf("the session was not bound through the launch:\n%v", st.Journal.Events)
	}
	blocks := countJournal(st, journal.StopHookInvoked, func(d string) bool { return strings.Contains(d, `"block"`) })
	continued := 0
	for _, q := range llm.Requests() {
		if text, tool := launchLastUserTurn(q); !tool && strings.Contains(text, "is not finished") {
			continued++
		}
	}
	if blocks < 2 || continued < 2 {
		t.Errorf("stop-hook continuations: %d blocks journaled, %d reached the model; want at least 2 each", blocks, continued)
	}
	if got, _ := os.ReadFile(filepath.Join(project, "shell.txt")); string(got) != "babysat\n" {
		t.Errorf("the shell effect did not run: %q", got)
	}
	// The session is resumable: its transcript is in the user's store.
	session := fmt.Sprint(b["harnessSession"])
	if tr := filepath.Join(home, ".claude", "projects", transcript.Slug(project), session+".jsonl"); session == "" || !exists(tr) {
		t.Errorf("no transcript of session %q at %s", session, tr)
	}
	if b["resume"] != "claude --resume "+session {
		t.Errorf("resume hint %v", b["resume"])
	}
	if ov := eventOf(evs, "overlay"); ov == nil || exists(fmt.Sprint(ov["dir"])) {
		t.Errorf("overlay not removed: %v", ov)
	}
	sameTree(t, "user HOME", before, snapshot(t, home))
}

// TestLaunchClaudeBabysitResume: a babysit launch whose agent does
// nothing is stopped by its cap (--max-iterations 1: one stop-hook
// continuation) and exits 3 with the run unfinished; `sitter launch
// claude-code --run-id` then resumes that same Claude session by id (its
// transcript is in the user's store) and drives the run to completion.
func TestLaunchClaudeBabysitResume(t *testing.T) {
	babysitResume(t, "claude-code", []string{"ANTHROPIC_API_KEY=sk-fake"}, []string{"--upstream", "{llm}"}, true)
}

// TestLaunchBabysitResumeHarnesses: the same on the other harnesses.
// Where the stop hook is native, the run's last session is this
// harness's and is resumed by id (Codex's rollout, Gemini's chat and
// Copilot's session state are in the user's stores); in bridge-hooks mode
// (OpenCode, Pi) the launch's sessions have made-up ids, so a new session
// continues the run.
func TestLaunchBabysitResumeHarnesses(t *testing.T) {
	for _, c := range launchBabysitHarnesses {
		t.Run(c.harness, func(t *testing.T) {
			babysitResume(t, c.harness, c.env, c.args, c.mode == launch.AgentDriven)
		})
	}
}

// logHookTrail logs what the hook calls under home did (sitter's audit
// log) and the tail of every log file the harness keeps there, for a
// failure that depends on whether a hook ran.
func logHookTrail(t *testing.T, home string) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(home, ".sitter-state", "audit.jsonl"))
	t.Logf("audit log:\n%s", b)
	states, _ := filepath.Glob(filepath.Join(home, ".sitter-state", "sessions", "*.json"))
	for _, f := range states {
		b, _ := os.ReadFile(f)
		t.Logf("session state %s:\n%s", filepath.Base(f), b)
	}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".log" {
			return nil
		}
		b, _ := os.ReadFile(p)
		if len(b) > 8<<10 {
			b = b[len(b)-8<<10:]
		}
		t.Logf("%s (tail):\n%s", p, b)
		return nil
	})
}

// lazyTurn is what the agent of a first, capped launch says every turn.
const lazyTurn = "LAZY-TURN: not now, ending my turn."

// babysitResume runs a babysit launch whose agent does nothing, capped
// after one continuation, then `--run-id` with an agent that works, to
// completion; byID: the second launch resumes the first one's harness
// session.
func babysitResume(t *testing.T, harness string, env, extra []string, byID bool) {
	t.Helper()
	bin := install(t, clis[harness])
	home := userHome(t)
	before := snapshot(t, home)
	project, proc, inputs := launchBabysitProject(t)
	llm := startLLM(t, llmscript.Text(lazyTurn))
	common := []string{"--bin", bin, "--workspace", project, "--plugin", filepath.Join(repo(t), "artifacts", "babysitter", harness)}
	for _, a := range extra {
		common = append(common, strings.ReplaceAll(a, "{llm}", llm.URL))
	}
	evs, r := runLaunch(t, home, env, append([]string{harness, "--babysit", proc, "--inputs", inputs, "--max-iterations", "1"}, common...)...)
	b := eventOf(evs, "babysit")
	if b == nil || b["code"] != float64(launch.ExitCap) || r.err == nil {
		logHookTrail(t, home)
		t.Fatalf("first launch: babysit event %v, err %v, want code 3\n%s\n%s", b, r.err, r.stdout, r.stderr)
	}
	runID, session := fmt.Sprint(b["runId"]), fmt.Sprint(b["harnessSession"])
	if byID && (session == "" || session == "<nil>") {
		t.Fatalf("no harness session recorded: %v", b)
	}
	seen := len(llm.Requests())
	llm.SetScript(launchBabysitAgent(sitter(t)))
	evs, r = runLaunch(t, home, env, append([]string{harness, "--run-id", runID}, common...)...)
	if r.err != nil {
		logHookTrail(t, home)
		if st, err := run.Load(filepath.Join(project, ".a5c", "runs", runID)); err == nil {
			for _, ev := range st.Journal.Events {
				t.Logf("journal %s %s %s", ev.RecordedAt, ev.Type, ev.Data)
			}
		}
		t.Fatalf("resume: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if byID {
		if argv := fmt.Sprint(eventOf(evs, "spawn")["argv"]); !strings.Contains(argv, " "+session+" ") {
			t.Errorf("the resumed launch did not resume session %s: %s", session, argv)
		}
		if countEvents(evs, "resume_failed") != 0 {
			t.Errorf("resume failed:\n%s\n%s", r.stdout, r.stderr)
		}
		// The resumed session's first request carries the first session's turns.
		if q := llm.Requests(); len(q) <= seen || !q[seen].Contains(lazyTurn) {
			t.Errorf("the resumed session's first request lacks the earlier conversation")
		}
	}
	b = eventOf(evs, "babysit")
	if b == nil || b["code"] != float64(0) || b["status"] != "completed" {
		t.Fatalf("resume: babysit event %v\n%s", b, r.stderr)
	}
	st := launchJournal(t, fmt.Sprint(b["runDir"]))
	if n := countJournal(st, journal.RunCompleted, nil); n != 1 {
		t.Errorf("%d RUN_COMPLETED events, want 1", n)
	}
	// The first launch binds; the resumed one binds again when the first
	// session was let go (its stop hook reached the cap and released it)
	// and needs not when the launch stopped the harness at its own
	// --max-iterations first, which leaves the session bound to the run:
	// which comes first is a race (seen both ways on one machine).
	if n := countJournal(st, journal.SessionBound, nil); n < 1 {
		t.Errorf("%d SESSION_BOUND events, want at least the first launch's", n)
	}
	sameTree(t, "user HOME", before, snapshot(t, home))
}

// launchBabysitHarnesses are the harnesses besides Claude Code, with the
// mode a babysit launch picks and how each reaches the fake LLM.
var launchBabysitHarnesses = []struct {
	harness, mode string
	env, args     []string
}{
	{"codex", launch.AgentDriven, []string{"OPENAI_API_KEY=sk-fake"}, []string{"--provider", "openai-responses", "--upstream", "{llm}/v1"}},
	{"gemini-cli", launch.AgentDriven, []string{"GEMINI_API_KEY=sk-fake"}, []string{"--provider", "gemini", "--upstream", "{llm}", "--model", geminiModel}},
	{"copilot", launch.AgentDriven, []string{"OPENAI_API_KEY=sk-fake"}, []string{"--provider", "openai", "--upstream", "{llm}/v1"}},
	{"opencode", launch.BridgeHooks, []string{"OPENAI_API_KEY=sk-fake"}, []string{"--provider", "openai", "--upstream", "{llm}/v1"}},
	{"pi", launch.BridgeHooks, []string{"OPENAI_API_KEY=sk-fake"}, []string{"--provider", "openai", "--upstream", "{llm}/v1"}},
}

// TestLaunchBabysitHarnesses: the same unattended babysit launch on the
// other five runnable harnesses: agent-driven (one run, kept going by the
// harness's own stop hook) on Codex, Gemini CLI and Copilot, bridge-hooks
// (sitter runs the harness again while the run is unfinished) on OpenCode
// and Pi.
func TestLaunchBabysitHarnesses(t *testing.T) {
	for _, c := range launchBabysitHarnesses {
		t.Run(c.harness, func(t *testing.T) {
			bin := install(t, clis[c.harness])
			home := userHome(t)
			before := snapshot(t, home)
			project, proc, inputs := launchBabysitProject(t)
			llm := startLLM(t, launchBabysitAgent(sitter(t)))
			args := []string{c.harness, "--bin", bin, "--workspace", project, "--babysit", proc, "--inputs", inputs,
				"--plugin", filepath.Join(repo(t), "artifacts", "babysitter", c.harness)}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "{llm}", llm.URL))
			}
			evs, r := runLaunch(t, home, c.env, args...)
			b := eventOf(evs, "babysit")
			if r.err != nil || b == nil || b["code"] != float64(0) || b["status"] != "completed" {
				t.Fatalf("sitter launch: %v, babysit event %v\n%s\n%s", r.err, b, r.stdout, r.stderr)
			}
			spawns := countEvents(evs, "spawn")
			if c.mode == launch.AgentDriven && spawns != 1 || c.mode == launch.BridgeHooks && (spawns < 2 || countEvents(evs, "hook") == 0) {
				t.Errorf("%s: %d spawns, %d hook calls\n%s", c.mode, spawns, countEvents(evs, "hook"), r.stdout)
			}
			if c.mode == launch.BridgeHooks {
				// Each re-entry carries the stop hook's reason, read in the
				// harness's own answer format.
				blocked := 0
				for _, e := range evs {
					if e["type"] == "stop_decision" && e["continue"] == true && strings.Contains(fmt.Sprint(e["reason"]), "is not finished") {
						blocked++
					}
				}
				if blocked < 2 {
					t.Errorf("%d re-entries with the stop hook's reason, want at least 2\n%s", blocked, r.stdout)
				}
			}
			st := launchJournal(t, fmt.Sprint(b["runDir"]))
			if n := countJournal(st, journal.RunCompleted, nil); n != 1 {
				t.Errorf("%d RUN_COMPLETED events, want 1", n)
			}
			if n := countJournal(st, journal.StopHookInvoked, func(d string) bool { return strings.Contains(d, `"block"`) }); n < 2 {
				t.Errorf("%d stop-hook blocks, want at least 2", n)
			}
			if got, _ := os.ReadFile(filepath.Join(project, "shell.txt")); string(got) != "babysat\n" {
				t.Errorf("the shell effect did not run: %q", got)
			}
			after := snapshot(t, home)
			sameTree(t, "user HOME", before, after)
			// The harness's sessions outlived the overlay: they are in
			// the user's own store, where the harness resumes them.
			root := sessionStoreRoot(c.harness)
			if root == "" {
				t.Fatalf("the atlas gives %s no session store", c.harness)
			}
			kept := 0
			for p := range after {
				if strings.HasPrefix(p, filepath.Join(home, root)+"/") {
					kept++
				}
			}
			if kept == 0 {
				t.Errorf("no session file of the launch in the user's %s", filepath.Join(home, root))
			}
		})
	}
}

// sessionStoreRoot is the directory under HOME where the atlas says the
// harness keeps its sessions ("" when it says nothing).
func sessionStoreRoot(harness string) string {
	for _, s := range gentranscript.Specs {
		if s.Harness == harness {
			return launch.SessionStore{Location: s.Location, Store: s.Store}.Root()
		}
	}
	return ""
}
