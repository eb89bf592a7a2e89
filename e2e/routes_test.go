//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// routesRig is three fake upstreams of different protocols behind one
// routes file: A speaks OpenAI Chat (background calls), B Anthropic
// Messages (the main turn), C Gemini (above the long-context threshold).
type routesRig struct {
	a, b, c *llmscript.Server
	file    string
	env     []string
}

// routesThreshold is the long-context rule's threshold, in estimated
// tokens (request bytes / 4): above Claude Code 2.1.197's main turn (its
// system prompt and 25 tools: 89 kB, about 22k), below that turn with the
// long prompt (100 kB more; one argument may not exceed 128 KiB).
const routesThreshold = 30000

func newRoutesRig(t *testing.T) *routesRig {
	t.Helper()
	g := &routesRig{
		a: startLLM(t, llmscript.Text("Routed title")),
		b: startLLM(t, llmscript.ShellThenText("echo routed > routed.txt", "done")),
		c: startLLM(t, llmscript.ShellThenText("echo long > long.txt", "done")),
	}
	routes := fmt.Sprintf(`{
  "providers": {
    "a": {"provider": "openai", "baseURL": %q, "keyEnv": "ROUTES_KEY_A"},
    "b": {"provider": "anthropic", "baseURL": %q, "keyEnv": "ROUTES_KEY_B"},
    "c": {"provider": "gemini", "baseURL": %q, "keyEnv": "ROUTES_KEY_C"}
  },
  "rules": {
    "default": "b,claude-main",
    "background": {"use": "a,gpt-background", "fallbacks": ["default"]},
    "longContext": {"use": "c,gemini-long", "threshold": %d}
  }
}`, g.a.URL+"/v1", g.b.URL, g.c.URL, routesThreshold)
	g.file = filepath.Join(t.TempDir(), "routes.json")
	if err := os.WriteFile(g.file, []byte(routes), 0o600); err != nil {
		t.Fatal(err)
	}
	g.env = []string{"ROUTES_KEY_A=sk-a", "ROUTES_KEY_B=sk-b", "ROUTES_KEY_C=sk-c"}
	return g
}

// launch runs one headless routed launch of harness in a fresh workspace
// and returns the workspace and the routed requests the proxy recorded.
func (g *routesRig) launch(t *testing.T, harness, prompt string) (string, []map[string]any) {
	t.Helper()
	bin := install(t, clis[harness])
	home, project := userHome(t), t.TempDir()
	evs, r := runLaunch(t, home, g.env, harness, "--bin", bin, "--workspace", project, "--prompt", prompt, "--routes", g.file)
	if r.err != nil {
		t.Fatalf("sitter launch %s --routes: %v\n%s\n%s", harness, r.err, r.stdout, r.stderr)
	}
	ps := eventOf(evs, "proxy_started")
	if ps == nil || ps["routes"] != g.file {
		t.Errorf("no proxy_started event with the routes file: %v", evs)
	}
	return project, readRecords(t, home)
}

// readRecords reads the proxy's route records in home's state dir.
func readRecords(t *testing.T, home string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	f, err := os.Open(filepath.Join(home, ".sitter-state", "proxy", "routes.jsonl"))
	if err != nil {
		t.Fatalf("no route record: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("route record line %q: %v", sc.Text(), err)
		}
		recs = append(recs, m)
	}
	for _, m := range recs {
		t.Logf("rule %v → %v,%v status %v attempts %v", m["rule"], m["provider"], m["model"], m["status"], m["attempts"])
	}
	return recs
}

func hasRecord(recs []map[string]any, rule, provider string) bool {
	for _, m := range recs {
		if m["rule"] == rule && m["provider"] == provider && m["status"] == float64(200) {
			return true
		}
	}
	return false
}

// isBackground: a Claude Code housekeeping call (the session title and
// the like): it offers no tools, where every main turn does.
func isBackground(q *llmscript.Request) bool {
	return len(q.ToolNames()) == 0
}

