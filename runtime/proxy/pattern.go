package proxy

import (
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
	lit             string // lower-case when fold
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
	lit := make([]byte, 0, len(sub[0].Rune))
	for _, r := range sub[0].Rune {
		if r >= utf8.RuneSelf {
			return p, nil
		}
		if p.fold && 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		lit = append(lit, byte(r))
	}
	p.lit, p.isLit = string(lit), true
	return p, nil
}

// Match reports whether b contains a match of the pattern.
func (p *Pattern) Match(b []byte) bool {
	if !p.isLit || p.fold && !ascii(b) {
		// A case-insensitive "k" also matches the Kelvin sign: the engine
		// decides for any text that is not ASCII.
		return p.Regexp.Match(b)
	}
	return hasLiteral(b, p.lit, p.fold, p.anchored)
}

// MatchString reports whether s contains a match of the pattern.
func (p *Pattern) MatchString(s string) bool {
	if !p.isLit || p.fold && !ascii(s) {
		return p.Regexp.MatchString(s)
	}
	return hasLiteral(s, p.lit, p.fold, p.anchored)
}

func ascii[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasLiteral reports whether ASCII s contains lit (at its start when
// anchored; ignoring case when fold, lit being lower-case).
func hasLiteral[T ~string | ~[]byte](s T, lit string, fold, anchored bool) bool {
	last := len(s) - len(lit)
	if anchored {
		last = min(last, 0)
	}
next:
	for i := 0; i <= last; i++ {
		for j := 0; j < len(lit); j++ {
			c := s[i+j]
			if fold && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lit[j] {
				continue next
			}
		}
		return true
	}
	return false
}
