package jsonr

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// doc has a field of every kind a fast path reads.
type doc struct {
	S   string          `json:"s"`
	I   int             `json:"i"`
	I64 int64           `json:"i64"`
	U   uint64          `json:"u"`
	B   bool            `json:"b"`
	Raw json.RawMessage `json:"raw"`
	In  *inner          `json:"in"`
	Val inner           `json:"val"`
	SS  []string        `json:"ss"`
	PS  []*inner        `json:"ps"`
}

type inner struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
}

var (
	docFields   = []string{"s", "i", "i64", "u", "b", "raw", "in", "val", "ss", "ps"}
	innerFields = []string{"name", "n"}
)

// scanDoc is a fast path as the stop check's decoders write one.
func scanDoc(s *Scanner, v *doc) error {
	return s.Document(s.Fields(docFields, func(key string) (err error) {
		switch key {
		case "s":
			v.S, err = s.String(key)
		case "i":
			v.I, err = s.Int(key)
		case "i64":
			v.I64, err = s.Int64(key)
		case "u":
			v.U, err = s.Uint64(key)
		case "b":
			v.B, err = s.BoolValue(key)
		case "raw":
			v.Raw, err = s.Raw()
		case "in":
			if s.Null() {
				return nil
			}
			v.In = new(inner)
			err = scanInner(s, v.In)
		case "val":
			err = scanInner(s, &v.Val)
		case "ss":
			v.SS, err = s.Strings(key)
		case "ps":
			if s.Null() {
				return nil
			}
			v.PS = []*inner{}
			err = s.Array(key, func() error {
				var p *inner
				if !s.Null() {
					p = new(inner)
					if err := scanInner(s, p); err != nil {
						return err
					}
				}
				v.PS = append(v.PS, p)
				return nil
			})
		}
		return err
	}))
}

func scanInner(s *Scanner, v *inner) error {
	return s.Object(s.Fields(innerFields, func(key string) (err error) {
		switch key {
		case "name":
			v.Name, err = s.String(key)
		case "n":
			v.N, err = s.Int(key)
		}
		return err
	}))
}

// decode is Decode with scanDoc, and whether the fast path took b.
func decode(b []byte) (doc, bool, error) {
	var v doc
	fast := scanDoc(NewScanner(b), &v) == nil
	v = doc{}
	err := Decode(b, &v, scanDoc)
	return v, fast, err
}

var (
	fastSeeds = []string{
		`{}`,
		` {"s":"plain","i":-12,"i64":9007199254740993,"u":18446744073709551615,"b":true,"raw":{"a":[1,2.5e3,"x"]},"in":{"name":"n","n":3},"val":{"name":"v"},"ss":["a","b"],"ps":[{"name":"p"},null]} `,
		`{"s":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u2028 \u0000 \ud83d\ude00 \ud800 lone","raw":null,"in":null,"ss":null,"ps":[]}`,
		"{\"s\":\"bad \xff utf-8\"}",
		`{"s":null,"i":null,"b":null,"val":null,"ss":[],"ps":null}`,
		`{"unknown":{"deep":[1,{"x":"y"}]},"s":"after"}`,
	}
	slowSeeds = []string{
		`null`, `{"S":"case folded"}`, `{"s":"a","s":"twice"}`, `{"in":{"name":"a"},"in":{"n":1}}`,
		`{"i":1.5}`, `{"i":1e3}`, `{"i":"1"}`, `{"i":01}`, `{"i":-}`, `{"u":-1}`, `{"i":99999999999999999999}`,
		"{\"s\":\"ctl \x01\"}", `{"s":"unterminated`, `{"s":"x",}`, `{"s":"x"} trailing`, `[1,2]`, `{"b":tru}`,
		`{"raw":[1,,2]}`, `{"ss":["a",1]}`, `{"raw":"\q"}`, `{"s":"\u12"}`, `{"ps":{}}`, `{"val":[]}`,
	}
)

// TestFastPath: every seed decodes as encoding/json decodes it, and the
// common forms take the fast path.
func TestFastPath(t *testing.T) {
	for _, s := range fastSeeds {
		check(t, []byte(s))
		if _, fast, _ := decode([]byte(s)); !fast {
			t.Errorf("%s: took the slow path", s)
		}
	}
	for _, s := range slowSeeds {
		check(t, []byte(s))
		if _, fast, _ := decode([]byte(s)); fast {
			t.Errorf("%s: took the fast path", s)
		}
	}
}

func FuzzFastPath(f *testing.F) {
	for _, s := range append(fastSeeds, slowSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(check)
}

func check(t *testing.T, b []byte) {
	got, fast, err := decode(b)
	var want doc
	wantErr := json.Unmarshal(b, &want)
	if !errors.Is(err, wantErr) && (err == nil || wantErr == nil || err.Error() != wantErr.Error()) || !reflect.DeepEqual(got, want) {
		t.Errorf("%q (fast %v):\n got %+v, %v\nwant %+v, %v", b, fast, got, err, want, wantErr)
	}
}

// TestFields: a repeated field and a case-insensitive match are errors,
// an unknown key's value is skipped, a field's is read.
func TestFields(t *testing.T) {
	var read []string
	for _, c := range []struct {
		doc  string
		read []string
		err  bool
	}{
		{`{"s":"a","i":1,"other":[1,{"x":2}]}`, []string{"s", "i"}, false},
		{`{"s":"a","s":"b"}`, []string{"s"}, true},
		{`{"I64":1}`, nil, true},
	} {
		read = nil
		s := NewScanner([]byte(c.doc))
		err := s.Document(s.Fields(docFields, func(key string) error {
			read = append(read, key)
			return s.Skip()
		}))
		if (err != nil) != c.err || !slices.Equal(read, c.read) {
			t.Errorf("%s: read %q, error %v; want %q, error %v", c.doc, read, err, c.read, c.err)
		}
	}
}

// TestDepth: the scanner takes documents nested as deep as encoding/json
// takes them (10,000 objects and arrays, counted from the top of the
// document, whatever reads them: Raw, Skip, Array or Object) and no
// deeper.
func TestDepth(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, doc := range []string{
			`{"raw":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`,
			`{"x":` + strings.Repeat(`{"a":`, depth-1) + "1" + strings.Repeat("}", depth-1) + `}`,
			`{"ps":[` + strings.Repeat("[", depth-2) + strings.Repeat("]", depth-2) + `]}`,
			`{"in":` + strings.Repeat(`{"x":`, depth-1) + "1" + strings.Repeat("}", depth-1) + `}`,
		} {
			var v any
			wantErr := json.Unmarshal([]byte(doc), &v)
			s := NewScanner([]byte(doc))
			err := s.Document(func(string) error { return s.Skip() })
			if (err != nil) != (wantErr != nil) {
				t.Errorf("depth %d, %.20s…: scanner error %v, encoding/json's %v", depth, doc, err, wantErr)
			}
			check(t, []byte(doc))
		}
	}
}
