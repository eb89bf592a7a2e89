//go:build e2e

package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/generated/registry"
	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/agents"
)

// TestDoctorReady walks what a user does before a first session: the
// harness's CLI on PATH, a plugin installed in the project, then `sitter
// doctor --harness H --dir P --json`. For every harness CLI this suite
// runs, linked on PATH under the binary name of the atlas's presence
// facts (as npm install -g links it), doctor must find it, read a version
// the atlas verified, see the project and the installed plugin, and say
// ready (exit 0). A harness without presence facts fails here: doctor
// could only say that the atlas knows nothing to check.
func TestDoctorReady(t *testing.T) {
	for _, id := range slices.Sorted(maps.Keys(clis)) {
		t.Run(id, func(t *testing.T) {
			c := clis[id]
			link := linkCLI(t, c)
			home, project := t.TempDir(), t.TempDir()
			pluginInstall(t, filepath.Join(repo(t), "artifacts", "guard", id), id, project, home)

			env := withCLIPath(baseEnv(t, home), c, filepath.Dir(link))
			rep, r := doctor(t, id, project, env)
			if r.err != nil || !rep.Ready || rep.Binary != link || !rep.VersionVerified || rep.Version != c.version || !rep.Detected.Detected ||
				!slices.Contains(rep.Plugins, "guard") && len(rep.Hooks) == 0 {
				t.Fatalf("sitter doctor --harness %s with %s %s on PATH and the guard plugin installed: %v\n%s%s", id, filepath.Base(link), c.version, r.err, r.stdout, r.stderr)
			}
			if len(rep.Problems) > 0 {
				t.Errorf("problems reported for a ready %s: %+v", id, rep.Problems)
			}
		})
	}
}

// linkCLI installs c and links its binary, under the first binary name of
// the atlas's presence facts (as npm install -g links it), into a folder
// of its own to put on PATH; it returns the link.
func linkCLI(t *testing.T, c cli) string {
	t.Helper()
	bin := install(t, c)
	var names []string
	for _, p := range gentranscript.Presences {
		if p.Harness == c.id {
			names = p.Binaries
		}
	}
	if len(names) == 0 {
		t.Fatalf("the atlas has no presence facts for %s: sitter doctor cannot check it", c.id)
	}
	link := filepath.Join(t.TempDir(), names[0])
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// doctor runs `sitter doctor --harness id --dir project --json` from the
// root of this checkout, where a user pastes the fixes it prints (doctor
// prints a plugin install by name only where the name finds a bundle),
// and returns its one report.
func doctor(t *testing.T, id, project string, env []string) (agents.Report, runResult) {
	t.Helper()
	r := runCLI(t, repo(t), env, 2*time.Minute, sitter(t), "doctor", "--harness", id, "--dir", project, "--json")
	var reps []agents.Report // what --json prints
	if err := json.Unmarshal([]byte(r.stdout), &reps); err != nil || len(reps) != 1 {
		t.Fatalf("sitter doctor --json: %v, %v\n%s%s", r.err, err, r.stdout, r.stderr)
	}
	return reps[0], r
}

// versionOnly are harness CLIs that cannot run a session here (the atlas's
// compatibility.notRunHere says why) but start offline as far as
// --version: enough for sitter doctor to find and read them.
var versionOnly = map[string]cli{
	// The platform package's binary (a compiled Bun program).
	"amp":          {"amp", "@ampcode/cli-linux-x64", "0.0.1790142911-g7618fb", "node_modules/@ampcode/cli-linux-x64/amp"},
	"auggie":       {"auggie", "@augmentcode/auggie", "0.36.0", "node_modules/.bin/auggie"},
	"continue-cli": {"continue-cli", "@continuedev/cli", "1.5.47", "node_modules/.bin/cn"},
	"qoder":        {"qoder", "@qoder-ai/qodercli", "1.1.52", "node_modules/.bin/qodercli"},
}

// TestDoctorFixes walks what a user does when sitter doctor says a harness
// is not ready: with only the harness's CLI on PATH (linked under the
// atlas's binary name) and a fresh project, run `sitter doctor --harness H
// --dir P`, run every fix it prints that is a command (sitter …, mkdir …,
// touch …) exactly as printed, then run doctor again. Each such fix must
// succeed, and afterwards the project is detected and the harness is
// ready, or, where no event of the atlas reaches a sitter hook (Amp,
// Continue CLI), doctor says so and why, and its only fix is not one of
// those commands. Every CLI the suite installs
// takes part, the ones that cannot run a session too: doctor must read
// their version.
func TestDoctorFixes(t *testing.T) {
	all := maps.Clone(clis)
	maps.Copy(all, versionOnly)
	for _, id := range slices.Sorted(maps.Keys(all)) {
		t.Run(id, func(t *testing.T) {
			c := all[id]
			link := linkCLI(t, c)
			home, project := t.TempDir(), t.TempDir()
			onPath := filepath.Dir(link)
			if err := os.Symlink(sitter(t), filepath.Join(onPath, "sitter")); err != nil {
				t.Fatal(err)
			}
			env := withCLIPath(baseEnv(t, home), c, onPath)
			first, _ := doctor(t, id, project, env)
			if first.Version != c.version {
				t.Errorf("doctor read version %q from %s, want %q", first.Version, filepath.Base(link), c.version)
			}
			// The fixes, as a user pastes them, from a checkout of sitter
			// (where `sitter plugin install <name>` finds artifacts/).
			for _, p := range first.Problems {
				if !strings.HasPrefix(p.Fix, "sitter ") && !strings.HasPrefix(p.Fix, "mkdir ") && !strings.HasPrefix(p.Fix, "touch ") {
					continue
				}
				r := runCLI(t, repo(t), env, 2*time.Minute, "sh", "-c", p.Fix)
				if r.err != nil {
					t.Errorf("the fix doctor gave for %s (%s) failed: %s: %v\n%s%s", p.Code, p.Detail, p.Fix, r.err, r.stdout, r.stderr)
				}
			}
			after, _ := doctor(t, id, project, env)
			if slices.ContainsFunc(first.Problems, func(p agents.Problem) bool { return p.Code == agents.CodeNotDetected }) && !after.Detected.Detected {
				t.Errorf("after doctor's fixes the project still shows none of %s's files: %+v", id, after.Problems)
			}
			var errs []agents.Problem
			for _, p := range after.Problems {
				if !p.Warning {
					errs = append(errs, p)
				}
			}
			if hooked(t, id) {
				if !after.Ready || len(errs) > 0 || !after.Detected.Detected {
					t.Fatalf("after doctor's fixes %s is not ready: %+v (before: %+v)", id, after.Problems, first.Problems)
				}
				return
			}
			if after.Ready || len(errs) != 1 || errs[0].Code != agents.CodeNoHooks || errs[0].Detail == "" ||
				strings.HasPrefix(errs[0].Fix, "sitter ") {
				t.Fatalf("%s runs no sitter hook: doctor must say so, and only that: %+v", id, after.Problems)
			}
		})
	}
}

// hooked says whether any native event of the harness reaches a sitter
// hook (the atlas's support is not "unsupported").
func hooked(t *testing.T, id string) bool {
	t.Helper()
	for _, d := range registry.Registry().Descriptors {
		if d.ID == id {
			return slices.ContainsFunc(d.Events, func(e adapter.EventSpec) bool { return e.Support != "unsupported" })
		}
	}
	t.Fatalf("no harness %s in the registry", id)
	return false
}
