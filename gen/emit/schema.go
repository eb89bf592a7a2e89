package emit

import (
	"encoding/json"
	"fmt"

	"sitter.dev/sitter/gen/model"
)

// Schemas emits the JSON Schemas of the canonical event and result.
func Schemas(a *model.Atlas) []File {
	var harnesses, phases []string
	for _, h := range a.Harnesses {
		harnesses = append(harnesses, h.ID)
	}
	for _, p := range a.Phases {
		phases = append(phases, p.ID)
	}
	str := map[string]any{"type": "string"}
	event := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  "urn:sitter:hook:v1:event",
		"title":                "sitter canonical hook event (" + Marker("atlas/") + ")",
		"description":          "What a handler receives on stdin. Absent facts are omitted, never invented.",
		"type":                 "object",
		"required":             []string{"version", "harness", "nativeEvent", "phase", "support", "session"},
		"additionalProperties": false,
		"properties": map[string]any{
			"version":     map[string]any{"const": "sitter.hook.v1"},
			"harness":     map[string]any{"enum": harnesses},
			"nativeEvent": str,
			"phase":       map[string]any{"enum": phases},
			"support":     map[string]any{"enum": []string{"native", "lossy", "emulated", "unsupported"}},
			"session": map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"properties": map[string]any{
					"id": str, "cwd": str, "transcriptPath": str, "turnId": str, "model": str, "permissionMode": str,
					"projectDir": map[string]any{"type": "string", "description": "The project's root folder, where the harness names it (Claude Code: CLAUDE_PROJECT_DIR); cwd is where the agent is now."},
				},
			},
			"tool": map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"properties": map[string]any{
					"name":     str,
					"kind":     map[string]any{"enum": []string{"shell", "read", "write", "edit", "search", "fetch", "task", "mcp", "other"}},
					"input":    map[string]any{},
					"response": map[string]any{},
					"callId":   str,
				},
			},
			"prompt":               str,
			"source":               str,
			"reason":               str,
			"stopHookActive":       map[string]any{"type": "boolean"},
			"lastAssistantMessage": str,
			"file":                 map[string]any{"type": "string", "description": "The file a fileChanged event is about, as the harness names it."},
			"raw":                  map[string]any{"description": "The native payload, untouched."},
		},
	}
	result := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  "urn:sitter:hook:v1:result",
		"title":                "sitter canonical hook result (" + Marker("atlas/") + ")",
		"description":          "What a handler prints on stdout. Empty stdout is a noop; exit 2 is a deny (block on stop) with stderr as the reason.",
		"type":                 "object",
		"additionalProperties": false,
		"properties": map[string]any{
			"decision":          map[string]any{"enum": []string{"allow", "deny", "ask", "block", "noop"}},
			"reason":            str,
			"userMessage":       str,
			"additionalContext": str,
			"updatedInput":      map[string]any{"type": "object"},
			"halt":              map[string]any{"type": "boolean"},
			"watchPaths": map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 1},
				"description": "Files the harness should watch for the session (absolute, or relative to the project: session.projectDir, else cwd), raising its fileChanged event when one changes; where the event can watchFiles (sitter atlas show)."},
		},
	}
	return []File{jsonFile("generated/schema/event.json", event), jsonFile("generated/schema/result.json", result)}
}

func jsonFile(path string, v any) File {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("marshal %s: %v", path, err))
	}
	return File{Path: path, Bytes: append(b, '\n'), Mode: 0o644}
}
