// Package checkpoint keeps checkpoints of the working tree in the
// project's own git repository, one chain per agent session on
// refs/sitter/checkpoints/<session>, with git plumbing and a temporary
// index (GIT_INDEX_FILE): read-tree, add -A, write-tree, commit-tree,
// update-ref. The user's index, branch, stash and working files are never
// touched, except by an explicit Restore, which writes working files only.
//
// A session is a small phase machine: idle → active (a turn starts: a base
// checkpoint of the tree as the turn found it, when the chain is empty or
// the tree moved since its tip) → idle (the turn ends: a turn checkpoint) →
// ended. A checkpoint's diff against its parent is exactly what the turn
// changed.
package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/transcript"
)

// RefPrefix is where the checkpoint chains live.
const RefPrefix = "refs/sitter/checkpoints/"

// ErrNotRepo: the directory is not inside a git working tree.
var ErrNotRepo = errors.New("not inside a git working tree: checkpoints need git")

// Usage is a turn's token usage.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Meta is what a checkpoint records besides its tree; it is the JSON body
// of the checkpoint commit's message.
type Meta struct {
	Kind          string   `json:"kind"` // base | turn
	Harness       string   `json:"harness,omitempty"`
	Session       string   `json:"session"`
	Time          string   `json:"time"`
	TranscriptPos int64    `json:"transcriptPosition,omitempty"`
	Prompts       []string `json:"prompts,omitempty"`
	ModifiedFiles []string `json:"modifiedFiles,omitempty"`
	Usage         *Usage   `json:"usage,omitempty"`
	Head          string   `json:"head,omitempty"`  // the user's HEAD commit then
	Ended         bool     `json:"ended,omitempty"` // the session ended with it
}

// Checkpoint is one stored checkpoint.
type Checkpoint struct {
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
	Tree   string `json:"tree"`
	Meta
}

// Repo is a git working tree.
type Repo struct {
	Top    string // top of the working tree
	GitDir string
	// Exclude lists top-relative paths never snapshotted nor restored:
	// the protected dirs of the atlas (Open sets them); sitter's own
	// .sitter is always excluded.
	Exclude []string
}

// Open finds the git working tree holding dir.
func Open(dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("git not found: %w", err)
	}
	out, err := git(dir, nil, nil, "rev-parse", "--show-toplevel", "--absolute-git-dir")
	if err != nil {
		return nil, ErrNotRepo
	}
	ls := strings.Split(strings.TrimSpace(out), "\n")
	if len(ls) != 2 || ls[0] == "" {
		return nil, ErrNotRepo
	}
	r := &Repo{Top: ls[0], GitDir: ls[1]}
	// The harnesses' own directories (the atlas's protected dirs) are
	// neither snapshotted nor restored.
	seen := map[string]bool{}
	for _, p := range transcript.Presences {
		for _, d := range p.ProtectedDirs {
			if !seen[d] {
				seen[d] = true
				r.Exclude = append(r.Exclude, d)
			}
		}
	}
	return r, nil
}

// ValidSession reports whether a session id can name a ref.
func ValidSession(s string) bool {
	if s == "" || len(s) > 200 || strings.Contains(s, "..") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return s[0] != '.' && !strings.HasSuffix(s, ".lock") && !strings.HasSuffix(s, ".")
}

func git(dir string, env []string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), &gitError{sub: args[0], msg: strings.TrimSpace(errb.String()), err: err}
	}
	return out.String(), nil
}

// gitError is a failed git command. It names the git subcommand and what
// git said, not the whole command line: that holds object ids and a
// dozen exclude pathspecs, which tell a user nothing.
type gitError struct {
	sub, msg string
	err      error // the *exec.ExitError, for its code
}

func (e *gitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("git %s: %v", e.sub, e.err)
	}
	return fmt.Sprintf("git %s: %s", e.sub, e.msg)
}

func (e *gitError) Unwrap() error { return e.err }

