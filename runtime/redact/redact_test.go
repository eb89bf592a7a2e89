package redact

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"curl -H 'x-api-key: sk-ant-abcdefghijklmnopqrstuv' x":                 "curl -H 'x-api-key: [REDACTED]' x",
		"export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrst":                   "export OPENAI_API_KEY=[REDACTED]",
		"git push https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com": "git push https://[REDACTED]@github.com",
		"Authorization: Bearer abcdefghijklmnop.qrstuv":                        "Authorization: Bearer [REDACTED]",
		"aws AKIAABCDEFGHIJKLMNOP":                                             "aws [REDACTED]",
		"password=hunter22 ok":                                                 "password=[REDACTED] ok",
		"ls -la":                                                               "ls -la",
		"the key is in the drawer":                                             "the key is in the drawer",
	} {
		got, red := String(in)
		if got != want || red != (in != want) {
			t.Errorf("String(%q) = %q, %v; want %q", in, got, red, want)
		}
	}
}

// JSON masks string values at any depth, keeps keys, numbers and
// structure, and leaves a document without secrets byte for byte alone.
func TestJSON(t *testing.T) {
	in := `{"tool":{"input":{"command":"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrst make"}},"n":12345678901234567890,"list":["Bearer abcdefghijklmnopqrstu",{"sk-key":"x"}],"s":"<a&b>"}`
	got, red, err := JSON([]byte(in))
	if err != nil || !red {
		t.Fatalf("JSON: %v %v", red, err)
	}
	want := `{"list":["Bearer [REDACTED]",{"sk-key":"x"}],"n":12345678901234567890,"s":"<a&b>","tool":{"input":{"command":"OPENAI_API_KEY=[REDACTED] make"}}}`
	if string(got) != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
	clean := `{"b": 1, "a": "ls -la"}`
	if got, red, err := JSON([]byte(clean)); err != nil || red || string(got) != clean {
		t.Errorf("clean document changed: %s %v %v", got, red, err)
	}
	if _, _, err := JSON([]byte(`{"a":`)); err == nil {
		t.Error("truncated JSON: no error")
	}
}

// FuzzJSON: whatever the input, a redacted document is valid JSON.
func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":"sk-abcdefghijklmnopqrstuv"}`))
	f.Add([]byte(`["password=hunter22", 1, null, true]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, red, err := JSON(b)
		if err == nil && red && !json.Valid(out) {
			t.Fatalf("invalid output %q for %q", out, b)
		}
	})
}

// The one-pass trigger index finds what the trigger-by-trigger search
// finds, in the same order.
func TestScanPaths(t *testing.T) {
	texts := negatives()
	for _, c := range corpus() {
		texts = append(texts, strings.Replace(c.tmpl, "§", c.secret, 1))
	}
	texts = append(texts, strings.Join(texts, "\n"), "SK"+strings.Repeat("Sk", 40), "aa", "a", "")
	for _, s := range texts {
		if a, b := scanShort(s), index().scan(s); !slices.Equal(a, b) {
			t.Errorf("%.60q: short %v, index %v", s, a, b)
		}
	}
}

// A clean document is returned as it came, without being decoded; one
// whose escapes could hide a secret is decoded.
func TestJSONEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "ls -la",  "b": [1, 2]}`:          `{"a": "ls -la",  "b": [1, 2]}`,
		`{"\u0070assword": "hunter22"}`:          `{"password":"[REDACTED]"}`,
		`{"u": "postgres:\/\/app:pw1234@db\/x"}`: `{"u":"postgres://app:[REDACTED]@db/x"}`,
	} {
		got, _, err := JSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("JSON(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

// FuzzString: masking never panics, is stable, and says when it masked.
func FuzzString(f *testing.F) {
	for _, c := range corpus() {
		f.Add(strings.Replace(c.tmpl, "§", c.secret, 1))
	}
	f.Add("password=\"unterminated")
	f.Fuzz(func(t *testing.T, s string) {
		out, red := String(s)
		if red == (out == s) {
			t.Fatalf("String(%q) = %q, %v", s, out, red)
		}
		if again, _ := String(out); again != out {
			t.Fatalf("String not stable: %q → %q → %q", s, out, again)
		}
	})
}
