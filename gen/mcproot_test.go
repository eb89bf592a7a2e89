package gen_test

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestMCPRoot: an MCP server names a file of its plugin through
// $SITTER_PLUGIN_DIR (in command, args or env), and each bundle gets what
// its harness expands to the bundle root in MCP config (atlas mcpRoot);
// a harness that expands nothing there gets the bundle without that
// server, with a warning at the server naming the harness. A server that
// names no plugin file is copied as it is everywhere.
func TestMCPRoot(t *testing.T) {
	warns, files := generatePlugins(t, txtar.File{Name: "plugins-src/mcp/plugin.yaml", Data: []byte(`name: mcp
version: 0.0.1
description: Ships its own MCP server.
harnesses: [claude-code, gemini-cli, qoder, copilot, codex]
files: [bin, data]
mcpServers:
  own:
    command: $SITTER_PLUGIN_DIR/bin/serve.sh
    args: ["--data", "${SITTER_PLUGIN_DIR}/data/x.json"]
    env: {SERVE_HOME: $SITTER_PLUGIN_DIR/data}
  npm:
    command: npx
    args: ["-y", "@acme/search-mcp"]
`)}, txtar.File{Name: "plugins-src/mcp/bin/serve.sh", Data: []byte("#!/bin/sh\n")}, txtar.File{Name: "plugins-src/mcp/data/x.json", Data: []byte("{}\n")})
	got := byPath(files)
	for file, root := range map[string]string{
		"artifacts/mcp/claude-code/.mcp.json":            "${CLAUDE_PLUGIN_ROOT}",
		"artifacts/mcp/gemini-cli/gemini-extension.json": "${extensionPath}",
		"artifacts/mcp/qoder/.mcp.json":                  "${QODER_PLUGIN_ROOT}",
	} {
		body := got[file]
		for _, want := range []string{`"command": "` + root + `/bin/serve.sh"`, `"` + root + `/data/x.json"`, `"SERVE_HOME": "` + root + `/data"`, `"command": "npx"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %s:\n%s", file, want, body)
			}
		}
		if strings.Contains(body, "SITTER_PLUGIN_DIR") {
			t.Errorf("%s keeps $SITTER_PLUGIN_DIR, which no harness sets for an MCP server:\n%s", file, body)
		}
	}
	for _, file := range []string{"artifacts/mcp/copilot/plugin.json", "artifacts/mcp/codex/.mcp.json"} {
		body := got[file]
		if !strings.Contains(body, `"command": "npx"`) || strings.Contains(body, "serve.sh") {
			t.Errorf("%s: want the npx server only:\n%s", file, body)
		}
	}
	want := []string{
		"plugins-src/mcp/plugin.yaml:7:3: warning: mcpServers.own: codex, copilot expand no plugin-root variable in MCP server definitions, so their bundles leave out this server, which names a plugin file through $SITTER_PLUGIN_DIR",
	}
	if !slices.Equal(warns, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
}
