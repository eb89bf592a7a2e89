// Package adapter owns the descriptor registry: one Descriptor per harness,
// generated from the atlas, binding a protocol family to a target profile,
// with capabilities, package metadata, readiness checks, a config schema and
// the harness's generated normalizer and renderer. Resolution of a name
// (id or alias) records a trace so users can see why a descriptor was chosen.
package adapter

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"sitter.dev/sitter/runtime/hook"
)

// Family is a protocol family: how hooks are delivered and transcripts written.
type Family struct {
	ID         string   `json:"id"`
	Delivery   string   `json:"delivery"`
	Transcript string   `json:"transcript"`
	Profiles   []string `json:"profiles"`
}

// Package is where a harness comes from.
type Package struct {
	Name      string `json:"name,omitempty"`
	Source    string `json:"source"`
	Trust     string `json:"trust"`
	Lifecycle string `json:"lifecycle"`
	// NpmInstall lists the specs `npm install -g` takes to put a verified
	// version on PATH when Name@<verified> is not one (a wrapper whose
	// binary comes from a platform package of another version); empty,
	// Name at the newest verified version does.
	NpmInstall []string `json:"npmInstall,omitempty"`
}

// AgentEnv is how a hook hands environment variables to the commands the
// agent runs. Kind "env-file": hooks of Events get Variable naming a file
// to which they append `export NAME='value'` lines.
type AgentEnv struct {
	Kind     string     `json:"kind"`
	Variable string     `json:"variable"`
	Events   []string   `json:"events"`
	Evidence []Evidence `json:"evidence"`
}

// Packaging says how the harness's plugin bundles are laid out and where
// `sitter plugin install` registers them.
type Packaging struct {
	Format      string `json:"format"`
	RootVar     string `json:"rootVar,omitempty"`
	TimeoutUnit string `json:"timeoutUnit"`
	Install     string `json:"install"`
	Target      Target `json:"target"`
	Bundle      Bundle `json:"bundle"`
}

// Bundle is what `sitter plugin verify` and `install` read of a bundle of
// the harness's layout (atlas/layouts.cue): the manifest and the hook
// config, with the schemas (runtime/plugin/schemas) they are checked
// against, the files the layout always writes, the manifest keys that
// name bundle files and the values the manifest must carry.
type Bundle struct {
	Manifest       string        `json:"manifest"`
	ManifestSchema string        `json:"manifestSchema,omitempty"`
	Required       []string      `json:"required,omitempty"`
	Skills         string        `json:"skills,omitempty"`   // the folder skills are copied into
	Commands       string        `json:"commands,omitempty"` // each command's file, {command} its name; "" = none
	MCPFile        string        `json:"mcpFile,omitempty"`  // the JSON file holding the MCP servers, "" = none
	MCPKey         string        `json:"mcpKey,omitempty"`   // the dotted key of their object in it
	Paths          []BundlePath  `json:"paths,omitempty"`
	Requires       []BundleValue `json:"requires,omitempty"`
	Hooks          string        `json:"hooks,omitempty"`
	HooksSchema    string        `json:"hooksSchema,omitempty"`
	Shape          string        `json:"shape,omitempty"`
	CommandKey     string        `json:"commandKey,omitempty"`
}

// BundlePath is a manifest key ("a.b" reaches into an object) whose string,
// or list of strings, names files or folders inside the bundle.
type BundlePath struct {
	Key    string `json:"key"`
	Folder bool   `json:"folder,omitempty"` // each must be a folder
	Skills bool   `json:"skills,omitempty"` // each holds skill folders, with their SKILL.md
}

// BundleValue is a value the manifest must carry: the string at Key, or
// one of its list's strings, equals Value; Why says what needs it.
type BundleValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Why   string `json:"why"`
}

