package transcript_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	gen "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/transcript"
)

func init() {
	transcript.Specs = gen.Specs
	transcript.Presences = gen.Presences
}

func spec(t *testing.T, h string) *transcript.Spec {
	t.Helper()
	s, ok := transcript.Lookup(h)
	if !ok {
		t.Fatalf("no transcript spec for %s", h)
	}
	return s
}

// The captured transcripts: one real turn of each CLI (prompt, one shell
// call, a final answer), see e2e/transcript_capture_test.go.
func TestCaptured(t *testing.T) {
	cases := []struct {
		harness string
		lines   int64
		tool    string
		usage   transcript.Usage
	}{
		{"claude-code", 9, "Bash", transcript.Usage{Input: 200, Output: 20}},
		{"codex", 19, "exec_command", transcript.Usage{Input: 200, Output: 20}},
		// the first gemini answer is restated on a second line (same id):
		// counted once.
		{"gemini-cli", 11, "run_shell_command", transcript.Usage{Input: 200, Output: 20}},
		{"pi", 7, "bash", transcript.Usage{Input: 200, Output: 20}},
		{"copilot", 14, "bash", transcript.Usage{Input: 200, Output: 20}},
	}
	for _, c := range cases {
		t.Run(c.harness, func(t *testing.T) {
			sp := spec(t, c.harness)
			path := filepath.Join("testdata", c.harness+".jsonl")
			s, err := transcript.ReadFile(sp, path, 0, transcript.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"create note.txt saying hi"}; !reflect.DeepEqual(s.Prompts, want) {
				t.Errorf("prompts = %q, want %q", s.Prompts, want)
			}
			if s.LastAssistant != "done: note.txt written <promise>PROOF-1</promise>" {
				t.Errorf("last assistant = %q", s.LastAssistant)
			}
			if len(s.ToolCalls) != 1 || s.ToolCalls[0].Name != c.tool {
				t.Errorf("tool calls = %+v, want one %s", s.ToolCalls, c.tool)
			}
			if s.Usage != c.usage {
				t.Errorf("usage = %+v, want %+v", s.Usage, c.usage)
			}
			if s.To != c.lines || s.SkippedLines != 0 || s.BadLines != 0 {
				t.Errorf("to = %d (skipped %d, bad %d), want %d lines", s.To, s.SkippedLines, s.BadLines, c.lines)
			}
			pos, err := transcript.Position(sp, path, transcript.Options{})
			if err != nil || pos != c.lines {
				t.Errorf("position = %d, %v", pos, err)
			}
			// Nothing happened since the end.
			s2, err := transcript.ReadFile(sp, path, pos, transcript.Options{})
			if err != nil || len(s2.Prompts) != 0 || s2.LastAssistant != "" || len(s2.ToolCalls) != 0 || s2.Usage != (transcript.Usage{}) || s2.To != pos {
				t.Errorf("since the end: %+v, %v", s2, err)
			}
			// Since the line before the last assistant answer: only the answer.
			last, err := transcript.LastAssistant(sp, path)
			if err != nil || last != s.LastAssistant {
				t.Errorf("LastAssistant = %q, %v", last, err)
			}
		})
	}
}

func TestSincePosition(t *testing.T) {
	sp := spec(t, "claude-code")
	// After the prompt line (line 3) only the tool call and the answer remain.
	s, err := transcript.ReadFile(sp, "testdata/claude-code.jsonl", 3, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Prompts) != 0 || len(s.ToolCalls) != 1 || s.Usage.Output != 20 || s.From != 3 {
		t.Errorf("since 3: %+v", s)
	}
	s, _ = transcript.ReadFile(sp, "testdata/claude-code.jsonl", 6, transcript.Options{})
	if len(s.ToolCalls) != 0 || s.Usage.Output != 10 || s.LastAssistant == "" {
		t.Errorf("since 6: %+v", s)
	}
}

// A position past the end (the transcript was replaced or truncated since)
// continues from the transcript's real end, not from the position asked.
func TestFromPastTheEnd(t *testing.T) {
	s, err := transcript.ReadFile(spec(t, "gemini-cli"), "testdata/gemini-cli.jsonl", 500, transcript.Options{})
	if err != nil || s.From != 500 || s.To != 11 || s.PromptCount != 0 {
		t.Errorf("from 500: %+v %v, want to 11", s, err)
	}
	sp := &transcript.Spec{Harness: "x", Format: transcript.JSONEvent, Messages: "m"}
	p := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(p, []byte(`{"m":[{},{}]}`), 0o644)
	if s, err := transcript.ReadFile(sp, p, 5, transcript.Options{}); err != nil || s.To != 2 {
		t.Errorf("json-event from 5: %+v %v, want to 2", s, err)
	}
}

