package host

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/transcript"
)

// The generated transcript tables are static slices: wiring them in costs
// an assignment, nothing at start-up (runtime/session's stop check reads
// them through runtime/transcript).
func init() {
	transcript.Specs = gentranscript.Specs
	transcript.Presences = gentranscript.Presences
}

const transcriptUsage = `usage: sitter transcript <harness> <path> [--from POS] [--max-line BYTES] [--json]
       sitter transcript <harness> --session ID [--cwd DIR] [--from POS] [--json]
POS is a line offset (jsonl-cli) or a message index (json-event); the answer's
"to" is the position to continue from.`

// runTranscript summarises a harness's transcript since a position.
func runTranscript(args []string, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	var pos []string
	var from int64
	var maxLine int
	var session, cwd string
	asJSON := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "-") {
				return v, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			fmt.Fprintf(stderr, "sitter: transcript: %s needs a value\n", a)
			return "", false
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--json", "-json":
			asJSON = true
		case "--from", "-from", "--max-line", "--session", "--cwd":
			v, ok := val()
			if !ok {
				return 2
			}
			switch name {
			case "--session":
				session = v
			case "--cwd":
				cwd = v
			default:
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					fmt.Fprintf(stderr, "sitter: transcript: %s %q: want a non-negative integer\n", name, v)
					return 2
				}
				if name == "--max-line" {
					maxLine = int(n)
				} else {
					from = n
				}
			}
		case "-h", "--help", "help":
			fmt.Fprintln(stdout, transcriptUsage)
			return 0
		default:
			if strings.HasPrefix(a, "-") {
				fmt.Fprintf(stderr, "sitter: transcript: unknown flag %s\n%s\n", a, transcriptUsage)
				return 2
			}
			pos = append(pos, a)
		}
	}
	if len(pos) < 1 || len(pos) > 2 || (len(pos) == 1) == (session == "") {
		fmt.Fprintln(stderr, transcriptUsage)
		return 2
	}
	id := pos[0]
	if d, _, err := reg().Resolve(pos[0]); err == nil {
		id = d.ID
	}
	spec, ok := transcript.Lookup(id)
	if !ok {
		fmt.Fprintf(stderr, "sitter: transcript: the atlas has no transcript for %q\n", pos[0])
		return 2
	}
	if !spec.TranscriptAnalysis {
		fmt.Fprintf(stderr, "sitter: transcript: %s transcripts cannot be analysed (atlas capability transcriptAnalysis is false)\n", id)
		return 1
	}
	var path string
	var trace []string
	if len(pos) == 2 {
		path = pos[1]
	} else {
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		home, _ := os.UserHomeDir()
		var err error
		path, trace, err = transcript.Resolve(spec, "", session, cwd, home, os.Getenv)
		if err != nil {
			fmt.Fprintf(stderr, "sitter: transcript: %v (%s)\n", err, strings.Join(trace, "; "))
			return 1
		}
	}
	s, err := transcript.ReadFile(spec, path, from, transcript.Options{MaxLine: maxLine})
	if err != nil {
		fmt.Fprintf(stderr, "sitter: transcript: %v\n", err)
		return 1
	}
	if asJSON {
		return writeJSON(stdout, stderr, struct {
			Path  string   `json:"path"`
			Trace []string `json:"resolution,omitempty"`
			*transcript.Summary
		}{path, trace, s})
	}
	w := &errWriter{w: stdout}
	w.printf("%s %s (%s) positions %d..%d\n", id, path, s.Format, s.From, s.To)
	w.printf("prompts: %d\n", s.PromptCount)
	for _, p := range s.Prompts {
		w.printf("  %s\n", oneLine(p, 100))
	}
	w.printf("tool calls: %d\nmodified files: %s\n", s.ToolCallCount, strings.Join(s.ModifiedFiles, ", "))
	w.printf("usage: input %d, output %d, cache read %d, cache write %d\n", s.Usage.Input, s.Usage.Output, s.Usage.CacheRead, s.Usage.CacheWrite)
	if s.LastAssistant != "" {
		w.printf("last assistant message: %s\n", oneLine(s.LastAssistant, 200))
	}
	if s.SkippedLines > 0 {
		w.printf("skipped %d over-long lines\n", s.SkippedLines)
	}
	if w.err != nil {
		return 1
	}
	return 0
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
