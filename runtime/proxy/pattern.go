package proxy

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Pattern is a regular expression of a routes file or of the atlas's
// signals. Most are one ASCII literal, maybe anchored at the start or
// case-insensitive ("^claude-opus", "(?i)haiku"): those match without the
// regexp engine, which would cost a route decision more than all its
// other work together.
type Pattern struct {
	*regexp.Regexp
	lit             []byte // lower-case when fold
	isLit, anchored bool
	fold            bool
}

// CompilePattern compiles a regular expression (Go syntax).
func CompilePattern(expr string) (*Pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	p := &Pattern{Regexp: re}
	s, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return p, nil
	}
	sub := []*syntax.Regexp{s.Simplify()}
	if sub[0].Op == syntax.OpConcat {
		sub = sub[0].Sub
	}
	if len(sub) == 2 && sub[0].Op == syntax.OpBeginText {
		p.anchored, sub = true, sub[1:]
	}
	if len(sub) != 1 || sub[0].Op != syntax.OpLiteral {
		return p, nil
	}
	p.fold = sub[0].Flags&syntax.FoldCase != 0
	for _, r := range sub[0].Rune {
		if r >= utf8.RuneSelf {
			return p, nil
		}
		if p.fold && 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		p.lit = append(p.lit, byte(r))
	}
	p.isLit = true
	return p, nil
}

// Match reports whether b contains a match of the pattern.
func (p *Pattern) Match(b []byte) bool {
	if !p.isLit || p.fold && !ascii(b) {
		// A case-insensitive "k" also matches the Kelvin sign: the engine
		// decides for any text that is not ASCII.
		return p.Regexp.Match(b)
	}
	if !p.fold {
		if p.anchored {
			return bytes.HasPrefix(b, p.lit)
		}
		return bytes.Contains(b, p.lit)
	}
	last := len(b) - len(p.lit)
	if p.anchored {
		last = min(last, 0)
	}
	for i := 0; i <= last; i++ {
		if equalFoldLower(b[i:i+len(p.lit)], p.lit) {
			return true
		}
	}
	return false
}

// MatchString reports whether s contains a match of the pattern.
func (p *Pattern) MatchString(s string) bool {
	if !p.isLit {
		return p.Regexp.MatchString(s)
	}
	return p.Match([]byte(s))
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// equalFoldLower reports whether ASCII b equals lower, ignoring case.
func equalFoldLower(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
