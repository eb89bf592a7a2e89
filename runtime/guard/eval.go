package guard

import (
	"path"
	"strings"
)

// This file walks the commands a command line runs, as far as they can be
// known without running anything: it follows cd, plain assignments,
// subshells, and the wrappers that run another command (sudo, env, xargs,
// sh -c, eval, …), and hands each simple command to the rules.

// Limits on the walk, so that no command line can make it slow: nested
// shells, evals and substitutions deeper than maxDepth, and nested
// scripts beyond a budget of maxWork (X='eval "$X;$X"' doubles per level),
// are not checked; no real command line comes near either. A variable
// longer than maxValue (X=$X$X$X…) becomes unknown.
const (
	maxDepth = 32
	maxWork  = 1 << 20
	runCost  = 256 // work charged per nested script, however short
	maxValue = 4 << 10
)

// state is what the walk knows about the shell at one point.
type state struct {
	root string            // the project: projectDir, else the working directory; "" = unknown
	what string            // what root is, for the reasons: "project" or "working directory"
	dir  string            // the current directory; "" = unknown
	home string            // $HOME; "" = unknown
	vars map[string]string // variables with a known value
}

func (st *state) clone() *state {
	c := *st
	c.vars = make(map[string]string, len(st.vars))
	for k, v := range st.vars {
		c.vars[k] = v
	}
	return &c
}

// expanded is a word after expansion.
type expanded struct {
	text    string
	unknown int  // offset in text of the first value that cannot be known; -1 if none
	home    bool // text starts in a home directory that is not known (~, $HOME, ~user)
}

func (e expanded) known() bool { return e.unknown < 0 && !e.home }

func (st *state) expand(w word) expanded {
	var b strings.Builder
	e := expanded{unknown: -1}
	unknown := func() {
		if e.unknown < 0 {
			e.unknown = b.Len()
		}
	}
	homeDir := func(dir string) {
		switch {
		case dir != "":
			b.WriteString(dir)
		case b.Len() == 0 && e.unknown < 0:
			e.home = true
		default:
			unknown()
		}
	}
	for _, pt := range w.parts {
		switch pt.kind {
		case lit:
			b.WriteString(pt.text)
		case tilde:
			switch pt.text {
			case "":
				homeDir(st.home)
			case "+":
				b.WriteString(st.pwd())
			case "-":
				unknown()
			default: // another user's home
				homeDir("")
			}
		case param:
			switch v, ok := st.vars[pt.text]; {
			case pt.text == "HOME":
				homeDir(st.home)
			case pt.text == "PWD":
				b.WriteString(st.pwd())
			case ok:
				b.WriteString(v)
			default:
				unknown()
			}
		case subst:
			unknown()
		}
	}
	e.text = b.String()
	return e
}

// pwd is $PWD: "." stands for a current directory that is not known.
func (st *state) pwd() string {
	if st.dir == "" {
		return "."
	}
	return st.dir
}

// literal is the value of w when it is fully known.
func (st *state) literal(w word) (string, bool) {
	e := st.expand(w)
	return e.text, e.known()
}

// scriptText is w as the text of a script run by another shell (sh -c W,
// eval W): what the outer shell cannot know stays a variable reference,
// which the inner walk again treats as unknown.
func (st *state) scriptText(w word) string {
	var b strings.Builder
	for _, pt := range w.parts {
		e := st.expand(word{parts: []part{pt}})
		switch {
		case e.known():
			b.WriteString(e.text)
		case e.home:
			b.WriteString("${HOME}")
		default:
			b.WriteString("${__unknown__}")
		}
	}
	return b.String()
}

// locate resolves p lexically: its absolute path, or "" when p is relative
// and the current directory is not known.
func (st *state) locate(p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	if st.dir == "" {
		return ""
	}
	return path.Join(st.dir, p)
}

// cd follows `cd ARG`: the new directory, or unknown.
func (st *state) cd(args []word) {
	var to []word
	for i, w := range args {
		if t, ok := st.literal(w); ok && t == "--" {
			to = args[i+1:]
			break
		} else if ok && len(t) > 1 && t[0] == '-' {
			continue // -L -P -e
		}
		to = args[i:]
		break
	}
	if len(to) == 0 {
		st.dir = st.home
		return
	}
	t, ok := st.literal(to[0])
	if !ok || t == "-" {
		st.dir = ""
		return
	}
	st.dir = st.locate(t)
}

