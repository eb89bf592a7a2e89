// Package write is the generator's single writer: it writes files only when
// every emitter succeeded, rewrites only files whose bytes changed, and
// prunes stale files in the directories the generator owns.
package write

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"sitter.dev/sitter/gen/emit"
)

// Stats says what a write did.
type Stats struct {
	Written, Unchanged, Removed []string
}

// Files writes files under root. owned lists the directories (relative to
// root) that belong to the generator: any file there that is not in files
// is stale and removed.
func Files(root string, files []emit.File, owned []string) (Stats, error) {
	var st Stats
	want := map[string]bool{}
	for _, f := range files {
		want[filepath.ToSlash(f.Path)] = true
	}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		mode := fs.FileMode(f.Mode)
		if mode == 0 {
			mode = 0o644
		}
		old, err := os.ReadFile(p)
		if err == nil && bytes.Equal(old, f.Bytes) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() == mode {
				st.Unchanged = append(st.Unchanged, f.Path)
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return st, err
		}
		tmp := p + ".sitter-gen.tmp"
		if err := os.WriteFile(tmp, f.Bytes, mode); err != nil {
			return st, err
		}
		if err := os.Chmod(tmp, mode); err != nil {
			return st, err
		}
		if err := os.Rename(tmp, p); err != nil {
			return st, err
		}
		st.Written = append(st.Written, f.Path)
	}
	for _, dir := range owned {
		base := filepath.Join(root, filepath.FromSlash(dir))
		var stale []string
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if !want[filepath.ToSlash(rel)] {
				stale = append(stale, p)
			}
			return nil
		})
		if err != nil {
			return st, fmt.Errorf("prune %s: %w", dir, err)
		}
		sort.Strings(stale)
		for _, p := range stale {
			if err := os.Remove(p); err != nil {
				return st, err
			}
			rel, _ := filepath.Rel(root, p)
			st.Removed = append(st.Removed, filepath.ToSlash(rel))
		}
		removeEmptyDirs(base)
	}
	return st, nil
}

// removeEmptyDirs removes directories left empty by pruning, deepest first.
func removeEmptyDirs(base string) {
	var dirs []string
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != base {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, as wanted, when not empty
	}
}
