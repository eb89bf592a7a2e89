// Package jsonr reads JSON without reflection. Its Scanner walks a
// document and validates it as strictly as encoding/json; decoders built
// on it keep only the fields they know. Two kinds of callers use it: the
// generated normalizers of native hook payloads (through hook.Scanner),
// and the fast paths of the decoders on the babysitter stop check's path
// (the canonical event, the session's state, run.json, the replay cache),
// where encoding/json's first use of a type costs a fresh hook process
// more than the whole read.
//
// A fast path is not a second JSON decoder: it reads the common form of a
// document exactly as encoding/json would and returns an error on
// anything else — a syntax error, a value of another type than its
// field's, a number that is not a plain integer in range, a key seen
// twice (encoding/json merges a repeated object), a key that matches a
// field only case-insensitively (which encoding/json accepts). Its caller
// then decodes the same bytes with encoding/json, so results and error
// messages stay encoding/json's; every such decoder is tested against
// encoding/json on fuzzed input.
package jsonr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner decodes one JSON document (FuzzScanner compares it with
// encoding/json).
type Scanner struct {
	b     []byte
	i     int
	depth int // objects and arrays open at s.i
}

// maxDepth is encoding/json's limit on nested objects and arrays.
const maxDepth = 10000

// enter opens an object or array at s.i (its bracket) and checks the
// nesting; leave closes it.
func (s *Scanner) enter() error {
	if s.depth++; s.depth > maxDepth {
		return s.errorf("exceeded max depth")
	}
	s.i++
	return nil
}

func (s *Scanner) leave() { s.depth-- }

// NewScanner scans one JSON document.
func NewScanner(b []byte) *Scanner { return &Scanner{b: b} }

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *Scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("payload: offset %d: %s", s.i, fmt.Sprintf(format, args...))
}

// peek returns the next non-space byte, 0 at the end.
func (s *Scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// Document decodes the top-level object, calling field for each key; the
// callback must consume the value. Trailing data is an error.
func (s *Scanner) Document(field func(key string) error) error {
	if s.peek() != '{' {
		if s.i >= len(s.b) {
			return errors.New("empty payload: want a JSON object on stdin")
		}
		return errors.New("payload is not a JSON object")
	}
	if err := s.Object(field); err != nil {
		return err
	}
	if s.ws(); s.i < len(s.b) {
		return s.errorf("data after the JSON object")
	}
	return nil
}

// Object decodes an object (null is an empty object), calling field for
// each key; the callback must consume the value with one of the scanner's
// value methods. A repeated key is decoded again: the last one wins.
func (s *Scanner) Object(field func(key string) error) error {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '{':
	default:
		return s.errorf("want an object")
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.errorf("want an object key")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.errorf("want ':' after key %q", key)
		}
		s.i++
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or '}' in an object")
		}
	}
}

// String decodes a string value; null is "".
func (s *Scanner) String(key string) (string, error) {
	switch s.peek() {
	case '"':
		return s.str()
	case 'n':
		return "", s.literal("null")
	}
	return "", s.errorf("field %s: want a string", key)
}

// Bool decodes a boolean; null is absent.
func (s *Scanner) Bool(key string) (*bool, error) {
	switch s.peek() {
	case 't':
		v := true
		return &v, s.literal("true")
	case 'f':
		v := false
		return &v, s.literal("false")
	case 'n':
		return nil, s.literal("null")
	}
	return nil, s.errorf("field %s: want a boolean", key)
}

// BoolValue decodes a boolean; null is false.
func (s *Scanner) BoolValue(key string) (bool, error) {
	v, err := s.Bool(key)
	return v != nil && *v, err
}

// Int decodes an integer that fits an int; null is 0. A number with a
// fraction or an exponent is an error (encoding/json accepts 1e3 for an
// int field only as an error too, but its message is its own).
func (s *Scanner) Int(key string) (int, error) {
	n, err := s.Int64(key)
	if err == nil && int64(int(n)) != n {
		return 0, s.errorf("field %s: integer out of range", key)
	}
	return int(n), err
}

// Int64 decodes an integer that fits an int64; null is 0.
func (s *Scanner) Int64(key string) (int64, error) {
	return integer(s, key, func(t string) (int64, error) { return strconv.ParseInt(t, 10, 64) })
}

// Uint64 decodes an integer that fits a uint64; null is 0.
func (s *Scanner) Uint64(key string) (uint64, error) {
	return integer(s, key, func(t string) (uint64, error) { return strconv.ParseUint(t, 10, 64) })
}

// integer decodes an integer with parse; null is 0.
func integer[T int64 | uint64](s *Scanner, key string, parse func(string) (T, error)) (T, error) {
	t, err := s.integerText(key)
	if t == "" || err != nil {
		return 0, err
	}
	n, err := parse(t)
	if err != nil {
		return 0, s.errorf("field %s: %v", key, err)
	}
	return n, nil
}

