package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"sitter.dev/sitter/runtime/adapter"
)

// A bundle of shape script-per-event (atlas/layouts: a harness that runs
// every file of a hooks folder named after an event, such as Cline) holds
// one executable script per registered event at the layout's hooks path
// ("hooks/{event}"). Install writes each into the target folder under its
// own file name, with its launcher line pointing at the installed copy;
// ownership is that launcher path, as for config entries.

// ShapeScripts is the hook shape of a bundle with one script per event.
const ShapeScripts = "script-per-event"

// eventSlot is the slot of a script's path that names its event.
const eventSlot = "{event}"

// installedHeader is the line install adds after a script's "#!" line.
const installedHeader = "# Installed by sitter plugin install"

// script is one hook script of a bundle, as install will write it.
type script struct {
	event   string
	rel     string // slash path in the bundle
	name    string // file name in the target folder
	command string // the rewritten launcher call
	data    []byte // the installed text
}

// scriptPath is the bundle path of an event's script.
func scriptPath(tmpl, event string) string {
	return strings.ReplaceAll(tmpl, eventSlot, event)
}

// launcherLine finds the one line of a hook script that runs the bundle's
// launcher, `[exec ]"<root>/bin/sitter-hook" <harness> <event>`: its index,
// what precedes the call (indentation and "exec "), the root and the
// arguments. n is how many lines run the launcher.
func launcherLine(lines []string) (at int, prefix, root string, args []string, n int) {
	at = -1
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		call := strings.TrimPrefix(trimmed, "exec ")
		r, a, ok := launcherCommand(strings.TrimRight(call, " \t"))
		if !ok {
			continue
		}
		n++
		if at < 0 {
			at, prefix, root, args = i, line[:len(line)-len(call)], r, a
		}
	}
	return at, prefix, root, args, n
}

// bundleScripts reads the hook scripts of bundle b (one per event its
// marker lists) and makes their installed text: the launcher line calls
// launcher, and a line after "#!" says how to remove the file.
func bundleScripts(b *Bundle, d *adapter.Descriptor, f format, launcher, scope string) ([]script, error) {
	var out []script
	for _, event := range b.Marker.Hooks {
		rel := scriptPath(f.hooksFile, event)
		data, err := os.ReadFile(filepath.Join(b.Dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("%s: hook script of %s: %v", b.Dir, event, err)
		}
		lines := strings.Split(string(data), "\n")
		at, prefix, _, args, n := launcherLine(lines)
		if n != 1 {
			return nil, fmt.Errorf("%s/%s: %d lines run the bundle's %s, want one", b.Dir, rel, n, Launcher)
		}
		words := []string{ShellQuote(launcher)}
		for _, a := range args {
			words = append(words, shellWord(a))
		}
		command := strings.Join(words, " ")
		lines[at] = prefix + command
		note := fmt.Sprintf("%s (plugin %s); remove it with: sitter plugin uninstall %s --harness %s --scope %s", installedHeader, b.Marker.Plugin, b.Marker.Plugin, d.ID, scope)
		if strings.HasPrefix(lines[0], "#!") {
			lines = append(lines[:1], append([]string{note}, lines[1:]...)...)
		} else {
			lines = append([]string{note}, lines...)
		}
		out = append(out, script{event: event, rel: rel, name: path.Base(rel), command: command, data: []byte(strings.Join(lines, "\n"))})
	}
	return out, nil
}

// checkScriptTargets refuses, before anything is written, a script whose
// file in dir is there and not the installed copy's (a user's own hook, or
// another sitter bundle's), unless force; and anything there that is not
// a regular file or that the user made read-only.
func checkScriptTargets(dir string, scripts []script, ours func(string) bool, force bool, pluginName, harness string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	var foreign []string
	example := ""
	for _, s := range scripts {
		p := filepath.Join(dir, s.name)
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file; sitter leaves it alone", p)
		}
		if err := checkWritable(p); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if ours(string(data)) || force {
			continue
		}
		why := "your own hook"
		if bytes.Contains(data, []byte(installedHeader)) {
			why = "another sitter bundle's hook (uninstall that plugin first, or install this one at the other scope)"
		}
		foreign = append(foreign, fmt.Sprintf("%s (%s)", p, why))
		if example == "" {
			example = s.name
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	return fmt.Errorf("the %s plugin's hook scripts would replace %s. %s runs every file of %s named after an event, with or without an extension: rename yours (%s to %s.sh) and both run, or use --force to replace it (kept as <file>%s, put back by uninstall)",
		pluginName, strings.Join(foreign, " and "), harness, dir, example, example, BackupSuffix)
}

// eventOf is the event a script file name stands for, given the file
// name template ("{event}", "{event}.sh").
func eventOf(tmpl, name string) string {
	pre, post, _ := strings.Cut(path.Base(tmpl), eventSlot)
	return strings.TrimSuffix(strings.TrimPrefix(name, pre), post)
}

// ownedScripts lists the files in dir that run the installed copy's
// launcher, by name; none when dir does not exist.
func ownedScripts(dir string, ours func(string) bool) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), BackupSuffix) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if ours(string(data)) {
			out[e.Name()] = scriptCommand(string(data), ours)
		}
	}
	return out, nil
}

