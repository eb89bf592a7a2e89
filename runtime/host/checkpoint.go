package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"sitter.dev/sitter/runtime/checkpoint"
	"sitter.dev/sitter/runtime/hook"
)

const checkpointUsage = `usage: sitter checkpoint list [--session S] [--all] [--dir D] [--json]
       sitter checkpoint show <id> [--dir D] [--json]
       sitter checkpoint diff <id> [--paths P...] [--dir D]
       sitter checkpoint restore <id> [--paths P...] [--force] [--dir D]
       sitter checkpoint record [--dir D]   (a handler: canonical event on stdin; turn start/end)`

// runCheckpoint: checkpoints of the working tree per agent session.
func runCheckpoint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var pos, paths []string
	dir, session := "", ""
	asJSON, force, withBases := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--json", "-json":
			asJSON = true
		case "--force", "-force":
			force = true
		case "--all", "-all":
			withBases = true
		case "--dir", "-dir", "--session", "-session":
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "sitter: checkpoint: %s needs a value\n", a)
				return 2
			}
			i++
			if strings.HasSuffix(a, "dir") {
				dir = args[i]
			} else {
				session = args[i]
			}
		case "--paths", "-paths":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				paths = append(paths, args[i])
			}
		case "-h", "--help":
			fmt.Fprintln(stdout, checkpointUsage)
			return 0
		default:
			if strings.HasPrefix(a, "-") {
				fmt.Fprintf(stderr, "sitter: checkpoint: unknown flag %s\n%s\n", a, checkpointUsage)
				return 2
			}
			pos = append(pos, a)
		}
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, checkpointUsage)
		return 2
	}
	var ev hook.Event
	if pos[0] == "record" {
		b, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
		if err != nil || json.Unmarshal(b, &ev) != nil {
			fmt.Fprintln(stderr, "sitter: checkpoint record: stdin is no canonical event")
			return 0 // a handler never breaks its hook
		}
		if dir == "" {
			dir = ev.Session.Cwd
		}
	}
	if dir == "" {
		dir = "."
	}
	r, err := checkpoint.Open(dir)
	if errors.Is(err, checkpoint.ErrNotRepo) {
		if pos[0] != "record" {
			fmt.Fprintf(stderr, "sitter: checkpoint: %s is %v; nothing to do\n", dir, err)
		}
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "sitter: checkpoint: %v\n", err)
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "sitter: checkpoint: %v\n", err)
		return 1
	}
	switch {
	case pos[0] == "record" && len(pos) == 1:
		// Silent on success: a handler's output is the hook's answer.
		if _, err := r.OnEvent(ev); err != nil {
			fmt.Fprintf(stderr, "sitter: checkpoint record: %v\n", err)
		}
		return 0
	case pos[0] == "list" && len(pos) == 1:
		sessions := []string{session}
		if session == "" {
			if sessions, err = r.Sessions(); err != nil {
				return fail(err)
			}
		}
		all := []*checkpoint.Checkpoint{}
		for _, s := range sessions {
			cps, err := r.List(s)
			if err != nil {
				return fail(err)
			}
			// A turn's checkpoint is made at its end; the base snapshot
			// taken at its start (the "before" its diff is against) is
			// listed only with --all.
			for _, cp := range cps {
				if withBases || cp.Kind != "base" {
					all = append(all, cp)
				}
			}
		}
		if asJSON {
			return writeJSON(stdout, stderr, all)
		}
		w := &errWriter{w: stdout}
		for _, cp := range all {
			w.printf("%s  %s  %-4s  %s  %s  %s\n", cp.ID[:12], cp.Time, cp.Kind, orDash(cp.Harness), cp.Session, oneLine(strings.Join(cp.Prompts, " | "), 60))
		}
		if len(all) == 0 {
			w.printf("no checkpoints\n")
		}
		if w.err != nil {
			return 1
		}
		return 0
	case pos[0] == "show" && len(pos) == 2:
		cp, err := r.Get(pos[1])
		if err != nil {
			return fail(err)
		}
		ch, err := r.Changes(cp)
		if err != nil {
			return fail(err)
		}
		if asJSON {
			return writeJSON(stdout, stderr, struct {
				*checkpoint.Checkpoint
				Changes []string `json:"changes"`
			}{cp, nonNil(ch)})
		}
		w := &errWriter{w: stdout}
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
		if w.err != nil {
			return 1
		}
		return 0
	case pos[0] == "diff" && len(pos) == 2:
		cp, err := r.Get(pos[1])
		if err != nil {
			return fail(err)
		}
		d, err := r.Diff(cp, paths...)
		if err != nil {
			return fail(err)
		}
		io.WriteString(stdout, d)
		return 0
	case pos[0] == "restore" && len(pos) == 2:
		cp, err := r.Get(pos[1])
		if err != nil {
			return fail(err)
		}
		written, deleted, err := r.Restore(cp, paths, force)
		if err != nil {
			return fail(err)
		}
		w := &errWriter{w: stdout}
		w.printf("restored %s: %d written, %d deleted\n", cp.ID[:12], len(written), len(deleted))
		for _, p := range written {
			w.printf("  wrote   %s\n", p)
		}
		for _, p := range deleted {
			w.printf("  deleted %s\n", p)
		}
		if w.err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintln(stderr, checkpointUsage)
	return 2
}
