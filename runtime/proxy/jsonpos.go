package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sitter.dev/sitter/runtime/internal/jsonpos"
)

// jnode is a JSON value with the byte offset where it starts, so that a
// routes file's errors can name file:line:col.
type jnode struct {
	off  int
	kind byte // '{', '[', '"', '0' (number), 'b' (bool), 'n' (null)
	keys []jkey
	arr  []*jnode
	str  string
	num  json.Number
	b    bool
}

type jkey struct {
	name string
	off  int
	val  *jnode
}

func (n *jnode) kindName() string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// parseJSONPos parses one JSON document into a positioned tree; a syntax
// error carries its offset.
func parseJSONPos(data []byte) (*jnode, error) {
	if err := syntaxError(data); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	p := &jparser{d: d, data: data}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, &posError{off: int(d.InputOffset()), msg: "unexpected data after the document"}
	}
	return n, nil
}

// syntaxError checks the whole document with encoding/json's scanner
// (jsonpos.Syntax). (A Decoder's offsets cannot be used: its scanner
// counts only the bytes of the values it decoded, not the delimiters and
// spaces Token read itself.)
func syntaxError(data []byte) error {
	if e := jsonpos.Syntax("", data); e != nil {
		return &posError{off: e.Off, msg: e.Msg}
	}
	return nil
}

type posError struct {
	off int
	msg string
}

func (e *posError) Error() string { return e.msg }

type jparser struct {
	d    *json.Decoder
	data []byte
}

// start is where the next token begins: the decoder's offset is the end
// of the previous one.
func (p *jparser) start() int {
	i := int(p.d.InputOffset())
	for i < len(p.data) {
		switch p.data[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		}
		break
	}
	return i
}

func (p *jparser) token() (json.Token, int, error) {
	off := p.start()
	t, err := p.d.Token()
	if err != nil {
		// syntaxError found none before: name where the token starts.
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, off, &posError{off: off, msg: "invalid JSON: " + err.Error()}
	}
	return t, off, nil
}

func (p *jparser) value() (*jnode, error) {
	t, off, err := p.token()
	if err != nil {
		return nil, err
	}
	return p.from(t, off)
}

func (p *jparser) from(t json.Token, off int) (*jnode, error) {
	n := &jnode{off: off}
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			n.kind = '{'
			for p.d.More() {
				kt, koff, err := p.token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				val, err := p.value()
				if err != nil {
					return nil, err
				}
				for _, prev := range n.keys {
					if prev.name == k {
						return nil, &posError{off: koff, msg: fmt.Sprintf("duplicate member %q", k)}
					}
				}
				n.keys = append(n.keys, jkey{name: k, off: koff, val: val})
			}
			if _, _, err := p.token(); err != nil {
				return nil, err
			}
		case '[':
			n.kind = '['
			for p.d.More() {
				val, err := p.value()
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, val)
			}
			if _, _, err := p.token(); err != nil {
				return nil, err
			}
		default:
			return nil, &posError{off: off, msg: fmt.Sprintf("unexpected %q", v)}
		}
	case string:
		n.kind, n.str = '"', v
	case json.Number:
		n.kind, n.num = '0', v
	case bool:
		n.kind, n.b = 'b', v
	case nil:
		n.kind = 'n'
	}
	return n, nil
}
