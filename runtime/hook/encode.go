package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// encodeEvent writes ev as handlers read it on stdin: one line of JSON
// ending in '\n', the same document encoding/json writes with HTML escaping
// off (TestEncodeEventMatchesJSON holds the two together), except that it
// is always valid UTF-8: invalid bytes in the raw values (the native
// payload, a tool's input and response) become U+FFFD, as they already do
// in strings, so that a handler's JSON parser does not choke on them.
//
// It sizes its buffer once from the event and copies each big value once,
// where encoding/json would grow its own buffer by doubling and then copy
// it out: a call with a 50 MB payload pays for the event's size, not a
// multiple of it.
func encodeEvent(ev Event) ([]byte, error) {
	n := 256 + len(ev.Version) + len(ev.Harness) + len(ev.NativeEvent) + len(ev.Phase) + len(ev.Support) +
		len(ev.Session.ID) + len(ev.Session.Cwd) + len(ev.Session.TranscriptPath) + len(ev.Session.TurnID) +
		len(ev.Session.Model) + len(ev.Session.PermissionMode) +
		len(ev.Prompt) + len(ev.Source) + len(ev.Reason) + len(ev.LastAssistantMessage) + len(ev.Raw)
	if t := ev.Tool; t != nil {
		n += len(t.Name) + len(t.Kind) + len(t.Input) + len(t.Response) + len(t.CallID)
	}
	b := make([]byte, 0, n)
	var err error
	b = append(b, '{')
	b = strField(b, "version", ev.Version, false)
	b = strField(b, "harness", ev.Harness, false)
	b = strField(b, "nativeEvent", ev.NativeEvent, false)
	b = strField(b, "phase", ev.Phase, false)
	b = strField(b, "support", ev.Support, false)
	b = key(b, "session")
	b = append(b, '{')
	s := ev.Session
	b = strField(b, "id", s.ID, true)
	b = strField(b, "cwd", s.Cwd, true)
	b = strField(b, "transcriptPath", s.TranscriptPath, true)
	b = strField(b, "turnId", s.TurnID, true)
	b = strField(b, "model", s.Model, true)
	b = strField(b, "permissionMode", s.PermissionMode, true)
	b = append(b, '}')
	if t := ev.Tool; t != nil {
		b = key(b, "tool")
		b = append(b, '{')
		b = strField(b, "name", t.Name, true)
		b = strField(b, "kind", t.Kind, true)
		if b, err = rawField(b, "input", t.Input); err != nil {
			return nil, err
		}
		if b, err = rawField(b, "response", t.Response); err != nil {
			return nil, err
		}
		b = strField(b, "callId", t.CallID, true)
		b = append(b, '}')
	}
	b = strField(b, "prompt", ev.Prompt, true)
	b = strField(b, "source", ev.Source, true)
	b = strField(b, "reason", ev.Reason, true)
	if ev.StopHookActive != nil {
		b = key(b, "stopHookActive")
		if *ev.StopHookActive {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
	}
	b = strField(b, "lastAssistantMessage", ev.LastAssistantMessage, true)
	if b, err = rawField(b, "raw", ev.Raw); err != nil {
		return nil, err
	}
	return append(b, '}', '\n'), nil
}

// key appends an object key and its colon, after a comma unless it is the
// object's first.
func key(b []byte, k string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

func strField(b []byte, k, v string, omitEmpty bool) []byte {
	if v == "" && omitEmpty {
		return b
	}
	return appendString(key(b, k), v)
}

// rawField appends a raw JSON value compacted, with invalid UTF-8 replaced;
// an empty value is omitted. A value that is not JSON is an error.
func rawField(b []byte, k string, v json.RawMessage) ([]byte, error) {
	if len(v) == 0 {
		return b, nil
	}
	b = key(b, k)
	start := len(b)
	// Compact appends in place when b has room, as encodeEvent sized it.
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, v); err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	b = buf.Bytes()
	if utf8.Valid(b[start:]) {
		return b, nil
	}
	return append(b[:start], ValidUTF8(b[start:])...), nil
}

// ValidUTF8 returns b with each run of invalid UTF-8 bytes replaced by
// U+FFFD; valid input is returned as is, without a copy. In a JSON text
// the replacement keeps it JSON: bytes above 0x7f occur only in strings.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: the escapes encoding/json
// writes with HTML escaping off, and U+FFFD for invalid UTF-8.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	run := 0 // start of the bytes not yet appended
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
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
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
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
			// Valid JSON either way; escaped as encoding/json does.
			b = append(b, s[run:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
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
