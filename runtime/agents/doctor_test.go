package agents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/plugin"
	"sitter.dev/sitter/runtime/transcript"
)

// The presence facts, as the binaries set them.
func init() { transcript.Presences = gentranscript.Presences }

// fakeEnv is a project, home and data dir of their own, with every
// harness binary answering --version with the newest version the atlas
// verified for d.
func fakeEnv(t *testing.T, d *adapter.Descriptor) Env {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "harness")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho "+shellQuote(newest(d.Verified)+" ("+d.DisplayName+")")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Env{Dir: t.TempDir(), Home: t.TempDir(), DataHome: t.TempDir(), LookPath: func(string) (string, error) { return bin, nil }}
}

func doctor(t *testing.T, d *adapter.Descriptor, env Env) *Report {
	t.Helper()
	rep, err := Doctor(context.Background(), registry.Registry(), d.ID, env)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func codes(rep *Report) []string {
	var out []string
	for _, p := range rep.Problems {
		if !p.Warning {
			out = append(out, p.Code)
		}
	}
	return out
}

func problem(rep *Report, code string) *Problem {
	for i := range rep.Problems {
		if rep.Problems[i].Code == code {
			return &rep.Problems[i]
		}
	}
	return nil
}

func installGuard(t *testing.T, d *adapter.Descriptor, env Env) *plugin.Report {
	t.Helper()
	b, err := plugin.FindBundle(filepath.Join("artifacts", "guard"), d, registry.Registry())
	if err != nil {
		t.Fatal(err)
	}
	r, err := plugin.Install(b, d, plugin.Options{Dir: env.Dir, Home: env.Home, DataHome: env.DataHome})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// After sitter plugin install, every harness with a bundle is ready and
// lists the plugin (OpenClaw's copy is its plugin folder, not under
// .sitter). A hook config emptied by hand leaves the copy registered
// nowhere: not ready, with a reinstall as the fix. A copy removed by hand
// leaves registrations that run a launcher that is gone: not ready, the
// path named. Where the install target lives comes from the atlas.
func TestDoctorReadsInstalls(t *testing.T) {
	t.Chdir("../..") // a checkout: the fixes find artifacts/guard
	for _, d := range registry.Registry().Descriptors {
		if _, ok := transcript.LookupPresence(d.ID); !ok || d.Packaging.Format == "" || !hookable(d) {
			continue // nothing for doctor to check, or nothing to install
		}
		t.Run(d.ID, func(t *testing.T) {
			env := fakeEnv(t, d)
			rep := installGuard(t, d, env)
			got := doctor(t, d, env)
			if !got.Ready || !slices.Equal(got.Plugins, []string{"guard"}) {
				t.Fatalf("after install: ready %v, plugins %q, problems %+v; want ready, guard", got.Ready, got.Plugins, got.Problems)
			}
			if d.Packaging.Target.Kind == "folder" {
				return // the copy is the registration
			}
			if len(got.Hooks) == 0 {
				t.Errorf("after install: no hook config listed (target %s)", rep.Target)
			}

			// The registrations go: the copy is registered nowhere.
			emptyTarget(t, d.Packaging.Target.Kind, rep.Target)
			got = doctor(t, d, env)
			p := problem(got, CodeNotRegistered)
			if got.Ready || p == nil || !strings.Contains(p.Detail, rep.Copy) || p.Fix != "sitter plugin install guard --harness "+d.ID+" --dir "+shellQuote(env.Dir) {
				t.Fatalf("target emptied: ready %v, problems %+v; want %s naming %s, the fix a reinstall", got.Ready, got.Problems, CodeNotRegistered, rep.Copy)
			}

			// Reinstalled, then the copy goes: the registration runs a
			// launcher that is not there.
			installGuard(t, d, env)
			if got := doctor(t, d, env); !got.Ready {
				t.Fatalf("reinstalled: %+v", got.Problems)
			}
			if err := os.RemoveAll(filepath.Join(env.Dir, ".sitter")); err != nil {
				t.Fatal(err)
			}
			got = doctor(t, d, env)
			p = problem(got, CodeCommandMissing)
			if got.Ready || p == nil || !strings.Contains(p.Detail, filepath.Join(".sitter", "plugins", "guard", d.ID)) ||
				!strings.HasPrefix(p.Fix, "sitter plugin install guard --harness "+d.ID+" --dir ") {
				t.Fatalf("copy removed: ready %v, problems %+v; want %s naming the launcher, the fix a reinstall", got.Ready, got.Problems, CodeCommandMissing)
			}
			if n := len(codes(got)); n != 1 {
				t.Errorf("copy removed: %d errors, want 1 (one per path): %+v", n, got.Problems)
			}
		})
	}
}

// emptyTarget removes every registration from an install target by hand:
// a hooks config left as {}, a hook script or module file deleted.
func emptyTarget(t *testing.T, kind, target string) {
	t.Helper()
	var err error
	switch kind {
	case "hooks-config":
		err = os.WriteFile(target, []byte("{}\n"), 0o644)
	case "hooks-folder":
		err = os.RemoveAll(target)
	default:
		err = os.Remove(target)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// doctor prints only a fix that works where it runs: the install of
// guard by name when sitter finds its bundle from there; else no command
// (a user pastes a fix that starts with one) but where sitter looked and
// what works instead.
func TestDoctorInstallFixFindsBundle(t *testing.T) {
	d, _, err := registry.Registry().Resolve("claude-code")
	if err != nil {
		t.Fatal(err)
	}
	env := fakeEnv(t, d)
	// Here (runtime/agents) there is no artifacts/ and no install beside
	// the test binary.
	p := problem(doctor(t, d, env), CodeNotInstalled)
	if p == nil || !strings.HasPrefix(p.Fix, `from here no claude-code bundle found for "guard"`) ||
		!strings.Contains(p.Fix, filepath.Join(mustGetwd(t), "artifacts", "guard", "claude-code")) ||
		!strings.Contains(p.Fix, "`sitter plugin install FOLDER/guard/claude-code --harness claude-code --dir ") {
		t.Errorf("no bundle from here: fix %+v; want a bundle folder to fill in and where sitter looked", doctor(t, d, env).Problems)
	}
	t.Chdir("../..")
	p = problem(doctor(t, d, env), CodeNotInstalled)
	if p == nil || p.Fix != "sitter plugin install guard --harness claude-code --dir "+shellQuote(env.Dir) {
		t.Errorf("in a checkout: fix %+v; want the install by name", p)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// The fix for a project that shows none of a harness's files works as
// printed: it makes the first project folder, or, for a harness that
// keeps no folder in a project (Amp: AGENTS.md only, which running Amp
// reads but does not write), the first project file.
func TestDoctorNotDetectedFix(t *testing.T) {
	for _, id := range []string{"amp", "claude-code"} {
		d, _, err := registry.Registry().Resolve(id)
		if err != nil {
			t.Fatal(err)
		}
		env := fakeEnv(t, d)
		p := problem(doctor(t, d, env), CodeNotDetected)
		if p == nil {
			t.Fatalf("%s: no %s in a fresh project", id, CodeNotDetected)
		}
		if out, err := exec.Command("sh", "-c", p.Fix).CombinedOutput(); err != nil {
			t.Fatalf("%s: the fix %q failed: %v\n%s", id, p.Fix, err, out)
		}
		if got := doctor(t, d, env); !got.Detected.Detected || problem(got, CodeNotDetected) != nil {
			t.Errorf("%s: after the fix %q the project is not detected: %+v", id, p.Fix, got.Problems)
		}
	}
}

// doctor --dir . lists a hook config once, though the glob names it
// relative to the project and the installer absolute; a hook config that
// is not JSON is named with the line and column to mend.
func TestDoctorConfigPaths(t *testing.T) {
	t.Chdir("../..") // a checkout: artifacts/guard
	d, _, err := registry.Registry().Resolve("claude-code")
	if err != nil {
		t.Fatal(err)
	}
	env := fakeEnv(t, d)
	b, err := plugin.FindBundle(filepath.Join("artifacts", "guard"), d, registry.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plugin.Install(b, d, plugin.Options{Dir: env.Dir, Home: env.Home, DataHome: env.DataHome}); err != nil {
		t.Fatal(err)
	}
	t.Chdir(env.Dir)
	env.Dir = "."
	rep := doctor(t, d, env)
	if len(rep.Hooks) != 1 {
		t.Errorf("hooks listed %d times: %q", len(rep.Hooks), rep.Hooks)
	}

	settings := filepath.Join(".claude", "settings.json")
	if err := os.WriteFile(settings, []byte("{\n  \"hooks\": {\n    \"PreToolUse\": [\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := problem(doctor(t, d, env), CodeConfigInvalid)
	if want := settings + ":4:3: invalid JSON: invalid character '}'"; p == nil || !strings.HasPrefix(p.Detail, want) {
		t.Errorf("invalid config: %+v, want a detail starting %s", p, want)
	}
}

// A binary whose --version fails (a broken install) is named with how it
// failed: its exit status and its first output line, which say what to
// do; a silent one that succeeds says it printed nothing.
func TestDoctorVersionUnreadableSaysWhy(t *testing.T) {
	d, _, err := registry.Registry().Resolve("claude-code")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ script, want string }{
		{"echo 'Error: claude native binary not installed.' >&2\necho 'Run the postinstall manually' >&2\nexit 1", ` --version failed (exit status 1): Error: claude native binary not installed.`},
		{"echo 'no digits here'", ` --version printed no version: no digits here`},
		{"true", ` --version printed nothing`},
	} {
		env := fakeEnv(t, d)
		bin := filepath.Join(t.TempDir(), "claude")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		env.LookPath = func(string) (string, error) { return bin, nil }
		p := problem(doctor(t, d, env), CodeVersionUnknown)
		if p == nil {
			t.Fatalf("%q: no %s problem", c.script, CodeVersionUnknown)
		}
		if p.Detail != bin+c.want {
			t.Errorf("%q: detail %q, want %q", c.script, p.Detail, bin+c.want)
		}
	}
}
