package emit

import "sitter.dev/sitter/gen/model"

// PluginSchema emits generated/schema/plugin.json, the JSON Schema of a
// unified plugin manifest (plugins-src/<plugin>/plugin.yaml).
func PluginSchema(a *model.Atlas) File {
	var harnesses, phases []string
	for _, h := range a.Harnesses {
		harnesses = append(harnesses, h.ID)
	}
	for _, p := range a.Phases {
		phases = append(phases, p.ID)
	}
	slug := "^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
	str := map[string]any{"type": "string"}
	strs := map[string]any{"type": "array", "items": str}
	handler := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"phase", "command"},
		"properties": map[string]any{
			"phase":   map[string]any{"description": "The canonical phase the handler answers.", "enum": phases},
			"command": map[string]any{"type": "string", "minLength": 1, "description": "Run with /bin/sh -c; the canonical event on stdin; $SITTER_PLUGIN_DIR is the bundle root and $SITTER_BIN the sitter binary."},
			"kinds": map[string]any{"type": "array", "uniqueItems": true, "description": "Tool kinds the handler matches (tool phases); empty = every tool.",
				"items": map[string]any{"enum": []string{"shell", "read", "write", "edit", "search", "fetch", "task", "mcp", "other"}}},
			"timeout": map[string]any{"type": "string", "pattern": "^0*[1-9][0-9]*(ms|s|m)$", "description": "How long the handler may run: a number above zero and ms, s or m, at most 24h (1440m); default 30s."},
			"onError": map[string]any{"enum": []string{"open", "closed"}, "description": "A failing handler is ignored (open, default) or denies (closed)."},
			"watch": map[string]any{"type": "array", "uniqueItems": true, "minItems": 1, "description": "Phase fileChanged only: the files, relative to the project, the handler is about. It runs for changes to those only, and where a harness watches files only when told to (Claude Code), the bundle tells it to watch them.",
				"items": map[string]any{"type": "string", "minLength": 1}},
			"redact": map[string]any{"type": "boolean", "description": "The handler gets the event with secrets (API keys, tokens, private keys, key=value credentials) masked in every string; it should not rewrite input."},
		},
	}
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  "urn:sitter:plugin:v1",
		"title":                "sitter unified plugin manifest (" + Marker("atlas/") + ")",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"name", "version", "description"},
		"properties": map[string]any{
			"name":        map[string]any{"type": "string", "pattern": slug, "maxLength": 64, "description": "A slug; equals the plugin's folder name."},
			"version":     map[string]any{"type": "string", "pattern": `^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`},
			"description": map[string]any{"type": "string", "minLength": 1, "maxLength": 1024},
			"license":     str,
			"homepage":    str,
			"keywords":    strs,
			"author": map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"name"},
				"properties": map[string]any{"name": map[string]any{"type": "string", "minLength": 1}, "email": str, "url": str},
			},
			"handlers": map[string]any{"type": "array", "items": handler},
			"mcpServers": map[string]any{
				"type":          "object",
				"propertyNames": map[string]any{"pattern": slug},
				"additionalProperties": map[string]any{
					"type": "object", "additionalProperties": false, "required": []string{"command"},
					"properties": map[string]any{
						"command": map[string]any{"type": "string", "minLength": 1},
						"args":    strs,
						"env":     map[string]any{"type": "object", "additionalProperties": str},
					},
				},
			},
			"files":     map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 1}, "description": "Extra files or folders (relative, inside the plugin) copied into every bundle."},
			"harnesses": map[string]any{"type": "array", "uniqueItems": true, "items": map[string]any{"enum": harnesses}, "description": "Build only for these harnesses (default: all)."},
			"requires":  map[string]any{"type": "array", "uniqueItems": true, "items": map[string]any{"enum": phases}, "description": "Phases the plugin cannot do without: a harness whose atlas has no event of one of them that can act (supported, with a capability) gets no bundle."},
			"overrides": map[string]any{
				"type":          "object",
				"propertyNames": map[string]any{"enum": harnesses},
				"additionalProperties": map[string]any{
					"type": "object", "additionalProperties": false,
					"properties": map[string]any{
						"skip":       map[string]any{"type": "boolean"},
						"skipReason": map[string]any{"type": "string", "minLength": 1, "description": "Why skip leaves this harness out; artifacts/README.md shows it."},
						"handlers":   map[string]any{"type": "array", "items": handler},
						"manifest":   map[string]any{"type": "object", "description": "Extra keys merged into this harness's plugin manifest."},
					},
				},
			},
		},
	}
	return jsonFile("generated/schema/plugin.json", schema)
}
