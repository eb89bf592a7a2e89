package verbs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/checkpoint"
	"sitter.dev/sitter/runtime/hook"
)

// cpOpts are the flags the checkpoint subcommands share.
type cpOpts struct {
	dir, session       string
	paths              []string
	asJSON, force, all bool
	stdout, stderr     io.Writer
}

// newCheckpointCmd is `sitter checkpoint …`: checkpoints of the working
// tree per agent session.
func newCheckpointCmd(e *env) *cobra.Command {
	o := &cpOpts{stdout: e.stdout, stderr: e.stderr}
	sub := func(use, short, example string, args cobra.PositionalArgs, run func(r *checkpoint.Repo, args []string) error) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Example: example, Args: args,
			RunE: func(_ *cobra.Command, args []string) error {
				r, c := o.open()
				if r == nil {
					return code(c)
				}
				return run(r, args)
			}}
		c.Flags().StringVar(&o.dir, "dir", "", "the repository's working tree `DIR` (default: the current directory)")
		return c
	}
	withPaths := func(c *cobra.Command) {
		c.Flags().StringArrayVar(&o.paths, "paths", nil, "only `PATH`, relative to the current directory or --dir (repeatable; more paths may follow <id>)")
	}
	list := sub("list", "List the checkpoints of every session, or of one",
		"  sitter checkpoint list\n  sitter checkpoint list --session 5f0e2c71-8a4b-4d3e-9c1a-2b7d6e9f0a13 --all --json", noArgs, o.list)
	list.Flags().StringVar(&o.session, "session", "", "only the checkpoints of session `ID`")
	list.Flags().BoolVar(&o.all, "all", false, "also the base snapshots taken at each turn's start")
	jsonFlag(list, &o.asJSON, "print the checkpoints as JSON")
	show := sub("show <id>", "Show a checkpoint: its turn, prompts, token usage and changed files",
		"  sitter checkpoint show 3f2a9c81d0e4\n  sitter checkpoint show refs/sitter/checkpoints/s-1~1 --json", nArgs(1, 1, "<id>"), o.show)
	jsonFlag(show, &o.asJSON, "print the checkpoint as JSON")
	diff := sub("diff <id> [path...]", "Print what a checkpoint's turn changed, as a unified diff",
		"  sitter checkpoint diff 3f2a9c81d0e4\n  sitter checkpoint diff 3f2a9c81d0e4 --paths src/main.go --json", nArgs(1, -1, "<id>"), o.diff)
	withPaths(diff)
	jsonFlag(diff, &o.asJSON, "print the diff as a JSON object (id, paths, diff)")
	restore := sub("restore <id> [path...]", "Put the working tree (or some paths) back as a checkpoint holds it",
		"  sitter checkpoint restore 3f2a9c81d0e4\n  sitter checkpoint restore 3f2a9c81d0e4 --paths c.txt --force", nArgs(1, -1, "<id>"), o.restore)
	withPaths(restore)
	restore.Flags().BoolVar(&o.force, "force", false, "overwrite changes no checkpoint holds")
	jsonFlag(restore, &o.asJSON, "print the files written and deleted as JSON")
	record := &cobra.Command{
		Use:   "record",
		Short: "Record a checkpoint (a hook handler: canonical event on stdin; turn start and end)",
		Long: `The babysitter plugin's handler at turn start and end: the canonical event on
stdin; silent on success (a handler's output is the hook's answer), and never
fails its hook.`,
		Example:     `  sitter hook claude-code Stop --handler 'sitter checkpoint record'`,
		Args:        noArgs,
		Annotations: map[string]string{anyDir: "a hook handler never fails its hook"},
		RunE: func(*cobra.Command, []string) error {
			return code(o.record(e.stdin))
		},
	}
	record.Flags().StringVar(&o.dir, "dir", "", "the repository's working tree `DIR` (default: the event's cwd)")
	return group(&cobra.Command{
		Use:   "checkpoint",
		Short: "Working-tree checkpoints per agent session",
		Long: `Per-session checkpoints of the working tree on refs/sitter/checkpoints/<session>,
made with a temporary index (never the user's index, branch, stash or files).
Each turn leaves one checkpoint at its end, whose diff is exactly what the turn
changed; the snapshot taken at its start is listed only with --all.

The paths diff and restore take (after <id>, or --paths) are relative to the
current directory, or --dir, as in git; one outside the repository is a usage
error, one that matches no file in the checkpoint (or, for diff, its parent;
for restore, the working tree) an error.

Outside a git working tree there are no checkpoints: list, show, diff and
restore say so and exit 1; record, a hook handler, does nothing there.`,
		Example: "  sitter checkpoint list\n  sitter checkpoint diff 3f2a9c81d0e4\n  sitter checkpoint restore 3f2a9c81d0e4 --paths src/",
	}, list, show, diff, restore, record)
}

// open opens the repository of --dir. Outside git, list, show, diff and
// restore ask a question that has no answer there: an error (exit 1),
// naming the folder in full ("." says little). Only record, a hook
// handler, lets it pass.
func (o *cpOpts) open() (*checkpoint.Repo, int) {
	dir := o.dir
	if dir == "" {
		dir = "."
	}
	r, err := checkpoint.Open(dir)
	if errors.Is(err, checkpoint.ErrNotRepo) {
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			dir = abs
		}
		return nil, o.fail(fmt.Errorf("%s is %w", dir, err))
	}
	if err != nil {
		return nil, o.fail(err)
	}
	return r, 0
}

func (o *cpOpts) fail(err error) int {
	fmt.Fprintf(o.stderr, "sitter: checkpoint: %v\n", err)
	return 1
}

