package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
)

// artifacts is the repository's generated bundles, seen from this package.
const artifacts = "../../artifacts"

// trickyDir is a project folder whose path has a space, a $, a single and
// a double quote: everything a careless shell command gets wrong.
func trickyDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), `my proj $HOME 'it's' "q"`)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func desc(t *testing.T, name string) *adapter.Descriptor {
	t.Helper()
	d, _, err := registry.Registry().Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func guardBundle(t *testing.T, harness string) *Bundle {
	t.Helper()
	d := desc(t, harness)
	b, err := FindBundle(filepath.Join(artifacts, "guard"), d, registry.Registry())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func install(t *testing.T, harness, dir string, force bool) *Report {
	t.Helper()
	r, err := Install(guardBundle(t, harness), desc(t, harness), Options{Dir: dir, Force: force})
	if err != nil {
		t.Fatalf("install %s: %v", harness, err)
	}
	return r
}

func uninstall(t *testing.T, harness, dir string) *Report {
	t.Helper()
	r, err := Uninstall("guard", desc(t, harness), Options{Dir: dir})
	if err != nil {
		t.Fatalf("uninstall %s: %v", harness, err)
	}
	return r
}

func actions(r *Report) (files, entries []string) {
	for _, f := range r.Files {
		files = append(files, f.Action)
	}
	for _, e := range r.Entries {
		entries = append(entries, e.Event+" "+e.Action)
	}
	return files, entries
}

// The user's Claude settings, not in sitter's formatting, with a hook of
// their own on the same event and keys sitter does not know.
const userClaude = `{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./audit.sh && echo <ok>","timeout":5,"if":"Bash(git *)"}]}],"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]},"permissions":{"allow":["Bash(ls:*)"]},"z":1.50}`

func TestInstallMergesIntoUserSettings(t *testing.T) {
	dir := trickyDir(t)
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeFile(t, settings, userClaude)
	r := install(t, "claude", dir, false)

	launcher := filepath.Join(dir, ".sitter", "plugins", "guard", "claude-code", "bin", "sitter-hook")
	if r.Launcher != launcher || r.Target != settings {
		t.Errorf("report places: %s %s", r.Launcher, r.Target)
	}
	cmd := ShellQuote(launcher) + " claude-code PreToolUse"
	// The model of a merge: the user's file with the bundle's groups
	// (commands pointing at the installed launcher) appended per event.
	bh, _, err := bundleHooks(filepath.Join(artifacts, "guard", "claude-code", "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rewriteCommands(bh, "matcher-groups", "command", launcher); err != nil {
		t.Fatal(err)
	}
	model, _ := decodeOrdered([]byte(userClaude))
	hooks, _ := model.(*object).get("hooks")
	for _, m := range bh.members {
		cur, _ := hooks.(*object).get(m.Key)
		list, _ := cur.([]any)
		hooks.(*object).set(m.Key, append(list, m.Val.([]any)...))
	}
	want := string(encodeOrdered(model))
	if diff := cmp.Diff(want, string(readFile(t, settings))); diff != "" {
		t.Errorf("merged settings (-want +got):\n%s", diff)
	}
	// The user's entry keeps its keys in order, "&&" and "<ok>" unescaped,
	// and 1.50 its spelling; ours is the quoted absolute launcher.
	for _, frag := range []string{
		`"command": "./audit.sh && echo <ok>",` + "\n            \"timeout\": 5,\n            \"if\": \"Bash(git *)\"",
		`"z": 1.50`,
		`"command": ` + jsonString(cmd) + ",",
	} {
		if !strings.Contains(want, frag) {
			t.Errorf("merged settings lack %s", frag)
		}
	}
	if got := readFile(t, settings+BackupSuffix); string(got) != userClaude {
		t.Errorf("backup = %s, want the original bytes", got)
	}
	files, entries := actions(r)
	if diff := cmp.Diff([]string{"copied", "updated"}, files); diff != "" {
		t.Errorf("file actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PreToolUse added"}, entries); diff != "" {
		t.Errorf("entry actions (-want +got):\n%s", diff)
	}
	if r.Entries[0].Command != cmd {
		t.Errorf("command = %s, want %s", r.Entries[0].Command, cmd)
	}

	// A second install changes no byte and says it kept the entry.
	r2 := install(t, "claude", dir, false)
	if diff := cmp.Diff(want, string(readFile(t, settings))); diff != "" {
		t.Errorf("second install changed the file (-want +got):\n%s", diff)
	}
	files, entries = actions(r2)
	if diff := cmp.Diff([]string{"replaced", "unchanged"}, files); diff != "" {
		t.Errorf("second install file actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PreToolUse kept"}, entries); diff != "" {
		t.Errorf("second install entry actions (-want +got):\n%s", diff)
	}

	// Uninstall gives back the original bytes and drops the backup.
	r3 := uninstall(t, "claude", dir)
	if got := readFile(t, settings); string(got) != userClaude {
		t.Errorf("after uninstall:\n%s\nwant the original bytes:\n%s", got, userClaude)
	}
	if _, err := os.Stat(settings + BackupSuffix); !os.IsNotExist(err) {
		t.Errorf("backup left after a restore: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sitter")); !os.IsNotExist(err) {
		t.Errorf(".sitter left after uninstall: %v", err)
	}
	files, entries = actions(r3)
	if diff := cmp.Diff([]string{"restored", "removed"}, files); diff != "" {
		t.Errorf("uninstall file actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PreToolUse removed"}, entries); diff != "" {
		t.Errorf("uninstall entry actions (-want +got):\n%s", diff)
	}
}

// --force replaces sitter's own entries (here edited by hand) in place and
// never touches the user's; without it they are kept as they are.
func TestInstallForce(t *testing.T) {
	dir := trickyDir(t)
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeFile(t, settings, userClaude)
	install(t, "claude", dir, false)
	fresh := readFile(t, settings)
	edited := bytes.Replace(fresh, []byte(`"timeout": 15`), []byte(`"timeout": 99`), 1)
	if bytes.Equal(edited, fresh) {
		t.Fatal("no timeout to edit")
	}
	writeFile(t, settings, string(edited))

	r := install(t, "claude", dir, false)
	if got := readFile(t, settings); !bytes.Equal(got, edited) {
		t.Errorf("install without --force changed sitter's edited entry:\n%s", got)
	}
	if _, e := actions(r); !cmp.Equal(e, []string{"PreToolUse kept"}) {
		t.Errorf("entries without --force: %v", e)
	}

	r = install(t, "claude", dir, true)
	if got := readFile(t, settings); !bytes.Equal(got, fresh) {
		t.Errorf("install --force did not put back sitter's entry:\n%s\nwant:\n%s", got, fresh)
	}
	if _, e := actions(r); !cmp.Equal(e, []string{"PreToolUse replaced"}) {
		t.Errorf("entries with --force: %v", e)
	}
	// --force on an up-to-date file writes nothing.
	r = install(t, "claude", dir, true)
	if files, e := actions(r); !cmp.Equal(e, []string{"PreToolUse kept"}) || files[1] != "unchanged" {
		t.Errorf("--force again: %v %v", files, e)
	}
	// The backup is still the file before sitter's first change.
	if got := readFile(t, settings+BackupSuffix); string(got) != userClaude {
		t.Errorf("backup overwritten: %s", got)
	}
}

// --force also drops sitter's entries for events the bundle no longer
// registers, and only sitter's.
func TestInstallForceDropsStaleEntries(t *testing.T) {
	dir := trickyDir(t)
	launcher := filepath.Join(dir, ".sitter", "plugins", "guard", "claude-code", "bin", "sitter-hook")
	settings := filepath.Join(dir, ".claude", "settings.json")
	stale := `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":` + jsonString(ShellQuote(launcher)+" claude-code SessionStart") + `},{"type":"command","command":"mine"}]}]}}`
	writeFile(t, settings, stale)
	r := install(t, "claude", dir, true)
	var got struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	if err := json.Unmarshal(readFile(t, settings), &got); err != nil {
		t.Fatal(err)
	}
	ss := got.Hooks["SessionStart"]
	if len(ss) != 1 || len(ss[0].Hooks) != 1 || ss[0].Hooks[0].Command != "mine" {
		t.Errorf("SessionStart after --force: %+v", ss)
	}
	if _, e := actions(r); !cmp.Equal(e, []string{"PreToolUse added", "SessionStart removed"}) {
		t.Errorf("entries: %v", e)
	}
}

// An entry is sitter's only when it names the installed copy's launcher:
// another project's copy of the same plugin, even one whose path ends the
// same way, is never touched, and a file with nothing of ours keeps its
// bytes through an uninstall.
func TestOwnershipIsTheInstalledLauncher(t *testing.T) {
	dir := trickyDir(t)
	other := filepath.Join("/elsewhere", dir, ".sitter", "plugins", "guard", "claude-code", "bin", "sitter-hook")
	settings := filepath.Join(dir, ".claude", "settings.json")
	orig := `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":` + jsonString(ShellQuote(other)+" claude-code PreToolUse") + `}]}]}}` + "\n\n"
	writeFile(t, settings, orig)

	r := uninstall(t, "claude", dir)
	if got := readFile(t, settings); string(got) != orig {
		t.Errorf("uninstall touched a file with nothing of ours:\n%s", got)
	}
	if files, e := actions(r); len(e) != 0 || files[0] != "unchanged" {
		t.Errorf("uninstall report: %v %v", files, e)
	}
	install(t, "claude", dir, true)
	if got := readFile(t, settings); !bytes.Contains(got, []byte(strings.Trim(jsonString(ShellQuote(other)), `"`))) {
		t.Errorf("--force removed another copy's entry:\n%s", got)
	}
	uninstall(t, "claude", dir)
	if got := readFile(t, settings); string(got) != orig {
		t.Errorf("install+uninstall did not restore the bytes:\n%q\nwant\n%q", got, orig)
	}
}

// A file sitter created goes away when its entries do; one the user
// changed meanwhile stays, without sitter's entries.
func TestUninstallCreatedFile(t *testing.T) {
	for _, h := range []string{"claude-code", "codex", "gemini-cli", "cursor", "copilot"} {
		t.Run(h, func(t *testing.T) {
			dir := trickyDir(t)
			r := install(t, h, dir, false)
			if r.Files[1].Action != "created" || r.Files[1].Backup != "" {
				t.Errorf("install into an empty project: %+v", r.Files[1])
			}
			uninstall(t, h, dir)
			if _, err := os.Stat(r.Target); !os.IsNotExist(err) {
				t.Errorf("%s left after uninstall: %v", r.Target, err)
			}

			install(t, h, dir, false)
			data := readFile(t, r.Target)
			data = bytes.Replace(data, []byte("{"), []byte(`{"userKey": true,`), 1)
			writeFile(t, r.Target, string(data))
			uninstall(t, h, dir)
			got := readFile(t, r.Target)
			if !bytes.Contains(got, []byte(`"userKey": true`)) || bytes.Contains(got, []byte("sitter-hook")) {
				t.Errorf("after uninstall:\n%s", got)
			}
		})
	}
}

// Cursor and Copilot keep {version:1, hooks:{event:[entry]}}; the user's
// entries and keys stay, the version is not duplicated.
func TestInstallVersionedList(t *testing.T) {
	for _, tc := range []struct{ harness, file, user, key string }{
		{"cursor", ".cursor/hooks.json", `{"version":1,"hooks":{"preToolUse":[{"command":"./mine.sh","matcher":"Write"}],"stop":[{"command":"./stop.sh","loop_limit":3}]},"x-team":"a"}`, "command"},
		{"copilot", ".github/hooks/guard.json", `{"hooks":{"preToolUse":[{"type":"command","bash":"./mine.sh","timeoutSec":5}]}}`, "bash"},
	} {
		t.Run(tc.harness, func(t *testing.T) {
			dir := trickyDir(t)
			path := filepath.Join(dir, tc.file)
			writeFile(t, path, tc.user)
			r := install(t, tc.harness, dir, false)
			v, err := decodeOrdered(readFile(t, path))
			if err != nil {
				t.Fatal(err)
			}
			root := v.(*object)
			if ver, _ := root.get("version"); ver != json1 || root.keys()[0] != "version" && tc.harness == "copilot" {
				t.Errorf("version: %v keys %v", ver, root.keys())
			}
			hv, _ := root.get("hooks")
			pre, _ := hv.(*object).get("preToolUse")
			list := pre.([]any)
			first, _ := list[0].(*object).get(tc.key)
			last, _ := list[len(list)-1].(*object).get(tc.key)
			if first != "./mine.sh" || !strings.HasPrefix(last.(string), ShellQuote(r.Launcher)+" ") {
				t.Errorf("preToolUse = %s", encodeOrdered(pre))
			}
			again := readFile(t, path)
			install(t, tc.harness, dir, false)
			if got := readFile(t, path); !bytes.Equal(got, again) {
				t.Errorf("second install changed the file")
			}
			uninstall(t, tc.harness, dir)
			if got := readFile(t, path); string(got) != tc.user {
				t.Errorf("uninstall: got\n%s\nwant\n%s", got, tc.user)
			}
		})
	}
}

func TestInstallModule(t *testing.T) {
	for _, tc := range []struct{ harness, file, export string }{
		{"opencode", ".opencode/plugins/guard.ts", "export * from %s;\n"},
		{"pi", ".pi/extensions/guard.ts", "export { default } from %s;\n"},
	} {
		t.Run(tc.harness, func(t *testing.T) {
			dir := trickyDir(t)
			d := desc(t, tc.harness)
			r := install(t, tc.harness, dir, false)
			path := filepath.Join(dir, tc.file)
			if r.Target != path {
				t.Errorf("target %s, want %s", r.Target, path)
			}
			got := string(readFile(t, path))
			entry := filepath.Join(r.Copy, d.Packaging.Target.Entry)
			line := strings.Replace(tc.export, "%s", jsonString(entry), 1)
			if !strings.HasPrefix(got, moduleHeader) || !strings.HasSuffix(got, "\n"+line) {
				t.Errorf("module file:\n%s\nwant the header and %s", got, line)
			}
			// The literal is valid JSON for the exact path (and so a JS string).
			lit := strings.TrimSuffix(strings.SplitN(line, "from ", 2)[1], ";\n")
			var back string
			if err := json.Unmarshal([]byte(lit), &back); err != nil || back != entry {
				t.Errorf("literal %s reads as %q (%v)", lit, back, err)
			}
			if _, err := os.Stat(entry); err != nil {
				t.Errorf("the re-exported module is not installed: %v", err)
			}
			if r2 := install(t, tc.harness, dir, false); r2.Files[1].Action != "unchanged" {
				t.Errorf("second install: %+v", r2.Files[1])
			}

			// A file of the user's is never replaced without --force.
			uninstall(t, tc.harness, dir)
			writeFile(t, path, "export default function mine() {}\n")
			if _, err := Install(guardBundle(t, tc.harness), d, Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "--force") {
				t.Errorf("install over a user's module: %v", err)
			}
			install(t, tc.harness, dir, true)
			if got := readFile(t, path+BackupSuffix); string(got) != "export default function mine() {}\n" {
				t.Errorf("backup: %s", got)
			}
			uninstall(t, tc.harness, dir)
			if got := readFile(t, path); string(got) != "export default function mine() {}\n" {
				t.Errorf("uninstall did not restore the user's module: %s", got)
			}
			// Uninstall leaves a module that is not sitter's alone.
			if r := uninstall(t, tc.harness, dir); r.Files[0].Action != "kept" {
				t.Errorf("uninstall of a foreign module: %+v", r.Files[0])
			}
		})
	}
}

// The copy keeps file modes, and a reinstall replaces it whole.
func TestCopy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "b")
	copyDir(t, filepath.Join(artifacts, "guard", "claude-code"), src)
	writeFile(t, filepath.Join(src, "extra.txt"), "x")
	dir := trickyDir(t)
	b, err := OpenBundle(src)
	if err != nil {
		t.Fatal(err)
	}
	d := desc(t, "claude-code")
	r, err := Install(b, d, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(r.Launcher)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("installed launcher: %v %v", fi.Mode(), err)
	}
	os.Remove(filepath.Join(src, "extra.txt"))
	if _, err := Install(b, d, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.Copy, "extra.txt")); !os.IsNotExist(err) {
		t.Errorf("a reinstall kept a file the bundle no longer has: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(r.Copy))
	if len(entries) != 1 {
		t.Errorf("leftovers next to the copy: %v", entries)
	}
}

func TestUserScope(t *testing.T) {
	home, data := trickyDir(t), filepath.Join(t.TempDir(), "data")
	o := Options{Scope: "user", Home: home, DataHome: data}
	d := desc(t, "gemini")
	r, err := Install(guardBundle(t, "gemini-cli"), d, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".gemini", "settings.json"); r.Target != want {
		t.Errorf("target %s, want %s", r.Target, want)
	}
	if want := filepath.Join(data, "sitter", "plugins", "guard", "gemini-cli"); r.Copy != want {
		t.Errorf("copy %s, want %s", r.Copy, want)
	}
	if _, err := Uninstall("guard", d, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Target); !os.IsNotExist(err) {
		t.Errorf("user settings left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, "sitter")); !os.IsNotExist(err) {
		t.Errorf("data dir left: %v", err)
	}
}

func TestInstallRefusals(t *testing.T) {
	reg := registry.Registry()
	if _, err := FindBundle(filepath.Join(artifacts, "guard", "codex"), desc(t, "claude"), reg); err == nil || !strings.Contains(err.Error(), "not claude-code") {
		t.Errorf("a codex bundle for claude: %v", err)
	}
	if _, err := FindBundle(t.TempDir(), desc(t, "claude"), reg); err == nil {
		t.Error("a folder without a bundle was accepted")
	}
	dir := trickyDir(t)
	for _, bad := range []string{`[1]`, `{"hooks": []}`, `{"hooks": {"PreToolUse": {}}}`, `{not json`} {
		settings := filepath.Join(dir, ".claude", "settings.json")
		writeFile(t, settings, bad)
		if _, err := Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir}); err == nil {
			t.Errorf("install into %s succeeded", bad)
		}
		if got := readFile(t, settings); string(got) != bad {
			t.Errorf("a refused install changed %s to %s", bad, got)
		}
	}
	// A bundle registering an event whose hook replaces Claude's own work
	// (an older or hand-edited one) is refused before anything is written.
	wt := filepath.Join(t.TempDir(), "wt")
	copyDir(t, filepath.Join(artifacts, "guard", "claude-code"), wt)
	edit(t, filepath.Join(wt, "hooks", "hooks.json"), `"PreToolUse": [`, `"WorktreeCreate": [{"hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/bin/sitter-hook\" claude-code WorktreeCreate"}]}], "PreToolUse": [`)
	wtb, err := OpenBundle(wt)
	if err != nil {
		t.Fatal(err)
	}
	clean := trickyDir(t)
	if _, err := Install(wtb, desc(t, "claude"), Options{Dir: clean}); err == nil || !strings.Contains(err.Error(), "registers WorktreeCreate, whose hook replaces worktree creation") {
		t.Errorf("a bundle registering WorktreeCreate: %v", err)
	}
	if _, err := os.Stat(filepath.Join(clean, ".claude")); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote into the project: %v", err)
	}
	edit(t, filepath.Join(wt, MarkerFile), `"PreToolUse"`, `"PreToolUse", "WorktreeCreate"`)
	if wtb, err = OpenBundle(wt); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(wtb, desc(t, "claude"), Options{Dir: clean}); err == nil || !strings.Contains(err.Error(), "registers WorktreeCreate") {
		t.Errorf("a bundle whose marker lists WorktreeCreate: %v", err)
	}
	if _, err := Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir, Scope: "global"}); err == nil {
		t.Error("scope global accepted")
	}
	if _, err := Uninstall("../x", desc(t, "claude"), Options{Dir: dir}); err == nil {
		t.Error("a path as plugin name accepted")
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
}

