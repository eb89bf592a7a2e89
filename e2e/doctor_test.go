//go:build e2e

package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	gentranscript "sitter.dev/sitter/generated/transcript"
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
			bin := install(t, c)
			var names []string
			for _, p := range gentranscript.Presences {
				if p.Harness == id {
					names = p.Binaries
				}
			}
			if len(names) == 0 {
				t.Fatalf("the atlas has no presence facts for %s: sitter doctor cannot check it", id)
			}
			home, project, onPath := t.TempDir(), t.TempDir(), t.TempDir()
			link := filepath.Join(onPath, names[0])
			if err := os.Symlink(bin, link); err != nil {
				t.Fatal(err)
			}
			pluginInstall(t, filepath.Join(repo(t), "artifacts", "guard", id), id, project, home)

			env := withCLIPath(baseEnv(t, home), c, onPath)
			r := runCLI(t, project, env, 2*time.Minute, sitter(t), "doctor", "--harness", id, "--dir", project, "--json")
			var reps []agents.Report // what --json prints
			if err := json.Unmarshal([]byte(r.stdout), &reps); err != nil || len(reps) != 1 {
				t.Fatalf("sitter doctor --json: %v, %v\n%s%s", r.err, err, r.stdout, r.stderr)
			}
			rep := reps[0]
			if r.err != nil || !rep.Ready || rep.Binary != link || !rep.VersionVerified || rep.Version != c.version || !rep.Detected.Detected ||
				!slices.Contains(rep.Plugins, "guard") && len(rep.Hooks) == 0 {
				t.Fatalf("sitter doctor --harness %s with %s %s on PATH and the guard plugin installed: %v\n%s%s", id, names[0], c.version, r.err, r.stdout, r.stderr)
			}
			if len(rep.Problems) > 0 {
				t.Errorf("problems reported for a ready %s: %+v", id, rep.Problems)
			}
		})
	}
}
