package natsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store"
)

// Create makes a run in the store: the run directory run.Create makes,
// with the process module (the entry and the files it imports by relative
// path) copied under process/ so the run needs nothing of this machine,
// published as the run's first messages. It returns this machine's copy.
func (s *Store) Create(ctx context.Context, o run.CreateOptions) (string, *run.Metadata, error) {
	if o.RunID == "" {
		o.RunID = journal.NewULID("")
	}
	if err := checkID(o.RunID); err != nil {
		return "", nil, err
	}
	c, err := s.fresh(ctx, o.RunID)
	if err != nil {
		return "", nil, err
	}
	defer c.Release()
	file, export := run.ParseEntry(o.Entry)
	if file == "" {
		return "", nil, errors.New("--entry FILE#export is required")
	}
	entry, err := copyModule(file, filepath.Join(c.dir, "process"))
	if err != nil {
		return "", nil, err
	}
	o.RunsDir, o.Entry = s.o.CacheDir, entry+"#"+export
	dir, m, err := run.Create(ctx, o)
	if err != nil {
		return "", nil, err
	}
	if err := c.Commit(ctx); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return "", nil, fmt.Errorf("run %s already exists in the store %s", o.RunID, s.url)
		}
		return "", nil, err
	}
	return dir, m, nil
}

// fresh locks an empty local copy for a run the store does not have yet.
func (s *Store) fresh(ctx context.Context, id string) (*checkout, error) {
	c, err := s.lockLocal(ctx, id)
	if err != nil {
		return nil, err
	}
	last, err := s.lastSeq(ctx, id)
	if err == nil && last != 0 {
		err = fmt.Errorf("run %s already exists in the store %s", id, s.url)
	}
	if err == nil {
		err = os.RemoveAll(c.dir)
	}
	if err != nil {
		c.Release()
		return nil, err
	}
	c.m = &manifest{Dirty: true, Files: map[string]stamp{}}
	if err := c.saveManifest(); err != nil {
		c.Release()
		return nil, err
	}
	c.write = true
	return c, nil
}

// Import publishes a local run directory (the SDK layout, a run sitter
// or the SDK made) as a run of the store, under its run id. A process
// module outside the run directory is copied under process/ and run.json
// points at the copy.
func (s *Store) Import(ctx context.Context, src string) (string, error) {
	st, err := run.Load(src)
	if err != nil {
		return "", fmt.Errorf("import %s: %w", src, err)
	}
	if len(st.Journal.Partial) > 0 {
		return "", fmt.Errorf("import %s: interrupted writes left temp files: run `sitter run repair` first", src)
	}
	id := st.Meta.RunID
	if err := checkID(id); err != nil {
		return "", err
	}
	c, err := s.fresh(ctx, id)
	if err != nil {
		return "", err
	}
	defer c.Release()
	if err := copyTree(src, c.dir); err != nil {
		return "", err
	}
	entry := st.Meta.EntryPath(src)
	if rel, err := filepath.Rel(src, entry); err != nil || !filepath.IsLocal(rel) {
		copied, err := copyModule(entry, filepath.Join(c.dir, "process"))
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(c.dir, copied)
		m := *st.Meta
		m.Entrypoint.ImportPath, m.ProcessPath = filepath.ToSlash(rel), filepath.ToSlash(rel)
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return "", err
		}
		if err := journal.WriteFileAtomic(filepath.Join(c.dir, run.MetadataFile), append(b, '\n')); err != nil {
			return "", err
		}
	}
	if err := c.Commit(ctx); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return "", fmt.Errorf("run %s already exists in the store %s", id, s.url)
		}
		return "", err
	}
	return id, nil
}

// Export writes run id into runsDir/<id> in the SDK layout: what a local
// run directory holds, without this machine's caches.
func (s *Store) Export(ctx context.Context, id, runsDir string) (string, error) {
	dst := filepath.Join(runsDir, id)
	if _, err := os.Stat(filepath.Join(dst, run.MetadataFile)); err == nil {
		return "", fmt.Errorf("%s already holds a run", dst)
	}
	err := store.Do(ctx, s, id, false, func(dir string) error {
		if err := copyTree(dir, dst); err != nil {
			return err
		}
		for _, d := range layoutDirs {
			if err := os.MkdirAll(filepath.Join(dst, d), 0o755); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Abs(dst)
}

// copyTree copies the files of a run directory that belong to the run
// (not caches, locks or temp files) from src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		r, _ := filepath.Rel(src, p)
		if !tracked(filepath.ToSlash(r)) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, r)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// relImport finds the relative imports of a module, as the run engine's
// runner does (runtime/run: shimMode).
var relImport = regexp.MustCompile(`(?:from|import)\s*\(?\s*['"](\.{1,2}/[^'"]+)['"]`)

// copyModule copies a process entry file and every file it imports by a
// relative path (transitively) into dst, keeping their paths relative to
// the directory that holds them all, and returns the copied entry's path.
// Bare imports (packages) are not copied: the machine that iterates
// resolves them, as the SDK's import does.
func copyModule(entry, dst string) (string, error) {
	abs, err := filepath.Abs(entry)
	if err != nil {
		return "", err
	}
	seen := map[string][]byte{}
	queue := []string{abs}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if _, ok := seen[p]; ok {
			continue
		}
		if len(seen) >= 200 {
			return "", fmt.Errorf("process %s imports more than 200 files: a shared store copies a process module, not a project", entry)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			if p == abs {
				return "", fmt.Errorf("process file: %w", err)
			}
			continue // the runner reports a missing import, as it would locally
		}
		seen[p] = b
		for _, m := range relImport.FindAllSubmatch(b, -1) {
			queue = append(queue, filepath.Join(filepath.Dir(p), string(m[1])))
		}
	}
	root := filepath.Dir(abs)
	for p := range seen {
		for !strings.HasPrefix(p, root+string(filepath.Separator)) {
			root = filepath.Dir(root)
		}
	}
	for p, b := range seen {
		rel, _ := filepath.Rel(root, p)
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(to, bytes.Clone(b), 0o644); err != nil {
			return "", err
		}
	}
	rel, _ := filepath.Rel(root, abs)
	return filepath.Join(dst, rel), nil
}
