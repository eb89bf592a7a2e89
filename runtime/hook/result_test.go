package hook

import "testing"

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