// Rel turns a path given relative to the folder dir (or absolute), as git
// takes paths, into the top-relative slash path Diff and Restore want. A
// path outside the working tree is an error naming it.
func (r *Repo) Rel(dir, p string) (string, error) {
	if p == "" {
		return "", errors.New("an empty path names no file")
	}
	abs := filepath.Clean(p)
	if !filepath.IsAbs(p) {
		// Relative to the folder as git sees it: with its symbolic links
		// resolved, so ".." climbs where git's would.
		d, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		abs = filepath.Join(d, p)
	}
	rel, ok := under(r.Top, abs)
	if !ok {
		// Top has its symbolic links resolved (git's --show-toplevel);
		// an absolute path may reach it through one (/tmp on macOS).
		// Resolve the part of the path that exists, the rest as it is.
		head, tail := abs, ""
		for {
			if real, err := filepath.EvalSymlinks(head); err == nil {
				rel, ok = under(r.Top, filepath.Join(real, tail))
				break
			}
			parent := filepath.Dir(head)
			if parent == head {
				break
			}
			head, tail = parent, filepath.Join(filepath.Base(head), tail)
		}
	}
	if !ok {
		return "", fmt.Errorf("%s is outside the repository %s", p, r.Top)
	}
	return filepath.ToSlash(rel), nil
}

