// Package jsonpos names where in a JSON document encoding/json found a
// problem, as path:line:col, so that a user can go to the byte to mend.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error is a problem at a byte offset of a JSON document.
type Error struct {
	Path      string // the file; "" leaves it out of Error()
	Off       int    // 0-based byte offset
	Line, Col int    // 1-based, in bytes, as Go's file:line:col count them
	Msg       string // encoding/json's words, without their "json: " prefix
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
}

// Syntax checks data with encoding/json's scanner (json.Unmarshal): nil
// when it is one valid JSON value, else where it is not. Use it before a
// json.Decoder, whose offsets do not count what Token skipped. A
// SyntaxError's Offset is the number of bytes read up to and including
// the offending one: that byte is at Offset-1. At an unexpected end the
// error points just after the last byte that is not space.
func Syntax(path string, data []byte) *Error {
	var raw json.RawMessage
	var se *json.SyntaxError
	if err := json.Unmarshal(data, &raw); !errors.As(err, &se) {
		return nil
	}
	return at(path, data, syntaxOff(data, se), "invalid JSON: "+se.Error())
}

// Wrap names path, and the line and column where encoding/json can say
// (a *json.SyntaxError, a *json.UnmarshalTypeError), for an error that
// json.Unmarshal returned for data; any other error is "path: err".
func Wrap(path string, data []byte, err error) error {
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return at(path, data, syntaxOff(data, se), "invalid JSON: "+se.Error())
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Offset is where the value ends: its last byte is on its line.
		return at(path, data, int(te.Offset)-1, trim(te.Error()))
	}
	if path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

func syntaxOff(data []byte, se *json.SyntaxError) int {
	off := int(se.Offset) - 1
	if off < 0 || off >= len(data) || se.Error() == "unexpected end of JSON input" {
		off = len(bytes.TrimRight(data, " \t\r\n"))
	}
	return off
}

func at(path string, data []byte, off int, msg string) *Error {
	off = min(max(off, 0), len(data))
	l, c := LineCol(data, off)
	return &Error{Path: path, Off: off, Line: l, Col: c, Msg: msg}
}

func trim(s string) string {
	s, _ = strings.CutPrefix(s, "json: ")
	return s
}

// LineCol turns a byte offset into a 1-based line and column (in bytes,
// as Go's and CUE's file:line:col count them).
func LineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off + 1
	if i := bytes.LastIndexByte(data[:off], '\n'); i >= 0 {
		col = off - i
	}
	return line, col
}
