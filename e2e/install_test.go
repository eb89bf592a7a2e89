//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"
)

// pluginInstall registers a bundle with a harness in a project the way a
// user would: `sitter plugin install <bundle> --harness <h> --dir <project>`.
func pluginInstall(t *testing.T, bundle, harness, project, home string) {
	t.Helper()
	r := runCLI(t, project, baseEnv(t, home), time.Minute, sitter(t),
		"plugin", "install", bundle, "--harness", harness, "--dir", project)
	if r.err == nil {
		t.Logf("sitter plugin install %s --harness %s: %s", bundle, harness, strings.TrimSpace(r.stdout))
		return
	}
	t.Fatalf("sitter plugin install %s --harness %s --dir %s: %v\n%s%s", bundle, harness, project, r.err, r.stdout, r.stderr)
}

// stopEvents returns the recorded stop-phase events in order.
func stopEvents(evs []event) []event {
	var out []event
	for _, e := range evs {
		if e.Phase == "stop" {
			out = append(out, e)
		}
	}
	return out
}