// Target is an install target: a hooks config file to merge into, or a
// module file to write. Paths are relative to the project dir (Project) or
// $HOME (User); {plugin} is the plugin name.
type Target struct {
	Kind       string `json:"kind"`
	Project    string `json:"project"`
	User       string `json:"user"`
	Shape      string `json:"shape,omitempty"`
	CommandKey string `json:"commandKey,omitempty"`
	TimeoutKey string `json:"timeoutKey,omitempty"`
	Entry      string `json:"entry,omitempty"`
	// Skills and Commands: where the harness reads the user's own skills
	// and commands, per scope; install copies the bundle's there (zero:
	// it does not).
	Skills   TargetDirs `json:"skills,omitzero"`
	Commands TargetDirs `json:"commands,omitzero"`
	// MCP: the JSON file where the harness reads the user's own MCP
	// servers, per scope, the servers an object at the dotted MCPKey;
	// install merges the bundle's into it (zero: it does not).
	MCP    TargetDirs `json:"mcp,omitzero"`
	MCPKey string     `json:"mcpKey,omitempty"`
}

// TargetDirs is a folder per install scope, relative like Target's paths.
type TargetDirs struct {
	Project string `json:"project"`
	User    string `json:"user"`
}

// ConfigKey is one key of a descriptor's config schema.
type ConfigKey struct {
	Key         string `json:"key"`
	Type        string `json:"type"`
	Default     string `json:"default,omitempty"` // JSON
	Description string `json:"description"`
}

// Check is one readiness check a host can run.
type Check struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// Evidence backs an atlas fact.
type Evidence struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
	Note string `json:"note,omitempty"`
}

// EventSpec is one native event and what it can do.
type EventSpec struct {
	Name     string     `json:"name"`
	Phase    string     `json:"phase"`
	Support  string     `json:"support"`
	Can      []string   `json:"can"`
	Effects  []Effect   `json:"effects,omitempty"`
	Note     string     `json:"note,omitempty"`
	Evidence []Evidence `json:"evidence"`
	// Unverifiable says, per fidelity cell ("observe" or a capability),
	// why no offline run of the real CLI can prove it (atlas
	// unverifiable); docs/fidelity.md shows it.
	Unverifiable map[string]string `json:"unverifiable,omitempty"`
	// ContextBeforePrompt: in a headless run the harness puts the event's
	// context before the user's first prompt, ahead of its slash-command
	// parsing (atlas contextBeforePrompt): context here keeps a
	// "/command …" prompt from running.
	ContextBeforePrompt bool `json:"contextBeforePrompt,omitempty"`
	// Replaces is set when a hook of the event stands in for the
	// harness's own work and the harness takes its output as that work's
	// result (atlas replaces): no bundle registers such an event.
	Replaces *Replaces `json:"replaces,omitempty"`
}

// Replaces says what a hook of a replacing event does instead of the
// harness: what it replaces, the output the harness wants back, and what
// a plugin author can do instead.
type Replaces struct {
	What     string     `json:"what"`
	Output   string     `json:"output"`
	Instead  string     `json:"instead"`
	Evidence []Evidence `json:"evidence"`
}

// Effect is what the render rule of one aspect (allow, deny, block, halt,
// context, …) does to the call and to the session, as the atlas declares it.
type Effect struct {
	Aspect  string `json:"aspect"`
	Call    string `json:"call"`
	Session string `json:"session"`
}

