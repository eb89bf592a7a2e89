package verbs

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/agents"
	"sitter.dev/sitter/runtime/launch"
	"sitter.dev/sitter/runtime/transcript"
)

// agentEntry is one adapter of `sitter agents list`: what the harness can
// do, derived from every block of its atlas entry (hook events and their
// render effects, packaging, launch, transcript, presence, readiness,
// agentEnv). Capabilities is the flat list the table prints.
type agentEntry struct {
	ID           string             `json:"id"`
	DisplayName  string             `json:"displayName"`
	Family       adapter.Family     `json:"family"`
	Profile      string             `json:"profile"`
	Aliases      []string           `json:"aliases"`
	Default      bool               `json:"default"`
	Capabilities []string           `json:"capabilities"`
	Resume       string             `json:"resume,omitempty"`
	Hooks        agentHooks         `json:"hooks"`
	Packaging    *agentPackaging    `json:"packaging,omitempty"`
	Launch       *agentLaunch       `json:"launch,omitempty"`
	Transcript   *agentTranscript   `json:"transcript,omitempty"`
	Presence     *transcriptPresent `json:"presence,omitempty"`
	Readiness    []adapter.Check    `json:"readiness"`
	AgentEnv     *adapter.AgentEnv  `json:"agentEnv,omitempty"`
}

// agentHooks: the native events, the capabilities their can lists
// declare and the effects their render rules have, each in a fixed order.
type agentHooks struct {
	Delivery string       `json:"delivery"`
	Can      []string     `json:"can"`
	Effects  []string     `json:"effects"`
	Events   []agentEvent `json:"events"`
}

// agentEvent is one native event with the effect of each render rule.
type agentEvent struct {
	Name    string           `json:"name"`
	Phase   string           `json:"phase"`
	Support string           `json:"support"`
	Effects []adapter.Effect `json:"effects"`
}

type agentPackaging struct {
	Format  string `json:"format"`
	Install string `json:"install"`
	Target  string `json:"target"` // hooks-config, hooks-folder or module
}

type agentLaunch struct {
	Binary      string   `json:"binary"`
	Protocols   []string `json:"protocols"`
	Plugin      string   `json:"plugin"` // flag or install
	Interactive bool     `json:"interactive"`
	ResumeByID  bool     `json:"resumeById"`
	TurnEnd     string   `json:"turnEnd,omitempty"` // the native event bridge-interactive mode watches
}

type agentTranscript struct {
	Format             string `json:"format"`
	Location           string `json:"location,omitempty"`
	Payload            bool   `json:"payload"`
	TranscriptAnalysis bool   `json:"transcriptAnalysis"`
	TokenCalculation   bool   `json:"tokenCalculation"`
}

type transcriptPresent struct {
	ProjectDirs  []string `json:"projectDirs"`
	ProjectFiles []string `json:"projectFiles"`
	Binaries     []string `json:"binaries"`
	HookConfigs  []string `json:"hookConfigs"`
}

// capabilityOrder and effectOrder fix the order of the unions.
var (
	capabilityOrder = []string{"allow", "ask", "deny", "block", "rewriteInput", "addContext", "userMessage", "halt", "watchFiles"}
	effectOrder     = []string{"allowsCall", "deniesCall", "asksUser", "rewritesInput", "addsContext", "showsUser", "watchesFiles", "continuesSession", "haltsSession"}
)

