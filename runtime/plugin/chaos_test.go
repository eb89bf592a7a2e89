package plugin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lstatLink fails the test unless path is a symlink to want.
func lstatLink(t *testing.T, path, want string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (mode %v)", path, fi.Mode())
	}
	if to, err := os.Readlink(path); err != nil || to != want {
		t.Fatalf("%s links to %q (%v), want %q", path, to, err, want)
	}
}

// A settings file that is a link into the user's dotfiles stays a link
// through install and uninstall; the file it leads to gets the changes,
// and uninstall gives it its bytes back.
func TestChaosSymlinkedSettingsKeepTheLink(t *testing.T) {
	dir := trickyDir(t)
	dotfiles := filepath.Join(dir, "dotfiles")
	real := filepath.Join(dotfiles, "claude.json")
	writeFile(t, real, userClaude)
	settings := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	const rel = "../dotfiles/claude.json"
	if err := os.Symlink(rel, settings); err != nil {
		t.Skip(err)
	}

	install(t, "claude", dir, false)
	lstatLink(t, settings, rel)
	if got := string(readFile(t, real)); !strings.Contains(got, "/.sitter/plugins/guard/claude-code/bin/sitter-hook") || !strings.Contains(got, "notify-send done") {
		t.Errorf("the link's target did not get the merge:\n%s", got)
	}
	// No temp file is left in either folder.
	for _, d := range []string{dotfiles, filepath.Dir(settings)} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.Contains(e.Name(), "sitter-tmp") {
				t.Errorf("temp file left: %s", filepath.Join(d, e.Name()))
			}
		}
	}

	uninstall(t, "claude", dir)
	lstatLink(t, settings, rel)
	if got := string(readFile(t, real)); got != userClaude {
		t.Errorf("uninstall did not give the target its bytes back:\n%s", got)
	}
}

// A link to a file that does not exist yet: install creates the file it
// names, uninstall removes that file again; the link stays as it was.
func TestChaosDanglingSettingsLink(t *testing.T) {
	dir := trickyDir(t)
	real := filepath.Join(dir, "dotfiles", "claude.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	settings := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	if err := os.Symlink(real, settings); err != nil {
		t.Skip(err)
	}
	install(t, "claude", dir, false)
	lstatLink(t, settings, real)
	if _, err := os.Stat(real); err != nil {
		t.Fatalf("install did not create the link's target: %v", err)
	}
	uninstall(t, "claude", dir)
	lstatLink(t, settings, real)
	if _, err := os.Stat(real); !os.IsNotExist(err) {
		t.Errorf("uninstall left the file it created: %v", err)
	}
}

// A settings file the user made read-only (0444) is refused by its mode
// bits, so this holds for root too, which a failed write would not show:
// the error names the file, nothing is written, no copy is left.
func TestChaosReadOnlySettingsRefused(t *testing.T) {
	dir := trickyDir(t)
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeFile(t, settings, userClaude)
	if err := os.Chmod(settings, 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), settings) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("install into a 0444 settings file: %v", err)
	}
	if got := string(readFile(t, settings)); got != userClaude {
		t.Errorf("a refused install changed the file:\n%s", got)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode changed to %v", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, ".sitter")); !os.IsNotExist(err) {
		t.Errorf("a refused install left its copy: %v", err)
	}
	if _, err := os.Stat(settings + BackupSuffix); !os.IsNotExist(err) {
		t.Errorf("a refused install left a backup: %v", err)
	}

	// Installed while writable, then made read-only: uninstall refuses too.
	os.Chmod(settings, 0o644)
	install(t, "claude", dir, false)
	installed := readFile(t, settings)
	os.Chmod(settings, 0o444)
	if _, err := Uninstall("guard", desc(t, "claude"), Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), settings) {
		t.Errorf("uninstall from a 0444 settings file: %v", err)
	}
	if got := readFile(t, settings); string(got) != string(installed) {
		t.Errorf("a refused uninstall changed the file")
	}
	// Through a link, the target's mode is what counts.
	link := filepath.Join(t.TempDir(), "settings.json")
	if err := os.Symlink(settings, link); err == nil {
		if err := writeAtomic(link, []byte("{}"), 0o644); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("write through a link to a 0444 file: %v", err)
		}
	}
}

