package proxy

import (
	"regexp"
	"testing"
)

var patternCases = []string{
	"haiku", "(?i)haiku", "(?i)HaIkU", "^claude-opus", "^(?i)claude", "(?i)^gpt-5", "^fast$", "a.b", "x|y", "(?i)k", "(?i)s",
	"^", "", "é", "(?i)é", `\.`, "gpt-4.1", "^gpt-4\\.1", "(?i)sonnet-4-5",
}

var patternTexts = []string{
	"", "claude-haiku-4-5", "CLAUDE-HAIKU", "claude-opus-4-1", "xclaude-opus", "Claude-3", "gpt-5-mini", "GPT-5", "fast", "fast ",
	"a.b", "axb", "y", "\u212a", "K", "\u017f", "S", "café", "CAFÉ", "gpt-4.1", "gpt-4x1", "claude-sonnet-4-5", "hai", "\xff(?i)haiku",
}

// TestPatternMatchesRegexp: the literal fast path answers what the
// regexp engine answers, on strings and bytes, for literal and other
// patterns (Unicode folding: the Kelvin sign matches (?i)k).
func TestPatternMatchesRegexp(t *testing.T) {
	lits := 0
	for _, expr := range patternCases {
		p, err := CompilePattern(expr)
		if err != nil {
			t.Fatal(expr, err)
		}
		if p.isLit {
			lits++
		}
		re := regexp.MustCompile(expr)
		for _, s := range patternTexts {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, regexp says %v", expr, s, got, want)
			}
			if got, want := p.Match([]byte(s)), re.Match([]byte(s)); got != want {
				t.Errorf("%q on []byte %q: %v, regexp says %v", expr, s, got, want)
			}
		}
	}
	if lits < 10 {
		t.Errorf("%d patterns took the literal path, want the literal ones (10 or more)", lits)
	}
}

func FuzzPattern(f *testing.F) {
	for _, e := range patternCases {
		for _, s := range patternTexts {
			f.Add(e, s)
		}
	}
	f.Fuzz(func(t *testing.T, expr, s string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		p, err := CompilePattern(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.MatchString(s), re.MatchString(s); got != want {
			t.Errorf("%q on %q: %v, regexp says %v", expr, s, got, want)
		}
	})
}
