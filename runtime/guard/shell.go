package guard

import "strings"

// This file is a small POSIX-shell reader: enough of the grammar to find
// the simple commands a command line runs, not a shell. It never fails:
// an unterminated quote or substitution ends at the end of the input, and
// what was read so far is checked ("the tokens so far").

// partKind classifies the pieces of a word.
type partKind uint8

const (
	lit   partKind = iota // literal text, quotes removed
	param                 // $NAME, ${NAME}: text is NAME ("" = not resolvable)
	subst                 // $(…), `…`, $((…)), <(…): value unknown; script is what it runs
	tilde                 // unquoted leading ~user: text is user ("" = $HOME, "+" = $PWD)
)

type part struct {
	kind   partKind
	text   string
	quoted bool   // lit only: came from quotes or an escape
	script []item // subst only
}

// word is one shell word before expansion.
type word struct {
	parts []part
	src   string // as written
}

// command is one simple command.
type command struct {
	words  []word
	redirs []word // redirection targets: not arguments, but their substitutions run
	stdin  *word  // here-document body or here-string
	pipeIn bool   // stdin is the previous command's stdout (a | b)
}

// item is one step of a script: a simple command, or the start or end of
// a subshell "( … )".
type item struct {
	cmd         *command
	open, close bool
}

// What the next word of a command is.
const (
	argWord = iota
	redirWord
	hereString
	heredocDelim
	heredocDelimTabs // <<-
)

type heredoc struct {
	cmd       *command
	delim     string
	stripTabs bool
}

type parser struct {
	s        string
	i        int
	items    []item
	cur      *command
	pipe     bool // the next command reads the previous one's stdout
	next     int  // what the next word is
	parens   int  // open subshells
	inSubst  bool // inside $( … ): an unmatched ")" ends the script
	heredocs []heredoc
}

// parse reads a command line into its simple commands.
func parse(s string) []item {
	p := &parser{s: s}
	p.script()
	return p.items
}

func (p *parser) peek(k int) byte {
	if p.i+k < len(p.s) {
		return p.s[p.i+k]
	}
	return 0
}

// script reads until the end of input or, in a substitution, the
// unmatched ")" (left for the caller).
func (p *parser) script() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == '\n':
			p.i++
			p.end(false)
			p.readHeredocs()
		case c == '#': // a word starts here: a comment
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == '&' && p.peek(1) == '>': // &> file
			p.redirect()
		case c == ';' || c == '&' || c == '|':
			// ; ;; ;& & && | || |&
			p.i++
			pipe := c == '|'
			if n := p.peek(0); n == c || (c == ';' && n == '&') || (c == '|' && n == '&') {
				p.i++
				pipe = c == '|' && n == '&'
			}
			p.end(pipe)
		case c == '(':
			p.i++
			p.flush()
			p.items = append(p.items, item{open: true})
			p.parens++
		case c == ')':
			if p.parens == 0 && p.inSubst {
				p.end(false)
				return
			}
			p.i++
			p.end(false)
			if p.parens > 0 {
				p.parens--
				p.items = append(p.items, item{close: true})
			}
		case (c == '<' || c == '>') && p.peek(1) != '(':
			p.redirect()
		default:
			p.word()
		}
	}
	p.end(false)
}

// flush ends the current command; end also sets whether the next one reads
// this one's output.
func (p *parser) flush() {
	if p.cur != nil {
		p.items = append(p.items, item{cmd: p.cur})
		p.cur = nil
	}
	p.next = argWord
}

func (p *parser) end(pipe bool) {
	p.flush()
	p.pipe = pipe
}

func (p *parser) command() *command {
	if p.cur == nil {
		p.cur = &command{pipeIn: p.pipe}
		p.pipe = false
	}
	return p.cur
}

// redirect reads a redirection operator; the word after it is its target.
func (p *parser) redirect() {
	p.command()
	rest := p.s[p.i:]
	switch {
	case strings.HasPrefix(rest, "<<<"):
		p.i += 3
		p.next = hereString
	case strings.HasPrefix(rest, "<<-"):
		p.i += 3
		p.next = heredocDelimTabs
	case strings.HasPrefix(rest, "<<"):
		p.i += 2
		p.next = heredocDelim
	default:
		for _, op := range []string{"&>>", "&>", ">>", ">&", ">|", "<&", "<>", ">", "<"} {
			if strings.HasPrefix(rest, op) {
				p.i += len(op)
				break
			}
		}
		p.next = redirWord
	}
}