// The same refusal as a non-root user, for whom a write would fail anyway
// (root bypasses the permission; the mode-bit check is tested above).
func TestChaosReadOnlySettingsRefusedNonRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which writes a 0444 file regardless; TestChaosReadOnlySettingsRefused covers the mode-bit check as root")
	}
	dir := trickyDir(t)
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeFile(t, settings, userClaude)
	os.Chmod(settings, 0o444)
	if _, err := Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), settings) {
		t.Fatalf("install into a 0444 settings file: %v", err)
	}
	if got := string(readFile(t, settings)); got != userClaude {
		t.Errorf("a refused install changed the file")
	}
}

// An install that fails after its copy was made leaves things as they
// were: a first install leaves no copy, a reinstall the previous copy.
func TestChaosFailedInstallLeavesNothing(t *testing.T) {
	dir := trickyDir(t)
	// A module file of the user's: the copy is made, then the module step
	// refuses (no --force).
	mod := filepath.Join(dir, ".opencode", "plugins", "guard.ts")
	writeFile(t, mod, "export default function mine() {}\n")
	if _, err := Install(guardBundle(t, "opencode"), desc(t, "opencode"), Options{Dir: dir}); err == nil {
		t.Fatal("install over a user's module succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, ".sitter")); !os.IsNotExist(err) {
		t.Errorf("a failed install left its copy: %v", err)
	}

	// A reinstall that fails between the copy and the merge keeps the
	// previous copy and the config as they were.
	r := install(t, "claude", dir, false)
	settings := readFile(t, r.Target)
	marker := filepath.Join(r.Copy, "marker")
	writeFile(t, marker, "previous copy")
	installFault = func(step string) error { return errors.New("injected failure at " + step) }
	defer func() { installFault = nil }()
	rep, err := Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir, Force: true})
	if err == nil || !strings.Contains(err.Error(), "injected") || rep != nil {
		t.Fatalf("injected failure: %+v %v", rep, err)
	}
	if got := string(readFile(t, marker)); got != "previous copy" {
		t.Errorf("the previous copy was not put back: %q", got)
	}
	if got := readFile(t, r.Target); string(got) != string(settings) {
		t.Errorf("a failed install changed the config")
	}
	entries, _ := os.ReadDir(filepath.Dir(r.Copy))
	if len(entries) != 1 {
		t.Errorf("leftovers next to the copy: %v", entries)
	}
	// A failed first install leaves no folder of sitter's behind.
	dir2 := trickyDir(t)
	if _, err := Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir2}); err == nil {
		t.Fatal("injected failure ignored")
	}
	if _, err := os.Stat(filepath.Join(dir2, ".sitter")); !os.IsNotExist(err) {
		t.Errorf("a failed first install left %s: %v", filepath.Join(dir2, ".sitter"), err)
	}
}

// Installs into one project at once (two terminals, a setup script run
// twice) all succeed and leave one copy and one set of entries: each
// waits for the one before it instead of racing its copy into place.
func TestChaosConcurrentInstalls(t *testing.T) {
	for _, h := range []string{"codex", "claude", "opencode"} {
		t.Run(h, func(t *testing.T) {
			for round := 0; round < 20; round++ {
				dir := trickyDir(t)
				errs := make(chan error, 4)
				for range 4 {
					go func() {
						_, err := Install(guardBundle(t, h), desc(t, h), Options{Dir: dir})
						errs <- err
					}()
				}
				for range 4 {
					if err := <-errs; err != nil {
						t.Fatalf("round %d: a concurrent install failed: %v", round, err)
					}
				}
				r := install(t, h, dir, false)
				for _, e := range r.Entries {
					if e.Action != "kept" {
						t.Errorf("round %d: after the concurrent installs, %s %s", round, e.Action, e.Event)
					}
				}
				entries, _ := os.ReadDir(filepath.Dir(r.Copy))
				if len(entries) != 1 {
					t.Errorf("round %d: leftovers next to the copy: %v", round, entries)
				}
			}
		})
	}
}
