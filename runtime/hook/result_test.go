package hook

import (
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
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

// UnknownKeys lists the top-level keys of a result that no result field
// reads; encoding/json matches keys case-insensitively, so those are
// known. Nested keys are the fields' own business.
func TestUnknownKeys(t *testing.T) {
	for _, c := range []struct {
		out  string
		want []string
	}{
		{`{"decison":"block"}`, []string{"decison"}},
		{`{"decision":"deny","reson":"x","halt":true,"extra":{"a":[1,"}"]}}`, []string{"reson", "extra"}},
		{`{"decision":"deny","Reason":"x"}`, nil},
		{`{"decisio\u006e":"deny"}`, nil},
		{`{"decisio\u006e_":"deny"}`, []string{"decision_"}},
		{` { "updatedInput" : {"decison":1, "x":"\"}"} , "watchPaths":["a"]} `, nil},
		{`{}`, nil},
		{``, nil},
		{`not json`, nil},
	} {
		if got := UnknownKeys([]byte(c.out)); !slices.Equal(got, c.want) {
			t.Errorf("UnknownKeys(%s) = %q, want %q", c.out, got, c.want)
		}
	}
}

// The known keys are the fields of Result, and those of the result's
// JSON Schema (generated from the atlas).
func TestResultKeysMatchStructAndSchema(t *testing.T) {
	var tags []string
	rt := reflect.TypeFor[Result]()
	for i := range rt.NumField() {
		tags = append(tags, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
	}
	if !slices.Equal(tags, resultKeys[:]) {
		t.Errorf("resultKeys = %q, Result's json tags = %q", resultKeys, tags)
	}
	b, err := os.ReadFile("../../generated/schema/result.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct{ Properties map[string]any }
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	props := slices.Sorted(maps.Keys(schema.Properties))
	if known := slices.Sorted(slices.Values(resultKeys[:])); !slices.Equal(known, props) {
		t.Errorf("resultKeys = %q, schema properties = %q", known, props)
	}
}

// On any object encoding/json reads, UnknownKeys finds the keys that
// match no result field (as a set); on anything else it does not panic.
func FuzzUnknownKeys(f *testing.F) {
	for _, s := range []string{`{"decison":"block"}`, `{"a":{"b":[1,"\"}"]},"Reason":"x"}`, `{"\u0064ecision":1}`, `{"x":1,}`, `{"k\\":"\\"}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := UnknownKeys(b)
		var m map[string]json.RawMessage
		if t0 := trimSpace(b); len(t0) == 0 || t0[0] != '{' || json.Unmarshal(b, &m) != nil {
			return
		}
		var want []string
		for k := range m {
			if !slices.ContainsFunc(resultKeys[:], func(r string) bool { return strings.EqualFold(r, k) }) {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		got = slices.Clone(got)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("UnknownKeys(%q) = %q, want %q", b, got, want)
		}
	})
}