// claudeRoutedTUI runs one text turn of the real Claude Code TUI through
// sitter launch --routes (hook-driven) and returns the route records:
// 2.1.332 makes its tool-less housekeeping call (the session title) in the
// TUI, not under -p. It waits for the main turn's answer, then up to 30 s
// for a tool-less request to reach A or B.
func (g *routesRig) claudeRoutedTUI(t *testing.T) []map[string]any {
	t.Helper()
	bin := install(t, clis["claude-code"])
	home, project := userHome(t), t.TempDir()
	d := startTTY(t, project, append(baseEnv(t, home), g.env...), sitter(t), "launch", "claude-code", "--mode", "hook-driven", "--bin", bin, "--workspace", project, "--routes", g.file)
	d.waitScreen(`for shortcuts|shift\+tab to cycle`, 90*time.Second)
	d.typeLine("say something")
	d.waitScreen(`TUI-TURN-DONE`, 90*time.Second)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if g.a.Any(isBackground) || g.b.Any(isBackground) {
			break
		}
	}
	d.send("\x03")
	d.send("\x03")
	d.wait(30 * time.Second)
	return readRecords(t, home)
}

// TestRoutesClaudeCode: a real Claude Code session through sitter launch
// --routes: its main turn lands on B (Anthropic), a request above the
// long-context threshold on C (Gemini), and, in the TUI, its background
// call (no tools) on A (OpenAI Chat), asserted at the fakes; A answering
// 429 falls back to B within the same call.
func TestRoutesClaudeCode(t *testing.T) {
	g := newRoutesRig(t)
	project, recs := g.launch(t, "claude-code", "write the file")
	if b, err := os.ReadFile(filepath.Join(project, "routed.txt")); err != nil || string(b) != "routed\n" {
		t.Errorf("the main turn's tool call did not run: %q %v", b, err)
	}
	if g.a.Any(func(q *llmscript.Request) bool { return q.HasToolResult() || len(q.ToolNames()) > 0 }) {
		t.Errorf("A got a main-turn request")
	}
	if !g.b.Any(func(q *llmscript.Request) bool {
		return q.Protocol == "anthropic" && q.HasToolResult() && q.Contains("claude-main")
	}) {
		t.Errorf("B (Anthropic) never got the main turn's tool result")
	}
	if len(g.c.Requests()) != 0 {
		t.Errorf("C got %d requests below the threshold", len(g.c.Requests()))
	}
	if !hasRecord(recs, "default", "b") {
		t.Errorf("the record lacks default→b: %v", recs)
	}

	// The TUI's background call goes to A.
	g.b.SetScript(func(q *llmscript.Request) llmscript.Turn { return llmscript.Turn{Text: "TUI-TURN-DONE"} })
	recs = g.claudeRoutedTUI(t)
	if !g.a.Any(func(q *llmscript.Request) bool {
		return q.Protocol == "chat" && isBackground(q) && q.Contains("gpt-background")
	}) {
		t.Errorf("A (OpenAI Chat) never got the background call")
	}
	if g.b.Any(isBackground) {
		t.Errorf("B got a background call though A answered")
	}
	if !hasRecord(recs, "background", "a") || !hasRecord(recs, "default", "b") {
		t.Errorf("the record lacks background→a or default→b: %v", recs)
	}
	g.b.SetScript(llmscript.ShellThenText("echo routed > routed.txt", "done"))

	// Above the threshold: the main turn goes to C.
	long := "write the file. " + strings.Repeat("Context line for the long-context rule. ", 2500)
	project, recs = g.launch(t, "claude-code", long)
	if b, err := os.ReadFile(filepath.Join(project, "long.txt")); err != nil || string(b) != "long\n" {
		t.Errorf("the long turn's tool call did not run: %q %v", b, err)
	}
	if !g.c.Any(func(q *llmscript.Request) bool {
		return q.Protocol == "gemini" && q.Contains("Context line for the long-context rule")
	}) {
		t.Errorf("C (Gemini) never got the long request")
	}
	if !hasRecord(recs, "longContext", "c") {
		t.Errorf("the record lacks longContext→c: %v", recs)
	}

	// A answers 429: the TUI's background call falls back to B.
	g.a.SetScript(func(*llmscript.Request) llmscript.Turn { return llmscript.Turn{Status: 429, Text: "rate limited"} })
	g.b.SetScript(func(q *llmscript.Request) llmscript.Turn { return llmscript.Turn{Text: "TUI-TURN-DONE"} })
	before := len(g.b.Requests())
	recs = g.claudeRoutedTUI(t)
	fell := false
	for _, q := range g.b.Requests()[before:] {
		fell = fell || isBackground(q)
	}
	if !fell {
		t.Errorf("B never got the background call A refused")
	}
	fallback := false
	for _, m := range recs {
		f, _ := m["failed"].([]any)
		fallback = fallback || m["rule"] == "background" && m["provider"] == "b" && m["status"] == float64(200) && len(f) == 1 && f[0] == "a,gpt-background"
	}
	if !fallback {
		t.Errorf("the record has no background call answered by b after a failed: %v", recs)
	}
}