// A plugin name is looked up as ./artifacts/<name>/<harness>; a plugin dir
// holds one bundle per harness.
func TestFindBundleByName(t *testing.T) {
	reg := registry.Registry()
	t.Chdir("../..")
	for _, arg := range []string{"guard", "artifacts/guard", "artifacts/guard/codex"} {
		b, err := FindBundle(arg, desc(t, "codex-cli"), reg)
		if err != nil {
			t.Errorf("FindBundle(%s): %v", arg, err)
			continue
		}
		if b.Dir != filepath.Join("artifacts", "guard", "codex") || b.Marker.Plugin != "guard" || b.Marker.Format != "codex-plugin" {
			t.Errorf("FindBundle(%s) = %+v", arg, b)
		}
	}
	if _, err := FindBundle("no-such-plugin", desc(t, "codex"), reg); err == nil || !strings.Contains(err.Error(), "artifacts/no-such-plugin/codex") ||
		!strings.HasSuffix(err.Error(), "; plugins with a codex bundle there: babysitter, guard)") || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("unknown plugin: %v; want the folders looked in and the plugins found there, no suggestion", err)
	}
	// A misspelled name gets the plugin it most likely means.
	if _, err := FindBundle("gard", desc(t, "codex"), reg); err == nil || !strings.HasPrefix(err.Error(), `no codex bundle found for "gard"; did you mean guard? (looked for`) {
		t.Errorf("misspelled plugin: %v; want a did-you-mean", err)
	}
}

