package plugin

// format is what sitter knows of one packaging format: its manifest and
// schema, and for the shell-hook formats the bundle's hooks file, its shape
// and the key holding each command.
type format struct {
	manifest    string   // path in the bundle
	schema      string   // schemas/<schema>.json for the manifest
	required    []string // files that must exist besides the manifest
	hooksFile   string   // "" for the programmatic formats
	hooksSchema string
	shape       string // "matcher-groups" | "versioned-list"
	commandKey  string
}

var formats = map[string]format{
	"claude-plugin":    {manifest: ".claude-plugin/plugin.json", schema: "claude-plugin", hooksFile: "hooks/hooks.json", hooksSchema: "hooks-matcher-groups", shape: "matcher-groups", commandKey: "command"},
	"codex-plugin":     {manifest: ".codex-plugin/plugin.json", schema: "codex-plugin", hooksFile: "hooks/hooks.json", hooksSchema: "hooks-matcher-groups", shape: "matcher-groups", commandKey: "command"},
	"gemini-extension": {manifest: "gemini-extension.json", schema: "gemini-extension", hooksFile: "hooks/hooks.json", hooksSchema: "hooks-matcher-groups", shape: "matcher-groups", commandKey: "command"},
	"cursor-plugin":    {manifest: ".cursor-plugin/plugin.json", schema: "cursor-plugin", hooksFile: "hooks/hooks.json", hooksSchema: "hooks-cursor", shape: "versioned-list", commandKey: "command"},
	"copilot-plugin":   {manifest: "plugin.json", schema: "copilot-plugin", hooksFile: "hooks.json", hooksSchema: "hooks-copilot", shape: "versioned-list", commandKey: "bash"},
	"opencode-plugin":  {manifest: "package.json", schema: "opencode-package", required: []string{"index.ts"}},
	"pi-package":       {manifest: "package.json", schema: "pi-package"},
}