// scriptCommand is the line of an installed script that runs the launcher.
func scriptCommand(data string, ours func(string) bool) string {
	for _, line := range strings.Split(data, "\n") {
		if !strings.HasPrefix(line, "#") && ours(line) {
			return strings.TrimPrefix(strings.TrimSpace(line), "exec ")
		}
	}
	return ""
}

// scriptUndo puts the files a failed install changed back as they were.
type scriptUndo []struct {
	path string
	old  []byte // nil: the file was not there
	mode fs.FileMode
}

func (u scriptUndo) run() error {
	var first error
	for i := len(u) - 1; i >= 0; i-- {
		var err error
		if u[i].old == nil {
			err = os.Remove(u[i].path)
		} else {
			err = writeAtomic(u[i].path, u[i].old, u[i].mode)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// installScripts writes the scripts into dir: a file of ours is updated,
// one of someone else's (only with force, after checkScriptTargets) is
// kept as <file>.sitter-backup first, and files of ours for events the
// bundle no longer registers go.
func installScripts(dir, tmpl string, scripts []script, ours func(string) bool) ([]FileChange, []EntryChange, scriptUndo, error) {
	var files []FileChange
	var entries []EntryChange
	var undo scriptUndo
	before, err := ownedScripts(dir, ours)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	names := map[string]bool{}
	for _, s := range scripts {
		names[s.name] = true
		p := filepath.Join(dir, s.name)
		fc := FileChange{Path: p, Action: "created"}
		entry := EntryChange{Event: s.event, Action: "added", Command: s.command}
		old, err := os.ReadFile(p)
		mode := fs.FileMode(0o755)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			old = nil
		case err != nil:
			return files, entries, undo, err
		case bytes.Equal(old, s.data):
			fc.Action, entry.Action = "unchanged", "kept"
		case ours(string(old)):
			fc.Action, entry.Action = "updated", "replaced"
		default: // someone else's, replaced with --force
			fc.Action = "updated"
			if fi, err := os.Stat(p); err == nil {
				mode = fi.Mode().Perm() | 0o100
			}
			bak, err := backupOnce(p, old, mode)
			if err != nil {
				return files, entries, undo, fmt.Errorf("backup of %s: %v", p, err)
			}
			fc.Backup = bak
		}
		if fc.Action != "unchanged" {
			if err := writeAtomic(p, s.data, mode); err != nil {
				return files, entries, undo, err
			}
			undo = append(undo, struct {
				path string
				old  []byte
				mode fs.FileMode
			}{p, old, mode})
		}
		files = append(files, fc)
		entries = append(entries, entry)
	}
	stale := make([]string, 0, len(before))
	for name := range before {
		if !names[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		fc, err := removeScript(filepath.Join(dir, name))
		if err != nil {
			return files, entries, undo, err
		}
		files = append(files, fc)
		entries = append(entries, EntryChange{Event: eventOf(tmpl, name), Action: "removed", Command: before[name]})
	}
	return files, entries, undo, nil
}

// removeScript removes one of sitter's scripts, putting back the user's
// file that --force replaced.
func removeScript(p string) (FileChange, error) {
	fc := FileChange{Path: p, Action: "removed"}
	bak := p + BackupSuffix
	if old, err := os.ReadFile(bak); err == nil {
		mode := fs.FileMode(0o755)
		if fi, err := os.Stat(bak); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := writeAtomic(p, old, mode); err != nil {
			return fc, err
		}
		os.Remove(bak)
		fc.Action = "restored"
		return fc, nil
	}
	return fc, removeFile(p)
}

// uninstallScripts removes every script in dir that runs the installed
// copy's launcher (restoring what --force replaced); the folder stays.
func uninstallScripts(dir, tmpl string, ours func(string) bool) ([]FileChange, []EntryChange, error) {
	owned, err := ownedScripts(dir, ours)
	if err != nil {
		return nil, nil, err
	}
	if owned == nil {
		return []FileChange{{Path: dir, Action: "absent"}}, nil, nil
	}
	names := make([]string, 0, len(owned))
	for n := range owned {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []FileChange
	var entries []EntryChange
	for _, n := range names {
		fc, err := removeScript(filepath.Join(dir, n))
		if err != nil {
			return files, entries, err
		}
		files = append(files, fc)
		entries = append(entries, EntryChange{Event: eventOf(tmpl, n), Action: "removed", Command: owned[n]})
	}
	if len(files) == 0 {
		files = append(files, FileChange{Path: dir, Action: "unchanged"})
	}
	return files, entries, nil
}
