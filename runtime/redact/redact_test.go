package redact

import (
	"encoding/json"
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
