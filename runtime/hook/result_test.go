package hook

import (
	"strings"
	"testing"
)

// Anything a handler prints that is not a result object is a handler
// error (docs/contract.md): JSON null as much as an array or a string.
// Only empty output is the noop.
func TestParseResultNotAnObject(t *testing.T) {
	for _, out := range []string{"null", " null\n", "[1]", `"x"`, "1", "true"} {
		if r, err := ParseResult([]byte(out)); err == nil {
			t.Errorf("ParseResult(%q) = %+v, want a handler error", out, r)
		}
	}
	for _, out := range []string{"", " \n", "{}", `{"decision":null}`} {
		if r, err := ParseResult([]byte(out)); err != nil || r.Decision != Noop {
			t.Errorf("ParseResult(%q) = %+v, %v; want the noop", out, r, err)
		}
	}
}

// An output error shows the start of what the handler printed: quoted
// (control characters and invalid UTF-8 escaped), bounded, and with
// secrets masked, since the line reaches the harness and its logs.
func TestParseResultQuotesOutput(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"not json\n", `output: "not json\n"`},
		{`{"decision":1}`, `output: "{\"decision\":1}"`},
		{`{"decision":"perhaps"}`, `output: "{\"decision\":\"perhaps\"}"`},
		{"null", `output: "null"`},
		{"\x1b[31m\xff", `output: "\x1b[31m\xff"`},
		{"token sk-ant-abcdefghijklmnopqrstuvwxyz0123", `[REDACTED]`},
		{strings.Repeat("a", 300), `output: "` + strings.Repeat("a", 200) + `"… (300 bytes)`},
	} {
		_, err := ParseResult([]byte(c.out))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseResult(%q) error = %v, want it to contain %s", c.out, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-ant-") {
			t.Errorf("ParseResult(%q) error = %v, shows the secret", c.out, err)
		}
	}
}