// TestRoutesCodexGemini: the same routes file drives real Codex (OpenAI
// Responses) and Gemini CLI (Gemini) sessions: their main turns land on B
// (Anthropic) through the proxy.
func TestRoutesCodexGemini(t *testing.T) {
	for _, h := range []string{"codex", "gemini-cli"} {
		t.Run(h, func(t *testing.T) {
			g := newRoutesRig(t)
			project, recs := g.launch(t, h, "write the file")
			if b, err := os.ReadFile(filepath.Join(project, "routed.txt")); err != nil || string(b) != "routed\n" {
				t.Errorf("the tool call did not run: %q %v", b, err)
			}
			if !g.b.Any(func(q *llmscript.Request) bool {
				return q.Protocol == "anthropic" && q.HasToolResult() && q.Contains("claude-main")
			}) {
				t.Errorf("B (Anthropic) never got %s's tool result", h)
			}
			if !hasRecord(recs, "default", "b") {
				t.Errorf("the record lacks default→b: %v", recs)
			}
		})
	}
}

// TestRoutesClaudeModelSwitch: `/model provider,model` typed in a real
// Claude Code TUI session launched through sitter launch --routes: the turn
// before the switch goes by the rules (default: B, Anthropic), the turn
// after it straight to the named provider with the named model (C,
// Gemini), asserted at the fakes and in the route record.
func TestRoutesClaudeModelSwitch(t *testing.T) {
	g := newRoutesRig(t)
	g.b.SetScript(llmscript.Text("FIRST-TURN-DONE"))
	g.c.SetScript(llmscript.Text("SECOND-TURN-DONE"))
	bin := install(t, clis["claude-code"])
	home, project := userHome(t), t.TempDir()
	env := append(baseEnv(t, home), g.env...)
	d := startTTY(t, project, env, sitter(t), "launch", "claude-code", "--mode", "hook-driven", "--bin", bin, "--workspace", project, "--routes", g.file)
	// The prompt is ready: the footer names the shortcuts (2.1.197) or the
	// permission mode (2.1.332 starts in auto mode).
	d.waitScreen(`for shortcuts|shift\+tab to cycle`, 90*time.Second)
	d.typeLine("say the first thing")
	d.waitScreen(`FIRST-TURN-DONE`, 90*time.Second)
	mainTurn := func(q *llmscript.Request) bool {
		return len(q.ToolNames()) > 0 && q.UserTextContains("the second thing")
	}
	if !g.b.Any(func(q *llmscript.Request) bool {
		return q.Protocol == "anthropic" && len(q.ToolNames()) > 0 && q.UserTextContains("the first thing") && q.Contains(`"claude-main"`)
	}) {
		t.Errorf("B (Anthropic) never got the first main turn with model claude-main")
	}
	before := len(g.c.Requests())
	d.typeLine("/model c,gemini-direct")
	// Claude (2.1.197, 2.1.332) asks before it switches a conversation
	// cached for the old model.
	// Under load the dialog can drop an Enter pressed as it draws: press
	// it again while the dialog is still up.
	d.waitScreen(`Yes, switch to c,gemini-direct`, 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	d.send("\r")
	switched := regexp.MustCompile(`Set model to.*c,gemini-direct`)
	pressed := time.Now()
	d.waitFor("the switch to c,gemini-direct", time.Minute, func(screen string) bool {
		if switched.MatchString(screen) {
			return true
		}
		if time.Since(pressed) > 3*time.Second && strings.Contains(screen, "Yes, switch to c,gemini-direct") {
			d.send("\r")
			pressed = time.Now()
		}
		return false
	})
	d.typeLine("say the second thing")
	d.waitScreen(`SECOND-TURN-DONE`, 90*time.Second)
	var got *llmscript.Request
	for _, q := range g.c.Requests()[before:] {
		if mainTurn(q) {
			got = q
		}
	}
	if got == nil {
		t.Fatalf("C (Gemini) never got the turn after /model c,gemini-direct; C got %d requests", len(g.c.Requests())-before)
	}
	if got.Protocol != "gemini" || !strings.Contains(got.Path, "/models/gemini-direct:") {
		t.Errorf("the switched turn reached C as %s %s, want Gemini model gemini-direct", got.Protocol, got.Path)
	}
	if g.b.Any(mainTurn) || g.a.Any(mainTurn) {
		t.Errorf("the turn after the switch reached A or B too")
	}
	d.send("\x03")
	d.send("\x03")
	d.wait(30 * time.Second)
	recs := readRecords(t, home)
	direct := false
	for _, m := range recs {
		direct = direct || m["rule"] == "direct" && m["provider"] == "c" && m["model"] == "gemini-direct" && m["status"] == float64(200)
	}
	if !direct || !hasRecord(recs, "default", "b") {
		t.Errorf("the record lacks direct→c,gemini-direct or default→b: %v", recs)
	}
}

// TestRoutesBackgroundCodexGemini: the housekeeping calls of Codex and
// Gemini CLI that the pinned versions make (atlas/routing.cue) land on the
// background upstream A, their main turns on B. Codex compacts its
// context when a turn reports more prompt tokens than its auto-compact
// limit; Gemini CLI compresses its chat before a prompt when the last
// turn reported over half its model's token limit (and the history ends
// with a model answer: a second prompt in the TUI).
func TestRoutesBackgroundCodexGemini(t *testing.T) {
	background := func(t *testing.T, g *routesRig, marker string) {
		t.Helper()
		if !g.a.Any(func(q *llmscript.Request) bool {
			return q.Protocol == "chat" && q.Contains(marker) && len(q.ToolNames()) == 0
		}) {
			t.Errorf("A (OpenAI Chat) never got the background call (%q)", marker)
		}
		if g.b.Any(func(q *llmscript.Request) bool { return q.Contains(marker) }) {
			t.Errorf("B got the background call (%q)", marker)
		}
		if g.a.Any(func(q *llmscript.Request) bool { return len(q.ToolNames()) > 0 }) {
			t.Errorf("A got a main turn")
		}
	}
	t.Run("codex", func(t *testing.T) {
		g := newRoutesRig(t)
		g.b.SetScript(compactScript(0, 2000000))
		_, recs := g.launch(t, "codex", "work in steps")
		// codex-rs's inline compaction (no tools): the checkpoint prompt.
		background(t, g, "You are performing a CONTEXT CHECKPOINT COMPACTION")
		// The turn after the compaction carries its summary, not the tool result.
		turns := 0
		for _, q := range g.b.Requests() {
			if len(q.ToolNames()) > 0 {
				turns++
			}
		}
		if turns < 2 {
			t.Errorf("B got %d main turns, want the one before the compaction and the one after", turns)
		}
		if !hasRecord(recs, "background", "a") || !hasRecord(recs, "default", "b") {
			t.Errorf("the record lacks background→a or default→b: %v", recs)
		}
	})
	t.Run("gemini-cli", func(t *testing.T) {
		g := newRoutesRig(t)
		var n atomic.Int32
		g.b.SetScript(func(q *llmscript.Request) llmscript.Turn {
			if len(q.ToolNames()) == 0 { // a background call A did not take
				return llmscript.Turn{Text: "<state_snapshot>B</state_snapshot>"}
			}
			if n.Add(1) == 1 {
				return llmscript.Turn{Text: "FIRST-TURN-DONE", InputTokens: 600000}
			}
			return llmscript.Turn{Text: "SECOND-TURN-DONE"}
		})
		bin := install(t, clis["gemini-cli"])
		home, project := userHome(t), t.TempDir()
		env := append(baseEnv(t, home), g.env...)
		d := startTTY(t, project, env, sitter(t), "launch", "gemini-cli", "--mode", "hook-driven", "--bin", bin, "--workspace", project, "--routes", g.file)
		d.waitScreen(`Type your message`, 2*time.Minute)
		time.Sleep(2 * time.Second)
		d.typeLine("say the first thing")
		d.waitScreen(`FIRST-TURN-DONE`, 2*time.Minute)
		d.typeLine("say the second thing")
		d.waitScreen(`SECOND-TURN-DONE`, 2*time.Minute)
		// ChatCompressionService.compress: the <state_snapshot> request.
		background(t, g, "state_snapshot")
		d.send("\x03")
		d.send("\x03")
		d.wait(30 * time.Second)
		recs := readRecords(t, home)
		if !hasRecord(recs, "background", "a") || !hasRecord(recs, "default", "b") {
			t.Errorf("the record lacks background→a or default→b: %v", recs)
		}
	})
}
