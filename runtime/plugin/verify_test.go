package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/generated/registry"
)

// Every bundle the generator wrote passes: among the checks, none
// registers an event whose hook replaces the harness's own work (Claude
// Code's WorktreeCreate and WorktreeRemove, atlas replaces).
func TestVerifyArtifacts(t *testing.T) {
	bundles, probs, err := VerifyPaths([]string{artifacts}, registry.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
	// guard has a bundle for every harness with a packaging format
	// (babysitter only where a stop event can act: it requires one).
	for _, d := range registry.Registry().Descriptors {
		if want := filepath.Join(artifacts, "guard", d.ID); d.Packaging.Format != "" && !slices.Contains(bundles, want) {
			t.Errorf("no bundle %s among the %d under %s: %v", want, len(bundles), artifacts, bundles)
		}
	}
}

// brokenCopy copies a real bundle and breaks it.
func brokenCopy(t *testing.T, src string, breakIt func(dir string)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	copyDir(t, filepath.Join(artifacts, src), dir)
	if probs := Verify(dir, registry.Registry()); len(probs) != 0 {
		t.Fatalf("the unbroken copy of %s fails: %v", src, probs)
	}
	breakIt(dir)
	return dir
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	data := string(readFile(t, path))
	if !strings.Contains(data, old) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(data, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyNamesTheBrokenFile(t *testing.T) {
	tests := []struct {
		name, bundle string
		breakIt      func(t *testing.T, dir string)
		want         []string // "<file>: <problem prefix>"
	}{
		{"missing SKILL.md", "babysitter/claude-code", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "skills", "babysit", "SKILL.md"))
		}, []string{"skills/babysit/SKILL.md: missing"}},
		{"missing SKILL.md, skills named by the manifest", "babysitter/codex", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "skills", "babysit", "SKILL.md"))
		}, []string{"skills/babysit/SKILL.md: missing"}},
		{"non-executable launcher", "guard/gemini-cli", func(t *testing.T, dir string) {
			os.Chmod(filepath.Join(dir, "bin", "sitter-hook"), 0o644)
		}, []string{"bin/sitter-hook: not executable"}},
		{"launcher without shebang", "guard/cursor", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "bin", "sitter-hook"), "#!/bin/sh\n", "")
		}, []string{`bin/sitter-hook: does not start with "#!"`}},
		{"missing launcher", "guard/codex", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "bin", "sitter-hook"))
		}, []string{"bin/sitter-hook: missing"}},
		{"bad manifest field (Cursor is closed)", "guard/cursor", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, ".cursor-plugin", "plugin.json"), `"name": "guard"`, `"name": "guard", "frobnicate": true`)
		}, []string{`.cursor-plugin/plugin.json: /: unknown field "frobnicate"`}},
		{"bad manifest name", "guard/claude-code", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), `"name": "guard"`, `"name": "my guard"`)
		}, []string{`.claude-plugin/plugin.json: /name: "my guard" does not match`}},
		{"copilot name too long", "guard/copilot", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "plugin.json"), `"name": "guard"`, `"name": "`+strings.Repeat("g", 65)+`"`)
		}, []string{`plugin.json: /name: is longer than 64 characters`}},
		{"gemini without version", "guard/gemini-cli", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "gemini-extension.json"), `"version": "0.1.0"`, `"versio": "0.1.0"`)
		}, []string{`gemini-extension.json: /: missing required field "version"`}},
		{"unknown event", "guard/claude-code", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "hooks", "hooks.json"), `"PreToolUse": [`, `"PreToolUze": [`)
		}, []string{
			`hooks/hooks.json: hooks.PreToolUze: "PreToolUze" is not a native event of claude-code`,
			`hooks/hooks.json: hooks.PreToolUze: command`,
			`hooks/hooks.json: hooks.PreToolUze: not listed in`,
			`hooks/hooks.json: hooks: .sitter-bundle.json lists PreToolUse, which is not registered here`,
		}},
		{"an event whose hook replaces the harness's work", "guard/claude-code", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "hooks", "hooks.json"), `"PreToolUse": [`, `"WorktreeCreate": [{"hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/bin/sitter-hook\" claude-code WorktreeCreate"}]}], "PreToolUse": [`)
			edit(t, filepath.Join(dir, MarkerFile), `"PreToolUse"`, `"PreToolUse", "WorktreeCreate"`)
		}, []string{`hooks/hooks.json: hooks.WorktreeCreate: WorktreeCreate must not be registered: its hook replaces worktree creation`}},
		{"command not at the launcher", "guard/copilot", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "hooks.json"), `"./bin/sitter-hook\" copilot`, `"./bin/other-hook\" copilot`)
		}, []string{`hooks.json: hooks.preToolUse: command "\"./bin/other-hook\" copilot preToolUse" does not run the bundle's launcher`}},
		{"manifest names a missing hooks file", "guard/codex", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "hooks", "hooks.json"))
		}, []string{
			`.codex-plugin/plugin.json: hooks: "./hooks/hooks.json" does not exist`,
			`hooks/hooks.json: missing, but .sitter-bundle.json lists hooks`,
		}},
		{"gemini context file the plugin does not ship", "guard/gemini-cli", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "gemini-extension.json"), `"contextFileName": "GEMINI.md"`, `"contextFileName": "CONTEXT.md"`)
		}, []string{`gemini-extension.json: contextFileName: "CONTEXT.md" does not exist: add it to files: in plugins-src/guard/plugin.yaml, so that every bundle ships it, and run make generate`}},
		{"gemini context file the layout writes, removed", "guard/gemini-cli", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "GEMINI.md"))
		}, []string{`GEMINI.md: missing`, `gemini-extension.json: contextFileName: "GEMINI.md" does not exist: the generator writes it; regenerate the bundle (make generate)`}},
		{"handler phase the harness lacks", "guard/pi", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "sitter-handlers.json"), `"phase": "preToolUse"`, `"phase": "beforeTeaTime"`)
		}, []string{`sitter-handlers.json: /handlers/0/phase: pi has no "beforeTeaTime" phase`}},
		{"pi package without its keyword", "guard/pi", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "package.json"), `"pi-package"`, `"pie"`)
		}, []string{`package.json: keywords: want "pi-package"`}},
		{"pi extension path missing", "guard/pi", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "extensions"))
		}, []string{`extensions/sitter.ts: missing`, `package.json: pi.extensions: "./extensions" does not exist`}},
		{"opencode without index.ts", "guard/opencode", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "index.ts"))
		}, []string{`index.ts: missing`, `package.json: main: "index.ts" does not exist`}},
		{"unparsable JSON", "guard/claude-code", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), "{", "{{")
		}, []string{`.claude-plugin/plugin.json:1:2: invalid JSON: invalid character '{' looking for beginning of object key string`}},
		{"marker for another format", "guard/claude-code", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, MarkerFile), `"format": "claude-plugin"`, `"format": "cursor-plugin"`)
		}, []string{`.sitter-bundle.json: format "cursor-plugin", but the atlas packages claude-code as "claude-plugin"`}},
		{"handler script missing", "guard/codex", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, HandlerTable), `"\"$SITTER_BIN\" guard"`, `"\"$SITTER_PLUGIN_DIR/no-env.sh\""`)
		}, []string{`sitter-handlers.json: /handlers/0/command: missing file no-env.sh`}},
		{"handler script without run bits", "guard/codex", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "scripts", "check.py"), "#!/usr/bin/env python3\n")
			edit(t, filepath.Join(dir, HandlerTable), `"\"$SITTER_BIN\" guard"`, `"${SITTER_PLUGIN_DIR}/scripts/check.py --strict"`)
		}, []string{`sitter-handlers.json: /handlers/0/command: scripts/check.py is not executable`}},
		{"handler reads a missing file", "guard/codex", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, HandlerTable), `"\"$SITTER_BIN\" guard"`, `"cat \"$SITTER_PLUGIN_DIR/deny.json\"; python3 $SITTER_PLUGIN_DIR/../x.py"`)
		}, []string{
			`sitter-handlers.json: /handlers/0/command: missing file deny.json`,
			`sitter-handlers.json: /handlers/0/command: "$SITTER_PLUGIN_DIR/../x.py" leaves the bundle`,
		}},
		{"handler timeout of zero", "guard/codex", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, HandlerTable), `"timeout": "10s"`, `"timeout": "0s"`)
		}, []string{`sitter-handlers.json: /handlers/0/timeout: "0s" is not above zero`}},
		{"handler timeout too large for a duration", "guard/codex", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, HandlerTable), `"timeout": "10s"`, `"timeout": "99999999999999999999m"`)
		}, []string{`sitter-handlers.json: /handlers/0/timeout: "99999999999999999999m" is longer than 24h`}},
		{"script without run bits", "guard/claude-code", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "scripts", "x.sh"), "#!/bin/sh\n")
		}, []string{`scripts/x.sh: not executable`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := brokenCopy(t, tt.bundle, func(dir string) { tt.breakIt(t, dir) })
			var got []string
			for _, p := range Verify(dir, registry.Registry()) {
				line := p.String()
				rest, ok := strings.CutPrefix(line, dir+"/")
				if !ok {
					t.Errorf("problem does not start with the bundle path: %s", line)
				}
				got = append(got, rest)
			}
			want := tt.want
			// Each wanted problem is reported, and nothing else.
			matched := make([]bool, len(got))
			for _, w := range want {
				found := false
				for i, g := range got {
					if !matched[i] && strings.HasPrefix(g, w) {
						matched[i], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("no problem %q in\n%s", w, strings.Join(got, "\n"))
				}
			}
			for i, g := range got {
				if !matched[i] {
					t.Errorf("unexpected problem %s", g)
				}
			}
		})
	}
}