func write(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestModifiedFiles(t *testing.T) {
	t.Run("claude", func(t *testing.T) {
		p := write(t,
			`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":"/p/a.go","content":"x"}},{"type":"tool_use","name":"Read","input":{"file_path":"/p/r.go"}}],"usage":{"input_tokens":5,"output_tokens":1,"cache_read_input_tokens":7,"cache_creation_input_tokens":3}}}`,
			`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","name":"Edit","input":{"file_path":"/p/b.go"}}],"usage":{"input_tokens":5,"output_tokens":2,"cache_read_input_tokens":7,"cache_creation_input_tokens":3}}}`,
			`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":"/p/a.go"}}]}}`,
			"")
		s, err := transcript.ReadFile(spec(t, "claude-code"), p, 0, transcript.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"/p/a.go", "/p/b.go"}; !reflect.DeepEqual(s.ModifiedFiles, want) {
			t.Errorf("modified = %q, want %q", s.ModifiedFiles, want)
		}
		if len(s.ToolCalls) != 4 {
			t.Errorf("tool calls = %+v", s.ToolCalls)
		}
		// m1 is restated: its second usage replaces the first.
		if want := (transcript.Usage{Input: 5, Output: 2, CacheRead: 7, CacheWrite: 3}); s.Usage != want {
			t.Errorf("usage = %+v, want %+v", s.Usage, want)
		}
	})
	t.Run("codex apply_patch", func(t *testing.T) {
		p := write(t,
			`{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Update File: src/x.go\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch"}}`,
			"")
		s, _ := transcript.ReadFile(spec(t, "codex"), p, 0, transcript.Options{})
		if want := []string{"new.txt", "src/x.go", "old.txt"}; !reflect.DeepEqual(s.ModifiedFiles, want) {
			t.Errorf("modified = %q, want %q", s.ModifiedFiles, want)
		}
	})
	t.Run("pi", func(t *testing.T) {
		p := write(t, `{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"edit","arguments":{"path":"a.md"}},{"type":"toolCall","name":"bash","arguments":{"command":"rm b"}}]}}`, "")
		s, _ := transcript.ReadFile(spec(t, "pi"), p, 0, transcript.Options{})
		if want := []string{"a.md"}; !reflect.DeepEqual(s.ModifiedFiles, want) {
			t.Errorf("modified = %q, want %q", s.ModifiedFiles, want)
		}
	})
}

// A Gemini CLI message is restated on later lines with the same id as it
// streams: its tool calls count once, the latest restatement winning, as
// its usage does; a new id adds its own.
func TestRestatedToolCalls(t *testing.T) {
	p := write(t,
		`{"id":"u1","type":"user","content":[{"text":"write a.txt"}]}`,
		`{"id":"g1","type":"gemini","content":"","tokens":{"input":100,"output":10},"toolCalls":[{"id":"c1","name":"write_file","args":{"file_path":"/p/a.txt"},"status":"executing"}]}`,
		`{"$set":{"lastUpdated":"2026-11-30T05:51:13.835Z"}}`,
		`{"id":"g1","type":"gemini","content":"","tokens":{"input":100,"output":10},"toolCalls":[{"id":"c1","name":"write_file","args":{"file_path":"/p/a.txt"},"status":"success"},{"id":"c2","name":"replace","args":{"file_path":"/p/b.txt"},"status":"executing"}]}`,
		`{"id":"g2","type":"gemini","content":"","tokens":{"input":50,"output":5},"toolCalls":[{"id":"c3","name":"write_file","args":{"file_path":"/p/a.txt"}}]}`,
		`{"id":"g3","type":"gemini","content":"x","tokens":{"input":50,"output":5},"toolCalls":[{"id":"c4","name":"read_file","args":{"file_path":"/p/c.txt"}}]}`,
		`{"id":"g3","type":"gemini","content":"done","tokens":{"input":50,"output":5}}`,
		"")
	s, err := transcript.ReadFile(spec(t, "gemini-cli"), p, 0, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []transcript.ToolCall{{Name: "write_file", Files: []string{"/p/a.txt"}}, {Name: "replace", Files: []string{"/p/b.txt"}}, {Name: "write_file", Files: []string{"/p/a.txt"}}}
	if s.ToolCallCount != 3 || !reflect.DeepEqual(s.ToolCalls, want) {
		t.Errorf("tool calls = %d %+v, want %+v", s.ToolCallCount, s.ToolCalls, want)
	}
	if want := []string{"/p/a.txt", "/p/b.txt"}; !reflect.DeepEqual(s.ModifiedFiles, want) {
		t.Errorf("modified = %q, want %q", s.ModifiedFiles, want)
	}
	if want := (transcript.Usage{Input: 200, Output: 20}); s.Usage != want {
		t.Errorf("usage = %+v, want %+v", s.Usage, want)
	}
}

// Claude Code puts its own context (<system-reminder>, <command-…>) in a
// user message's content, as a whole string or as text blocks beside the
// user's: those blocks are left out and the user's text is kept.
func TestSkipPrefixByBlock(t *testing.T) {
	p := write(t,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nctx\n</system-reminder>"},{"type":"text","text":"fix the bug"}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second prompt"},{"type":"text","text":" <system-reminder>\nctx2\n</system-reminder>"},{"type":"text","text":"and more"}]}}`,
		`{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<local-command-stdout>ok</local-command-stdout>"}]}}`,
		"")
	s, err := transcript.ReadFile(spec(t, "claude-code"), p, 0, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fix the bug", "second prompt\nand more"}; !reflect.DeepEqual(s.Prompts, want) || s.PromptCount != 2 {
		t.Errorf("prompts = %d %q, want %q", s.PromptCount, s.Prompts, want)
	}
}

