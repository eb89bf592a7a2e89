package gen_test

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/gen"
	"sitter.dev/sitter/gen/emit"
	"sitter.dev/sitter/gen/model"
)

// TestDroppedWarns: a handler whose phase no event of a harness the plugin
// builds for registers is left out of that bundle, and a plugin whose
// requires no harness meets gets no bundle at all; both build, and both
// warn at plugin.yaml naming the handler (or requires) and the harnesses.
func TestDroppedWarns(t *testing.T) {
	warns, files := generatePlugins(t, txtar.File{Name: "plugins-src/drops/plugin.yaml", Data: []byte(`name: drops
version: 0.0.1
description: Some handlers run only in some harnesses.
harnesses: [claude-code, cline, copilot]
handlers:
  - phase: preToolUse
    command: echo
  - phase: setup
    command: echo
overrides:
  cline:
    handlers:
      - phase: preToolUse
        command: echo
      - phase: notification
        command: echo
`)}, txtar.File{Name: "plugins-src/needs/plugin.yaml", Data: []byte(`name: needs
version: 0.0.1
description: Needs a phase neither harness has.
harnesses: [cline, copilot]
requires: [setup]
handlers:
  - phase: setup
    command: echo
`)})
	want := []string{
		"plugins-src/drops/plugin.yaml:8:5: warning: handlers[1].phase: no event of copilot registers a setup handler, so its bundle never runs this one (sitter atlas show copilot)",
		"plugins-src/drops/plugin.yaml:15:9: warning: overrides.cline.handlers[1].phase: no event of cline registers a notification handler, so its bundle never runs this one (sitter atlas show cline)",
		"plugins-src/needs/plugin.yaml:5:1: warning: requires: no harness this plugin builds for (cline, copilot) has an event that registers and can act on setup, so the plugin gets no bundle at all",
	}
	if !slices.Equal(warns, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
	built := bundlesOf(files)
	for _, b := range []string{"drops/claude-code", "drops/cline", "drops/copilot"} {
		if !built[b] {
			t.Errorf("no bundle %s", b)
		}
	}
	if built["needs/cline"] || built["needs/copilot"] {
		t.Errorf("bundles of needs built, want none")
	}
}

// generatePlugins runs the generator on a copy of the atlas with the
// plugin sources files (paths under plugins-src/) beside it, failing the
// test on an error, and returns its warnings and the files it wrote.
func generatePlugins(t *testing.T, files ...txtar.File) ([]string, []emit.File) {
	t.Helper()
	root := withAtlas(t)
	extract(t, &txtar.Archive{Files: append([]txtar.File{{Name: "stderr"}}, files...)}, root)
	return generateWarned(t, root)
}

// byPath is the text of each file, by its path.
func byPath(files []emit.File) map[string]string {
	got := map[string]string{}
	for _, f := range files {
		got[f.Path] = string(f.Bytes)
	}
	return got
}

// generateWarned runs the generator on root, failing the test on an
// error, and returns the warnings it printed with the files it wrote.
func generateWarned(t *testing.T, root string) ([]string, []emit.File) {
	t.Helper()
	var warns []string
	_, files, err := gen.GenerateWith(root, gen.Options{Warn: func(w model.Error) { warns = append(warns, w.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	return warns, files
}

// bundlesOf is the set of bundles among files, as "plugin/harness".
func bundlesOf(files []emit.File) map[string]bool {
	built := map[string]bool{}
	for _, f := range files {
		if rest, ok := strings.CutPrefix(f.Path, "artifacts/"); ok {
			p, rest, _ := strings.Cut(rest, "/")
			h, _, _ := strings.Cut(rest, "/")
			built[p+"/"+h] = true
		}
	}
	return built
}
