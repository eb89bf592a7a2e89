package jsonw

import (
	"encoding/json"
	"testing"
)

var cases = []string{"", "plain", "quote \" backslash \\ slash /", "\n\r\t\b\f\x00\x01\x1f", "<a&b>", "é ü 日本", "\u2028\u2029", "bad \xff\xfe utf-8", "\xed\xa0\x80"}

// TestAppendString: byte for byte what encoding/json writes.
func TestAppendString(t *testing.T) {
	for _, s := range cases {
		check(t, s)
	}
}

// TestAppendStrings: an array as encoding/json writes it.
func TestAppendStrings(t *testing.T) {
	for _, ss := range [][]string{{}, {"a"}, cases} {
		want, _ := json.Marshal(ss)
		if got := AppendStrings(nil, ss); string(got) != string(want) {
			t.Errorf("%q: %s, encoding/json writes %s", ss, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range cases {
		f.Add(s)
	}
	f.Fuzz(check)
}

func check(t *testing.T, s string) {
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString(nil, s); string(got) != string(want) {
		t.Errorf("%q: %s, encoding/json writes %s", s, got, want)
	}
}
