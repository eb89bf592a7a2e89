package agents

import "testing"

// doctor's install fix names the newest verified version, whatever the
// order the atlas lists them in, compared as numbers (2.1.332 > 2.1.97).
func TestNewest(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"2.1.197", "2.1.332"}, "2.1.332"},
		{[]string{"2.1.332", "2.1.97"}, "2.1.332"},
		{[]string{"1.0", "1.0.1", "0.9.9"}, "1.0.1"},
	} {
		if got := newest(c.in); got != c.want {
			t.Errorf("newest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Fix commands are pasted into a shell: paths with spaces or quotes are quoted.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"proj":            "proj",
		"/tmp/a b":        "'/tmp/a b'",
		"it's":            `'it'\''s'`,
		"":                "''",
		"@google/x@1.2.3": "@google/x@1.2.3",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