// integerText reads an integer's text, "" for null.
func (s *Scanner) integerText(key string) (string, error) {
	switch c := s.peek(); {
	case c == 'n':
		return "", s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
	default:
		return "", s.errorf("field %s: want an integer", key)
	}
	start := s.i
	if err := s.number(); err != nil {
		return "", err
	}
	t := string(s.b[start:s.i])
	if strings.ContainsAny(t, ".eE") {
		return "", s.errorf("field %s: want an integer", key)
	}
	return t, nil
}

// Null consumes a null if one comes next and reports whether it did.
func (s *Scanner) Null() bool {
	if s.peek() != 'n' {
		return false
	}
	return s.literal("null") == nil
}

// Array decodes an array, calling elem to consume each element; null is
// an error (a caller that takes null checks Null first).
func (s *Scanner) Array(key string, elem func() error) error {
	if s.peek() != '[' {
		return s.errorf("field %s: want an array", key)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or ']' in an array")
		}
	}
}

// Fields is a fast path's object callback for a struct whose JSON
// members are fields: it calls read(key) to consume the value of each
// member of fields and skips the others. A member that comes again
// (encoding/json merges a repeated object) or a key that matches a field
// only case-insensitively (encoding/json takes it for the field) is an
// error, for the caller to hand the document to encoding/json. At most
// 64 fields.
func (s *Scanner) Fields(fields []string, read func(key string) error) func(key string) error {
	var seen uint64
	return func(key string) error {
		if ok, err := s.known(fields, &seen, key); !ok {
			return err
		}
		return read(key)
	}
}

// known says whether key is one of fields, coming for the first time;
// false, with its value skipped, for a key of no field; see Fields for
// its errors.
func (s *Scanner) known(fields []string, seen *uint64, key string) (bool, error) {
	for i, f := range fields {
		if f == key {
			if *seen&(1<<i) != 0 {
				return false, fmt.Errorf("key %q repeated", key)
			}
			*seen |= 1 << i
			return true, nil
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f, key) {
			return false, fmt.Errorf("key %q matches field %q only case-insensitively", key, f)
		}
	}
	return false, s.Skip()
}

// Decode fills *v from b as json.Unmarshal does: with fast, a fast path
// that returns an error for anything encoding/json might decode otherwise
// (see the package comment), else, from a zero *v, with encoding/json,
// whose value and error stand.
func Decode[T any](b []byte, v *T, fast func(*Scanner, *T) error) error {
	if fast(NewScanner(b), v) == nil {
		return nil
	}
	var zero T
	*v = zero
	return json.Unmarshal(b, v)
}

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.ws()
	return s.i == len(s.b)
}

// Raw returns any value's bytes, validated.
func (s *Scanner) Raw() (json.RawMessage, error) {
	s.ws()
	start := s.i
	if err := s.Skip(); err != nil {
		return nil, err
	}
	return json.RawMessage(s.b[start:s.i]), nil
}

// Strings decodes an array of strings; null is absent.
func (s *Scanner) Strings(key string) ([]string, error) {
	switch s.peek() {
	case 'n':
		return nil, s.literal("null")
	case '[':
	default:
		return nil, s.errorf("field %s: want an array of strings", key)
	}
	out := []string{}
	err := s.Array(key, func() error {
		v, err := s.String(key)
		out = append(out, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Skip consumes and validates any value.
func (s *Scanner) Skip() error {
	if s.peek() == 0 && s.i >= len(s.b) {
		return s.errorf("unexpected end of JSON")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.Object(func(string) error { return s.Skip() })
	case c == '[':
		return s.Array("", s.Skip)
	case c == '"':
		return s.skipStr()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return s.errorf("invalid character %q", s.b[s.i])
}

func (s *Scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return s.errorf("invalid literal")
	}
	s.i += len(lit)
	return nil
}

// number validates a JSON number.
func (s *Scanner) number() error {
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return s.errorf("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return s.errorf("invalid number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.errorf("invalid number")
		}
	}
	return nil
}

// str decodes a string at s.i (which is '"'). Invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func (s *Scanner) str() (string, error) {
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			v := s.b[start:s.i]
			s.i++
			if utf8.Valid(v) {
				return string(v), nil
			}
			return string([]rune(string(v))), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", s.errorf("control character in string")
		}
		s.i++
	}
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !utf8.Valid(out) {
				return string([]rune(string(out))), nil
			}
			return string(out), nil
		case c < 0x20:
			return "", s.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", s.errorf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A surrogate pair, else the replacement character.
				save := s.i
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					s.i += 2
					if r2, ok := s.hex4(); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							out = utf8.AppendRune(out, d)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", s.errorf("invalid escape \\%c", e)
		}
	}
	return "", s.errorf("unterminated string")
}

// skipStr validates a string at s.i (which is '"') as str does, without
// decoding it: a skipped or raw value (a tool's input, megabytes of file
// content) is not copied.
func (s *Scanner) skipStr() error {
	s.i++
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return nil
		case c < 0x20:
			return s.errorf("control character in string")
		case c != '\\':
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if _, ok := s.hex4(); !ok {
				return s.errorf("invalid \\u escape")
			}
		default:
			return s.errorf("invalid escape \\%c", e)
		}
	}
	return s.errorf("unterminated string")
}

func (s *Scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}
