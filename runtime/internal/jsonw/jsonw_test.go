package jsonw

import (
	"bytes"
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

// rec has what Enc writes: strings, numbers, booleans, a nested object,
// arrays (empty ones too) and omitempty members.
type rec struct {
	S     string   `json:"s"`
	Opt   string   `json:"opt,omitempty"`
	I     int64    `json:"i"`
	U     uint64   `json:"u"`
	B     bool     `json:"b"`
	In    *inner   `json:"in,omitempty"`
	SS    []string `json:"ss"`
	Items []inner  `json:"items"`
}

type inner struct {
	Name string `json:"name"`
	Deep *inner `json:"deep,omitempty"`
}

func (r *rec) write(e *Enc) {
	e.Open()
	e.KeyStr("s", r.S)
	e.OmitStr("opt", r.Opt)
	e.KeyInt("i", r.I)
	e.KeyUint("u", r.U)
	e.KeyBool("b", r.B)
	if r.In != nil {
		e.Key("in")
		r.In.write(e)
	}
	e.Key("ss")
	e.Strs(r.SS)
	e.Key("items")
	e.OpenArray()
	for _, it := range r.Items {
		e.Elem()
		it.write(e)
	}
	e.CloseArray()
	e.Close()
}

func (in *inner) write(e *Enc) {
	e.Open()
	e.KeyStr("name", in.Name)
	if in.Deep != nil {
		e.Key("deep")
		in.Deep.write(e)
	}
	e.Close()
}

// TestEnc: what json.Marshal, json.MarshalIndent and a json.Encoder with
// SetEscapeHTML(false) and SetIndent write, byte for byte.
func TestEnc(t *testing.T) {
	for _, s := range cases {
		checkEnc(t, s, -3, 7, true)
	}
	checkEnc(t, "", 0, 0, false)
}

func FuzzEnc(f *testing.F) {
	for i, s := range cases {
		f.Add(s, int64(-i), uint64(i), i%2 == 0)
	}
	f.Fuzz(checkEnc)
}

func checkEnc(t *testing.T, s string, i int64, u uint64, b bool) {
	recs := []rec{
		{S: s, I: i, U: u, B: b, SS: []string{}, Items: []inner{}},
		{S: s, Opt: s + "x", I: i, U: u, B: !b, In: &inner{Name: s, Deep: &inner{Name: "d"}},
			SS: []string{s, "<&>"}, Items: []inner{{Name: s}, {Name: "2", Deep: &inner{}}}},
	}
	for _, r := range recs {
		for _, c := range []struct {
			indent string
			html   bool
		}{{"", true}, {"  ", true}, {"", false}, {"  ", false}} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(c.html)
			enc.SetIndent("", c.indent)
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
			e := Enc{Indent: c.indent, HTML: c.html}
			r.write(&e)
			if got := append(e.B, '\n'); !bytes.Equal(got, want.Bytes()) {
				t.Errorf("indent %q html %v:\n got %s\nwant %s", c.indent, c.html, got, want.Bytes())
			}
		}
	}
}