// agentOf derives one entry from the descriptor and the transcript,
// presence and launch tables.
func agentOf(d *adapter.Descriptor) agentEntry {
	e := agentEntry{ID: d.ID, DisplayName: d.DisplayName, Family: d.Family, Profile: d.Profile, Aliases: nonNil(d.Aliases),
		Default: d.Default, Capabilities: []string{}, Readiness: d.Readiness, AgentEnv: d.AgentEnv}
	if e.Readiness == nil {
		e.Readiness = []adapter.Check{}
	}
	can, fx := map[string]bool{}, map[string]bool{}
	e.Hooks.Delivery = d.Family.Delivery
	e.Hooks.Events = []agentEvent{}
	for _, ev := range d.Events {
		ae := agentEvent{Name: ev.Name, Phase: ev.Phase, Support: ev.Support, Effects: ev.Effects}
		if ae.Effects == nil {
			ae.Effects = []adapter.Effect{}
		}
		e.Hooks.Events = append(e.Hooks.Events, ae)
		for _, c := range ev.Can {
			can[c] = true
		}
		for _, x := range ev.Effects {
			fx[x.Call], fx[x.Session] = true, true
		}
	}
	e.Hooks.Can, e.Hooks.Effects = ordered(capabilityOrder, can), ordered(effectOrder, fx)
	if len(e.Hooks.Can) > 0 {
		e.Capabilities = append(e.Capabilities, "hooks")
	}
	e.Capabilities = append(e.Capabilities, e.Hooks.Effects...)
	if p := d.Packaging; p.Format != "" {
		e.Packaging = &agentPackaging{Format: p.Format, Install: p.Install, Target: p.Target.Kind}
		e.Capabilities = append(e.Capabilities, "plugin-bundle", "hook-installation")
	}
	if s, ok := launch.Find(genlaunch.Specs, d.ID); ok {
		l := &agentLaunch{Binary: s.Binary, Protocols: []string{}, Plugin: s.PluginKind, Interactive: len(s.Interactive) > 0,
			ResumeByID: len(s.ResumeID) > 0, TurnEnd: s.TurnEnd.Event}
		for _, c := range s.Connect {
			l.Protocols = append(l.Protocols, c.Protocol)
		}
		e.Launch = l
		e.Capabilities = append(e.Capabilities, "launch")
	}
	if s, ok := transcript.Lookup(d.ID); ok {
		e.Transcript = &agentTranscript{Format: s.Format, Location: s.Location, Payload: s.Payload,
			TranscriptAnalysis: s.TranscriptAnalysis, TokenCalculation: s.TokenCalculation}
		if s.TranscriptAnalysis {
			e.Capabilities = append(e.Capabilities, "transcript-analysis")
		}
		if s.TokenCalculation {
			e.Capabilities = append(e.Capabilities, "token-calculation")
		}
		e.Resume = s.Resume
	}
	if p, ok := transcript.LookupPresence(d.ID); ok {
		e.Presence = &transcriptPresent{ProjectDirs: nonNil(p.ProjectDirs), ProjectFiles: nonNil(p.ProjectFiles),
			Binaries: nonNil(p.Binaries), HookConfigs: nonNil(p.HookConfigs)}
		e.Capabilities = append(e.Capabilities, "detect")
	}
	if len(d.Readiness) > 0 {
		e.Capabilities = append(e.Capabilities, "readiness")
	}
	if d.AgentEnv != nil {
		e.Capabilities = append(e.Capabilities, "agent-env")
	}
	return e
}

// ordered lists the keys of set that order has, in its order.
func ordered(order []string, set map[string]bool) []string {
	out := []string{}
	for _, x := range order {
		if set[x] {
			out = append(out, x)
		}
	}
	return out
}

// newAgentsCmd is `sitter agents list|detect`.
func newAgentsCmd(e *env) *cobra.Command {
	var listJSON, detectJSON bool
	var dir string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the adapters: family, profile, aliases, capabilities",
		Long: `List the adapters and what each harness can do, from every block of its atlas
entry (hook events and their render effects, packaging, launch, transcript,
presence, readiness, agentEnv); the table prints the flat capability list,
--json everything.`,
		Example: "  sitter agents list\n  sitter agents list --json",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			return code(agentsList(e, listJSON))
		},
	}
	jsonFlag(list, &listJSON, "print the adapters as JSON")
	detect := &cobra.Command{
		Use:     "detect",
		Short:   "Say which harnesses a project uses",
		Example: "  sitter agents detect\n  sitter agents detect --dir ~/my-project --json",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			return code(agentsDetect(e, dir, detectJSON))
		},
	}
	detect.Flags().StringVar(&dir, "dir", "", "the project folder `DIR` (default: the current directory)")
	jsonFlag(detect, &detectJSON, "print every harness's detection as JSON")
	return group(&cobra.Command{
		Use:     "agents",
		Short:   "The harness adapters, and which harnesses a project uses",
		Example: "  sitter agents list\n  sitter agents detect --dir .",
	}, list, detect)
}

// agentsList is `sitter agents list`.
func agentsList(e *env, asJSON bool) int {
	stdout, stderr := e.stdout, e.stderr
	r := e.reg()
	var out []agentEntry
	for _, id := range r.IDs() {
		d, _, _ := r.Resolve(id)
		out = append(out, agentOf(d))
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
}

// agentsDetect is `sitter agents detect`.
func agentsDetect(e *env, dir string, asJSON bool) int {
	stdout, stderr := e.stdout, e.stderr
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
	return w.code()
}