// Descriptor is one harness adapter.
type Descriptor struct {
	ID          string   `json:"id"`
	DisplayName string   `json:"displayName"`
	Aliases     []string `json:"aliases"`
	Family      Family   `json:"family"`
	Profile     string   `json:"profile"`
	Default     bool     `json:"default"`
	Package     Package  `json:"package"`
	Verified    []string `json:"verifiedVersions"`
	// NotRunHere says why the real CLI cannot run on a machine that
	// reaches only package registries ("" when it can).
	NotRunHere string `json:"notRunHere,omitempty"`
	// SideSessionPrefix: the harness's own calls (a session title) reach
	// the hooks under the turn's session id with this prefix ("" for
	// none).
	SideSessionPrefix string            `json:"sideSessionPrefix,omitempty"`
	Config            []ConfigKey       `json:"config"`
	Readiness         []Check           `json:"readiness"`
	Packaging         Packaging         `json:"packaging"`
	Tools             map[string]string `json:"tools"`
	ToolPrefixes      map[string]string `json:"toolPrefixes,omitempty"`
	Events            []EventSpec       `json:"events"`
	Evidence          []Evidence        `json:"evidence"`
	Source            string            `json:"source"` // atlas file
	// AgentEnv is how a hook hands variables to the agent's shell; nil
	// when the harness offers no way.
	AgentEnv *AgentEnv `json:"agentEnv,omitempty"`

	// NormalizeEnv lists the environment variables Normalize reads (the
	// atlas's env sources), sorted.
	NormalizeEnv []string `json:"-"`

	// Normalize turns a native payload into the canonical event. nativeEvent
	// may be empty, then the payload's own event name field is used.
	Normalize func(raw []byte, nativeEvent string) (hook.Event, error) `json:"-"`
	// FindEvent, when set, builds one event's spec; a descriptor built for
	// a hook call has it instead of Events.
	FindEvent func(name string) (*EventSpec, bool) `json:"-"`
	// Rules returns the render table of a native event, nil when unknown.
	Rules func(nativeEvent string) *hook.Rules `json:"-"`
}

// Event returns the spec of a native event.
func (d *Descriptor) Event(name string) (*EventSpec, bool) {
	if d.Events == nil && d.FindEvent != nil {
		return d.FindEvent(name)
	}
	for i := range d.Events {
		if d.Events[i].Name == name {
			return &d.Events[i], true
		}
	}
	return nil, false
}

// EventRules is the render table of a native event, nil when unknown.
func (d *Descriptor) EventRules(nativeEvent string) *hook.Rules {
	if d.Rules == nil {
		return nil
	}
	return d.Rules(nativeEvent)
}

// Render writes a canonical result as the answer to a native event.
func (d *Descriptor) Render(ev hook.Event, r hook.Result) hook.Output {
	return hook.Render(ev, r, d.EventRules(ev.NativeEvent))
}

// Registry holds every descriptor, in atlas order. Find, when set, builds
// the one descriptor an id or alias names ("" = the default) without the
// others: the hook path resolves through it alone. Known lists the ids.
// Names, for a registry without Descriptors, gives every alias and display
// name with its harness's id: suggest builds them only for a name that
// resolves to none, so a call that resolves pays nothing for them.
type Registry struct {
	Descriptors []*Descriptor
	Find        func(name string) *Descriptor
	Known       []string
	Names       func() map[string]string
}

// Resolve finds the descriptor for an id or alias ("" = the default) and
// explains how it got there.
func (r *Registry) Resolve(name string) (*Descriptor, []string, error) {
	var trace []string
	if r.Find != nil {
		if d := r.Find(strings.ToLower(name)); d != nil {
			switch {
			case name == "":
				trace = append(trace, "no harness named: the default descriptor", fmt.Sprintf("default: %s", d.ID))
				return d, trace, nil
			case strings.ToLower(name) == d.ID:
				trace = append(trace, fmt.Sprintf("%q is the id of %s", name, d.ID))
			default:
				trace = append(trace, fmt.Sprintf("%q is no descriptor id", name), fmt.Sprintf("%q is an alias of %s", name, d.ID))
			}
			return d, r.withFamily(trace, d), nil
		}
		if len(r.Descriptors) == 0 {
			trace = append(trace, fmt.Sprintf("%q is neither a descriptor id nor an alias", name))
			return nil, trace, r.unknown(name)
		}
	}
	if name == "" {
		trace = append(trace, "no harness named: looking for the default descriptor")
		for _, d := range r.Descriptors {
			if d.Default {
				trace = append(trace, fmt.Sprintf("default: %s", d.ID))
				return d, trace, nil
			}
		}
		return nil, trace, fmt.Errorf("no default harness in the registry")
	}
	key := strings.ToLower(name)
	for _, d := range r.Descriptors {
		if d.ID == key {
			trace = append(trace, fmt.Sprintf("%q is the id of %s", name, d.ID))
			return d, r.withFamily(trace, d), nil
		}
	}
	trace = append(trace, fmt.Sprintf("%q is no descriptor id", name))
	for _, d := range r.Descriptors {
		for _, a := range d.Aliases {
			if a == key {
				trace = append(trace, fmt.Sprintf("%q is an alias of %s", name, d.ID))
				return d, r.withFamily(trace, d), nil
			}
		}
	}
	trace = append(trace, fmt.Sprintf("%q is no alias either", name))
	return nil, trace, r.unknown(name)
}

