package gen_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/internal/golden"
)

// TestReplacingLeftOut: a plugin handler on a phase whose event replaces
// the harness's own work in one harness (Claude Code's WorktreeCreate) but
// runs in another the plugin builds for is left out of the first bundle
// with a positioned warning and a README note; the other bundle registers
// it. The golden "want" section holds the warnings, then each bundle's
// README, marker, handler table and hook file.
func TestReplacingLeftOut(t *testing.T) {
	eachArchive(t, "testdata/replacing/*.txtar", func(t *testing.T, path string, ar *txtar.Archive) {
		root := withAtlas(t)
		// extract writes every file but its expected section
		// ("stderr" or "bundles"): hand it the sources only.
		src := &txtar.Archive{Files: []txtar.File{{Name: "stderr"}}}
		for _, f := range ar.Files {
			if f.Name != "want" {
				src.Files = append(src.Files, f)
			}
		}
		extract(t, src, root)
		warns, files := generateWarned(t, root)
		var out []string
		for _, f := range files {
			base := filepath.Base(f.Path)
			if !strings.HasPrefix(f.Path, "artifacts/wt/") || strings.Contains(f.Path, "/marketplaces/") {
				continue
			}
			if base == "README.md" || base == ".sitter-bundle.json" || base == "sitter-handlers.json" || strings.Contains(f.Path, "/hooks/") {
				out = append(out, fmt.Sprintf("== %s\n%s", f.Path, bytes.TrimSuffix(f.Bytes, []byte("\n"))))
			}
		}
		sort.Strings(out)
		got := "warnings:\n" + strings.Join(warns, "\n") + "\n" + strings.Join(out, "\n") + "\n"
		golden.Section(t, path, ar, "want", []byte(got))
	})
}

// TestUnreachedWarns: a handler restricted to MCP tools, in a plugin for
// Claude Code (whose atlas file classifies its mcp__ tools) and Copilot
// (whose file classifies none as mcp), builds both bundles and warns,
// at the handler, that Copilot never runs it.
func TestUnreachedWarns(t *testing.T) {
	warns, files := generatePlugins(t, txtar.File{Name: "plugins-src/mcpwatch/plugin.yaml", Data: []byte(`name: mcpwatch
version: 0.0.1
description: Watches MCP calls.
harnesses: [claude-code, copilot]
handlers:
  - phase: preToolUse
    command: echo
    kinds: [mcp]
`)})
	want := []string{"plugins-src/mcpwatch/plugin.yaml:6:5: warning: handlers[0].kinds: no tool of GitHub Copilot CLI is of kind mcp in the atlas, so GitHub Copilot CLI never runs this handler of its bundle (its tools: atlas/harnesses/copilot.cue)"}
	if !slices.Equal(warns, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
	built := bundlesOf(files)
	if !built["mcpwatch/claude-code"] || !built["mcpwatch/copilot"] {
		t.Errorf("bundles built for %v, want claude-code and copilot", built)
	}
}
