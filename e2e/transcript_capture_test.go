//go:build e2e

package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
)

// TestCaptureTranscripts runs one small turn of each CLI that writes a
// JSONL transcript and, with SITTER_CAPTURE=1, writes the transcript with
// paths scrubbed to runtime/transcript/testdata/<harness>.jsonl. Without
// it, the test checks that each transcript exists and carries the turn's
// prompt and answer.
func TestCaptureTranscripts(t *testing.T) {
	const prompt = "create note.txt saying hi"
	const answer = "done: note.txt written <promise>PROOF-1</promise>"
	cases := []struct {
		harness string
		where   string // below home
		run     func(t *testing.T, llm *llmscript.Server, project, home string) runResult
	}{
		{"claude-code", ".claude/projects", func(t *testing.T, llm *llmscript.Server, project, home string) runResult {
			return claudeRun(t, llm, project, home, prompt)
		}},
		{"codex", ".codex/sessions", func(t *testing.T, llm *llmscript.Server, project, home string) runResult {
			return codexRun(t, llm, project, home, nil, prompt)
		}},
		{"gemini-cli", ".gemini/tmp", func(t *testing.T, llm *llmscript.Server, project, home string) runResult {
			return geminiRun(t, llm, project, home, nil, prompt)
		}},
		{"pi", ".pi/agent/sessions", func(t *testing.T, llm *llmscript.Server, project, home string) runResult {
			return piRun(t, llm, project, home, nil, prompt)
		}},
		{"copilot", ".copilot/session-state", func(t *testing.T, llm *llmscript.Server, project, home string) runResult {
			return copilotRun(t, llm, project, home, nil, prompt)
		}},
	}
	for _, c := range cases {
		t.Run(c.harness, func(t *testing.T) {
			tmp, project, home := projectHome(t)
			llm := startLLM(t, llmscript.ShellThenText("echo hi > note.txt", answer))
			r := c.run(t, llm, project, home)
			if r.err != nil {
				t.Fatalf("%s: %v\n%s\n%s", c.harness, r.err, r.stdout, r.stderr)
			}
			var found []string
			filepath.WalkDir(filepath.Join(home, c.where), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
					found = append(found, p)
				}
				return nil
			})
			if len(found) != 1 {
				t.Fatalf("want one transcript under %s, found %v", c.where, found)
			}
			b, err := os.ReadFile(found[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte("note.txt saying hi")) || !bytes.Contains(b, []byte("PROOF-1")) {
				t.Fatalf("transcript %s lacks the prompt or the answer:\n%s", found[0], b)
			}
			if os.Getenv("SITTER_CAPTURE") != "1" {
				return
			}
			// Scrub: the temp dirs (also in their slug forms) become
			// /home/dev/acme and /home/dev.
			b = scrub(b, project, "/home/dev/acme")
			b = scrub(b, home, "/home/dev")
			b = scrub(b, tmp, "/tmp/x")
			out := filepath.Join(repo(t), "runtime", "transcript", "testdata", c.harness+".jsonl")
			if err := os.WriteFile(out, b, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s (%d bytes) from %s", out, len(b), strings.TrimPrefix(found[0], home))
		})
	}
}

func scrub(b []byte, from, to string) []byte {
	b = bytes.ReplaceAll(b, []byte(from), []byte(to))
	slug := func(s string) string {
		var sb strings.Builder
		for _, r := range s {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				sb.WriteRune(r)
			} else {
				sb.WriteByte('-')
			}
		}
		return sb.String()
	}
	b = bytes.ReplaceAll(b, []byte(slug(from)), []byte(slug(to)))
	b = bytes.ReplaceAll(b, []byte(strings.ReplaceAll(from, "/", "-")), []byte(strings.ReplaceAll(to, "/", "-")))
	return b
}