// unknown is the error for a name that is no harness: it lists the known
// ids, and says which one the name most likely meant, if one.
func (r *Registry) unknown(name string) error {
	hint := ""
	if id := r.suggest(name); id != "" {
		hint = fmt.Sprintf("; did you mean %s?", id)
	}
	return fmt.Errorf("unknown harness %q%s (known: %s)", name, hint, strings.Join(r.IDs(), ", "))
}

// suggest is the harness id a name that resolves to none most likely
// means: the same name in another spelling (a display name such as
// "Claude Code", "gemini_cli", other case), else the id or alias a typo
// or two away ("claud", "codx"); "" when none is that close.
func (r *Registry) suggest(name string) string {
	key := nameKey(name)
	if key == "" {
		return ""
	}
	names := map[string]string{} // id, alias or display name -> id
	for _, id := range r.IDs() {
		names[id] = id
	}
	for _, d := range r.Descriptors {
		for _, a := range d.Aliases {
			names[nameKey(a)] = d.ID
		}
		names[nameKey(d.DisplayName)] = d.ID
	}
	if r.Names != nil {
		for n, id := range r.Names() {
			names[nameKey(n)] = id
		}
	}
	if id, ok := names[key]; ok {
		return id
	}
	if r.Find != nil && len(r.Descriptors) == 0 {
		if d := r.Find(key); d != nil {
			return d.ID
		}
	}
	cands := make([]string, 0, len(names))
	for n := range names {
		cands = append(cands, n)
	}
	if n := Closest(key, cands); n != "" {
		return names[n]
	}
	return ""
}

// Closest is the candidate a mistyped name most likely means: one equal
// to it but for case, else the only one a name of four letters or more
// begins, if at most half as long again ("preTool" for preToolUse, but
// not "BeforeTool", Gemini's name for it, for beforeToolSelection), else
// the nearest at most two edits away, and fewer for a short candidate
// ("pi" is no suggestion for "px"); "" when none is that close.
func Closest(name string, cands []string) string {
	low := strings.ToLower(name)
	sorted := slices.Sorted(slices.Values(cands))
	for _, c := range sorted {
		if strings.ToLower(c) == low {
			return c
		}
	}
	if len(low) >= 4 {
		prefixed := ""
		for _, c := range sorted {
			if strings.HasPrefix(strings.ToLower(c), low) {
				if prefixed != "" {
					prefixed = ""
					break
				}
				prefixed = c
			}
		}
		if prefixed != "" && 2*len(prefixed) <= 3*len(low) {
			return prefixed
		}
	}
	best, bestDist := "", 3
	for _, c := range sorted {
		if d := editDistance(low, strings.ToLower(c)); d < bestDist && d*3 <= len(c) {
			best, bestDist = c, d
		}
	}
	return best
}

// nameKey is a harness name in the spelling of ids: lower case, dashes
// for spaces and underscores ("Claude Code", "gemini_cli").
func nameKey(name string) string {
	return strings.NewReplacer(" ", "-", "_", "-").Replace(strings.ToLower(strings.TrimSpace(name)))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (r *Registry) withFamily(trace []string, d *Descriptor) []string {
	return append(trace,
		fmt.Sprintf("profile %s in family %s (delivery %s, transcripts %s)", d.Profile, d.Family.ID, d.Family.Delivery, d.Family.Transcript))
}

// IDs lists the descriptor ids, sorted.
func (r *Registry) IDs() []string {
	if len(r.Descriptors) == 0 && r.Known != nil {
		return r.Known
	}
	ids := make([]string, 0, len(r.Descriptors))
	for _, d := range r.Descriptors {
		ids = append(ids, d.ID)
	}
	sort.Strings(ids)
	return ids
}
