package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/generated/registry"
)

// A folder-of-scripts harness (Cline): install writes one executable
// script per event into the project's hooks folder, calling the installed
// copy's launcher; a second install changes nothing; uninstall removes it
// and the copy, and leaves the user's own scripts alone.
func TestInstallScripts(t *testing.T) {
	dir := trickyDir(t)
	hooks := filepath.Join(dir, ".clinerules", "hooks")
	mine := filepath.Join(hooks, "PreToolUse.sh") // Cline runs it too
	writeFile(t, mine, "#!/bin/sh\necho mine\n")

	r := install(t, "cline", dir, false)
	if r.Kind != "hooks-folder" || r.Target != hooks {
		t.Errorf("target %s %s, want hooks-folder %s", r.Kind, r.Target, hooks)
	}
	files, entries := actions(r)
	if diff := cmp.Diff([]string{"created", "copied"}, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PreToolUse added"}, entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	script := filepath.Join(hooks, "PreToolUse")
	fi, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o111 != 0o111 {
		t.Errorf("%s mode %04o, want executable", script, fi.Mode().Perm())
	}
	got := string(readFile(t, script))
	call := "exec " + ShellQuote(r.Launcher) + " cline PreToolUse\n"
	if !strings.HasPrefix(got, "#!/bin/sh\n"+installedHeader) || !strings.HasSuffix(got, "\n"+call) {
		t.Errorf("installed script:\n%s\nwant the #! line, the install note and %s", got, call)
	}
	if r.Entries[0].Command != ShellQuote(r.Launcher)+" cline PreToolUse" {
		t.Errorf("entry command %s", r.Entries[0].Command)
	}
	if _, err := os.Stat(r.Launcher); err != nil {
		t.Errorf("the launcher the script calls is not installed: %v", err)
	}

	r2 := install(t, "cline", dir, false)
	if r2.Files[0].Action != "unchanged" || r2.Entries[0].Action != "kept" {
		t.Errorf("second install: %+v %+v", r2.Files, r2.Entries)
	}

	u := uninstall(t, "cline", dir)
	files, entries = actions(u)
	if diff := cmp.Diff([]string{"removed", "removed"}, files); diff != "" {
		t.Errorf("uninstall files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PreToolUse removed"}, entries); diff != "" {
		t.Errorf("uninstall entries (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(script); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", script, err)
	}
	if got := readFile(t, mine); string(got) != "#!/bin/sh\necho mine\n" {
		t.Errorf("uninstall touched the user's PreToolUse.sh: %s", got)
	}
	if u := uninstall(t, "cline", dir); len(u.Entries) != 0 {
		t.Errorf("a second uninstall removed %+v", u.Entries)
	}
}

// A user's own script at the name sitter needs is refused before anything
// is written (no copy either), with the way out; --force keeps it as the
// backup and uninstall puts it back.
func TestInstallScriptsRefusesUsersFile(t *testing.T) {
	dir := trickyDir(t)
	script := filepath.Join(dir, ".clinerules", "hooks", "PreToolUse")
	const theirs = "#!/bin/sh\necho '{\"context\":\"mine\"}'\n"
	writeFile(t, script, theirs)
	_, err := Install(guardBundle(t, "cline"), desc(t, "cline"), Options{Dir: dir})
	if err == nil {
		t.Fatal("install replaced the user's PreToolUse")
	}
	for _, want := range []string{script + " (your own hook)", "PreToolUse.sh", "--force", BackupSuffix} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if got := readFile(t, script); string(got) != theirs {
		t.Errorf("a refused install changed the script: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sitter")); !os.IsNotExist(err) {
		t.Errorf("a refused install left a copy: %v", err)
	}

	r := install(t, "cline", dir, true)
	if r.Files[0].Action != "updated" || r.Files[0].Backup != script+BackupSuffix {
		t.Errorf("forced install: %+v", r.Files[0])
	}
	if got := readFile(t, script+BackupSuffix); string(got) != theirs {
		t.Errorf("backup: %s", got)
	}
	u := uninstall(t, "cline", dir)
	if u.Files[0].Action != "restored" {
		t.Errorf("uninstall: %+v", u.Files[0])
	}
	if got := readFile(t, script); string(got) != theirs {
		t.Errorf("uninstall did not put the user's script back: %s", got)
	}
	if _, err := os.Stat(script + BackupSuffix); !os.IsNotExist(err) {
		t.Errorf("the backup stayed: %v", err)
	}
}

// Another sitter bundle's script at the name is named as such; a
// reinstall drops the scripts of events the bundle no longer registers.
func TestInstallScriptsOtherBundleAndStale(t *testing.T) {
	dir := trickyDir(t)
	hooks := filepath.Join(dir, ".clinerules", "hooks")
	other := "#!/bin/sh\n" + installedHeader + " (plugin other)\nexec '/elsewhere/bin/sitter-hook' cline PreToolUse\n"
	writeFile(t, filepath.Join(hooks, "PreToolUse"), other)
	if _, err := Install(guardBundle(t, "cline"), desc(t, "cline"), Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "another sitter bundle's hook") {
		t.Errorf("install over another bundle's script: %v", err)
	}
	os.Remove(filepath.Join(hooks, "PreToolUse"))

	install(t, "cline", dir, false)
	// A script of this install for an event the bundle has dropped.
	stale := strings.ReplaceAll(string(readFile(t, filepath.Join(hooks, "PreToolUse"))), "PreToolUse", "PostToolUse")
	writeFile(t, filepath.Join(hooks, "PostToolUse"), stale)
	files, entries := actions(install(t, "cline", dir, false))
	if diff := cmp.Diff([]string{"unchanged", "removed", "replaced"}, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PreToolUse kept", "PostToolUse removed"}, entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(hooks, "PostToolUse")); !os.IsNotExist(err) {
		t.Errorf("the stale script stayed: %v", err)
	}
}

// User scope: the CLI's own hooks folder under $HOME.
func TestInstallScriptsUserScope(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	r, err := Install(guardBundle(t, "cline"), desc(t, "cline"), Options{Scope: "user", Home: home, DataHome: data})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".cline", "hooks"); r.Target != want {
		t.Errorf("target %s, want %s", r.Target, want)
	}
	if _, err := os.Stat(filepath.Join(home, ".cline", "hooks", "PreToolUse")); err != nil {
		t.Error(err)
	}
	if !strings.HasPrefix(r.Copy, data) {
		t.Errorf("copy %s not under %s", r.Copy, data)
	}
}

