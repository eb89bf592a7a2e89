package model

import (
	"regexp"
	"strings"
)

// Layout is one plugin format (#Layout, atlas/layouts.cue): the files of a
// bundle as templates filled from the plugin's metadata.
type Layout struct {
	ID          string
	Pos         Pos
	Manifest    LayoutManifest
	Hooks       *LayoutHooks // nil for the programmatic family
	Skills      Named        // folder the skills are copied into, "" = not carried
	Commands    Named        // folder the commands are copied into, "" = not carried
	CommandForm string       // how a user types a command: {plugin}, {command} filled in
	CommandArgs *CommandArgs // nil when not declared (an error where the layout carries commands)
	MCPRoot     *MCPRoot     // nil: the harness expands no bundle-root variable in MCP config
	Files       []*LayoutFile
	EventLists  []EventList // sorted by name
	Marketplace *Marketplace
	Evidence    []Evidence
}

// ArgumentsToken is what a plugin's command writes for the text the user
// typed after the command's name (Claude Code's placeholder); each bundle
// gets its layout's CommandArgs.Placeholder instead.
const ArgumentsToken = "$ARGUMENTS"

// CommandArgs is how a harness hands a command the text typed after it.
type CommandArgs struct {
	Placeholder string // "" = none: the harness appends the text to the prompt itself
	Evidence    []Evidence
	Pos         Pos
}

// CarriesCommands reports whether bundles of the layout carry the
// plugin's commands (copied into a folder, or a file written per command).
func (l *Layout) CarriesCommands() bool { return l.CommandFiles() != "" }

// MCPRoot is what a harness expands to the bundle root in the command,
// args and env of an MCP server its bundle declares.
type MCPRoot struct {
	Var      string
	Evidence []Evidence
	Pos      Pos
}

// pluginDirRE finds how a plugin names its own folder, in a handler's
// command and in an MCP server's command, args and env: $SITTER_PLUGIN_DIR
// or ${SITTER_PLUGIN_DIR} (set for handlers; the generator rewrites it in
// MCP servers to the harness's MCPRoot).
var pluginDirRE = regexp.MustCompile(`\$\{SITTER_PLUGIN_DIR\}|\$SITTER_PLUGIN_DIR\b`)

// NamesPluginDir reports whether s names the plugin's folder (the folder
// itself or a path under it) through $SITTER_PLUGIN_DIR.
func NamesPluginDir(s string) bool { return pluginDirRE.MatchString(s) }

// RewritePluginDir writes root for each $SITTER_PLUGIN_DIR of s.
func RewritePluginDir(s, root string) string {
	return pluginDirRE.ReplaceAllLiteralString(s, root)
}

// LayoutManifest is the file `sitter plugin verify` reads as the manifest.
type LayoutManifest struct {
	Path      Named
	Schema    string
	Overrides bool            // the plugin's overrides.<harness>.manifest keys merge into it
	Paths     []ManifestPath  // keys naming bundle files, sorted by key
	Requires  []ManifestValue // values it must carry, in atlas order
}

// ManifestPath is a manifest key ("a.b" reaches into an object) whose
// string or strings name files or folders of the bundle.
type ManifestPath struct {
	Key    string
	Folder bool // each must be a folder
	Skills bool // each holds skill folders, every one with its SKILL.md
	Pos    Pos
}

// ManifestValue is a value the manifest must carry at Key (the string, or
// one of the list's strings); Why is the reason verify gives.
type ManifestValue struct {
	Key, Value, Why string
	Pos             Pos
}

// LayoutHooks is a shell-hook layout's hook registrations: one config
// file, or one script per event (ShapeScripts).
type LayoutHooks struct {
	Path        Named // "" when not declared (a checker error); with ShapeScripts, a path with {event}
	Document    *Tmpl
	Shape       string // "matcher-groups" | "versioned-list" | ShapeScripts
	Entry       *Tmpl  // nil when not declared
	Script      Named  // ShapeScripts: the text of each script
	RootVar     string
	TimeoutUnit string
	Schema      string
	Pos         Pos
}