// One project reached through a symlink is the same project: the second
// install recognises the first one's entries.
func TestInstallThroughSymlink(t *testing.T) {
	dir := trickyDir(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip(err)
	}
	install(t, "claude", dir, false)
	first := readFile(t, filepath.Join(dir, ".claude", "settings.json"))
	r := install(t, "claude", link, false)
	if _, e := actions(r); !cmp.Equal(e, []string{"PreToolUse kept"}) {
		t.Errorf("install through a symlink: %v", e)
	}
	if got := readFile(t, filepath.Join(dir, ".claude", "settings.json")); !bytes.Equal(got, first) {
		t.Errorf("install through a symlink changed the file:\n%s", got)
	}
}

// A bundle that registers no hooks still installs; the config file is left
// alone.
func TestInstallWithoutHooks(t *testing.T) {
	src := filepath.Join(t.TempDir(), "b")
	copyDir(t, filepath.Join(artifacts, "guard", "claude-code"), src)
	os.Remove(filepath.Join(src, "hooks", "hooks.json"))
	b, err := OpenBundle(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := trickyDir(t)
	r, err := Install(b, desc(t, "claude"), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Target); !os.IsNotExist(err) {
		t.Errorf("config written for a bundle without hooks: %v", err)
	}
	if len(r.Notes) != 1 || len(r.Entries) != 0 {
		t.Errorf("report: %+v", r)
	}
}

// A folder target places the copy itself where the harness discovers
// plugin folders; a folder there that is not sitter's is refused without
// --force and left alone by uninstall.
func TestInstallFolder(t *testing.T) {
	n := 0
	for _, d := range registry.Registry().Descriptors {
		if d.Packaging.Target.Kind != "folder" {
			continue
		}
		n++
		t.Run(d.ID, func(t *testing.T) {
			dir := trickyDir(t)
			r := install(t, d.ID, dir, false)
			want := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(d.Packaging.Target.Project, "{plugin}", "guard")))
			if r.Target != want || r.Copy != want {
				t.Errorf("target %s, copy %s, want both %s", r.Target, r.Copy, want)
			}
			if files, _ := actions(r); !cmp.Equal(files, []string{"copied"}) {
				t.Errorf("install: %v", files)
			}
			if _, err := os.Stat(filepath.Join(want, Launcher)); err != nil {
				t.Errorf("the launcher is not in the folder: %v", err)
			}
			if files, _ := actions(install(t, d.ID, dir, false)); !cmp.Equal(files, []string{"replaced"}) {
				t.Errorf("second install: %v", files)
			}
			if files, _ := actions(uninstall(t, d.ID, dir)); !cmp.Equal(files, []string{"removed"}) {
				t.Errorf("uninstall: %v", files)
			}
			if _, err := os.Lstat(want); err == nil {
				t.Errorf("uninstall left %s", want)
			}

			writeFile(t, filepath.Join(want, "index.ts"), "export default {}\n")
			if _, err := Install(guardBundle(t, d.ID), d, Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "--force") {
				t.Errorf("install over a user's folder: %v", err)
			}
			if _, err := Uninstall("guard", d, Options{Dir: dir}); err == nil {
				t.Errorf("uninstall removed a folder that is not sitter's")
			}
			if got := readFile(t, filepath.Join(want, "index.ts")); string(got) != "export default {}\n" {
				t.Errorf("the user's folder changed: %s", got)
			}
		})
	}
	if n == 0 {
		t.Skip("no harness of the atlas installs as a folder")
	}
}

