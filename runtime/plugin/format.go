package plugin

import "sitter.dev/sitter/runtime/adapter"

// format is what sitter knows of a bundle of one harness's layout (the
// atlas's layouts, carried by the descriptor): its manifest and schema,
// the files it always has, the manifest keys naming bundle files and the
// values the manifest must carry, and for the shell-hook layouts the
// bundle's hooks file, its shape and the key holding each command. An
// empty schema name means the file is checked as JSON only. Nothing here
// is particular to one format: a layout declared in CUE is verified alone.
type format struct {
	manifest    string   // path in the bundle
	schema      string   // schemas/<schema>.json for the manifest
	required    []string // files that must exist besides the manifest
	skills      string   // the folder skills are copied into, "" = none
	commands    string   // each command's file, {command} its name; "" = none
	mcpFile     string   // the JSON file holding the MCP servers, "" = none
	mcpKey      string   // the dotted key of their object in mcpFile
	paths       []adapter.BundlePath
	requires    []adapter.BundleValue
	hooksFile   string // "" for the programmatic formats
	hooksSchema string
	shape       string // "matcher-groups" | "versioned-list"
	commandKey  string
}

// formatOf is the format of the bundles of harness d.
func formatOf(d *adapter.Descriptor) format {
	b := d.Packaging.Bundle
	return format{manifest: b.Manifest, schema: b.ManifestSchema, required: b.Required,
		skills: b.Skills, commands: b.Commands, mcpFile: b.MCPFile, mcpKey: b.MCPKey, paths: b.Paths, requires: b.Requires,
		hooksFile: b.Hooks, hooksSchema: b.HooksSchema, shape: b.Shape, commandKey: b.CommandKey}
}
