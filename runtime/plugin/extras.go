package plugin

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"sitter.dev/sitter/runtime/adapter"
)

// extra is one skill folder or command file of a bundle that install
// copies where the harness reads the user's own (the atlas target's
// skills and commands folders): a harness that loads no plugin folder
// sitter can register still gets them.
type extra struct {
	rel    string // in the bundle, slash-separated
	dst    string // where it goes
	top    string // the first folder of dst's target path: what uninstall may empty
	action string // copied, replaced or unchanged (install only)
}

// extras lists the skills and commands of the bundle at dir with where
// they go in scope p; none when d's target names no folder for them.
func extras(d *adapter.Descriptor, f format, p place, dir string) ([]extra, error) {
	t := d.Packaging.Target
	var out []extra
	for _, k := range []struct {
		dirs  adapter.TargetDirs
		files func() []string // bundle paths
	}{
		{t.Skills, func() []string {
			var rels []string
			if f.skills != "" {
				for _, n := range skillNames(filepath.Join(dir, filepath.FromSlash(f.skills)), f.skills) {
					rels = append(rels, path.Join(f.skills, n))
				}
			}
			return rels
		}},
		{t.Commands, func() []string {
			prefix, suffix, _ := strings.Cut(f.commands, "{command}")
			var rels []string
			for _, n := range commandNames(dir, f.commands) {
				rels = append(rels, prefix+n+suffix)
			}
			return rels
		}},
	} {
		to := k.dirs.Project
		if p.scope == "user" {
			to = k.dirs.User
		}
		if to == "" {
			continue
		}
		if filepath.IsAbs(to) || strings.HasPrefix(filepath.Clean(to), "..") {
			return nil, fmt.Errorf("%s: install path %q leaves the %s dir", d.ID, to, p.scope)
		}
		top := filepath.Join(p.base, strings.Split(filepath.Clean(filepath.FromSlash(to)), string(filepath.Separator))[0])
		for _, rel := range k.files() {
			out = append(out, extra{rel: rel, dst: filepath.Join(p.base, filepath.FromSlash(to), path.Base(rel)), top: top})
		}
	}
	return out, nil
}

// planExtras says what install does with each extra: copies it, leaves it
// (already the bundle's), or replaces sitter's earlier copy of it (the one
// the installed copy at copyDir holds). One of the user's of the same name
// is refused, --force or not: the harness would load a backup beside it.
func planExtras(xs []extra, bundleDir, copyDir string) error {
	for i, x := range xs {
		src := filepath.Join(bundleDir, filepath.FromSlash(x.rel))
		switch _, err := os.Lstat(x.dst); {
		case err != nil:
			xs[i].action = "copied"
		case sameTree(x.dst, src):
			xs[i].action = "unchanged"
		case sameTree(x.dst, filepath.Join(copyDir, filepath.FromSlash(x.rel))):
			xs[i].action = "replaced"
		default:
			return fmt.Errorf("%s exists and is not what sitter installed there; sitter does not replace a skill or command of yours, --force or not: rename or remove it and run this again", x.dst)
		}
	}
	return nil
}

// removeExtras removes the extras still as the installed copy at copyDir
// has them, and keeps one changed since.
func removeExtras(xs []extra, copyDir string) ([]FileChange, []string, error) {
	var files []FileChange
	var notes []string
	for _, x := range xs {
		if _, err := os.Lstat(x.dst); err != nil {
			continue
		}
		if !sameTree(x.dst, filepath.Join(copyDir, filepath.FromSlash(x.rel))) {
			files = append(files, FileChange{Path: x.dst, Action: "kept"})
			notes = append(notes, x.dst+" changed since sitter installed it; left as it is")
			continue
		}
		if err := os.RemoveAll(x.dst); err != nil {
			return files, notes, err
		}
		files = append(files, FileChange{Path: x.dst, Action: "removed"})
		removeEmptyDirs(filepath.Dir(x.dst), x.top)
	}
	return files, notes, nil
}

// sameTree reports whether a and b are the same regular file, or folders
// of the same names holding the same.
func sameTree(a, b string) bool {
	fa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	fb, err := os.Lstat(b)
	if err != nil {
		return false
	}
	switch {
	case fa.Mode().IsRegular() && fb.Mode().IsRegular():
		da, err := os.ReadFile(a)
		if err != nil {
			return false
		}
		db, err := os.ReadFile(b)
		return err == nil && bytes.Equal(da, db)
	case fa.IsDir() && fb.IsDir():
		ea, err := os.ReadDir(a)
		if err != nil {
			return false
		}
		eb, err := os.ReadDir(b)
		if err != nil || len(ea) != len(eb) {
			return false
		}
		for i := range ea {
			if ea[i].Name() != eb[i].Name() || !sameTree(filepath.Join(a, ea[i].Name()), filepath.Join(b, eb[i].Name())) {
				return false
			}
		}
		return true
	}
	return false
}