// editOurs marks sitter's entries in a config file by hand, as a user
// who changes their timeout does.
func editOurs(t *testing.T, d *adapter.Descriptor, path string) {
	t.Helper()
	_, root, mode, err := readConfig(path)
	if err != nil || root == nil {
		t.Fatalf("%s: %v", path, err)
	}
	f := formatOf(d)
	hv, _ := root.get("hooks")
	n := 0
	for _, m := range hv.(*object).members {
		eachCommand(m.Val.([]any), f.shape, f.commandKey, func(h *object, cmd string) {
			if strings.Contains(cmd, "sitter-hook") {
				h.set("timeout", json.Number("99"))
				n++
			}
		})
	}
	if n == 0 {
		t.Fatalf("no entry of sitter's in %s", path)
	}
	if err := os.WriteFile(path, encodeOrdered(root), mode); err != nil {
		t.Fatal(err)
	}
}

// A file sitter created holds nothing of the user's to back up: a --force
// reinstall over sitter's own (edited) entries keeps no backup, and the
// uninstall then leaves the project as it was before the first install,
// as it does without the --force.
func TestUninstallAfterForceReinstall(t *testing.T) {
	for _, h := range []string{"claude-code", "codex", "gemini-cli", "cursor", "copilot"} {
		t.Run(h, func(t *testing.T) {
			dir := trickyDir(t)
			r := install(t, h, dir, false)
			editOurs(t, desc(t, h), r.Target)
			r = install(t, h, dir, true)
			if fc := r.Files[1]; fc.Action != "updated" || fc.Backup != "" {
				t.Errorf("--force over sitter's edited entries: %+v, want updated without a backup", fc)
			}
			uninstall(t, h, dir)
			for _, p := range []string{r.Target, r.Target + BackupSuffix} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("%s left after uninstall: %v", p, err)
				}
			}
		})
	}
}