func TestLongLinesAndPartialLine(t *testing.T) {
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 300<<10) + `"}}`
	p := write(t,
		`{"type":"user","message":{"role":"user","content":"one"}}`,
		long,
		`not json but has "user"`,
		`{"type":"user","message":{"role":"user","content":"two"}}`,
		`{"type":"user","message":{"role":"user","content":"being writ`) // no newline: not complete
	s, err := transcript.ReadFile(spec(t, "claude-code"), p, 0, transcript.Options{MaxLine: 100 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Prompts, []string{"one", "two"}) || s.SkippedLines != 1 || s.BadLines != 1 || s.To != 4 {
		t.Errorf("got %+v", s)
	}
	// MaxItems keeps the latest prompts; the count covers all.
	s, _ = transcript.ReadFile(spec(t, "claude-code"), p, 0, transcript.Options{MaxLine: 100 << 10, MaxItems: 1})
	if !reflect.DeepEqual(s.Prompts, []string{"two"}) || s.PromptCount != 2 {
		t.Errorf("MaxItems 1: %q of %d", s.Prompts, s.PromptCount)
	}
	// With a large enough bound the long line is read.
	s, _ = transcript.ReadFile(spec(t, "claude-code"), p, 0, transcript.Options{MaxLine: 1 << 20})
	if len(s.Prompts) != 3 || s.SkippedLines != 0 {
		t.Errorf("big bound: %d prompts, %d skipped", len(s.Prompts), s.SkippedLines)
	}
}

func TestJSONEvent(t *testing.T) {
	sp := &transcript.Spec{Harness: "x", Format: transcript.JSONEvent, Messages: "session.messages",
		Prompts:   []transcript.Record{{When: []transcript.Match{{Path: "role", Value: "user"}}, Text: "text"}},
		Assistant: []transcript.Record{{When: []transcript.Match{{Path: "role", Value: "assistant"}}, Text: "text"}},
	}
	p := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(p, []byte(`{"id":"s","meta":{"a":[1,2]},"session":{"title":"t","messages":[
		{"role":"user","text":"hi"},{"role":"assistant","text":"hello"},{"role":"user","text":"again"},{"role":"assistant","text":"bye"}]}}`), 0o644)
	s, err := transcript.ReadFile(sp, p, 0, transcript.Options{})
	if err != nil || !reflect.DeepEqual(s.Prompts, []string{"hi", "again"}) || s.LastAssistant != "bye" || s.To != 4 {
		t.Fatalf("%+v %v", s, err)
	}
	s, _ = transcript.ReadFile(sp, p, 2, transcript.Options{})
	if !reflect.DeepEqual(s.Prompts, []string{"again"}) || s.From != 2 || s.To != 4 {
		t.Errorf("since 2: %+v", s)
	}
	if n, err := transcript.Position(sp, p, transcript.Options{}); n != 4 || err != nil {
		t.Errorf("position %d %v", n, err)
	}
}

