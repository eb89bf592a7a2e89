package verbs

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/transcript"
)

// The generated transcript tables are static slices: wiring them in costs
// an assignment, nothing at start-up (runtime/session's stop check reads
// them through runtime/transcript).
func init() {
	transcript.Specs = gentranscript.Specs
	transcript.Presences = gentranscript.Presences
}

// transcriptOpts are the flags of `sitter transcript`.
type transcriptOpts struct {
	from         int64
	maxLine      int
	session, cwd string
	asJSON       bool
}

// newTranscriptCmd is `sitter transcript`: a harness's transcript since a
// position.
func newTranscriptCmd(e *env) *cobra.Command {
	var o transcriptOpts
	c := &cobra.Command{
		Use:   "transcript <harness> (<path> | --session ID)",
		Short: "Prompts, last answer, tool calls, files and tokens of a transcript since a position",
		Long: `Summarise a harness's transcript since a position: prompts, the last assistant
message, tool calls, modified files and token usage, and the position to
continue from ("to"). POS is a line offset (jsonl-cli) or a message index
(json-event). With --session ID (and --cwd DIR) instead of a path, the file is
found where the atlas says the harness keeps it.

A transcript shorter than POS was replaced or truncated since (a harness that
rewrites or compacts it): nothing is read, stderr says so, and "to" is its
real end, where the next read continues.`,
		Example: `  sitter transcript claude-code ~/.claude/projects/-work-proj/5f0c.jsonl
  sitter transcript pi --session 5f0c --cwd ~/proj --from 120 --json`,
		Args:              nArgs(1, 2, "<harness>"),
		ValidArgsFunction: harnessNames(e),
		RunE: func(_ *cobra.Command, args []string) error {
			switch {
			case o.from < 0:
				return usageErr("--from %d: want a non-negative integer", o.from)
			case o.maxLine <= 0:
				return usageErr("--max-line %d: want a positive integer", o.maxLine)
			case len(args) == 1 && o.session == "":
				return usageErr("name a transcript <path> or --session ID")
			case len(args) == 2 && o.session != "":
				return usageErr("a <path> and --session exclude each other")
			case args[0] == "": // Resolve's default harness is no harness named
				return usageErr("missing <harness>")
			}
			d, _, err := e.reg().Resolve(args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			return code(runTranscript(d.ID, args[1:], o, e.stdout, e.stderr))
		},
	}
	c.Flags().Int64Var(&o.from, "from", 0, "the position `POS` to start from (a line offset, or a message index)")
	c.Flags().IntVar(&o.maxLine, "max-line", transcript.DefaultMaxLine, "longest line read, `BYTES` (longer ones are skipped and counted)")
	c.Flags().StringVar(&o.session, "session", "", "find the transcript of session `ID`")
	c.Flags().StringVar(&o.cwd, "cwd", "", "the session's working directory `DIR`, with --session (default: the current directory)")
	jsonFlag(c, &o.asJSON, "print the summary as JSON")
	return c
}

// runTranscript summarises harness id's transcript since a position, at
// the path given (pos) or found from the session.
func runTranscript(id string, pos []string, o transcriptOpts, stdout, stderr io.Writer) int {
	from, maxLine, session, cwd, asJSON := o.from, o.maxLine, o.session, o.cwd, o.asJSON
	spec, ok := transcript.Lookup(id)
	if !ok {
		fmt.Fprintf(stderr, "sitter: transcript: the atlas does not describe %s's transcripts (no transcript block in atlas/transcripts.cue)\n", id)
		return 1
	}
	if !spec.TranscriptAnalysis {
		fmt.Fprintf(stderr, "sitter: transcript: %s transcripts cannot be analysed (atlas capability transcriptAnalysis is false)\n", id)
		return 1
	}
	var path string
	var trace []string
	if len(pos) == 1 {
		path = pos[0]
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
	if s.To < s.From {
		// Re-reading from 0 would count again what an earlier read
		// counted when the harness rewrote the file with the same turns.
		unit := "lines"
		if s.Format == transcript.JSONEvent {
			unit = "messages"
		}
		fmt.Fprintf(stderr, "sitter: transcript: --from %d is past the end of %s (%d %s): it was replaced or truncated; nothing read, continue from %d\n", s.From, path, s.To, unit, s.To)
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
		w.printf("skipped %s: longer than --max-line %d\n", lines(s.SkippedLines), maxLine)
	}
	if s.BadLines > 0 {
		w.printf("skipped %s: not JSON\n", lines(s.BadLines))
	}
	if w.err != nil {
		return 1
	}
	return 0
}

func lines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
