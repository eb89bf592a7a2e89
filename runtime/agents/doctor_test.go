package agents

import (
	"context"
	"os"
	"path/filepath"
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
