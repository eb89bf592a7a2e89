package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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

// mcpPlan is the merge of a bundle's MCP servers into the JSON file where
// the harness reads the user's own (the atlas target's mcp).
type mcpPlan struct {
	path    string
	orig    []byte // the file before; nil when it does not exist
	mode    fs.FileMode
	out     []byte // the file after; nil when unchanged
	servers []string
}

// mcpTarget is the file of d's target mcp in scope p, "" when it names none.
func mcpTarget(d *adapter.Descriptor, p place) (string, error) {
	t := d.Packaging.Target
	to := t.MCP.Project
	if p.scope == "user" {
		to = t.MCP.User
	}
	if to == "" {
		return "", nil
	}
	if filepath.IsAbs(to) || strings.HasPrefix(filepath.Clean(to), "..") {
		return "", fmt.Errorf("%s: install path %q leaves the %s dir", d.ID, to, p.scope)
	}
	return filepath.Join(p.base, filepath.FromSlash(to)), nil
}

// bundleServers is the object of MCP servers of the bundle at dir, nil
// when it has none.
func bundleServers(dir string, f format) (*object, error) {
	if f.mcpFile == "" {
		return nil, nil
	}
	file := filepath.Join(dir, filepath.FromSlash(f.mcpFile))
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := decodeOrdered(data)
	if err != nil {
		return nil, atPath(file, err)
	}
	for _, k := range strings.Split(f.mcpKey, ".") {
		o, ok := v.(*object)
		if !ok {
			return nil, nil
		}
		if v, ok = o.get(k); !ok {
			return nil, nil
		}
	}
	servers, _ := v.(*object)
	return servers, nil
}

// serversAt is the object at the dotted key of root, made when make is
// set and it is absent; an error when something else is there.
func serversAt(root *object, key, path string, make bool) (*object, error) {
	o := root
	for _, k := range strings.Split(key, ".") {
		v, ok := o.get(k)
		if !ok {
			if !make {
				return nil, nil
			}
			v = &object{}
			o.set(k, v)
		}
		if o, ok = v.(*object); !ok {
			return nil, fmt.Errorf("%s: %q is not an object; sitter leaves the file alone", path, key)
		}
	}
	return o, nil
}

// planMCP merges servers into the file at path (the object at key): a
// server the file lacks is added, one equal to sitter's earlier copy (in
// old, the installed copy's servers) replaced, and one of sitter's earlier
// copy the bundle no longer has dropped. A server of the user's of the
// same name is refused.
func planMCP(path, key string, servers, old *object) (*mcpPlan, error) {
	orig, root, mode, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	pl := &mcpPlan{path: path, orig: orig, mode: mode}
	if root == nil {
		root = &object{}
	}
	at, err := serversAt(root, key, path, servers != nil && len(servers.members) > 0)
	if err != nil || at == nil {
		return pl, err
	}
	sitters := func(name string, v any) bool {
		if old == nil {
			return false
		}
		ov, ok := old.get(name)
		return ok && equalOrdered(v, ov)
	}
	if servers != nil {
		for _, m := range servers.members {
			pl.servers = append(pl.servers, m.Key)
			cur, ok := at.get(m.Key)
			if ok && !equalOrdered(cur, m.Val) && !sitters(m.Key, cur) {
				return nil, fmt.Errorf("%s: MCP server %q is not what sitter installed there; sitter does not replace a server of yours, --force or not: rename or remove it and run this again", path, m.Key)
			}
			at.set(m.Key, cloneOrdered(m.Val))
		}
	}
	if old != nil {
		for _, m := range old.members {
			if servers != nil {
				if _, keep := servers.get(m.Key); keep {
					continue
				}
			}
			if cur, ok := at.get(m.Key); ok && equalOrdered(cur, m.Val) {
				at.del(m.Key)
			}
		}
	}
	if out := encodeOrdered(root); orig == nil || !bytes.Equal(out, orig) {
		pl.out = out
	}
	return pl, nil
}

// write carries out the plan; undo puts the file back as it was.
func (pl *mcpPlan) write() (FileChange, error) {
	fc := FileChange{Path: pl.path, Action: "unchanged"}
	if pl.out == nil {
		return fc, nil
	}
	fc.Action = "updated"
	if pl.orig == nil {
		fc.Action = "created"
	}
	return fc, writeAtomic(pl.path, pl.out, pl.mode)
}

func (pl *mcpPlan) undo() error {
	if pl.out == nil {
		return nil
	}
	if pl.orig == nil {
		return removeFile(pl.path)
	}
	return writeAtomic(pl.path, pl.orig, pl.mode)
}

// removeMCP drops from the file at path the servers still as the
// installed copy (servers) has them, and the file when nothing is left in
// it but the empty object at key.
func removeMCP(path, key string, servers *object) (FileChange, []string, error) {
	fc := FileChange{Path: path, Action: "absent"}
	orig, root, mode, err := readConfig(path)
	if err != nil || orig == nil || servers == nil {
		return fc, nil, err
	}
	fc.Action = "unchanged"
	at, err := serversAt(root, key, path, false)
	if err != nil || at == nil {
		return fc, nil, err
	}
	var notes []string
	for _, m := range servers.members {
		cur, ok := at.get(m.Key)
		switch {
		case !ok:
		case equalOrdered(cur, m.Val):
			at.del(m.Key)
		default:
			notes = append(notes, fmt.Sprintf("%s: MCP server %q changed since sitter installed it; left as it is", path, m.Key))
		}
	}
	out := encodeOrdered(root)
	if bytes.Equal(out, orig) {
		return fc, notes, nil
	}
	bare := &object{}
	serversAt(bare, key, path, true)
	if bytes.Equal(out, encodeOrdered(bare)) {
		fc.Action = "removed"
		return fc, notes, removeFile(path)
	}
	fc.Action = "updated"
	return fc, notes, writeAtomic(path, out, mode)
}
