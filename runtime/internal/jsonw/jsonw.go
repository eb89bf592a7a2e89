// Package jsonw appends JSON without reflection, for the encoders that
// write a line per hook call or per request (runtime/audit, the proxy's
// routes record) and the files the babysitter stop check writes at every
// turn of an agent (Enc): encoding/json's first use of a type costs a
// fresh hook process more than the whole write. What it writes is byte
// for byte what encoding/json writes for the same values.
package jsonw

import (
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, byte for byte as encoding/json
// writes it (HTML characters escaped, invalid UTF-8 as U+FFFD).
func AppendString(b []byte, s string) []byte { return appendString(b, s, true) }

// AppendStringNoHTML is AppendString with < > & left as they are, as a
// json.Encoder with SetEscapeHTML(false) writes them.
func AppendStringNoHTML(b []byte, s string) []byte { return appendString(b, s, false) }

func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	run := 0 // start of the bytes not yet appended
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf && !(html && (c == '<' || c == '>' || c == '&')) {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[run:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			run = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[run:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[run:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		run = i
	}
	b = append(b, s[run:]...)
	return append(b, '"')
}

// AppendStrings appends ss as a JSON array of strings.
func AppendStrings(b []byte, ss []string) []byte {
	e := Enc{B: b, HTML: true}
	e.Strs(ss)
	return e.B
}

// Enc appends a JSON document the way json.Marshal (Indent "", HTML true),
// json.MarshalIndent (Indent "  ") or a json.Encoder with SetIndent and
// SetEscapeHTML write it. The caller writes members in its struct's field
// order and leaves out what omitempty would.
type Enc struct {
	B      []byte
	Indent string // per level; "" writes compact JSON
	HTML   bool   // escape < > & in strings
	depth  int
	empty  bool // the open object or array has no member yet
}

// Open starts an object, Close ends it; OpenArray and CloseArray do the
// same for an array.
func (e *Enc) Open()       { e.open('{') }
func (e *Enc) Close()      { e.close('}') }
func (e *Enc) OpenArray()  { e.open('[') }
func (e *Enc) CloseArray() { e.close(']') }

func (e *Enc) open(c byte) {
	e.B = append(e.B, c)
	e.depth++
	e.empty = true
}

func (e *Enc) close(c byte) {
	e.depth--
	if !e.empty {
		e.newline()
	}
	e.B = append(e.B, c)
	e.empty = false
}

func (e *Enc) newline() {
	if e.Indent == "" {
		return
	}
	e.B = append(e.B, '\n')
	for range e.depth {
		e.B = append(e.B, e.Indent...)
	}
}

// Elem starts an element of the open array.
func (e *Enc) Elem() {
	if !e.empty {
		e.B = append(e.B, ',')
	}
	e.empty = false
	e.newline()
}

// Key starts the member k of the open object; a value must follow.
func (e *Enc) Key(k string) {
	e.Elem()
	e.B = appendString(e.B, k, e.HTML)
	e.B = append(e.B, ':')
	if e.Indent != "" {
		e.B = append(e.B, ' ')
	}
}

// KeyStr, KeyInt, KeyUint and KeyBool write a member; OmitStr writes a
// string member unless it is empty, as omitempty does.
func (e *Enc) KeyStr(k, v string)         { e.Key(k); e.Str(v) }
func (e *Enc) KeyInt(k string, n int64)   { e.Key(k); e.Int(n) }
func (e *Enc) KeyUint(k string, n uint64) { e.Key(k); e.Uint(n) }
func (e *Enc) KeyBool(k string, v bool)   { e.Key(k); e.Bool(v) }
func (e *Enc) OmitStr(k, v string) {
	if v != "" {
		e.KeyStr(k, v)
	}
}

// Strs writes an array of strings.
func (e *Enc) Strs(ss []string) {
	e.OpenArray()
	for _, v := range ss {
		e.Elem()
		e.Str(v)
	}
	e.CloseArray()
}

// Null writes null.
func (e *Enc) Null() { e.B = append(e.B, "null"...) }

// Str, Int, Uint and Bool write a value.
func (e *Enc) Str(s string)  { e.B = appendString(e.B, s, e.HTML) }
func (e *Enc) Int(n int64)   { e.B = strconv.AppendInt(e.B, n, 10) }
func (e *Enc) Uint(n uint64) { e.B = strconv.AppendUint(e.B, n, 10) }
func (e *Enc) Bool(v bool)   { e.B = strconv.AppendBool(e.B, v) }