// assign records NAME=VALUE; it reports false when w is no assignment.
func (st *state) assign(w word) bool {
	if len(w.parts) == 0 || w.parts[0].kind != lit || w.parts[0].quoted {
		return false
	}
	first := w.parts[0].text
	k := nameLen(first)
	if k == 0 || k == len(first) || first[k] != '=' {
		return false
	}
	name := first[:k]
	rest := append([]part{{kind: lit, text: first[k+1:]}}, w.parts[1:]...)
	v, ok := st.literal(word{parts: rest})
	switch {
	case name == "HOME" && ok && path.IsAbs(v):
		st.home = path.Clean(v)
	case name == "HOME":
		st.home = ""
	case ok && len(v) <= maxValue:
		st.vars[name] = v
	default:
		delete(st.vars, name)
	}
	return true
}

func isAssignment(w word) bool {
	return (&state{vars: map[string]string{}}).assign(w)
}

// finding is a refused command.
type finding struct{ rule, detail string }

type checker struct {
	depth int
	work  int // bytes of script text read so far
}

// script walks the items of one script in state st.
func (c *checker) script(items []item, st *state) *finding {
	if c.depth >= maxDepth {
		return nil
	}
	c.depth++
	defer func() { c.depth-- }()
	stack := []*state{st}
	var prev *command
	for _, it := range items {
		cur := stack[len(stack)-1]
		switch {
		case it.open:
			stack = append(stack, cur.clone())
		case it.close:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		default:
			if f := c.command(it.cmd, prev, cur); f != nil {
				return f
			}
			prev = it.cmd
		}
	}
	return nil
}

// run parses and walks a script given as text.
func (c *checker) run(text string, st *state) *finding {
	if c.work += runCost + len(text); c.work > maxWork {
		return nil
	}
	return c.script(parse(text), st)
}

// stdin is what a command reads on its standard input, when known.
type stdin struct {
	text  string
	known bool
}

func (c *checker) command(cmd *command, prev *command, st *state) *finding {
	// Substitutions run before the command, each in a subshell.
	words := append(append([]word(nil), cmd.words...), cmd.redirs...)
	if cmd.stdin != nil {
		words = append(words, *cmd.stdin)
	}
	for _, w := range words {
		for _, pt := range w.parts {
			if pt.kind != subst {
				continue
			}
			if f := c.script(pt.script, st.clone()); f != nil {
				return f
			}
		}
	}
	var in stdin
	switch {
	case cmd.stdin != nil:
		in = stdin{st.scriptText(*cmd.stdin), true}
	case cmd.pipeIn && prev != nil:
		in = st.echoed(prev)
	}
	return c.simple(cmd.words, in, st)
}

// echoed is the output of `echo …` or `printf …` (as far as it matters
// for `… | sh` and `… | xargs rm -rf`).
func (st *state) echoed(cmd *command) stdin {
	words := cmd.words
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return stdin{}
	}
	name, _ := st.literal(words[0])
	var out []string
	switch path.Base(name) {
	case "echo":
		args := words[1:]
		for len(args) > 0 {
			if t, ok := st.literal(args[0]); ok && len(t) > 1 && strings.Trim(t, "-neE") == "" && t[0] == '-' {
				args = args[1:]
				continue
			}
			break
		}
		for _, w := range args {
			out = append(out, st.scriptText(w))
		}
	case "printf":
		for _, w := range words[1:] {
			out = append(out, strings.ReplaceAll(st.scriptText(w), `\n`, "\n"))
		}
	default:
		return stdin{}
	}
	return stdin{strings.Join(out, " "), true}
}

// reserved says whether w is a reserved word that may start a simple
// command as the reader sees it. (Switches, not maps: a map literal is
// built at start-up in every sitter process.)
func reserved(w string) bool {
	switch w {
	case "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until":
		return true
	}
	return false
}