func TestVerifyPathsWithoutBundles(t *testing.T) {
	if _, _, err := VerifyPaths([]string{t.TempDir()}, registry.Registry()); err == nil {
		t.Error("a folder without bundles verified")
	}
	bundles, _, err := VerifyPaths([]string{filepath.Join(artifacts, "guard")}, registry.Registry())
	if err != nil {
		t.Fatal(err)
	}
	// The claude marketplace carries its own copy of the bundle.
	if !slices.Contains(bundles, filepath.Join(artifacts, "guard", "claude-code")) || !slices.Contains(bundles, filepath.Join(artifacts, "guard", "marketplaces", "claude", "plugins", "guard")) || len(bundles) < 8 {
		t.Errorf("bundles of guard: %v", bundles)
	}
}

// With no sitter anywhere (not on PATH, no SITTER_BIN, no bin/sitter in
// the bundle) the launcher answers the no-op: exit 0, nothing on stdout,
// one line on stderr saying how to install sitter.
func TestLauncherWithoutSitter(t *testing.T) {
	// A PATH with only what the script needs besides shell builtins.
	bin := t.TempDir()
	for _, tool := range []string{"dirname", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, h := range []string{"claude-code", "codex", "gemini-cli", "cursor", "copilot", "opencode", "pi"} {
		t.Run(h, func(t *testing.T) {
			dir := trickyDir(t)
			r := install(t, h, dir, false)
			for _, env := range [][]string{
				{"PATH=" + bin},
				{"PATH=" + bin, "SITTER_BIN=" + filepath.Join(dir, "no-such-sitter")},
			} {
				cmd := exec.Command(sh, "-c", ShellQuote(r.Launcher)+" "+h+" SomeEvent")
				cmd.Env = env
				cmd.Stdin = strings.NewReader(`{"hook_event_name":"SomeEvent","tool_input":{"command":"rm -rf /"}}`)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Errorf("%v: %v (stderr %q)", env, err, stderr.String())
				}
				if stdout.Len() != 0 {
					t.Errorf("%v: stdout %q, want none", env, stdout.String())
				}
				if lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "sitter: not installed, "+h+" hook skipped") || !strings.Contains(lines[0], "make build") {
					t.Errorf("%v: stderr %q, want one line on installing sitter", env, stderr.String())
				}
			}
		})
	}
}

