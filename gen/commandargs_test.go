package gen_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestCommandArgs: a command's source writes $ARGUMENTS for what the user
// typed after it, and each bundle gets its harness's own placeholder
// (atlas commandArgs): Gemini CLI's {{args}}, $ARGUMENTS where the harness
// expands that. Claude's indexed $ARGUMENTS[0] is not the placeholder.
func TestCommandArgs(t *testing.T) {
	_, files := generatePlugins(t, txtar.File{Name: "plugins-src/args/plugin.yaml", Data: []byte(`name: args
version: 0.0.1
description: A command that takes arguments.
harnesses: [claude-code, gemini-cli, pi, oh-my-pi, cursor, copilot, droid, qoder]
`)}, txtar.File{Name: "plugins-src/args/commands/go.md", Data: []byte("---\ndescription: Go.\n---\nTask: $ARGUMENTS\nFirst: $ARGUMENTS[0]\n")})
	got := byPath(files)
	want := map[string]string{
		"artifacts/args/gemini-cli/commands/go.toml": "Task: {{args}}\nFirst: $ARGUMENTS[0]\n",
		"artifacts/args/claude-code/commands/go.md":  "Task: $ARGUMENTS\nFirst: $ARGUMENTS[0]\n",
		"artifacts/args/pi/prompts/go.md":            "Task: $ARGUMENTS\n",
		"artifacts/args/oh-my-pi/prompts/go.md":      "Task: $ARGUMENTS\n",
		"artifacts/args/droid/commands/go.md":        "Task: $ARGUMENTS\n",
		"artifacts/args/qoder/commands/go.md":        "Task: $ARGUMENTS\n",
		"artifacts/args/cursor/commands/go.md":       "Task: $ARGUMENTS\n",
		"artifacts/args/copilot/commands/go.md":      "Task: $ARGUMENTS\n",
	}
	for path, frag := range want {
		body, ok := got[path]
		if !ok {
			t.Errorf("no %s", path)
			continue
		}
		if !strings.Contains(body, frag) {
			t.Errorf("%s:\n%s\nwant it to hold:\n%s", path, body, frag)
		}
	}
	if body := got["artifacts/args/gemini-cli/commands/go.toml"]; strings.Contains(body, "$ARGUMENTS\n") {
		t.Errorf("gemini-cli command keeps Claude's placeholder, which Gemini CLI does not expand:\n%s", body)
	}
}