// ShapeScripts is the hook shape of a harness that runs each file of a
// hooks folder named after an event: one executable script per event.
const ShapeScripts = "script-per-event"

// Scripts reports whether the layout writes one script per event rather
// than a config file.
func (h *LayoutHooks) Scripts() bool { return h != nil && h.Shape == ShapeScripts }

// CommandKey is the key of the hook entry holding the command, "" if none.
func (h *LayoutHooks) CommandKey() string { return h.slotKey(SlotCommand) }

// TimeoutKey is the key of the hook entry that holds the timeout ("" for
// none).
func (h *LayoutHooks) TimeoutKey() string { return h.slotKey(SlotTimeout) }

func (h *LayoutHooks) slotKey(slot string) string {
	if h.Entry == nil {
		return ""
	}
	for _, k := range h.Entry.Keys {
		if k.Val.Kind == TmplString && k.Val.Str == "{"+slot+"}" {
			return k.Key
		}
	}
	return ""
}

// LayoutFile is one file of a layout; exactly one of JSON, TOML,
// Frontmatter (with Body) or Text is set.
type LayoutFile struct {
	Path        Named
	When        Named // a condition (LayoutConditions), "" = always
	Each        Named // "skills" | "commands" | ""
	JSON        *Tmpl
	KeyWhen     []KeyWhen
	TOML        []TmplKey
	Frontmatter *Tmpl
	Body        Named
	Text        []TextPart
	Pos         Pos
}

// KeyWhen leaves the key at Path (dot-separated) out of a JSON template
// unless the plugin has Cond.
type KeyWhen struct {
	Path, Cond string
	Pos        Pos
}

// TextPart is one piece of a text file.
type TextPart struct {
	Text       string
	When, Each string
	Pos        Pos
}

// EventList is a named subset of a bundle's registered events.
type EventList struct {
	Name           string
	Prefixes       []string
	ExceptPrefixes []string
	Phases         []string
	Sorted         bool
	Pos            Pos
}

// Marketplace is a layout's files beside the bundles.
type Marketplace struct {
	Dir   string
	Files []*LayoutFile
	Copy  string
	Pos   Pos
}

// TmplKind says what a template node is.
type TmplKind int

const (
	TmplConst  TmplKind = iota // a JSON constant (number, bool, null)
	TmplString                 // a string, possibly with slots
	TmplObject
	TmplList
)

// Tmpl is a JSON template node.
type Tmpl struct {
	Kind  TmplKind
	Const string // TmplConst: raw JSON
	Str   string // TmplString
	Keys  []TmplKey
	Items []*Tmpl
	Pos   Pos
}

// TmplKey is a member of an object template.
type TmplKey struct {
	Key string
	Val *Tmpl
}

// The layout vocabulary: conditions, the per-item sets, and slots.
const (
	SlotCommand = "command"
	SlotTimeout = "timeout"
	SlotMatcher = "matcher"
	SlotHooks   = "hooks"
	SlotEvents  = "events"
	SlotEvent   = "event" // the native event of one hook script
)

// LayoutConditions are what a file, a key or a text part can depend on.
var LayoutConditions = []string{"hooks", "skills", "commands", "mcpServers"}

// PluginSlots are the slots every template of a layout may use.
var PluginSlots = []string{
	"name", "version", "description", "license", "homepage", "keywords",
	"author", "author.name", "author.email", "author.url", "namePascal",
	"mcpServers", "harness", "generatedBy", SlotHooks,
}

// EachSlots are the slots of a file or part written once per skill or command.
var EachSlots = map[string][]string{
	"skills":   {"skill.name", "skill.description"},
	"commands": {"command.name", "command.description", "command.prompt"},
}

// EntrySlots are the slots of a hook entry.
var EntrySlots = []string{SlotCommand, SlotTimeout, SlotMatcher}

