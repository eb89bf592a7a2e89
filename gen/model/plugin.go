package model

import (
	"os"
	"time"
)

// Plugin is one unified plugin source.
type Plugin struct {
	Dir         string // relative to the repository root: plugins-src/<name>
	Name        string
	Version     string
	Description string
	License     string
	Homepage    string
	Author      Author
	Keywords    []string
	Handlers    []Handler
	MCPServers  []MCPServer  // sorted by name
	Skills      []Skill      // sorted by name
	Commands    []Command    // sorted by name
	Files       []PluginFile // extra files copied into every bundle, sorted
	Harnesses   []string     // the harnesses to build for; empty = all
	// Requires lists phases a bundle cannot do without: a harness whose
	// atlas has no event of one of them that can act gets no bundle.
	Requires    []string
	RequiresPos Pos // where requires is written in plugin.yaml
	Overrides   map[string]Override
}

// Author names who wrote the plugin.
type Author struct{ Name, Email, URL string }

// Handler runs for one canonical phase.
type Handler struct {
	Phase   string   `json:"phase" yaml:"phase"`
	Command string   `json:"command" yaml:"command"`
	Kinds   []string `json:"kinds,omitempty" yaml:"kinds"`
	Timeout string   `json:"timeout,omitempty" yaml:"timeout"`
	OnError string   `json:"onError,omitempty" yaml:"onError"`
	Redact  bool     `json:"redact,omitempty" yaml:"redact"`
	// Watch names the files (relative to the project) a fileChanged
	// handler is about: it runs for those only, and a harness that
	// watches files only when told to is told to watch them.
	Watch []string `json:"watch,omitempty" yaml:"watch"`
	// Limit is Timeout read by the hook's rule (hook.ParseTimeout, in
	// gen/plugin); 0 when Timeout is empty.
	Limit time.Duration `json:"-" yaml:"-"`
	// Pos is where the handler's phase is written in plugin.yaml; Field
	// names it there ("handlers[2]", "overrides.codex.handlers[0]").
	Pos   Pos    `json:"-" yaml:"-"`
	Field string `json:"-" yaml:"-"`
}

// MCPServer is a stdio MCP server the plugin ships.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	Pos     Pos // where the entry is written in plugin.yaml
}

// Skill is skills/<name>/SKILL.md with its front matter.
type Skill struct {
	Name, Description string
	Files             []PluginFile // every file of the skill folder
}

// Command is commands/<name>.md: a prompt with optional front matter.
type Command struct {
	Name, Description string
	Prompt            string // the body after the front matter
	Source            []byte // the whole file
}

// PluginFile is a file of the plugin source, path relative to the plugin folder.
type PluginFile struct {
	Path string
	Data []byte
	Mode os.FileMode
}

// Override changes what one harness's bundle gets.
type Override struct {
	Skip       bool
	SkipReason string // why, when the plugin says (skipReason), for artifacts/README.md
	Handlers   []Handler
	Manifest   map[string]any
}