// Two plugins in a file the first one created: the second finds sitter's
// entries there, not the user's file, so it keeps no backup either, and
// uninstalling both, in either order, leaves no file behind.
func TestUninstallTwoPluginsCreatedFile(t *testing.T) {
	d := desc(t, "claude-code")
	baby, err := FindBundle(filepath.Join(artifacts, "babysitter"), d, registry.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, guardFirst := range []bool{true, false} {
		dir := trickyDir(t)
		r := install(t, "claude-code", dir, false)
		rb, err := Install(baby, d, Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if fc := rb.Files[1]; fc.Action != "updated" || fc.Backup != "" {
			t.Errorf("second plugin into sitter's file: %+v, want updated without a backup", fc)
		}
		if guardFirst {
			uninstall(t, "claude-code", dir)
		}
		if _, err := Uninstall("babysitter", d, Options{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		if !guardFirst {
			uninstall(t, "claude-code", dir)
		}
		for _, p := range []string{r.Target, r.Target + BackupSuffix} {
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Errorf("guard uninstalled first %v: %s left: %v", guardFirst, p, err)
			}
		}
	}
}

// TestInstallVersionFromTheBundle: a versioned-list config file that
// install creates carries the version of the bundle's own hook document
// (the layout's, atlas data), and uninstall takes it away again.
func TestInstallVersionFromTheBundle(t *testing.T) {
	src := guardBundle(t, "cursor")
	dst := filepath.Join(t.TempDir(), "cursor")
	if err := os.CopyFS(dst, os.DirFS(src.Dir)); err != nil {
		t.Fatal(err)
	}
	hooksFile := filepath.Join(dst, "hooks", "hooks.json")
	doc := readFile(t, hooksFile)
	if !bytes.Contains(doc, []byte(`"version": 1`)) {
		t.Fatalf("the cursor bundle's hook document has no version 1:\n%s", doc)
	}
	writeFile(t, hooksFile, string(bytes.Replace(doc, []byte(`"version": 1`), []byte(`"version": 2`), 1)))
	b, err := OpenBundle(dst)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := desc(t, "cursor")
	r, err := Install(b, d, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeOrdered(readFile(t, r.Target))
	if err != nil {
		t.Fatal(err)
	}
	if ver, _ := v.(*object).get("version"); ver != json.Number("2") {
		t.Errorf("version %v in the created file, want the bundle's 2:\n%s", ver, readFile(t, r.Target))
	}
	uninstall(t, "cursor", dir)
	if _, err := os.Stat(r.Target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("uninstall left the file install created: %s", readFile(t, r.Target))
	}
}

// A JSON file install cannot parse is named with the line and column to
// mend: the harness's settings, the bundle's hooks file, its marker.
func TestInstallNamesWhereJSONIsBroken(t *testing.T) {
	dir := trickyDir(t)
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeFile(t, settings, "{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n")
	_, err := Install(guardBundle(t, "claude"), desc(t, "claude"), Options{Dir: dir})
	if want := settings + ":3:20: invalid JSON: invalid character ','"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("broken settings: %v, want %s...", err, want)
	}

	wt := filepath.Join(t.TempDir(), "wt")
	copyDir(t, filepath.Join(artifacts, "guard", "claude-code"), wt)
	edit(t, filepath.Join(wt, "hooks", "hooks.json"), `"PreToolUse": [`, `"PreToolUse": [}`)
	b, err := OpenBundle(wt)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Install(b, desc(t, "claude"), Options{Dir: trickyDir(t)})
	if want := wt + "/hooks/hooks.json:3:20: invalid JSON: invalid character '}'"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("broken hooks file: %v, want %s...", err, want)
	}

	marker := filepath.Join(wt, MarkerFile)
	edit(t, marker, `"harness": "claude-code",`, `"harness": "claude-code"`)
	if _, err := OpenBundle(wt); err == nil || !strings.HasPrefix(err.Error(), marker+":5:3: invalid JSON: invalid character '\"' after object key:value pair") {
		t.Errorf("broken marker: %v", err)
	}
	edit(t, marker, `"harness": "claude-code"`, `"harness": 7,`)
	if _, err := OpenBundle(wt); err == nil || !strings.HasPrefix(err.Error(), marker+":4:14: cannot unmarshal number") {
		t.Errorf("marker with a number for a name: %v", err)
	}
}

// An install into a hooks config loads neither the bundle's skills nor its
// commands nor its MCP servers, and its report names each, where the
// layout keeps them: Claude Code's commands/*.md and .mcp.json, Gemini
// CLI's commands/*.toml and gemini-extension.json's mcpServers.
func TestInstallNotesWhatHooksLeaveOut(t *testing.T) {
	for _, c := range []struct {
		harness, mcpFile, mcpDoc string
	}{
		{"claude-code", ".mcp.json", `{"mcpServers":{"search":{"command":"npx"},"docs":{"command":"./docs.sh"}}}`},
		{"gemini-cli", "gemini-extension.json", `{"name":"babysitter","version":"0.1.0","contextFileName":"GEMINI.md","mcpServers":{"search":{"command":"npx"},"docs":{"command":"./docs.sh"}}}`},
	} {
		t.Run(c.harness, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "b")
			copyDir(t, filepath.Join(artifacts, "babysitter", c.harness), src)
			writeFile(t, filepath.Join(src, c.mcpFile), c.mcpDoc)
			b, err := OpenBundle(src)
			if err != nil {
				t.Fatal(err)
			}
			d := desc(t, c.harness)
			r, err := Install(b, d, Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			tail := ": this install registers hooks only; load the bundle in " + d.DisplayName + " itself for them: " + filepath.Join(r.Copy, "README.md") + ", Install"
			want := []string{
				"skills not loaded (babysit)" + tail,
				"commands not loaded (call, plan, resume, yolo)" + tail,
				"MCP servers not loaded (docs, search)" + tail,
			}
			if diff := cmp.Diff(want, r.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
	// The guard ships no commands and no MCP servers: no note about them.
	r := install(t, "claude", trickyDir(t), false)
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "commands") || strings.HasPrefix(n, "MCP") {
			t.Errorf("note for what the guard does not ship: %s", n)
		}
	}
}

// A target that names where the harness reads the user's own skills and
// commands gets the bundle's copied there (Droid's .factory/skills and
// .factory/commands): a reinstall leaves them as they are, one of the
// user's of the same name is refused before anything is written, and
// uninstall removes those still as installed and keeps one the user
// changed.
func TestInstallSkillsAndCommands(t *testing.T) {
	d := desc(t, "droid")
	b, err := FindBundle(filepath.Join(artifacts, "babysitter"), d, registry.Registry())
	if err != nil {
		t.Fatal(err)
	}
	dir := trickyDir(t)
	r, err := Install(b, d, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(dir, ".factory", "skills", "babysit", "SKILL.md")
	if got, want := readFile(t, skill), readFile(t, filepath.Join(b.Dir, "skills", "babysit", "SKILL.md")); !bytes.Equal(got, want) {
		t.Errorf("%s is not the bundle's", skill)
	}
	for _, c := range []string{"call", "plan", "resume", "yolo"} {
		if got, want := readFile(t, filepath.Join(dir, ".factory", "commands", c+".md")), readFile(t, filepath.Join(b.Dir, "commands", c+".md")); !bytes.Equal(got, want) {
			t.Errorf("command %s is not the bundle's", c)
		}
	}
	files := changes(r)
	for _, want := range []string{"copied " + filepath.Join(dir, ".factory", "skills", "babysit"), "copied " + filepath.Join(dir, ".factory", "commands", "call.md")} {
		if !slices.Contains(files, want) {
			t.Errorf("report files %q lack %q", files, want)
		}
	}
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "skills") || strings.HasPrefix(n, "commands") {
			t.Errorf("note: %s", n)
		}
	}
	// A reinstall over its own copies.
	r, err = Install(b, d, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if files := changes(r); !slices.Contains(files, "unchanged "+filepath.Join(dir, ".factory", "skills", "babysit")) {
		t.Errorf("reinstall files: %q", files)
	}
	// The user's own command of one of the bundle's names.
	other := trickyDir(t)
	mine := filepath.Join(other, ".factory", "commands", "plan.md")
	writeFile(t, mine, "my plan\n")
	if _, err := Install(b, d, Options{Dir: other, Force: true}); err == nil || !strings.Contains(err.Error(), mine) {
		t.Errorf("install over the user's command: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, ".sitter")); err == nil {
		t.Errorf("a refused install left a copy")
	}
	if _, err := os.Stat(filepath.Join(other, ".factory", "skills")); err == nil {
		t.Errorf("a refused install left skills")
	}
	// Uninstall keeps a command the user changed since.
	changed := filepath.Join(dir, ".factory", "commands", "yolo.md")
	writeFile(t, changed, "mine now\n")
	if r, err = Uninstall("babysitter", d, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	files = changes(r)
	if !slices.Contains(files, "kept "+changed) || !slices.Contains(files, "removed "+filepath.Join(dir, ".factory", "skills", "babysit")) {
		t.Errorf("uninstall files: %q", files)
	}
	if _, err := os.Stat(filepath.Join(dir, ".factory", "skills")); err == nil {
		t.Errorf("uninstall left the skills folder it emptied")
	}
	if got := readFile(t, changed); string(got) != "mine now\n" {
		t.Errorf("uninstall changed the user's edit: %q", got)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, ".factory", "commands"))
	if len(ents) != 1 {
		t.Errorf("commands left: %d, want the changed one", len(ents))
	}
}

// changes is a report's files as "action path".
func changes(r *Report) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Action+" "+f.Path)
	}
	return out
}

// A target that names the harness's own MCP config (Droid's
// .factory/mcp.json) gets the bundle's servers merged in beside the
// user's; a server of the user's of the same name is refused; uninstall
// takes out what it added, and a file it created.
func TestInstallMCPServers(t *testing.T) {
	d := desc(t, "droid")
	src := filepath.Join(t.TempDir(), "b")
	copyDir(t, filepath.Join(artifacts, "babysitter", "droid"), src)
	writeFile(t, filepath.Join(src, ".mcp.json"), `{"mcpServers":{"search":{"command":"npx","args":["search-mcp"]}}}`)
	b, err := OpenBundle(src)
	if err != nil {
		t.Fatal(err)
	}
	// A file of the user's, with a server of their own.
	dir := trickyDir(t)
	cfg := filepath.Join(dir, ".factory", "mcp.json")
	writeFile(t, cfg, `{"mcpServers": {"mine": {"command": "./mine.sh"}}, "x": 1}`)
	r, err := Install(b, d, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(readFile(t, cfg), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x": 1.0, "mcpServers": map[string]any{"mine": map[string]any{"command": "./mine.sh"}, "search": map[string]any{"command": "npx", "args": []any{"search-mcp"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", cfg, diff)
	}
	if files := changes(r); !slices.Contains(files, "updated "+cfg) {
		t.Errorf("report files: %q", files)
	}
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "MCP") {
			t.Errorf("note: %s", n)
		}
	}
	if r, err = Install(b, d, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if files := changes(r); !slices.Contains(files, "unchanged "+cfg) {
		t.Errorf("reinstall files: %q", files)
	}
	if _, err := Uninstall("babysitter", d, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := json.Unmarshal(readFile(t, cfg), &got); err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"x": 1.0, "mcpServers": map[string]any{"mine": map[string]any{"command": "./mine.sh"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after uninstall (-want +got):\n%s", diff)
	}

	// A server of the user's by the bundle's name.
	other := trickyDir(t)
	cfg = filepath.Join(other, ".factory", "mcp.json")
	writeFile(t, cfg, `{"mcpServers":{"search":{"command":"my-search"}}}`)
	if _, err := Install(b, d, Options{Dir: other, Force: true}); err == nil || !strings.Contains(err.Error(), `"search"`) {
		t.Errorf("install over the user's server: %v", err)
	}
	if got := string(readFile(t, cfg)); got != `{"mcpServers":{"search":{"command":"my-search"}}}` {
		t.Errorf("a refused install changed %s: %s", cfg, got)
	}

	// A file the install creates goes with the uninstall.
	fresh := trickyDir(t)
	if _, err := Install(b, d, Options{Dir: fresh}); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall("babysitter", d, Options{Dir: fresh}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(fresh, ".factory", "mcp.json")); err == nil {
		t.Errorf("uninstall left the mcp.json it created")
	}
}
