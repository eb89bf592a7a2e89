package plugin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// Installed reads every harness's install as Install wrote it: the copy,
// registered in the atlas's target; a target emptied by hand leaves the
// copy unregistered; a copy removed by hand leaves registrations whose
// launcher is gone, still named by their plugin. No harness is special.
func TestInstalledEveryHarness(t *testing.T) {
	for _, d := range registry.Registry().Descriptors {
		if d.Packaging.Format == "" {
			continue
		}
		t.Run(d.ID, func(t *testing.T) {
			dir := trickyDir(t)
			o := Options{Dir: dir, Home: t.TempDir(), DataHome: t.TempDir()}
			if c, r := Installed(d, o); len(c)+len(r) > 0 {
				t.Fatalf("before install: copies %+v, registrations %+v", c, r)
			}
			rep := install(t, d.ID, dir, false)
			copies, regs := Installed(d, o)
			if len(copies) != 1 || copies[0].Plugin != "guard" || copies[0].Scope != "project" || copies[0].Dir != rep.Copy || !copies[0].Registered {
				t.Fatalf("after install: copies %+v, want guard's at %s, registered", copies, rep.Copy)
			}
			if d.Packaging.Target.Kind == "folder" {
				// The copy is the registration: nothing else to read.
				return
			}
			if len(regs) == 0 {
				t.Fatalf("after install: no registration in %s", rep.Target)
			}
			for _, r := range regs {
				if r.Plugin != "guard" || r.Runs == "" || !filepath.IsAbs(r.Runs) {
					t.Errorf("registration %+v: want guard's, with the path it runs", r)
				}
				if _, err := os.Stat(r.Runs); err != nil {
					t.Errorf("registration %+v runs a path that is not there: %v", r, err)
				}
			}

			// The copy goes: the registrations stay, naming what is gone.
			if err := os.RemoveAll(filepath.Join(dir, ".sitter")); err != nil {
				t.Fatal(err)
			}
			copies, regs = Installed(d, o)
			if len(copies) != 0 || len(regs) == 0 {
				t.Fatalf("copy removed: copies %+v, registrations %+v", copies, regs)
			}
			for _, r := range regs {
				if _, err := os.Stat(r.Runs); r.Plugin != "guard" || err == nil {
					t.Errorf("copy removed: registration %+v (stat: %v), want guard's, its path gone", r, err)
				}
			}

			// Reinstalled, then the registrations go: the copy is left
			// unregistered.
			install(t, d.ID, dir, false)
			for _, f := range targets(t, d.Packaging.Target.Kind, rep.Target) {
				if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			copies, regs = Installed(d, o)
			if len(copies) != 1 || copies[0].Registered || len(regs) != 0 {
				t.Errorf("target emptied: copies %+v, registrations %+v; want the copy, unregistered", copies, regs)
			}
		})
	}
}

// targets lists the files of an install target: the file, or a hooks
// folder's files.
func targets(t *testing.T, kind, target string) []string {
	t.Helper()
	if kind != "hooks-folder" {
		return []string{target}
	}
	es, err := os.ReadDir(target)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, filepath.Join(target, e.Name()))
	}
	return out
}

// A sitter command is a launcher or `sitter hook`, however the shell
// quotes it; the path it runs is checked only when it is one.
func TestSitterCommand(t *testing.T) {
	for _, c := range []struct {
		cmd, exe string
		ok       bool
	}{
		{`'/p/my proj/.sitter/plugins/g/claude-code/bin/sitter-hook' claude-code PreToolUse`, "/p/my proj/.sitter/plugins/g/claude-code/bin/sitter-hook", true},
		{`"/p/it's/bin/sitter-hook" codex Stop`, "/p/it's/bin/sitter-hook", true},
		{`'/p/it'\''s/bin/sitter-hook' codex Stop`, "/p/it's/bin/sitter-hook", true},
		{`/p/a\ b/bin/sitter-hook x y`, "/p/a b/bin/sitter-hook", true},
		{`sitter hook claude-code PreToolUse --handler ./x.sh`, "", true},
		{`/usr/local/bin/sitter hook gemini-cli BeforeTool`, "/usr/local/bin/sitter", true},
		{`"${CLAUDE_PLUGIN_ROOT}/bin/sitter-hook" claude-code PreToolUse`, "", true},
		{`sitter guard`, "", false},
		{`./audit.sh && echo sitter-hook`, "", false},
		{`echo sitter hook`, "", false},
		{``, "", false},
	} {
		exe, ok := sitterCommand(c.cmd)
		if exe != c.exe || ok != c.ok {
			t.Errorf("sitterCommand(%q) = %q, %v; want %q, %v", c.cmd, exe, ok, c.exe, c.ok)
		}
	}
	for _, c := range []struct {
		in      string
		words   []string
		expands []bool
	}{
		{`a 'b c' "d\"e" f`, []string{"a", "b c", `d"e`}, []bool{false, false, false}},
		{`'/p/$HOME' "$HOME" ~/x a\$b`, []string{"/p/$HOME", "$HOME", "~/x"}, []bool{false, true, true}},
		{`x;y`, []string{"x"}, []bool{false}},
		{`'open`, nil, nil},
	} {
		words, expands := shellFields(c.in, 3)
		if !slices.Equal(words, c.words) || !slices.Equal(expands, c.expands) {
			t.Errorf("shellFields(%q) = %q %v, want %q %v", c.in, words, expands, c.words, c.expands)
		}
	}
}
