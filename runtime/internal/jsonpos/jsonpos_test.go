package jsonpos

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestSyntax(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\n  \"a\": 1,\n  \"b\": 2,\n}\n", "f.json:4:1: invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"{\"a\": [1, 2\n", "f.json:1:12: invalid JSON: unexpected end of JSON input"},
		{"{}\n{}", "f.json:2:1: invalid JSON: invalid character '{' after top-level value"},
		{"\n\n  x", "f.json:3:3: invalid JSON: invalid character 'x' looking for beginning of value"},
	} {
		e := Syntax("f.json", []byte(c.in))
		if e == nil || e.Error() != c.want {
			t.Errorf("Syntax(%q) = %v, want %s", c.in, e, c.want)
		}
	}
	if e := Syntax("f.json", []byte(" {\"a\": [1]} \n")); e != nil {
		t.Errorf("valid JSON: %v", e)
	}
}

func TestWrap(t *testing.T) {
	data := []byte("{\n  \"plugin\": 5\n}")
	var m struct {
		Plugin string `json:"plugin"`
	}
	err := Wrap("m.json", data, json.Unmarshal(data, &m))
	want := "m.json:2:13: cannot unmarshal number into Go struct field .plugin of type string"
	if err == nil || err.Error() != want {
		t.Errorf("type error: %v, want %s", err, want)
	}
	bad := []byte("{\n  \"plugin\": 'x'\n}")
	err = Wrap("m.json", bad, json.Unmarshal(bad, &m))
	if want := "m.json:2:13: invalid JSON: invalid character '\\'' looking for beginning of value"; err == nil || err.Error() != want {
		t.Errorf("syntax error: %v, want %s", err, want)
	}
	other := errors.New("boom")
	if err := Wrap("m.json", nil, other); err.Error() != "m.json: boom" || !errors.Is(err, other) {
		t.Errorf("other error: %v", err)
	}
	if Wrap("m.json", nil, nil) != nil {
		t.Error("nil error wrapped")
	}
}