// ScriptSlots are the slots of a hook script (ShapeScripts) besides the
// plugin's; a script's path has the event only.
var ScriptSlots = []string{SlotEvent, SlotCommand, SlotTimeout, SlotMatcher}

// slotRE finds {slot} and {slot|default} in a template string.
var slotRE = regexp.MustCompile(`\{([a-zA-Z][a-zA-Z0-9]*(?:\.[a-zA-Z0-9]+)*)(?:\|([^{}]*))?\}`)

// SlotRef is one slot in a template string.
type SlotRef struct {
	Start, End int // byte offsets of the braces
	Name       string
	Default    string
	HasDefault bool
}

// TemplateSlots lists the slots of a template string.
func TemplateSlots(s string) []SlotRef {
	var out []SlotRef
	for _, m := range slotRE.FindAllStringSubmatchIndex(s, -1) {
		r := SlotRef{Start: m[0], End: m[1], Name: s[m[2]:m[3]]}
		if m[4] >= 0 {
			r.Default, r.HasDefault = s[m[4]:m[5]], true
		}
		out = append(out, r)
	}
	return out
}

// WholeSlot reports whether s is exactly one slot, which then takes the
// slot's value whatever its type.
func WholeSlot(s string) (SlotRef, bool) {
	rs := TemplateSlots(s)
	if len(rs) == 1 && rs[0].Start == 0 && rs[0].End == len(s) {
		return rs[0], true
	}
	return SlotRef{}, false
}

// IsEventsSlot reports whether a slot names the registered events or one
// of a layout's event lists.
func IsEventsSlot(name string) (list string, ok bool) {
	if name == SlotEvents {
		return "", true
	}
	l, ok := strings.CutPrefix(name, SlotEvents+".")
	return l, ok
}

// Layout returns the layout with an id, or nil.
func (a *Atlas) Layout(id string) *Layout {
	for _, l := range a.Layouts {
		if l.ID == id {
			return l
		}
	}
	return nil
}

// BundleFiles are the files every bundle carries besides its layout's.
var BundleFiles = []string{"sitter-handlers.json", "bin/sitter-hook", ".sitter-bundle.json", "README.md"}

// Required are the files every bundle of the layout has besides its
// manifest: those written whatever the plugin holds.
func (l *Layout) Required() []string {
	var out []string
	for _, f := range l.Files {
		if f.When.Name == "" && f.Each.Name == "" && f.Path.Name != l.Manifest.Path.Name {
			out = append(out, f.Path.Name)
		}
	}
	return out
}

// CommandFiles is where a bundle of the layout keeps its commands, with
// {command} for a command's name: <commands folder>/{command}.md when it
// copies them, else the path of the file it writes per command; "" when
// it keeps none.
func (l *Layout) CommandFiles() string {
	if l.Commands.Name != "" {
		return l.Commands.Name + "/{command}.md"
	}
	for _, f := range l.Files {
		if f.Each.Name == "commands" {
			return strings.ReplaceAll(f.Path.Name, "{command.name}", "{command}")
		}
	}
	return ""
}

// MCPServers is the JSON file of the layout that carries the plugin's MCP
// servers and the dotted key of the object holding them ("", "" when no
// file does).
func (l *Layout) MCPServers() (file, key string) {
	var find func(t *Tmpl, key string) string
	find = func(t *Tmpl, key string) string {
		if t == nil {
			return ""
		}
		if t.Kind == TmplString && t.Str == "{mcpServers}" {
			return key
		}
		for _, k := range t.Keys {
			sub := k.Key
			if key != "" {
				sub = key + "." + k.Key
			}
			if found := find(k.Val, sub); found != "" {
				return found
			}
		}
		return ""
	}
	for _, f := range l.Files {
		if k := find(f.JSON, ""); k != "" && f.Each.Name == "" {
			return f.Path.Name, k
		}
	}
	return "", ""
}