// Verify names the broken hook script.
func TestVerifyScripts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(dir string)
		want    string
	}{
		{"not executable", func(dir string) { os.Chmod(filepath.Join(dir, "hooks", "PreToolUse"), 0o644) }, "hooks/PreToolUse: not executable"},
		{"missing", func(dir string) { os.Remove(filepath.Join(dir, "hooks", "PreToolUse")) }, "hooks/PreToolUse: missing, but .sitter-bundle.json lists hooks [PreToolUse]"},
		{"no launcher line", func(dir string) {
			p := filepath.Join(dir, "hooks", "PreToolUse")
			data := strings.ReplaceAll(string(readFile(t, p)), "exec ", "# exec ")
			os.WriteFile(p, []byte(data), 0o755)
		}, "hooks/PreToolUse: no line runs the bundle's launcher"},
		{"another event's launcher", func(dir string) {
			p := filepath.Join(dir, "hooks", "PreToolUse")
			data := strings.ReplaceAll(string(readFile(t, p)), "cline PreToolUse", "cline PostToolUse")
			os.WriteFile(p, []byte(data), 0o755)
		}, "hooks/PreToolUse: the launcher line does not run cline's PreToolUse hook"},
		{"a script the marker does not list", func(dir string) {
			os.WriteFile(filepath.Join(dir, "hooks", "TaskStart"), []byte("#!/bin/sh\n"), 0o755)
		}, "hooks/TaskStart: a hook script for TaskStart, which .sitter-bundle.json hooks does not list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := brokenCopy(t, "guard/cline", tc.breakIt)
			probs := Verify(dir, registry.Registry())
			if len(probs) != 1 || !strings.HasPrefix(probs[0].String(), filepath.ToSlash(dir)+"/"+tc.want) {
				t.Errorf("problems %v, want one: %s", probs, tc.want)
			}
		})
	}
}
