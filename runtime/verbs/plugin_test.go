package verbs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// A failed install or uninstall never prints "installed"/"uninstalled" and
// exits 1, with the cause on stderr; --json says so too.
func TestChaosFailedInstallIsNotReportedInstalled(t *testing.T) {
	bundle, err := filepath.Abs("../../artifacts/guard")
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(args, strings.NewReader(""), &out, &errb, registry.Registry)
		return code, out.String(), errb.String()
	}

	// Fails after the copy: a module file of the user's, no --force.
	dir := t.TempDir()
	mod := filepath.Join(dir, ".opencode", "plugins", "guard.ts")
	os.MkdirAll(filepath.Dir(mod), 0o755)
	os.WriteFile(mod, []byte("export default function mine() {}\n"), 0o644)
	code, out, errs := run("plugin", "install", bundle, "--harness", "opencode", "--dir", dir)
	if code != 1 || strings.Contains(out, "installed") || !strings.Contains(errs, mod) {
		t.Errorf("install over a user's module: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	code, out, _ = run("plugin", "install", bundle, "--harness", "opencode", "--dir", dir, "--json")
	if code != 1 || strings.Contains(out, `"installed"`) {
		t.Errorf("--json install over a user's module: exit %d\n%s", code, out)
	}
	if out != "" {
		var rep struct{ Error string }
		if json.Unmarshal([]byte(out), &rep) != nil || rep.Error == "" {
			t.Errorf("--json failure without an error: %s", out)
		}
	}

	// Refused up front: a read-only settings file.
	settings := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte("{}\n"), 0o444)
	code, out, errs = run("plugin", "install", bundle, "--harness", "claude", "--dir", dir)
	if code != 1 || strings.Contains(out, "installed") || !strings.Contains(errs, settings) {
		t.Errorf("install into a read-only settings file: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	code, out, errs = run("plugin", "uninstall", "guard", "--harness", "claude", "--dir", dir)
	if code != 0 || !strings.Contains(out, "uninstalled") {
		t.Errorf("uninstall of nothing: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}

	// Installed, then the settings made read-only: uninstall fails.
	os.Chmod(settings, 0o644)
	if code, out, errs = run("plugin", "install", bundle, "--harness", "claude", "--dir", dir); code != 0 || !strings.HasPrefix(out, "installed guard") {
		t.Fatalf("install: exit %d\n%s%s", code, out, errs)
	}
	os.Chmod(settings, 0o444)
	code, out, errs = run("plugin", "uninstall", "guard", "--harness", "claude", "--dir", dir)
	if code != 1 || strings.Contains(out, "uninstalled") || !strings.Contains(errs, "read-only") {
		t.Errorf("uninstall from a read-only settings file: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