func (p *parser) word() {
	start := p.i
	w := p.readWord()
	w.src = p.s[start:p.i]
	if len(w.parts) == 0 { // only line continuations
		return
	}
	cmd := p.command()
	switch p.next {
	case argWord:
		// The fd of a redirection, 2>file, is not an argument.
		if c := p.peek(0); (c == '<' || c == '>') && strings.Trim(w.src, "0123456789") == "" {
			return
		}
		cmd.words = append(cmd.words, w)
	case redirWord:
		cmd.redirs = append(cmd.redirs, w)
	case hereString:
		cmd.stdin = &w
	case heredocDelim, heredocDelimTabs:
		var delim strings.Builder
		for _, pt := range w.parts {
			delim.WriteString(pt.text)
		}
		p.heredocs = append(p.heredocs, heredoc{cmd, delim.String(), p.next == heredocDelimTabs})
	}
	p.next = argWord
}

// readHeredocs reads the bodies of the here-documents of the line just
// ended.
func (p *parser) readHeredocs() {
	for _, h := range p.heredocs {
		var body strings.Builder
		for p.i < len(p.s) {
			line := p.s[p.i:]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
				p.i++
			}
			p.i += len(line)
			cmp := strings.TrimSuffix(line, "\r")
			if h.stripTabs {
				cmp = strings.TrimLeft(cmp, "\t")
			}
			if cmp == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		h.cmd.stdin = &word{parts: []part{{kind: lit, text: body.String(), quoted: true}}}
	}
	p.heredocs = nil
}

// wordBuf collects the parts of a word, merging adjacent literals.
type wordBuf struct {
	w      word
	buf    strings.Builder
	inLit  bool
	quoted bool
}

func (b *wordBuf) lit(s string, quoted bool) {
	if b.inLit && b.quoted != quoted {
		b.flush()
	}
	b.inLit, b.quoted = true, quoted
	b.buf.WriteString(s)
}

func (b *wordBuf) add(pt part) {
	b.flush()
	b.w.parts = append(b.w.parts, pt)
}

func (b *wordBuf) flush() {
	if b.inLit {
		b.w.parts = append(b.w.parts, part{kind: lit, text: b.buf.String(), quoted: b.quoted})
		b.buf.Reset()
		b.inLit = false
	}
}

func (b *wordBuf) empty() bool { return !b.inLit && len(b.w.parts) == 0 }

// Bytes that end an unquoted word, and bytes that stop a literal run.
const (
	wordEnd   = " \t\r\n;&|()<>"
	unquoted  = wordEnd + "'\"\\$`"
	dquoteEnd = "\"\\$`"
)

func (p *parser) readWord() word {
	var b wordBuf
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '<' || c == '>':
			if p.peek(1) != '(' {
				b.flush()
				return b.w
			}
			p.i += 2 // process substitution <( … )
			b.add(part{kind: subst, script: p.substScript()})
		case strings.IndexByte(wordEnd, c) >= 0:
			b.flush()
			return b.w
		case c == '\'':
			p.i++
			j := strings.IndexByte(p.s[p.i:], '\'')
			if j < 0 {
				j = len(p.s) - p.i
			}
			b.lit(p.s[p.i:p.i+j], true)
			p.i = min(p.i+j+1, len(p.s))
		case c == '"':
			p.i++
			p.doubleQuoted(&b)
		case c == '\\':
			p.i++
			if p.i < len(p.s) {
				if p.s[p.i] != '\n' { // \newline is a line continuation
					b.lit(p.s[p.i:p.i+1], true)
				}
				p.i++
			}
		case c == '$':
			p.dollar(&b, false)
		case c == '`':
			p.backtick(&b)
		case c == '~' && b.empty():
			j := p.i + 1
			for j < len(p.s) && (isNameByte(p.s[j]) || strings.IndexByte(".+-", p.s[j]) >= 0) {
				j++
			}
			if j == len(p.s) || p.s[j] == '/' || strings.IndexByte(wordEnd, p.s[j]) >= 0 {
				b.add(part{kind: tilde, text: p.s[p.i+1 : j]})
				p.i = j
			} else {
				b.lit("~", false)
				p.i++
			}
		default:
			j := p.i + 1
			for j < len(p.s) && strings.IndexByte(unquoted, p.s[j]) < 0 {
				j++
			}
			b.lit(p.s[p.i:j], false)
			p.i = j
		}
	}
	b.flush()
	return b.w
}

