// Package model is the generator's plain-Go view of the atlas: every record
// the emitters need, each with the source position it came from, so that
// checks and emitters can report `atlas/harnesses/x.cue:LINE:COL: message`.
// It imports nothing from cue.
package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Pos is a source position, File relative to the repository root.
type Pos struct {
	File      string
	Line, Col int
}

// String is file:line:col; a position without a line (a whole file or
// folder) prints the file alone, never file:0:0.
func (p Pos) String() string {
	switch {
	case p.File == "":
		return "atlas"
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is a positioned generator error.
type Error struct {
	Pos Pos
	Msg string
}

func (e Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errors is a list of positioned errors, reported all at once.
type Errors []Error

// Addf appends an error at p: the one way the generator reports a problem
// in the atlas or a plugin.
func (es *Errors) Addf(p Pos, format string, args ...any) {
	*es = append(*es, Error{Pos: p, Msg: fmt.Sprintf(format, args...)})
}

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Sort orders errors by file, line, column, then message, and drops duplicates.
func (es Errors) Sort() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		return a.Msg < b.Msg
	})
	out := es[:0]
	for i, e := range es {
		if i > 0 && e == es[i-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Atlas is the whole loaded atlas.
type Atlas struct {
	Phases      []Phase              // sorted by ID
	Families    []Family             // sorted by ID
	Harnesses   []*Harness           // sorted by ID
	Providers   []*Provider          // sorted by ID (providers.go)
	Transcripts []*HarnessTranscript // sorted by harness ID (transcript.go)
	Launches    []*Launch            // sorted by harness ID (launch.go)
	Layouts     []*Layout            // plugin formats, sorted by ID (layout.go)
	Routing     Routing              // request signals of sitter proxy --routes (routing.go)
}

// Phase is a canonical phase.
type Phase struct {
	ID       string
	Extended bool
	Doc      string
	Pos      Pos
}

// Family is a protocol family.
type Family struct {
	ID         string
	Delivery   string
	Transcript string
	Profiles   []string // sorted
	Pos        Pos
}

// Named is a string with the position it was written at.
type Named struct {
	Name string
	Pos  Pos
}

// Harness is one harness descriptor with its events.
type Harness struct {
	ID          string
	Pos         Pos
	File        string // the atlas file that declares it
	DisplayName string
	Aliases     []Named
	Family      Named
	Profile     Named
	Default     bool
	DefaultPos  Pos
	Package     Package
	Verified    []string
	NotRunHere  string // why the real CLI cannot run here ("" when it can)
	SidePrefix  string // session id prefix of the harness's own side calls ("" for none)
	Config      []ConfigKey
	Readiness   []Check
	EventName   []string       // payload paths naming the event, tried in order
	Fields      []FieldSources // harness-wide, sorted by field
	Tools       []ToolKind     // sorted by name
	Prefixes    []ToolKind     // sorted by name
	Packaging   Packaging
	// SessionOutputs: the native outputs that halt or continue the session.
	Halts, Continues []OutputMatch
	Events           []*Event // atlas order
	Evidence         []Evidence
	Speaks           []Named // LLM wire protocols it calls natively (providers.go)
	AgentEnv         *AgentEnv
}

// AgentEnv is how a hook hands environment variables to the agent's shell
// (#AgentEnv); nil when the harness offers no way.
type AgentEnv struct {
	Kind, Variable string
	Events         []Named
	Evidence       []Evidence
	Pos            Pos
}

// Packaging says which layout (plugin format) the harness's bundles take;
// RootVar and TimeoutUnit are the harness's own or, when it leaves them
// out, its layout's.
type Packaging struct {
	Format      Named
	RootVar     string
	HasRootVar  bool // the harness sets RootVar itself ("" is a value)
	TimeoutUnit string
	Install     string
	Target      Target
	Pos         Pos
}

// Target is where `sitter plugin install` registers a bundle.
type Target struct {
	Kind, Project, User, Shape, CommandKey, TimeoutKey, Entry string
	// Skills and Commands: where the harness reads the user's own skills
	// and commands, per scope (zero: not installed there).
	Skills, Commands TargetDirs
	// MCP: the JSON file where it reads the user's own MCP servers, per
	// scope, and MCPKey the dotted key of their object in it.
	MCP    TargetDirs
	MCPKey string
}

// TargetDirs is a folder per install scope.
type TargetDirs struct{ Project, User string }

// EventsOf lists the harness's events of a phase, in atlas order.
func (h *Harness) EventsOf(phase string) []*Event {
	var out []*Event
	for _, e := range h.Events {
		if e.Phase.Name == phase {
			out = append(out, e)
		}
	}
	return out
}

// Package is the harness's distribution.
type Package struct {
	Name, Source, Trust, Lifecycle string
	// NpmInstall: the npm specs that install a verified version, when
	// Name@<verified> does not (atlas schema, package.npmInstall).
	NpmInstall []string
}

// ConfigKey is one key of the adapter config schema.
type ConfigKey struct {
	Key, Type, Description string
	Default                string // JSON, "" when none
}

// Check is a readiness check.
type Check struct{ Kind, Value string }

// ToolKind maps a native tool name (or name prefix) to a canonical kind.
type ToolKind struct {
	Name, Kind string
	Pos        Pos
}

// Evidence backs a fact.
type Evidence struct {
	Kind, Ref, Note string
	Pos             Pos
}

// FieldSources lists the payload sources of one canonical field, in order.
type FieldSources struct {
	Field   string
	Sources []Source
	Pos     Pos
}

// Source is one payload path, or an environment variable of the hook
// process (Env, Path empty). Path segments are keys; a segment may end in
// "[0]" to take the first element of an array of strings.
type Source struct {
	Path string
	As   string // "", "json-string" or "command-object"
	Env  string
	Pos  Pos
}

// Event is one native event.
type Event struct {
	Name     string
	Pos      Pos
	Phase    Named
	Support  string
	Tool     string // fixed native tool name, "" when the payload names it
	Since    string // first harness version with the event, "" = all
	ToolKind string // fixed tool kind, "" when the tool name decides
	Can      []Named
	Fields   []FieldSources // overrides, sorted by field
	Rules    []*Rule        // sorted by aspect (RuleOrder)
	Evidence []Evidence
	Note     string
	// Unverifiable says, per fidelity cell ("observe" or a capability),
	// why no offline run can prove it; sorted by cell.
	Unverifiable []Reason
	// Replaces is set when a hook of the event stands in for the
	// harness's own work and its output is that work's result (nil
	// otherwise): no plugin handler is registered there.
	Replaces *Replaces
	// ContextBeforePrompt: a headless run puts the event's context before
	// the user's first prompt, ahead of the harness's slash-command
	// parsing (atlas contextBeforePrompt).
	ContextBeforePrompt Named
}

// Replaces says what a hook of a replacing event does instead of the
// harness (#Replaces): what it replaces, the output the harness wants
// back, what a plugin author can do instead.
type Replaces struct {
	What, Output, Instead string
	Evidence              []Evidence
	Pos                   Pos
}

// Reason is one fidelity cell of an event that cannot be proved offline,
// and why.
type Reason struct {
	Cell   string
	Reason string
	Pos    Pos
}

// FidelityCells are the cells an unverifiable reason can name: observe and
// the capabilities the fidelity matrix has a column for.
var FidelityCells = []string{"observe", "deny", "addContext", "block", "rewriteInput"}

// RuleOrder lists the render aspects in a fixed order.
var RuleOrder = []string{"allow", "ask", "deny", "block", "rewrite", "context", "userMessage", "halt", "watch"}

// CapabilityRule maps a capability to the render aspect that expresses it.
var CapabilityRule = map[string]string{
	"allow": "allow", "ask": "ask", "deny": "deny", "block": "block",
	"rewriteInput": "rewrite", "addContext": "context", "userMessage": "userMessage", "halt": "halt",
	"watchFiles": "watch",
}

// Rule is one render aspect of an event.
type Rule struct {
	Aspect string
	Pos    Pos
	Stdout []Member
	Exit   int
	Stderr string // a slot name ("reason", …) or ""
	Effect Effect
}

// Effect is what a rule's output does to the call and the session.
type Effect struct {
	Call, Session Named // a CallEffect and a SessionEffect
	Evidence      []Evidence
	Pos           Pos
}

// The effect vocabulary (#CallEffect, #SessionEffect).
const (
	AllowsCall       = "allowsCall"
	DeniesCall       = "deniesCall"
	AsksUser         = "asksUser"
	RewritesInput    = "rewritesInput"
	AddsContext      = "addsContext"
	ShowsUser        = "showsUser"
	WatchesFiles     = "watchesFiles"
	ContinuesSession = "continuesSession"
	HaltsSession     = "haltsSession"
	NoEffect         = "none"
)

// AspectEffect is the effect each render aspect must declare: the call
// effect of a decision or text, or the session effect of block and halt.
var AspectEffect = map[string]string{
	"allow": AllowsCall, "ask": AsksUser, "deny": DeniesCall, "rewrite": RewritesInput,
	"context": AddsContext, "userMessage": ShowsUser, "watch": WatchesFiles,
	"block": ContinuesSession, "halt": HaltsSession,
}

// EffectCapability is the capability an effect needs in its event's can list.
var EffectCapability = map[string]string{
	AllowsCall: "allow", AsksUser: "ask", DeniesCall: "deny", RewritesInput: "rewriteInput",
	AddsContext: "addContext", ShowsUser: "userMessage", WatchesFiles: "watchFiles",
	ContinuesSession: "block", HaltsSession: "halt",
}

// OutputMatch is one native output a harness declares as halting or
// continuing the session: a stdout key path holding Value (raw JSON; ""
// for any value), or an exit code, on Phases (nil: every phase).
type OutputMatch struct {
	Key, Value string
	Exit       int
	Phases     []string
	Pos        Pos
}

// Applies reports whether the match holds on a phase.
func (o OutputMatch) Applies(phase string) bool {
	if o.Phases == nil {
		return true
	}
	for _, p := range o.Phases {
		if p == phase {
			return true
		}
	}
	return false
}

// Matches reports whether a rule's output contains the match: its exit
// code, or the key path with the value (a slot matches only "any value").
func (o OutputMatch) Matches(r *Rule) bool {
	if o.Key == "" {
		return o.Exit != 0 && r.Exit == o.Exit
	}
	ms := r.Stdout
	segs := strings.Split(o.Key, ".")
	for i, seg := range segs {
		var found *Member
		for j := range ms {
			if ms[j].Key == seg {
				found = &ms[j]
				break
			}
		}
		if found == nil {
			return false
		}
		if i < len(segs)-1 {
			ms = found.Kids
			continue
		}
		return o.Value == "" || (found.Kids == nil && found.Slot == "" && found.Const == o.Value)
	}
	return false
}

// String says the match as a user wrote it.
func (o OutputMatch) String() string {
	if o.Key == "" {
		return fmt.Sprintf("exit %d", o.Exit)
	}
	if o.Value == "" {
		return o.Key
	}
	return o.Key + ": " + o.Value
}

// Member is a key of a stdout skeleton: a constant (raw JSON), a slot, or a
// nested object.
type Member struct {
	Key   string
	Const string
	Slot  string
	Kids  []Member
	Pos   Pos
}

// FieldType says how a canonical field is decoded from a payload path.
var FieldType = map[string]string{
	"sessionId": "string", "cwd": "string", "transcriptPath": "string", "turnId": "string",
	"model": "string", "permissionMode": "string", "toolName": "string", "callId": "string",
	"prompt": "string", "source": "string", "reason": "string", "lastAssistantMessage": "string",
	"toolInput": "json", "toolResponse": "json", "stopHookActive": "bool", "file": "string",
	"projectDir": "string",
}

// Slots are the slot names a skeleton may use.
var Slots = []string{"reason", "context", "userMessage", "updatedInput", "watchPaths"}

// EffectiveFields merges the event's overrides over the harness defaults.
func (h *Harness) EffectiveFields(e *Event) []FieldSources {
	m := map[string]FieldSources{}
	for _, f := range h.Fields {
		m[f.Field] = f
	}
	for _, f := range e.Fields {
		m[f.Field] = f
	}
	out := make([]FieldSources, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// HasToolKind says whether the harness's tables (tools, tool prefixes)
// classify some tool as one of kinds.
func (h *Harness) HasToolKind(kinds ...string) bool {
	for _, t := range slices.Concat(h.Tools, h.Prefixes) {
		if slices.Contains(kinds, t.Kind) {
			return true
		}
	}
	return false
}

// NamesTool says whether event e gives handlers a tool whose kind the
// harness's tables decide: a fixed tool name, or a toolName field of the
// event or the harness, and no fixed tool kind.
func (h *Harness) NamesTool(e *Event) bool {
	if e.ToolKind != "" {
		return false
	}
	has := func(fs []FieldSources) bool {
		return slices.ContainsFunc(fs, func(f FieldSources) bool { return f.Field == "toolName" })
	}
	return e.Tool != "" || has(e.Fields) || has(h.Fields)
}

// ToolKind classifies a native tool name with the harness's tables.
func (h *Harness) ToolKind(name string) string {
	for _, t := range h.Tools {
		if t.Name == name {
			return t.Kind
		}
	}
	for _, t := range h.Prefixes {
		if strings.HasPrefix(name, t.Name) {
			return t.Kind
		}
	}
	return "other"
}

// Rule returns the event's rule for an aspect, or nil.
func (e *Event) Rule(aspect string) *Rule {
	for _, r := range e.Rules {
		if r.Aspect == aspect {
			return r
		}
	}
	return nil
}

// Has reports whether the event declares a capability.
func (e *Event) Has(capability string) bool {
	for _, c := range e.Can {
		if c.Name == capability {
			return true
		}
	}
	return false
}

// Harness returns the harness with an id, or nil.
func (a *Atlas) Harness(id string) *Harness {
	for _, h := range a.Harnesses {
		if h.ID == id {
			return h
		}
	}
	return nil
}

// Family returns the family with an id, or nil.
func (a *Atlas) Family(id string) *Family {
	for i := range a.Families {
		if a.Families[i].ID == id {
			return &a.Families[i]
		}
	}
	return nil
}
