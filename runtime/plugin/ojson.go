package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"sitter.dev/sitter/runtime/internal/jsonpos"
)

// The user's config files are decoded into an order-keeping tree, so that
// re-encoding them changes nothing but what sitter adds or removes:
// object keys stay in their order, numbers keep their spelling.

// member is one key of an object.
type member struct {
	Key string
	Val any
}

// object is a JSON object with its key order. Values of the tree are
// *object, []any, string, json.Number, bool or nil.
type object struct {
	members []member
}

func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.Key == key {
			return m.Val, true
		}
	}
	return nil, false
}

// set replaces the value of key in place, or appends the key.
func (o *object) set(key string, v any) {
	for i := range o.members {
		if o.members[i].Key == key {
			o.members[i].Val = v
			return
		}
	}
	o.members = append(o.members, member{key, v})
}

// setFirst is set, but a new key goes first.
func (o *object) setFirst(key string, v any) {
	if _, ok := o.get(key); ok {
		o.set(key, v)
		return
	}
	o.members = append([]member{{key, v}}, o.members...)
}

func (o *object) del(key string) {
	out := o.members[:0]
	for _, m := range o.members {
		if m.Key != key {
			out = append(out, m)
		}
	}
	o.members = out
}

func (o *object) keys() []string {
	ks := make([]string, len(o.members))
	for i, m := range o.members {
		ks[i] = m.Key
	}
	return ks
}

// decodeOrdered parses one JSON value, keeping key order and number text.
// A syntax error is a *jsonpos.Error without a path: the caller sets it.
func decodeOrdered(data []byte) (any, error) {
	if e := jsonpos.Syntax("", data); e != nil {
		return nil, e
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid JSON: data after the top-level value (offset %d)", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("invalid JSON: unexpected end of input")
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("invalid JSON: %v", err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("invalid JSON: object key %v is not a string", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.members = append(o.members, member{k, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %v", err)
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %v", err)
			}
			return a, nil
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	default:
		return t, nil
	}
}

// encodeOrdered writes the tree as 2-space indented JSON with a trailing
// newline, without HTML escaping ("&&" in a command stays "&&").
func encodeOrdered(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, depth int) {
	indent := func(d int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", d))
	}
	switch v := v.(type) {
	case *object:
		if len(v.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			writeString(b, m.Key)
			b.WriteString(": ")
			writeValue(b, m.Val, depth+1)
		}
		indent(depth)
		b.WriteByte('}')
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			writeValue(b, e, depth+1)
		}
		indent(depth)
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(string(v))
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		// Values built by this package are only the kinds above.
		panic(fmt.Sprintf("plugin: cannot encode %T", v))
	}
}

func writeString(b *bytes.Buffer, s string) {
	b.WriteString(jsonString(s))
}

// jsonString quotes s as a JSON (and so JavaScript) string literal.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// equalOrdered compares two trees, key order included.
func equalOrdered(a, b any) bool {
	switch a := a.(type) {
	case *object:
		bo, ok := b.(*object)
		if !ok || len(a.members) != len(bo.members) {
			return false
		}
		for i := range a.members {
			if a.members[i].Key != bo.members[i].Key || !equalOrdered(a.members[i].Val, bo.members[i].Val) {
				return false
			}
		}
		return true
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !equalOrdered(a[i], ba[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// cloneOrdered deep-copies a tree.
func cloneOrdered(v any) any {
	switch v := v.(type) {
	case *object:
		o := &object{members: make([]member, len(v.members))}
		for i, m := range v.members {
			o.members[i] = member{m.Key, cloneOrdered(m.Val)}
		}
		return o
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = cloneOrdered(e)
		}
		return a
	default:
		return v
	}
}

// json1 is the number 1 as decoded (the "version" of versioned-list files).
var json1 = json.Number("1")
