//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// Pi and its fork oh-my-pi fire their session-management events (switch,
// fork or branch, tree navigation, model and thinking-level selection,
// manual compaction, oh-my-pi's user bash) on commands a headless -p run
// never gives. Their RPC mode (--mode rpc: JSON commands on stdin, a
// response and the agent's events on stdout) gives them, through the same
// session code the TUI's slash commands call.

// jsonLines collects the JSON objects a process prints on stdout, one per
// line (other lines are skipped), and signals on notify as each arrives.
type jsonLines struct {
	mu     sync.Mutex
	lines  []map[string]any
	notify chan struct{}
}

func newJSONLines() *jsonLines { return &jsonLines{notify: make(chan struct{}, 1)} }

// read collects from r until it ends; the channel it returns is closed
// then.
func (j *jsonLines) read(r io.Reader) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			j.mu.Lock()
			j.lines = append(j.lines, m)
			j.mu.Unlock()
			select {
			case j.notify <- struct{}{}:
			default:
			}
		}
	}()
	return done
}

// rpcProc is a harness in RPC mode.
type rpcProc struct {
	*jsonLines
	t      *testing.T
	stdin  io.WriteCloser
	next   int
	stderr *strings.Builder
}

// startRPC starts bin with args (which select RPC mode) in dir; it is
// stopped at the end of the test.
func startRPC(t *testing.T, dir string, env []string, bin string, args ...string) *rpcProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &rpcProc{jsonLines: newJSONLines(), t: t, stdin: stdin, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := p.read(out)
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cancel()
			<-done
		}
		cancel()
		<-read
		if t.Failed() {
			t.Logf("%s stderr:\n%s", filepath.Base(bin), p.stderr.String())
		}
	})
	return p
}

// wait returns the first line from index from on that match accepts,
// failing the test after two minutes.
func (p *rpcProc) wait(from int, what string, match func(map[string]any) bool) (map[string]any, int) {
	p.t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		p.mu.Lock()
		for i := from; i < len(p.lines); i++ {
			if match(p.lines[i]) {
				l := p.lines[i]
				p.mu.Unlock()
				return l, i + 1
			}
		}
		p.mu.Unlock()
		select {
		case <-p.notify:
		case <-deadline:
			p.t.Fatalf("no %s within two minutes\nstderr:\n%s", what, p.stderr.String())
		}
	}
}

// call sends a command and returns its response's data; the command must
// succeed.
func (p *rpcProc) call(cmd map[string]any) map[string]any {
	p.t.Helper()
	r := p.send(cmd)
	if r["success"] != true {
		p.t.Fatalf("rpc %s failed: %v", cmd["type"], r)
	}
	data, _ := r["data"].(map[string]any)
	return data
}

// send sends a command and returns its response.
func (p *rpcProc) send(cmd map[string]any) map[string]any {
	p.t.Helper()
	p.next++
	id := fmt.Sprintf("e2e-%d", p.next)
	cmd["id"] = id
	b, _ := json.Marshal(cmd)
	p.mu.Lock()
	from := len(p.lines)
	p.mu.Unlock()
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("rpc %s: %v", cmd["type"], err)
	}
	r, _ := p.wait(from, fmt.Sprintf("response to %s", b), func(m map[string]any) bool {
		return m["type"] == "response" && m["id"] == id
	})
	return r
}

// prompt sends a prompt and waits for the end of the run it starts.
func (p *rpcProc) prompt(text string) {
	p.t.Helper()
	p.mu.Lock()
	from := len(p.lines)
	p.mu.Unlock()
	p.call(map[string]any{"type": "prompt", "message": text})
	p.wait(from, "agent_end after the prompt", func(m map[string]any) bool { return m["type"] == "agent_end" })
}