func TestResolve(t *testing.T) {
	home := t.TempDir()
	cwd := "/home/dev/my proj"
	dir := filepath.Join(home, ".claude", "projects", "-home-dev-my-proj")
	os.MkdirAll(dir, 0o755)
	want := filepath.Join(dir, "abc-123.jsonl")
	os.WriteFile(want, []byte("{}\n"), 0o644)
	sp := spec(t, "claude-code")
	got, trace, err := transcript.Resolve(sp, "/nonexistent/x.jsonl", "abc-123", cwd, home, func(string) string { return "" })
	if err != nil || got != want || len(trace) != 2 {
		t.Fatalf("resolve = %q %q %v", got, trace, err)
	}
	// $CLAUDE_CONFIG_DIR replaces ~/.claude.
	alt := t.TempDir()
	os.MkdirAll(filepath.Join(alt, "projects", "-home-dev-my-proj"), 0o755)
	want2 := filepath.Join(alt, "projects", "-home-dev-my-proj", "abc-123.jsonl")
	os.WriteFile(want2, []byte("{}\n"), 0o644)
	got, _, err = transcript.Resolve(sp, "", "abc-123", cwd, home, func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return alt
		}
		return ""
	})
	if err != nil || got != want2 {
		t.Fatalf("with env: %q %v", got, err)
	}
	// Pi: ~/.pi/agent/sessions/--<cwd dashed>--/<ts>_<uuid>.jsonl
	pd := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-my proj--")
	os.MkdirAll(pd, 0o755)
	pw := filepath.Join(pd, "2026-01-01T00-00-00-000Z_u-1.jsonl")
	os.WriteFile(pw, []byte("{}\n"), 0o644)
	got, _, err = transcript.Resolve(spec(t, "pi"), "", "u-1", cwd, home, nil)
	if err != nil || got != pw {
		t.Fatalf("pi: %q %v", got, err)
	}
	if _, _, err := transcript.Resolve(spec(t, "pi"), "", "nope", cwd, home, nil); err == nil {
		t.Error("resolved a session that has no file")
	}
}

// TestSlug checks Claude Code's project directory names (2.1.332: every
// UTF-16 code unit outside [A-Za-z0-9] becomes "-"; a name over 200
// characters keeps 200 and gets "-" and a base-36 hash of the cwd). The
// expected names were computed by the CLI's own functions under node.
func TestSlug(t *testing.T) {
	for cwd, want := range map[string]string{
		"/home/dev/my proj":                           "-home-dev-my-proj",
		"/tmp/r4/café":                                "-tmp-r4-caf-",
		"/home/dev/😀x":                                "-home-dev---x", // outside the BMP: two code units
		"/p/" + strings.Repeat("z", 197):              "-p-" + strings.Repeat("z", 197),
		"/p/" + strings.Repeat("z", 198):              "-p-" + strings.Repeat("z", 197) + "-n7dswi",
		"/home/dev/" + strings.Repeat("a", 250):       "-home-dev-" + strings.Repeat("a", 190) + "-u4xdh7",
		"/srv/ünï/" + strings.Repeat("😀b", 80) + "/x": "-srv--n--" + strings.Repeat("--b", 63) + "--" + "-4tifcu",
	} {
		if got := transcript.Slug(cwd); got != want {
			t.Errorf("Slug(%q) = %q, want %q", cwd, got, want)
		}
	}
}