// doubleQuoted reads after an opening '"' through the closing one.
func (p *parser) doubleQuoted(b *wordBuf) {
	b.lit("", true) // "" is an empty word, not no word
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return
		case '\\':
			if n := p.peek(1); n != 0 && strings.IndexByte("$`\"\\\n", n) >= 0 {
				if n != '\n' {
					b.lit(string(n), true)
				}
				p.i += 2
			} else {
				b.lit(`\`, true)
				p.i++
			}
		case '$':
			p.dollar(b, true)
		case '`':
			p.backtick(b)
		default:
			j := p.i + 1
			for j < len(p.s) && strings.IndexByte(dquoteEnd, p.s[j]) < 0 {
				j++
			}
			b.lit(p.s[p.i:j], true)
			p.i = j
		}
	}
}

// dollar reads an expansion starting at '$'.
func (p *parser) dollar(b *wordBuf, quoted bool) {
	n := p.peek(1)
	switch {
	case n == '(': // $( … ) and $(( … ))
		p.i += 2
		b.add(part{kind: subst, script: p.substScript()})
	case n == '{':
		p.i += 2
		depth, j := 1, p.i
		for ; j < len(p.s); j++ {
			if p.s[j] == '{' {
				depth++
			} else if p.s[j] == '}' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		body := p.s[p.i:j]
		p.i = min(j+1, len(p.s))
		name := body
		if k := nameLen(body); k > 0 {
			name = body[:k]
		}
		// ${HOME%/} and ${HOME:-x} are still about HOME; any other
		// modified value is not known.
		if name != body && name != "HOME" {
			name = ""
		}
		b.add(part{kind: param, text: name})
	case isNameByte(n) && !isDigit(n):
		k := nameLen(p.s[p.i+1:])
		b.add(part{kind: param, text: p.s[p.i+1 : p.i+1+k]})
		p.i += 1 + k
	case n != 0 && (isDigit(n) || strings.IndexByte("@*#?$!-", n) >= 0):
		b.add(part{kind: param, text: string(n)})
		p.i += 2
	case n == '\'' && !quoted: // $'…' with C escapes
		p.i += 2
		var s strings.Builder
		for p.i < len(p.s) && p.s[p.i] != '\'' {
			c := p.s[p.i]
			if c == '\\' && p.i+1 < len(p.s) {
				p.i++
				c = p.s[p.i]
				switch c {
				case 'n':
					c = '\n'
				case 't':
					c = '\t'
				}
			}
			s.WriteByte(c)
			p.i++
		}
		p.i = min(p.i+1, len(p.s))
		b.lit(s.String(), true)
	case n == '"' && !quoted: // $"…" is "…"
		p.i++
	default:
		b.lit("$", quoted)
		p.i++
	}
}

// substScript reads the commands of $( … ) or <( … ) through the ")".
func (p *parser) substScript() []item {
	q := &parser{s: p.s, i: p.i, inSubst: true}
	q.script()
	p.i = q.i
	if p.i < len(p.s) && p.s[p.i] == ')' {
		p.i++
	}
	return q.items
}

// backtick reads `…`: its text, with \` \\ \$ unescaped, is a script.
func (p *parser) backtick(b *wordBuf) {
	var s strings.Builder
	p.i++
	for p.i < len(p.s) && p.s[p.i] != '`' {
		c := p.s[p.i]
		if c == '\\' && p.i+1 < len(p.s) && strings.IndexByte("`\\$", p.s[p.i+1]) >= 0 {
			p.i++
			c = p.s[p.i]
		}
		s.WriteByte(c)
		p.i++
	}
	p.i = min(p.i+1, len(p.s))
	b.add(part{kind: subst, script: parse(s.String())})
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isNameByte(c byte) bool {
	return c == '_' || isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// nameLen is the length of the shell name s starts with (0 if none).
func nameLen(s string) int {
	if s == "" || isDigit(s[0]) {
		return 0
	}
	k := 0
	for k < len(s) && isNameByte(s[k]) {
		k++
	}
	return k
}