// shell says whether name is a shell, which runs its -c argument, or its
// stdin, as a script.
func shell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish":
		return true
	}
	return false
}

// simple checks one simple command: the rules for rm and git, the state
// changes of cd and assignments, and the commands wrappers run.
func (c *checker) simple(words []word, in stdin, st *state) *finding {
	i := 0
	for i < len(words) {
		if isAssignment(words[i]) {
			i++
			continue
		}
		if t, ok := st.literal(words[i]); ok && reserved(t) {
			i++
			continue
		}
		break
	}
	if i == len(words) {
		// NAME=VALUE alone sets a shell variable.
		for _, w := range words {
			st.assign(w)
		}
		return nil
	}
	words = words[i:]
	name, ok := st.literal(words[0])
	if !ok {
		return nil
	}
	args := words[1:]
	switch path.Base(name) {
	case "rm":
		return checkRm(words, st)
	case "git":
		return checkGit(words, st)
	case "cd", "pushd":
		st.cd(args)
	case "popd":
		st.dir = ""
	case "export", "declare", "typeset", "local", "readonly":
		for _, w := range args {
			st.assign(w)
		}
	case "eval":
		return c.run(joinScript(args, st), st)
	case "su": // su [user] -c SCRIPT
		for j, w := range args {
			t, _ := st.literal(w)
			if (t == "-c" || t == "--command") && j+1 < len(args) {
				return c.run(st.scriptText(args[j+1]), st.clone())
			}
			if s, ok := strings.CutPrefix(t, "--command="); ok {
				return c.run(s, st.clone())
			}
		}
	case "sudo":
		return c.simple(args[skipOpts(args, st, "CDghprRtTUu", "--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"):], in, st)
	case "doas":
		return c.simple(args[skipOpts(args, st, "uC"):], in, st)
	case "command":
		for _, w := range args {
			if t, _ := st.literal(w); t == "-v" || t == "-V" {
				return nil // only describes the command
			}
		}
		return c.simple(args[skipOpts(args, st, ""):], in, st)
	case "builtin", "nohup", "busybox":
		return c.simple(args[skipOpts(args, st, ""):], in, st)
	case "exec":
		return c.simple(args[skipOpts(args, st, "a"):], in, st)
	case "time":
		return c.simple(args[skipOpts(args, st, "fo", "--format", "--output"):], in, st)
	case "nice":
		return c.simple(args[skipOpts(args, st, "n", "--adjustment"):], in, st)
	case "stdbuf":
		return c.simple(args[skipOpts(args, st, "ioe", "--input", "--output", "--error"):], in, st)
	case "ionice":
		return c.simple(args[skipOpts(args, st, "cnpPu", "--class", "--classdata", "--pid", "--pgid", "--uid"):], in, st)
	case "timeout": // timeout [opts] DURATION CMD…
		rest := args[skipOpts(args, st, "sk", "--signal", "--kill-after"):]
		if len(rest) > 0 {
			return c.simple(rest[1:], in, st)
		}
	case "env":
		return c.env(args, in, st)
	case "xargs":
		return c.xargs(args, in, st)
	default:
		if shell(path.Base(name)) {
			return c.shell(args, in, st)
		}
	}
	return nil
}