// TestResolveClaudeProjectDirs finds Claude Code transcripts under
// non-ASCII and over-long project paths, and, as Claude Code does, a long
// path's directory with another hash suffix (one an older CLI wrote).
func TestResolveClaudeProjectDirs(t *testing.T) {
	sp := spec(t, "claude-code")
	home := t.TempDir()
	put := func(dir, id string) string {
		d := filepath.Join(home, ".claude", "projects", dir)
		os.MkdirAll(d, 0o755)
		p := filepath.Join(d, id+".jsonl")
		os.WriteFile(p, []byte("{}\n"), 0o644)
		return p
	}
	cafe := put("-tmp-r4-caf-", "S")
	long := "/home/dev/" + strings.Repeat("a", 250)
	exact := put("-home-dev-"+strings.Repeat("a", 190)+"-u4xdh7", "L")
	other := put("-home-dev-"+strings.Repeat("a", 190)+"-1x2y3z", "M")
	for _, c := range []struct{ cwd, id, want string }{
		{"/tmp/r4/café", "S", cafe},
		{long, "L", exact},
		{long, "M", other},
	} {
		got, trace, err := transcript.Resolve(sp, "", c.id, c.cwd, home, nil)
		if err != nil || got != c.want {
			t.Errorf("%s in %.20s…: %q %v (%q), want %q", c.id, c.cwd, got, err, trace, c.want)
		}
	}
	// The prefix is only a fallback for names that were cut.
	put("-tmp-r4-caf--x", "T")
	if got, _, err := transcript.Resolve(sp, "", "T", "/tmp/r4/café", home, nil); err == nil {
		t.Errorf("found %q under another project's directory", got)
	}
}

// TestLargeTranscriptBoundedMemory reads a 200 MB synthetic transcript and
// checks that the memory the Go runtime obtained stays far below its size.
func TestLargeTranscriptBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("200 MB transcript: skipped with -short")
	}
	p := filepath.Join(t.TempDir(), "big.jsonl")
	lines := WriteSynthetic(t, p, 200<<20)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := transcript.ReadFile(spec(t, "claude-code"), p, 0, transcript.Options{MaxLine: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if len(s.Prompts) != transcript.DefaultMaxItems || s.PromptCount < 50000 || len(s.ModifiedFiles) != 100 {
		t.Errorf("%d prompts kept of %d, %d modified files", len(s.Prompts), s.PromptCount, len(s.ModifiedFiles))
	}
	if s.To != lines || s.SkippedLines != 1 || s.LastAssistant != "final" {
		t.Errorf("to %d of %d lines, skipped %d, last %q", s.To, lines, s.SkippedLines, s.LastAssistant)
	}
	grown := int64(after.Sys) - int64(before.Sys)
	t.Logf("200 MB, %d lines: runtime memory grew %d MB (Sys %d MB)", lines, grown>>20, after.Sys>>20)
	if grown > 64<<20 {
		t.Errorf("memory grew %d MB reading a 200 MB transcript", grown>>20)
	}
}

// WriteSynthetic writes a Claude-shaped transcript of about size bytes
// (prompts, tool calls, answers with usage, one 2 MB line) and returns
// its line count.
func WriteSynthetic(t testing.TB, path string, size int64) int64 {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	pad := strings.Repeat("lorem ipsum ", 150)
	var n, lines int64
	for i := 0; n < size; i++ {
		var l string
		switch i % 3 {
		case 0:
			l = fmt.Sprintf(`{"type":"user","message":{"role":"user","content":"prompt %d %s"}}`, i, pad)
		case 1:
			l = fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":"f%d.go"}}],"usage":{"input_tokens":1,"output_tokens":1}}}`, i, i%100)
		default:
			l = fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"text","text":"answer %d %s"}]}}`, i, i, pad)
		}
		if i == 1000 {
			l = `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("y", 2<<20) + `"}}`
		}
		w.WriteString(l + "\n")
		n += int64(len(l) + 1)
		lines++
	}
	l := `{"type":"assistant","message":{"id":"last","role":"assistant","content":[{"type":"text","text":"final"}]}}` + "\n"
	w.WriteString(l)
	lines++
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// LastAssistant reads a large transcript's tail first, and the whole file
// when the tail has no assistant text.
func TestLastAssistantTail(t *testing.T) {
	sp := spec(t, "claude-code")
	pad := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("p", 1000) + `"}}` + "\n"
	dir := t.TempDir()
	mk := func(name string, head, tail string) string {
		p := filepath.Join(dir, name)
		f, _ := os.Create(p)
		f.WriteString(head)
		for i := 0; i < 6000; i++ { // ~6 MB, past the 4 MB tail
			f.WriteString(pad)
		}
		f.WriteString(tail)
		f.Close()
		return p
	}
	a := func(text string) string {
		return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}]}}` + "\n"
	}
	if got, err := transcript.LastAssistant(sp, mk("tail.jsonl", a("early"), a("late"))); err != nil || got != "late" {
		t.Errorf("tail: %q %v", got, err)
	}
	if got, err := transcript.LastAssistant(sp, mk("head.jsonl", a("early"), "")); err != nil || got != "early" {
		t.Errorf("head only: %q %v", got, err)
	}
}
