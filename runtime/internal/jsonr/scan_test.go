package jsonr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzScanner: the scanner accepts exactly the object documents
// encoding/json accepts and decodes raw values, strings and booleans to the
// same results.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":"b"}`, `{"a":"\u00e9\ud83d\ude00\n\/"}`, `{"a":"\ud800x"}`, `{"a":[1,-2.5e3,true,null,{"b":[]}]}`,
		`{"a":"x"} junk`, `{"a":}`, `{"a":01}`, `{"a":"\x"}`, "{\"a\":\"\xff\"}", `{"a":1.}`, `[`, ``, `{"a":"b",}`,
		`{"s":5}`, `{"b":"yes"}`, `{"r":{"x":[1,2]}}`, `{"s":null,"b":null}`, "{}\x00", `{"a":"\uZZZZ"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if bytes.HasPrefix(bytes.TrimSpace(doc), []byte("null")) {
			return // encoding/json takes a null document as a no-op; the scanner wants an object
		}
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(doc, &want) != nil
		got := map[string]json.RawMessage{}
		s := NewScanner(doc)
		err := s.Document(func(k string) error {
			v, err := s.Raw()
			got[k] = v
			return err
		})
		if (err != nil) != wantErr {
			t.Fatalf("scanner error %v, encoding/json failed %v, for %q", err, wantErr, doc)
		}
		if err != nil {
			return
		}
		for k, raw := range want {
			if !bytes.Equal(got[k], raw) {
				t.Fatalf("key %q: raw %q, want %q", k, got[k], raw)
			}
			var ws string
			if raw[0] == '"' && json.Unmarshal(raw, &ws) == nil {
				gs, err := NewScanner(raw).String("k")
				if err != nil || gs != ws {
					t.Fatalf("string %q: got %q (%v), want %q", raw, gs, err, ws)
				}
			}
			var wb bool
			if (raw[0] == 't' || raw[0] == 'f') && json.Unmarshal(raw, &wb) == nil {
				gb, err := NewScanner(raw).Bool("k")
				if err != nil || gb == nil || *gb != wb {
					t.Fatalf("bool %q: got %v (%v), want %v", raw, gb, err, wb)
				}
			}
		}
	})
}

// Wrong types are errors, as they were with encoding/json.
func TestScannerWrongTypes(t *testing.T) {
	for _, doc := range []string{`{"s": 5}`, `{"s": {}}`, `{"b": "true"}`, `{"l": "x"}`, `{"l": [1]}`} {
		s := NewScanner([]byte(doc))
		err := s.Document(func(k string) error {
			var err error
			switch k {
			case "s":
				_, err = s.String(k)
			case "b":
				_, err = s.Bool(k)
			case "l":
				_, err = s.Strings(k)
			}
			return err
		})
		if err == nil {
			t.Errorf("%s: wrong type accepted", doc)
		}
	}
}