// piFamily is one harness of Pi's family: how it starts in RPC mode, and
// the names its RPC commands and events have.
type piFamily struct {
	harness string
	// rpc writes the fake LLM's provider (models: extra model entries of
	// the provider's model list, JSON objects) and starts RPC mode.
	rpc func(t *testing.T, llm *llmscript.Server, project, home string, more []string, extra ...string) *rpcProc
	// forkList lists the user messages a fork can start from; fork forks
	// from one (entryId); forkEvent is the cancellable event before it and
	// forkedEvent the one after ("" for none).
	forkList, fork, forkEvent, forkedEvent string
	// switchedEvent follows an allowed session switch ("" for none).
	switchedEvent string
	// extensions is the project's extension dir.
	extensions string
	// tui returns the binary, environment and arguments that start the
	// TUI against the fake LLM.
	tui func(t *testing.T, llm *llmscript.Server, home string, more []string) (string, []string, []string)
}

var (
	piFam = piFamily{
		harness: "pi", rpc: piRPC,
		forkList: "get_fork_messages", fork: "fork", forkEvent: "session_before_fork",
		extensions: ".pi/extensions", tui: piTUIArgs,
	}
	ompFam = piFamily{
		harness: "oh-my-pi", rpc: ompRPC,
		forkList: "get_branch_messages", fork: "branch", forkEvent: "session_before_branch", forkedEvent: "session_branch",
		switchedEvent: "session_switch", extensions: ".omp/extensions", tui: ompTUIArgs,
	}
)

// piRPC starts Pi in RPC mode against the fake LLM.
func piRPC(t *testing.T, llm *llmscript.Server, project, home string, more []string, extra ...string) *rpcProc {
	t.Helper()
	bin, env := piSetup(t, llm, home, more, append([]string{`{"id": "fake-model", "reasoning": false}`}, extra...))
	return startRPC(t, project, env, bin, "--offline", "--provider", "fake", "--model", "fake-model", "--mode", "rpc")
}

// ompRPC starts oh-my-pi in RPC mode against the fake LLM.
func ompRPC(t *testing.T, llm *llmscript.Server, project, home string, more []string, extra ...string) *rpcProc {
	t.Helper()
	bin, env := ompSetup(t, llm, home, more, extra)
	return startRPC(t, project, env, bin, "--model", "fake/fake-model", "--no-title", "--mode", "rpc")
}

// treeExtension registers /e2e-tree <entry id>: it navigates the session
// tree to the entry (what /tree does in the TUI, through the command
// context's navigateTree) and writes the outcome to $E2E_DIR/tree.json.
const treeExtension = `import { writeFileSync } from "node:fs";
import { join } from "node:path";

export default function (pi: any) {
  pi.registerCommand("e2e-tree", {
    description: "e2e: navigate the session tree",
    handler: async (args: string, ctx: any) => {
      const r = await ctx.navigateTree(String(args).trim(), { summarize: false });
      writeFileSync(join(process.env.E2E_DIR ?? ".", "tree.json"), JSON.stringify(r ?? null));
    },
  });
}
`

