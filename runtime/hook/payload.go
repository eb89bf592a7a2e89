package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Helpers for generated normalizers: decoding a payload and picking the
// first present source of a field.

// ErrUnknownEvent is returned (wrapped) for a native event the atlas lacks.
var ErrUnknownEvent = errors.New("unknown native event")

// UnknownEvent reports a native event the harness does not have.
func UnknownEvent(harness, name string) error {
	if name == "" {
		return fmt.Errorf("%w: no event name given and none in the %s payload", ErrUnknownEvent, harness)
	}
	return fmt.Errorf("%w %q for %s", ErrUnknownEvent, name, harness)
}

// First returns the first non-empty string.
func First(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// FirstJSON returns the first present JSON value (absent and null skipped).
func FirstJSON(vs ...json.RawMessage) json.RawMessage {
	for _, v := range vs {
		if len(v) > 0 && !bytes.Equal(v, []byte("null")) {
			return v
		}
	}
	return nil
}

// FirstBool returns the first present boolean.
func FirstBool(bs ...*bool) *bool {
	for _, b := range bs {
		if b != nil {
			return b
		}
	}
	return nil
}

// Index0 returns the first element of a string array, or "".
func Index0(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

// CommandObject makes a tool input of a bare command string, as shell
// tools take it: {"command": s}. An empty string is no input.
func CommandObject(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"command": s}) // a string always marshals
	return b
}

// JSONString unwraps a value that may hold JSON encoded as a string (as
// Copilot's toolArgs does); any other value is returned as is.
func JSONString(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || v[0] != '"' {
		return v
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return v
	}
	if inner := []byte(s); json.Valid(inner) {
		return inner
	}
	return v
}