// record is `checkpoint record`: a hook handler never breaks its hook.
func (o *cpOpts) record(stdin io.Reader) int {
	var ev hook.Event
	b, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
	if err != nil || json.Unmarshal(b, &ev) != nil {
		fmt.Fprintln(o.stderr, "sitter: checkpoint record: stdin is no canonical event")
		return 0
	}
	dir := o.dir
	if dir == "" {
		dir = ev.Session.Cwd
	}
	if dir == "" {
		dir = "."
	}
	r, err := checkpoint.Open(dir)
	if errors.Is(err, checkpoint.ErrNotRepo) {
		return 0
	}
	if err != nil {
		return o.fail(err)
	}
	// Silent on success: a handler's output is the hook's answer.
	if _, err := r.OnEvent(ev); err != nil {
		fmt.Fprintf(o.stderr, "sitter checkpoint record: %v\n", err)
	}
	return 0
}

// list is `checkpoint list`. A turn's checkpoint is made at its end; the
// base snapshot taken at its start (the "before" its diff is against) is
// listed only with --all.
func (o *cpOpts) list(r *checkpoint.Repo, _ []string) error {
	sessions := []string{o.session}
	if o.session == "" {
		var err error
		if sessions, err = r.Sessions(); err != nil {
			return code(o.fail(err))
		}
	}
	all := []*checkpoint.Checkpoint{}
	for _, s := range sessions {
		cps, err := r.List(s)
		if err != nil {
			return code(o.fail(err))
		}
		for _, cp := range cps {
			if o.all || cp.Kind != "base" {
				all = append(all, cp)
			}
		}
	}
	if o.asJSON {
		return code(writeJSON(o.stdout, o.stderr, all))
	}
	w := &errWriter{w: o.stdout}
	for _, cp := range all {
		w.printf("%s  %s  %-4s  %s  %s  %s\n", cp.ID[:12], cp.Time, cp.Kind, orDash(cp.Harness), cp.Session, oneLine(strings.Join(cp.Prompts, " | "), 60))
	}
	if len(all) == 0 {
		w.printf("no checkpoints\n")
	}
	return code(w.code())
}

// show is `checkpoint show <id>`.
func (o *cpOpts) show(r *checkpoint.Repo, args []string) error {
	cp, err := r.Get(args[0])
	if err != nil {
		return code(o.fail(err))
	}
	ch, err := r.Changes(cp)
	if err != nil {
		return code(o.fail(err))
	}
	if o.asJSON {
		return code(writeJSON(o.stdout, o.stderr, struct {
			*checkpoint.Checkpoint
			Changes []string `json:"changes"`
		}{cp, nonNil(ch)}))
	}
	w := &errWriter{w: o.stdout}
	w.printf("checkpoint %s (%s) of session %s, %s\n", cp.ID, cp.Kind, cp.Session, orDash(cp.Harness))
	w.printf("time: %s\nparent: %s\ntranscript position: %d\n", cp.Time, orDash(cp.Parent), cp.TranscriptPos)
	for _, p := range cp.Prompts {
		w.printf("prompt: %s\n", oneLine(p, 200))
	}
	if cp.Usage != nil {
		w.printf("usage: input %d, output %d, cache read %d, cache write %d\n", cp.Usage.Input, cp.Usage.Output, cp.Usage.CacheRead, cp.Usage.CacheWrite)
	}
	for _, c := range ch {
		w.printf("  %s\n", c)
	}
	return code(w.code())
}

// repoPaths is the paths of --paths and those after <id>, given as git
// takes them (relative to the current directory, or --dir), made
// relative to the top of the repository. One outside it is a usage error.
func (o *cpOpts) repoPaths(r *checkpoint.Repo, args []string) ([]string, error) {
	dir := o.dir
	if dir == "" {
		dir = "."
	}
	var ps []string
	for _, p := range append(append([]string{}, o.paths...), args...) {
		rel, err := r.Rel(dir, p)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		ps = append(ps, rel)
	}
	return ps, nil
}

// diff is `checkpoint diff <id> [path...]`.
func (o *cpOpts) diff(r *checkpoint.Repo, args []string) error {
	paths, err := o.repoPaths(r, args[1:])
	if err != nil {
		return err
	}
	cp, err := r.Get(args[0])
	if err != nil {
		return code(o.fail(err))
	}
	d, err := r.Diff(cp, paths...)
	if err != nil {
		return code(o.fail(err))
	}
	if o.asJSON {
		return code(writeJSON(o.stdout, o.stderr, map[string]any{"id": cp.ID, "paths": nonNil(paths), "diff": d}))
	}
	w := &errWriter{w: o.stdout}
	w.Write([]byte(d))
	return code(w.code())
}

// restore is `checkpoint restore <id> [path...]`.
func (o *cpOpts) restore(r *checkpoint.Repo, args []string) error {
	paths, err := o.repoPaths(r, args[1:])
	if err != nil {
		return err
	}
	cp, err := r.Get(args[0])
	if err != nil {
		return code(o.fail(err))
	}
	written, deleted, err := r.Restore(cp, paths, o.force)
	if err != nil {
		return code(o.fail(err))
	}
	if o.asJSON {
		return code(writeJSON(o.stdout, o.stderr, map[string]any{"id": cp.ID, "written": nonNil(written), "deleted": nonNil(deleted)}))
	}
	w := &errWriter{w: o.stdout}
	w.printf("restored %s: %d written, %d deleted\n", cp.ID[:12], len(written), len(deleted))
	for _, p := range written {
		w.printf("  wrote   %s\n", p)
	}
	for _, p := range deleted {
		w.printf("  deleted %s\n", p)
	}
	return code(w.code())
}