// The generator's golden bundles (gen/testdata/bundles: plugins using
// every manifest feature, kinds, redact and watch among them) pass too:
// the handler table schema here must know every field the generator
// writes.
func TestVerifyGoldenBundles(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "gen", "testdata", "bundles", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden bundles: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var golden []byte
			for _, f := range ar.Files {
				if f.Name == "bundles" {
					golden = f.Data
				}
			}
			// The section is "== <path> <mode>" lines, each followed by the
			// file's bytes without their last newline.
			root := t.TempDir()
			var name string
			var mode uint64
			var body []string
			flush := func() {
				if name == "" {
					return
				}
				p := filepath.Join(root, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(strings.Join(body, "\n")+"\n"), os.FileMode(mode)); err != nil {
					t.Fatal(err)
				}
			}
			for _, line := range strings.Split(strings.TrimSuffix(string(golden), "\n"), "\n") {
				if rest, ok := strings.CutPrefix(line, "== "); ok {
					flush()
					f := strings.Fields(rest)
					if len(f) != 2 {
						t.Fatalf("bad file line %q", line)
					}
					name, body = f[0], nil
					if mode, err = strconv.ParseUint(f[1], 8, 32); err != nil {
						t.Fatalf("bad mode in %q", line)
					}
					continue
				}
				body = append(body, line)
			}
			flush()
			bundles, probs, err := VerifyPaths([]string{filepath.Join(root, "artifacts")}, registry.Registry())
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range probs {
				t.Error(p)
			}
			if len(bundles) == 0 {
				t.Error("no bundle in the golden")
			}
		})
	}
}
