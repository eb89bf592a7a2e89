// Package guard is the handler of the example guard plugin, built into
// sitter (`sitter guard`): it refuses shell commands that destroy work
// beyond the project — a recursive delete outside the project (the
// session's projectDir where the harness names it, else its working
// directory) — and force pushes.
//
// It reads the command the way a POSIX shell would, with a small reader
// (shell.go): quotes, escapes, ; && || | & and newlines, subshells,
// $( … ) and backticks, here-documents, and the commands that run other
// commands (sh -c, bash -lc, eval, env, sudo, xargs, command, …). Paths
// are resolved lexically (no file system access, no symlinks) against the
// session's working directory (which may be a folder of the project) and
// the directories cd moves to.
//
// Rules, each named in the deny reason "guard: <rule>: …":
//
//   - recursive-delete: rm with -r, -R or --recursive (alone or with
//     other flags, before or after the operands) of the filesystem root,
//     the home directory or anything in it (~, ~/, $HOME, ${HOME}, ~user),
//     the project itself or all of its entries (., $PWD, * at the
//     project), or any path that resolves outside the project (/tmp/x,
//     ../x, /tmp/*). Without a known project or working directory every
//     absolute path and every path with ".." is outside. A value the
//     guard cannot know ($DIR, $(cmd)) is allowed: refusing every rm -rf
//     "$BUILD_DIR" would make the guard useless. Only HOME counts as
//     known-dangerous, and a path whose known part already lies outside
//     the project (/tmp/$X, ../$X) is refused whatever the variable
//     holds.
//   - force-push: git push with --force, -f (also in a cluster like -fu),
//     --mirror, or a "+" refspec (git push origin +main), with any git
//     global options before push (git -C dir push -f).
//     --force-with-lease is allowed: it refuses to overwrite remote work
//     that the local repository has not seen, which is the safe way to
//     rewrite a pushed branch.
//
// Everything else is allowed by silence (noop). So is every event that is
// not a shell tool call about to run (phase preToolUse or
// permissionRequest).
package guard

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"sitter.dev/sitter/runtime/hook"
)

// Rule names.
const (
	RuleRecursiveDelete = "recursive-delete"
	RuleForcePush       = "force-push"
)

// Checker checks shell commands. Home is the home directory that ~ and
// $HOME stand for; when empty, every path in a home directory is refused.
type Checker struct {
	Home string
}

// Check checks ev with the home directory of the user running sitter,
// which is the user the agent's shell runs as.
func Check(ev hook.Event) hook.Result {
	home, _ := os.UserHomeDir()
	return Checker{Home: home}.Check(ev)
}

// Check denies a shell tool call that a rule refuses; anything else is a
// noop.
func (g Checker) Check(ev hook.Event) hook.Result {
	noop := hook.Result{Decision: hook.Noop}
	if ev.Tool == nil || ev.Tool.Kind != hook.KindShell {
		return noop
	}
	switch ev.Phase {
	case "", "preToolUse", "permissionRequest":
	default:
		return noop // the command has run, or is not about to
	}
	in, ok := shellInput(ev.Tool.Input)
	if !ok {
		return noop
	}
	// The project is what the harness names as its root; without one,
	// the working directory stands for it. Relative paths resolve from
	// the working directory, which may be a folder of the project.
	st := &state{root: absOrEmpty(ev.Session.ProjectDir), what: "project", home: absOrEmpty(g.Home), vars: map[string]string{}}
	st.dir = absOrEmpty(ev.Session.Cwd)
	if st.root == "" {
		st.root, st.what = st.dir, "working directory"
	}
	if st.dir == "" {
		st.dir = st.root
	}
	if in.workdir != "" {
		st.dir = st.locate(in.workdir)
	}
	c := &checker{work: len(in.script)}
	var items []item
	if in.argv != nil {
		cmd := &command{}
		for _, a := range in.argv {
			cmd.words = append(cmd.words, word{parts: []part{{kind: lit, text: a, quoted: true}}, src: a})
		}
		items = []item{{cmd: cmd}}
	} else {
		items = parse(strings.ReplaceAll(in.script, "\x00", ""))
	}
	f := c.script(items, st)
	if f == nil {
		return noop
	}
	return hook.Result{Decision: hook.Deny, Reason: "guard: " + f.rule + ": " + oneLine(f.detail)}
}

// oneLine escapes the control characters a path may hold, so that a
// reason stays one line.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func absOrEmpty(p string) string {
	if !path.IsAbs(p) {
		return ""
	}
	return path.Clean(p)
}

// toolInput is the command of a shell tool call.
type toolInput struct {
	script  string   // a command line for a shell
	argv    []string // or an argument vector, run without a shell
	workdir string   // the directory it runs in, if not the session's
}

// shellInput reads the command of a shell tool's input: "command" (every
// harness's shell tool), "cmd", or an argv array under "command" or
// "argv"; and the directory it runs in under "workdir" (Codex),
// "dir_path" or "directory" (Gemini), or "cwd". An input that is a JSON
// string holding the object is read too.
func shellInput(raw json.RawMessage) (toolInput, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil || json.Unmarshal([]byte(s), &m) != nil {
			return toolInput{}, false
		}
	}
	var in toolInput
	found := false
	for _, k := range []string{"command", "cmd", "argv"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, &in.script); err == nil && k != "argv" {
			found = true
			break
		}
		if err := json.Unmarshal(v, &in.argv); err == nil && in.argv != nil {
			found = true
			break
		}
	}
	for _, k := range []string{"workdir", "dir_path", "directory", "cwd"} {
		if json.Unmarshal(m[k], &in.workdir) == nil && in.workdir != "" {
			break
		}
	}
	return in, found
}