// under is p relative to top, when p is top or inside it.
func under(top, p string) (string, bool) {
	rel, err := filepath.Rel(top, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// ErrNoMatch: a path given to Diff or Restore names no file in the trees
// they read; an empty diff or "0 written" would hide the typo.
type ErrNoMatch struct {
	Path  string // top-relative
	Where string // the trees looked in
}

func (e *ErrNoMatch) Error() string {
	return fmt.Sprintf("%s matches no file in %s", e.Path, e.Where)
}

// matchNone returns an *ErrNoMatch for the first path (a pathspec) that
// matches no file in any of trees, described by where.
func (r *Repo) matchNone(paths []string, where string, trees ...string) error {
	for _, p := range paths {
		found := false
		for _, t := range trees {
			// diff-tree --quiet exits 1 when the tree has a file in p.
			_, err := r.git(nil, "diff-tree", "-r", "--quiet", emptyTree, t, "--", p)
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 1 {
				found = true
				break
			}
			if err != nil {
				return err
			}
		}
		if !found {
			return &ErrNoMatch{Path: p, Where: where}
		}
	}
	return nil
}

func (r *Repo) git(env []string, args ...string) (string, error) {
	return git(r.Top, env, nil, args...)
}

// tempIndex returns an environment naming a fresh temporary index file in
// the git dir, and its cleanup.
func (r *Repo) tempIndex() ([]string, func(), error) {
	f, err := os.CreateTemp(r.GitDir, "sitter-index-*")
	if err != nil {
		return nil, nil, err
	}
	name := f.Name()
	f.Close()
	os.Remove(name) // git wants no file or a valid index
	return []string{"GIT_INDEX_FILE=" + name}, func() { os.Remove(name); os.Remove(name + ".lock") }, nil
}

func (r *Repo) excludes() []string {
	ps := []string{":(exclude).sitter"}
	for _, e := range r.Exclude {
		ps = append(ps, ":(exclude)"+e)
	}
	return ps
}

// Snapshot writes the working tree (tracked and untracked files, not
// ignored ones, not excluded ones) as a tree object and returns its id.
func (r *Repo) Snapshot() (string, error) {
	env, done, err := r.tempIndex()
	if err != nil {
		return "", err
	}
	defer done()
	if head := r.head(); head != "" {
		// Starting from HEAD's tree keeps the entries git add would skip
		// (e.g. a submodule not checked out) as they are.
		if _, err := r.git(env, "read-tree", head); err != nil {
			return "", err
		}
	}
	args := append([]string{"add", "-A", "--ignore-errors", "--", "."}, r.excludes()...)
	if _, err := r.git(env, args...); err != nil {
		return "", err
	}
	out, err := r.git(env, "write-tree")
	return strings.TrimSpace(out), err
}

func (r *Repo) head() string {
	out, err := r.git(nil, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func ref(session string) string { return RefPrefix + session }

// Tip returns the latest checkpoint of a session, or nil.
func (r *Repo) Tip(session string) (*Checkpoint, error) {
	out, err := r.git(nil, "rev-parse", "--verify", "-q", ref(session)+"^{commit}")
	if err != nil {
		return nil, nil
	}
	return r.Get(strings.TrimSpace(out))
}

// Create records a checkpoint of the working tree on the session's chain.
// A base checkpoint is skipped when the tree equals the chain's tip (the
// tip is returned, created false).
func (r *Repo) Create(m Meta) (cp *Checkpoint, created bool, err error) {
	if !ValidSession(m.Session) {
		return nil, false, fmt.Errorf("session id %q cannot name a checkpoint ref", m.Session)
	}
	tree, err := r.Snapshot()
	if err != nil {
		return nil, false, err
	}
	tip, err := r.Tip(m.Session)
	if err != nil {
		return nil, false, err
	}
	if m.Kind == "base" && tip != nil && tip.Tree == tree {
		return tip, false, nil
	}
	if m.Time == "" {
		m.Time = time.Now().UTC().Format(time.RFC3339)
	}
	m.Head = r.head()
	body, _ := json.MarshalIndent(m, "", "  ")
	msg := fmt.Sprintf("sitter checkpoint %s %s %s\n\n%s\n", m.Kind, m.Harness, m.Session, body)
	args := []string{"commit-tree", tree}
	old := ""
	if tip != nil {
		args = append(args, "-p", tip.ID)
		old = tip.ID
	}
	// An identity of its own: works where the user has none configured,
	// and does not pretend to be the user.
	env := []string{"GIT_AUTHOR_NAME=sitter", "GIT_AUTHOR_EMAIL=sitter@localhost", "GIT_COMMITTER_NAME=sitter", "GIT_COMMITTER_EMAIL=sitter@localhost"}
	out, err := git(r.Top, env, []byte(msg), args...)
	if err != nil {
		return nil, false, err
	}
	id := strings.TrimSpace(out)
	// Compare-and-swap on the old tip: a concurrent checkpoint fails here.
	uargs := []string{"update-ref", "-m", "sitter checkpoint", ref(m.Session), id}
	if old != "" {
		uargs = append(uargs, old)
	} else {
		uargs = append(uargs, "")
	}
	if _, err := r.git(nil, uargs...); err != nil {
		return nil, false, err
	}
	cp, err = r.Get(id)
	return cp, err == nil, err
}

// Get reads one checkpoint (a commit id, or any unique prefix).
func (r *Repo) Get(id string) (*Checkpoint, error) {
	out, err := r.git(nil, "rev-parse", "--verify", "-q", id+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("no checkpoint %q", id)
	}
	full := strings.TrimSpace(out)
	raw, err := r.git(nil, "cat-file", "commit", full)
	if err != nil {
		return nil, err
	}
	head, body, _ := strings.Cut(raw, "\n\n")
	cp := &Checkpoint{ID: full}
	for _, l := range strings.Split(head, "\n") {
		if t, ok := strings.CutPrefix(l, "tree "); ok {
			cp.Tree = t
		}
		if p, ok := strings.CutPrefix(l, "parent "); ok {
			cp.Parent = p
		}
	}
	_, js, ok := strings.Cut(body, "\n\n")
	if !ok || json.Unmarshal([]byte(js), &cp.Meta) != nil || !strings.HasPrefix(body, "sitter checkpoint ") {
		return nil, fmt.Errorf("%s is not a sitter checkpoint", id)
	}
	return cp, nil
}

// Sessions lists the sessions with checkpoints.
func (r *Repo) Sessions() ([]string, error) {
	out, err := r.git(nil, "for-each-ref", "--format=%(refname)", RefPrefix)
	if err != nil {
		return nil, err
	}
	var ss []string
	for _, l := range strings.Fields(out) {
		ss = append(ss, strings.TrimPrefix(l, RefPrefix))
	}
	return ss, nil
}

// List returns a session's checkpoints, newest first.
func (r *Repo) List(session string) ([]*Checkpoint, error) {
	out, err := r.git(nil, "rev-list", ref(session))
	if err != nil {
		return nil, fmt.Errorf("no checkpoints for session %q", session)
	}
	var cps []*Checkpoint
	for _, id := range strings.Fields(out) {
		cp, err := r.Get(id)
		if err != nil {
			return nil, err
		}
		cps = append(cps, cp)
	}
	return cps, nil
}

// emptyTree is git's empty tree (the parent of a first checkpoint's diff).
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

func (cp *Checkpoint) base() string {
	if cp.Parent == "" {
		return emptyTree
	}
	return cp.Parent
}

// Changes lists what a checkpoint changed against its parent: "A\tpath",
// "M\tpath", "D\tpath".
func (r *Repo) Changes(cp *Checkpoint) ([]string, error) {
	out, err := r.git(nil, "diff-tree", "-r", "--no-renames", "--name-status", cp.base(), cp.ID)
	if err != nil {
		return nil, err
	}
	var ls []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			ls = append(ls, l)
		}
	}
	return ls, nil
}

// Diff is the patch of a checkpoint against its parent, all of it or
// within paths (top-relative; see Rel). A path that is in neither is an
// *ErrNoMatch.
func (r *Repo) Diff(cp *Checkpoint, paths ...string) (string, error) {
	if err := r.matchNone(paths, "checkpoint "+cp.ID[:12]+" or its parent", cp.base(), cp.ID); err != nil {
		return "", err
	}
	args := []string{"diff-tree", "-p", "--binary", "--no-renames", cp.base(), cp.ID}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	return r.git(nil, args...)
}

// ErrDirty: Restore would overwrite changes no checkpoint or commit holds.
type ErrDirty struct{ Paths []string }

func (e *ErrDirty) Error() string {
	return "the working tree has changes in no checkpoint or commit (use --force to overwrite): " + strings.Join(e.Paths, ", ")
}

// Restore makes the working files (all, or those under paths,
// top-relative; see Rel) what they were at a checkpoint: it writes files
// the checkpoint has and deletes files it lacks. A path in neither the
// checkpoint nor the working tree is an *ErrNoMatch. The user's index and
// HEAD are not touched. Unless force, it refuses when the working tree
// (within paths) holds changes that neither HEAD nor any checkpoint of
// the session has.
func (r *Repo) Restore(cp *Checkpoint, paths []string, force bool) (written, deleted []string, err error) {
	now, err := r.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	if err := r.matchNone(paths, "checkpoint "+cp.ID[:12]+" or the working tree", cp.Tree, now); err != nil {
		return nil, nil, err
	}
	limit := paths
	if len(limit) == 0 {
		limit = []string{"."}
	}
	limit = append(limit, r.excludes()...)
	if !force {
		safe := false
		var dirty []string
		// Safe when HEAD or any checkpoint of the session holds what is
		// there now.
		// (The paths reported are those differing from the latest.)
		var bases []string
		if list, err := r.List(cp.Session); err == nil {
			for _, c := range list {
				bases = append(bases, c.Tree)
			}
		}
		bases = append(bases, r.headTree())
		for _, base := range bases {
			if base == "" {
				continue
			}
			out, err := r.git(nil, append([]string{"diff-tree", "-r", "--name-only", base, now, "--"}, limit...)...)
			if err != nil {
				return nil, nil, err
			}
			if strings.TrimSpace(out) == "" {
				safe = true
				break
			}
			if dirty == nil {
				dirty = strings.Fields(out)
			}
		}
		if !safe && dirty != nil {
			return nil, nil, &ErrDirty{Paths: dirty}
		}
	}
	// What differs between now and the checkpoint, within the paths.
	out, err := r.git(nil, append([]string{"diff-tree", "-r", "--no-renames", "--name-status", now, cp.Tree, "--"}, limit...)...)
	if err != nil {
		return nil, nil, err
	}
	var write []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		st, p, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		if st == "D" {
			deleted = append(deleted, p)
		} else {
			write = append(write, p)
		}
	}
	for _, p := range deleted {
		if err := os.Remove(filepath.Join(r.Top, filepath.FromSlash(p))); err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
	}
	if len(write) > 0 {
		env, done, err := r.tempIndex()
		if err != nil {
			return nil, nil, err
		}
		defer done()
		if _, err := r.git(env, "read-tree", cp.Tree); err != nil {
			return nil, nil, err
		}
		if _, err := git(r.Top, env, []byte(strings.Join(write, "\x00")), "checkout-index", "-f", "-z", "--stdin"); err != nil {
			return nil, nil, err
		}
	}
	return write, deleted, nil
}

func (r *Repo) headTree() string {
	out, err := r.git(nil, "rev-parse", "--verify", "-q", "HEAD^{tree}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}
