package run

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrUnknownEffect is returned for an effect id the run does not know.
var ErrUnknownEffect = errors.New("unknown effect")

// effectError is an effect a post cannot take, worded as the SDK's
// task:post words it; Unwrap gives ErrUnknownEffect or ErrAlreadyResolved.
type effectError struct {
	msg  string
	kind error
}

func (e *effectError) Error() string { return e.msg }
func (e *effectError) Unwrap() error { return e.kind }

func unknownEffect(id, dir string) error {
	return &effectError{fmt.Sprintf("effect %s not found at %s", id, dir), ErrUnknownEffect}
}

func notRequested(id, status string) error {
	return &effectError{fmt.Sprintf("effect %s is not requested (status=%s)", id, status), ErrAlreadyResolved}
}

// serializeEffectError shapes a posted error as the SDK stores it: an
// object with a name keeps name, message, stack (a string) and data;
// another object becomes {name, message: its JSON, data: it}; anything
// else {name: "Error", message: its text}. The process sees the same
// error whichever tool posted it.
func serializeEffectError(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("the error is not valid JSON: %w", err)
	}
	var out obj
	switch x := v.(type) {
	case map[string]any:
		if _, named := x["name"]; named {
			out = obj{{"name", orDefault(x["name"], "Error")}, {"message", orDefault(x["message"], "Task failed")}}
			if st, ok := x["stack"].(string); ok {
				out = append(out, kv{"stack", st})
			}
			out = append(out, kv{"data", x["data"]})
			break
		}
		out = obj{{"name", "Object"}, {"message", string(stringifyJSON(raw))}, {"data", json.RawMessage(raw)}}
	case []any:
		out = obj{{"name", "Array"}, {"message", string(stringifyJSON(raw))}, {"data", json.RawMessage(raw)}}
	case string:
		out = obj{{"name", "Error"}, {"message", x}}
	default:
		out = obj{{"name", "Error"}, {"message", string(stringifyJSON(raw))}}
	}
	return marshal(out)
}

func orDefault(v any, def string) any {
	if v == nil {
		return def
	}
	return v
}

// stringifyJSON is raw without insignificant space, as JSON.stringify gives.
func stringifyJSON(raw json.RawMessage) []byte {
	b, err := marshal(json.RawMessage(raw))
	if err != nil {
		return raw
	}
	return b
}