// describe is a command as it was written, for a deny reason.
func describe(words []word) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = w.src
	}
	t := strings.Join(s, " ")
	if len(t) > 200 {
		t = t[:200] + "…"
	}
	return t
}

// checkRm is the recursive-delete rule.
func checkRm(words []word, st *state) *finding {
	recursive, optsDone := false, false
	var operands []word
	for _, w := range words[1:] {
		t, ok := st.literal(w)
		switch {
		case !ok || optsDone || len(t) < 2 || t[0] != '-':
			operands = append(operands, w)
		case t == "--":
			optsDone = true
		case strings.HasPrefix(t, "--"):
			// GNU getopt takes any unambiguous prefix: --rec, --recursive.
			if len(t) >= 3 && strings.HasPrefix("--recursive", t) {
				recursive = true
			}
		case strings.ContainsAny(t, "rR"):
			recursive = true
		}
	}
	if !recursive {
		return nil
	}
	for _, w := range operands {
		if why := st.refuseDelete(w); why != "" {
			return &finding{RuleRecursiveDelete, fmt.Sprintf("refused %q: %s", describe(words), why)}
		}
	}
	return nil
}

// refuseDelete says why deleting w recursively is refused, or "".
func (st *state) refuseDelete(w word) string {
	e := st.expand(w)
	arg := w.src
	if e.home {
		if strings.Trim(e.text, "/") == "" && e.unknown < 0 {
			return arg + " is the home directory"
		}
		return arg + " is in a home directory, not in the working directory"
	}
	if e.unknown == 0 {
		return "" // $DIR, $(cmd): cannot be known; allowed
	}
	if e.unknown > 0 {
		// The known part decides when it already lies outside: /tmp/$X.
		known := e.text[:e.unknown]
		k := strings.LastIndexByte(known, '/')
		if k < 0 {
			return "" // build$X: a name in the current directory
		}
		dir := known[:k+1]
		abs := st.locate(dir)
		if abs == "" {
			if hasDotDot(dir) {
				return arg + " leaves the current directory, which is not known"
			}
			return ""
		}
		if st.root == "" {
			return fmt.Sprintf("%s is under %s, and the working directory is not known", arg, abs)
		}
		if abs != st.root && !within(abs, st.root) {
			return fmt.Sprintf("%s is under %s, outside the %s %s", arg, abs, st.what, st.root)
		}
		return ""
	}
	p := e.text
	if p == "" {
		return "" // rm -rf "" deletes nothing
	}
	abs := st.locate(p)
	switch {
	case abs == "" && hasDotDot(p):
		return arg + " leaves the current directory, which is not known"
	case abs == "" && path.Clean(p) == ".":
		return arg + " is the current directory, which is not known"
	case abs == "":
		return ""
	case abs == "/":
		return arg + " is the filesystem root"
	case abs == st.home:
		return arg + " is the home directory"
	case st.root == "":
		return fmt.Sprintf("%s resolves to %s, and the working directory is not known", arg, abs)
	case abs == st.root:
		return fmt.Sprintf("%s is the %s %s itself: it would delete the whole project", arg, st.what, st.root)
	case within(abs, st.root):
		if b := path.Base(abs); path.Dir(abs) == st.root && (b == "*" || b == ".*") {
			return fmt.Sprintf("%s is every entry of the %s %s: it would delete the whole project", arg, st.what, st.root)
		}
		return ""
	}
	return fmt.Sprintf("%s resolves to %s, outside the %s %s", arg, abs, st.what, st.root)
}

// within reports whether p is strictly inside dir (both clean, absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir+"/")
}

func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// gitOptWithArg says whether o is one of git's global options that take
// the next word.
func gitOptWithArg(o string) bool {
	switch o {
	case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env":
		return true
	}
	return false
}

// checkGit is the force-push rule.
func checkGit(words []word, st *state) *finding {
	i := 1
	for ; i < len(words); i++ {
		t, _ := st.literal(words[i])
		if !strings.HasPrefix(t, "-") {
			break
		}
		if gitOptWithArg(t) {
			i++
		}
	}
	if i >= len(words) {
		return nil
	}
	if t, _ := st.literal(words[i]); t != "push" {
		return nil
	}
	refuse := func(why string) *finding {
		return &finding{RuleForcePush, fmt.Sprintf("refused %q: %s; use --force-with-lease to rewrite a pushed branch safely", describe(words), why)}
	}
	optsDone := false
	args := words[i+1:]
	for j := 0; j < len(args); j++ {
		t, _ := st.literal(args[j])
		switch {
		case optsDone || !strings.HasPrefix(t, "-") || t == "-":
			if strings.HasPrefix(t, "+") {
				return refuse(fmt.Sprintf("the + of refspec %s forces the update", t))
			}
		case t == "--":
			optsDone = true
		case strings.HasPrefix(t, "--"):
			name, _, hasVal := strings.Cut(t, "=")
			switch name {
			case "--force", "--mirror":
				return refuse(name + " overwrites the remote branch, discarding commits pushed by others")
			case "--force-with-lease", "--force-if-includes":
				// Allowed: the push fails if the remote has commits the
				// local repository has not seen.
			case "--repo", "--push-option", "--receive-pack", "--exec":
				if !hasVal {
					j++
				}
			}
		default: // a cluster of short options: -f, -fu, -uf, -o VALUE
			for k := 1; k < len(t); k++ {
				if t[k] == 'f' {
					return refuse("-f overwrites the remote branch, discarding commits pushed by others")
				}
				if t[k] == 'o' {
					if k == len(t)-1 {
						j++
					}
					break
				}
			}
		}
	}
	return nil
}