// skipOpts is the index of the first operand of args: options start with
// "-"; short options in withArg, and the long ones listed, take the next
// word as their value unless it is attached; "--" ends the options.
func skipOpts(args []word, st *state, withArg string, longWithArg ...string) int {
	for i := 0; i < len(args); i++ {
		t, ok := st.literal(args[i])
		if !ok || len(t) < 2 || t[0] != '-' {
			return i
		}
		if t == "--" {
			return i + 1
		}
		if strings.HasPrefix(t, "--") {
			for _, l := range longWithArg {
				if t == l {
					i++
				}
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			if strings.IndexByte(withArg, t[j]) >= 0 {
				if j == len(t)-1 {
					i++
				}
				break
			}
		}
	}
	return len(args)
}

func joinScript(args []word, st *state) string {
	parts := make([]string, len(args))
	for i, w := range args {
		parts[i] = st.scriptText(w)
	}
	return strings.Join(parts, " ")
}

// shell follows `sh [opts] -c SCRIPT [$0 [$1…]]` and `sh` reading a
// script from a here-document, a here-string or `echo … |`. A script file
// is not read.
func (c *checker) shell(args []word, in stdin, st *state) *finding {
	hasC, hasS := false, false
	i := 0
	for ; i < len(args); i++ {
		t, ok := st.literal(args[i])
		if !ok || len(t) < 2 || (t[0] != '-' && t[0] != '+') {
			break
		}
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			if t == "--command" { // fish
				hasC = true
			}
			continue
		}
		for _, ch := range t[1:] {
			switch ch {
			case 'c':
				hasC = true
			case 's':
				hasS = true
			case 'o', 'O':
				i++
			}
		}
	}
	sub := st.clone()
	switch {
	case hasC && i < len(args):
		for j, w := range args[i+1:] { // $0, $1, …
			if j > 9 {
				break
			}
			if t, ok := st.literal(w); ok && len(t) <= maxValue {
				sub.vars[string(rune('0'+j))] = t
			}
		}
		return c.run(st.scriptText(args[i]), sub)
	case (hasS || i == len(args)) && in.known:
		return c.run(in.text, sub)
	}
	return nil
}

// env follows `env [opts] [NAME=VALUE…] CMD…`, with -C DIR and -S STRING.
func (c *checker) env(args []word, in stdin, st *state) *finding {
	sub := st
	for i := 0; i < len(args); i++ {
		t, ok := st.literal(args[i])
		if !ok {
			return c.simple(args[i:], in, sub)
		}
		val := func() (string, bool) { // the value of an option taking one
			if _, v, ok := strings.Cut(t, "="); ok && strings.HasPrefix(t, "--") {
				return v, true
			}
			if len(t) > 2 && !strings.HasPrefix(t, "--") {
				return t[2:], true
			}
			if i+1 < len(args) {
				i++
				return st.literal(args[i])
			}
			return "", false
		}
		switch {
		case t == "--":
			return c.simple(args[i+1:], in, sub)
		case strings.HasPrefix(t, "-C") || strings.HasPrefix(t, "--chdir"):
			d, ok := val()
			sub = sub.clone()
			if !ok {
				sub.dir = ""
			} else {
				sub.dir = sub.locate(d)
			}
		case strings.HasPrefix(t, "-S") || strings.HasPrefix(t, "--split-string"):
			s, _ := val()
			return c.run(s+" "+joinScript(args[i+1:], st), sub)
		case strings.HasPrefix(t, "-u") || t == "--unset":
			val()
		case t != "" && t[0] == '-': // other options; "-" is -i
		case isAssignment(args[i]):
		default:
			return c.simple(args[i:], in, sub)
		}
	}
	return nil
}

// xargs follows `xargs [opts] CMD ARGS…`; when its input is known (echo …
// |), the items are appended as xargs would.
func (c *checker) xargs(args []word, in stdin, st *state) *finding {
	replace := false
	i := 0
	for ; i < len(args); i++ {
		t, ok := st.literal(args[i])
		if !ok || len(t) < 2 || t[0] != '-' {
			break
		}
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			name, _, hasVal := strings.Cut(t, "=")
			switch name {
			case "--replace":
				replace = true
			case "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var", "--max-lines", "--eof":
				if !hasVal && name != "--max-lines" && name != "--eof" {
					i++
				}
			}
			continue
		}
	cluster:
		for j := 1; j < len(t); j++ {
			switch ch := t[j]; {
			case ch == 'I' || ch == 'i':
				replace = true
				if ch == 'I' && j == len(t)-1 {
					i++
				}
				break cluster
			case strings.IndexByte("LnPsdEa", ch) >= 0:
				if j == len(t)-1 {
					i++
				}
				break cluster
			case ch == 'l' || ch == 'e':
				break cluster
			}
		}
	}
	words := append([]word(nil), args[min(i, len(args)):]...)
	if len(words) == 0 {
		return nil // echo
	}
	if in.known && !replace {
		for _, f := range strings.Fields(in.text) {
			words = append(words, word{parts: []part{{kind: lit, text: f}}, src: f})
		}
	}
	return c.simple(words, stdin{}, st)
}