// rpcCase starts a harness of the family in RPC mode with the replier
// plugin installed and replies written; rec is the replier's record dir.
func (f piFamily) rpcCase(t *testing.T, replies map[string]string, o rpcOpts) (p *rpcProc, llm *llmscript.Server, project, rec string) {
	t.Helper()
	project, home, rec := probeCase(t, "")
	for name, body := range replies {
		os.WriteFile(filepath.Join(rec, name), []byte(body), 0o644)
	}
	pluginInstall(t, replierBundle(t, f.harness), f.harness, project, home)
	if o.extension != "" {
		dir := filepath.Join(project, f.extensions)
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "e2e-helper.ts"), []byte(o.extension), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range o.homeFiles {
		path := filepath.Join(home, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := o.script
	if script == nil {
		script = llmscript.Text("done")
	}
	llm = startLLM(t, script)
	return f.rpc(t, llm, project, home, []string{"E2E_DIR=" + rec}, o.models...), llm, project, rec
}

// rpcOpts varies rpcCase: more models for the fake provider (JSON
// objects), an extension loaded from the project, the fake LLM's script
// (default: "done").
type rpcOpts struct {
	models    []string
	extension string
	script    llmscript.Script
	homeFiles map[string]string // path under HOME → content
}

// denyReply is what the replier answers on a phase to deny.
const denyReply = `{"decision":"deny","reason":"REASON-E2E-DENIED"}`

// sessionSwitch: a new session is refused while the sessionSwitch handler
// denies (the response says cancelled, the session stays) and starts when
// it answers nothing.
func (f piFamily) sessionSwitch(t *testing.T) {
	verified(t, f.harness, "deny", "session_before_switch")
	p, _, project, rec := f.rpcCase(t, map[string]string{"sessionSwitch-reply": denyReply}, rpcOpts{})
	before := p.call(map[string]any{"type": "get_state"})["sessionId"]
	if r := p.call(map[string]any{"type": "new_session"}); r["cancelled"] != true {
		t.Errorf("new_session under a deny: %v, want cancelled", r)
	}
	if now := p.call(map[string]any{"type": "get_state"})["sessionId"]; now != before || before == nil {
		t.Errorf("the session changed from %v to %v despite the deny", before, now)
	}
	os.Remove(filepath.Join(rec, "sessionSwitch-reply"))
	if r := p.call(map[string]any{"type": "new_session"}); r["cancelled"] != false {
		t.Errorf("new_session without an answer: %v, want not cancelled", r)
	}
	if now := p.call(map[string]any{"type": "get_state"})["sessionId"]; now == before {
		t.Errorf("the session did not change without the deny")
	}
	evs := events(t, rec)
	got := nativeEvents(t, f.harness, project, evs, "session_before_switch", "sessionSwitch")
	if len(got) != 2 {
		t.Errorf("%d session_before_switch events, want 2", len(got))
	}
	if f.switchedEvent != "" {
		got = append(got, afterSwitch(t, f, project, evs, f.switchedEvent)...)
	}
	observed(t, f.harness, got)
}

// afterSwitch is the recorded events of an observation-only event that
// follows an allowed switch: the phase, the project as cwd when it has one,
// and a session id (the new session's: nativeEvents would want the old).
func afterSwitch(t *testing.T, f piFamily, project string, evs []event, native string) []event {
	t.Helper()
	var out []event
	for _, e := range evs {
		if e.NativeEvent != native {
			continue
		}
		if e.Harness != f.harness || e.Phase != "sessionSwitch" || e.Session.ID == "" || e.Session.Cwd != "" && e.Session.Cwd != project {
			t.Errorf("%s: harness %q, phase %q, session %+v", native, e.Harness, e.Phase, e.Session)
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		t.Errorf("no %s event recorded; got %v", native, nativeNames(evs))
	}
	return out
}

// sessionFork: after one prompt, a fork from its user message is refused
// while the sessionSwitch handler denies and goes through when it answers
// nothing.
func (f piFamily) sessionFork(t *testing.T) {
	verified(t, f.harness, "deny", f.forkEvent)
	p, _, project, rec := f.rpcCase(t, nil, rpcOpts{})
	p.prompt("FORK-POINT: say done")
	msgs, _ := p.call(map[string]any{"type": f.forkList})["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("%s lists no message to fork from", f.forkList)
	}
	entry := msgs[0].(map[string]any)["entryId"]
	os.WriteFile(filepath.Join(rec, "sessionSwitch-reply"), []byte(denyReply), 0o644)
	if r := p.call(map[string]any{"type": f.fork, "entryId": entry}); r["cancelled"] != true {
		t.Errorf("%s under a deny: %v, want cancelled", f.fork, r)
	}
	os.Remove(filepath.Join(rec, "sessionSwitch-reply"))
	if r := p.call(map[string]any{"type": f.fork, "entryId": entry}); r["cancelled"] != false {
		t.Errorf("%s without an answer: %v, want not cancelled", f.fork, r)
	}
	evs := events(t, rec)
	got := nativeEvents(t, f.harness, project, evs, f.forkEvent, "sessionSwitch")
	if len(got) != 2 {
		t.Errorf("%d %s events, want 2", len(got), f.forkEvent)
	}
	if f.forkedEvent != "" {
		got = append(got, afterSwitch(t, f, project, evs, f.forkedEvent)...)
	}
	observed(t, f.harness, got)
}

// sessionTree: after two prompts, navigating the tree back to the first
// (the /e2e-tree command of treeExtension) is refused while the
// sessionSwitch handler denies (no session_tree follows) and goes through
// when it answers nothing.
func (f piFamily) sessionTree(t *testing.T) {
	verified(t, f.harness, "deny", "session_before_tree")
	p, _, project, rec := f.rpcCase(t, nil, rpcOpts{extension: treeExtension})
	p.prompt("TREE-ONE: say done")
	p.prompt("TREE-TWO: say done")
	msgs, _ := p.call(map[string]any{"type": f.forkList})["messages"].([]any)
	if len(msgs) < 2 {
		t.Fatalf("%s lists %d messages, want 2", f.forkList, len(msgs))
	}
	entry := msgs[0].(map[string]any)["entryId"]
	navigate := func() map[string]any {
		t.Helper()
		os.Remove(filepath.Join(rec, "tree.json"))
		p.call(map[string]any{"type": "prompt", "message": fmt.Sprintf("/e2e-tree %v", entry)})
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(filepath.Join(rec, "tree.json")); err == nil {
				var r map[string]any
				json.Unmarshal(b, &r)
				return r
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("/e2e-tree never finished")
		return nil
	}
	os.WriteFile(filepath.Join(rec, "sessionSwitch-reply"), []byte(denyReply), 0o644)
	if r := navigate(); r["cancelled"] != true {
		t.Errorf("tree navigation under a deny: %v, want cancelled", r)
	}
	if n := nativeNames(events(t, rec))["session_tree"]; n != 0 {
		t.Errorf("session_tree fired %d times despite the deny", n)
	}
	os.Remove(filepath.Join(rec, "sessionSwitch-reply"))
	if r := navigate(); r["cancelled"] != false {
		t.Errorf("tree navigation without an answer: %v, want not cancelled", r)
	}
	evs := events(t, rec)
	got := nativeEvents(t, f.harness, project, evs, "session_before_tree", "sessionSwitch")
	got = append(got, nativeEvents(t, f.harness, project, evs, "session_tree", "sessionSwitch")...)
	observed(t, f.harness, got)
}

// eventually waits up to 30 s for the recorded events to hold a native
// event (handlers Pi does not await record after the command returned).
func eventually(t *testing.T, rec, native string) []event {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := events(t, rec)
		if nativeNames(evs)[native] > 0 || time.Now().After(deadline) {
			return evs
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rawField is a top-level member of a recorded event's native payload
// (a dotted path), as text.
func rawField(e event, path string) string {
	var v any
	json.Unmarshal(e.Raw, &v)
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// TestPiRPC drives Pi's session commands in RPC mode.
func TestPiRPC(t *testing.T) {
	t.Run("switch", func(t *testing.T) { piFam.sessionSwitch(t) })
	t.Run("fork", func(t *testing.T) { piFam.sessionFork(t) })
	t.Run("tree", func(t *testing.T) { piFam.sessionTree(t) })
	t.Run("model-thinking", func(t *testing.T) {
		// A second model that reasons: set_model selects it (model_select)
		// and set_thinking_level raises its level (thinking_level_select,
		// which Pi does not await).
		p, _, project, rec := piFam.rpcCase(t, nil, rpcOpts{models: []string{`{"id": "fake-model-2", "reasoning": true}`}})
		p.call(map[string]any{"type": "set_model", "provider": "fake", "modelId": "fake-model-2"})
		p.call(map[string]any{"type": "set_thinking_level", "level": "high"})
		evs := eventually(t, rec, "thinking_level_select")
		models := nativeEvents(t, "pi", project, evs, "model_select", "afterModelSwitch")
		if got := rawField(models[len(models)-1], "model.id"); got != "fake-model-2" {
			t.Errorf("model_select names model %q, want fake-model-2", got)
		}
		levels := nativeEvents(t, "pi", project, evs, "thinking_level_select", "afterModelSwitch")
		var high bool
		for _, e := range levels {
			high = high || rawField(e, "level") == "high"
		}
		if !high {
			t.Errorf("no thinking_level_select says level high")
		}
		observed(t, "pi", append(models, levels...))
	})
}

// TestOhMyPiRPC drives oh-my-pi's session commands in RPC mode.
func TestOhMyPiRPC(t *testing.T) {
	t.Run("switch", func(t *testing.T) { ompFam.sessionSwitch(t) })
	t.Run("branch", func(t *testing.T) { ompFam.sessionFork(t) })
	t.Run("tree", func(t *testing.T) { ompFam.sessionTree(t) })
	t.Run("user-bash", func(t *testing.T) {
		// RPC's bash runs the user's own command through the session's
		// bash runner, which emits user_bash as the TUI's ! does.
		verified(t, "oh-my-pi", "deny", "user_bash")
		p, _, project, rec := ompFam.rpcCase(t, map[string]string{"userShell-reply": denyReply}, rpcOpts{})
		r := p.call(map[string]any{"type": "bash", "command": "echo ran > denied.txt"})
		if r["cancelled"] != true || !strings.Contains(fmt.Sprint(r["output"]), "REASON-E2E-DENIED") {
			t.Errorf("bash under a deny: %v, want cancelled with the reason as output", r)
		}
		if exists(filepath.Join(project, "denied.txt")) {
			t.Errorf("the denied command ran")
		}
		os.Remove(filepath.Join(rec, "userShell-reply"))
		p.call(map[string]any{"type": "bash", "command": "echo ran > allowed.txt"})
		if !exists(filepath.Join(project, "allowed.txt")) {
			t.Errorf("the command did not run without the deny")
		}
		got := nativeEvents(t, "oh-my-pi", project, events(t, rec), "user_bash", "userShell")
		if len(got) != 2 {
			t.Errorf("%d user_bash events, want 2", len(got))
		}
		observed(t, "oh-my-pi", got)
	})
	t.Run("compact", func(t *testing.T) {
		// A manual compaction (RPC compact, the TUI's /compact) after one
		// prompt: refused while the preCompact handler denies (no summary
		// request, no session_compact), done when it answers nothing.
		verified(t, "oh-my-pi", "deny", "session_before_compact")
		// Everything but the last 10 tokens is compacted (default: 20k).
		p, llm, project, rec := ompFam.rpcCase(t, nil, rpcOpts{homeFiles: map[string]string{
			".omp/agent/config.yml": "compaction:\n  keepRecentTokens: 10\n",
		}})
		p.prompt("COMPACT-ME: say done")
		p.prompt("COMPACT-ME-TOO: say done")
		os.WriteFile(filepath.Join(rec, "preCompact-reply"), []byte(denyReply), 0o644)
		r := p.send(map[string]any{"type": "compact"})
		if d, _ := r["data"].(map[string]any); r["success"] == true && d["summary"] != nil || strings.Contains(fmt.Sprint(r["error"]), "Nothing to compact") {
			t.Errorf("compact under a deny: %v, want it refused by the handler", r)
		}
		t.Logf("compact under a deny: %v", r)
		summaries := func() int {
			n := 0
			for _, q := range llm.Requests() {
				if len(q.ToolNames()) == 0 {
					n++
				}
			}
			return n
		}
		if n := summaries(); n != 0 {
			t.Errorf("%d summary requests despite the deny", n)
		}
		if n := nativeNames(events(t, rec))["session_compact"]; n != 0 {
			t.Errorf("session_compact fired despite the deny")
		}
		os.Remove(filepath.Join(rec, "preCompact-reply"))
		p.call(map[string]any{"type": "compact"})
		if summaries() == 0 {
			t.Errorf("no summary request for the allowed compaction")
		}
		evs := events(t, rec)
		got := nativeEvents(t, "oh-my-pi", project, evs, "session_before_compact", "preCompact")
		got = append(got, nativeEvents(t, "oh-my-pi", project, evs, "session.compacting", "preCompact")...)
		got = append(got, nativeEvents(t, "oh-my-pi", project, evs, "session_compact", "postCompact")...)
		observed(t, "oh-my-pi", got)
	})
}
