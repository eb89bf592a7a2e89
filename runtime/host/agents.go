package host

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/agents"
	"sitter.dev/sitter/runtime/transcript"
)

// agentEntry is one adapter of `sitter agents list`.
type agentEntry struct {
	ID           string         `json:"id"`
	DisplayName  string         `json:"displayName"`
	Family       adapter.Family `json:"family"`
	Profile      string         `json:"profile"`
	Aliases      []string       `json:"aliases"`
	Default      bool           `json:"default"`
	Capabilities []string       `json:"capabilities"`
	Resume       string         `json:"resume,omitempty"`
}

// runAgents: `sitter agents list|detect`.
func runAgents(args []string, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	f, err := parseFlags(args, "dir", "")
	if err != nil {
		fmt.Fprintf(stderr, "sitter: agents: %v\n", err)
		return 2
	}
	asJSON, dir, pos := f.bools["json"], f.vals["dir"], f.pos
	switch {
	case len(pos) == 1 && pos[0] == "list":
		r := reg()
		var out []agentEntry
		for _, id := range r.IDs() {
			d, _, _ := r.Resolve(id)
			e := agentEntry{ID: d.ID, DisplayName: d.DisplayName, Family: d.Family, Profile: d.Profile, Aliases: nonNil(d.Aliases), Default: d.Default, Capabilities: []string{}}
			if s, ok := transcript.Lookup(d.ID); ok {
				for _, c := range []struct {
					on   bool
					name string
				}{{s.HookInstallation, "hook-installation"}, {s.TranscriptAnalysis, "transcript-analysis"}, {s.TokenCalculation, "token-calculation"}} {
					if c.on {
						e.Capabilities = append(e.Capabilities, c.name)
					}
				}
				e.Resume = s.Resume
			}
			out = append(out, e)
		}
		if asJSON {
			return writeJSON(stdout, stderr, out)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, e := range out {
			fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\t%s\n", e.ID, e.DisplayName, e.Family.Delivery, e.Family.Transcript, orDash(strings.Join(e.Aliases, ",")), orDash(strings.Join(e.Capabilities, ",")))
		}
		if tw.Flush() != nil {
			return 1
		}
		return 0
	case len(pos) == 1 && pos[0] == "detect":
		if dir != "" {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return fail(stderr, "agents detect", fmt.Errorf("--dir %s is not a directory", dir))
			}
		}
		ds := agents.Detect(agents.Env{Dir: dir})
		if asJSON {
			return writeJSON(stdout, stderr, ds)
		}
		w := &errWriter{w: stdout}
		n := 0
		for _, d := range ds {
			if d.Detected {
				n++
				w.printf("%s\t%s\n", d.Harness, strings.Join(d.Found, ", "))
			}
		}
		if n == 0 {
			w.printf("no harness detected\n")
		}
		if w.err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintln(stderr, "sitter: usage: sitter agents list [--json] | sitter agents detect [--dir D] [--json]")
	return 2
}
