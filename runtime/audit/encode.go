package audit

import (
	"strconv"
	"unicode/utf8"
)

// appendEntry encodes an entry as one JSON line without reflection: a hook
// call is a fresh process, and encoding/json's first use of a type costs
// more than the whole append. Query reads it back with encoding/json
// (TestEncodeMatchesJSON keeps the two in step).
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, '{')
	b = field(b, "time", e.Time, true)
	b = field(b, "harness", e.Harness, true)
	b = field(b, "nativeEvent", e.NativeEvent, true)
	b = field(b, "phase", e.Phase, true)
	b = field(b, "session", e.Session, false)
	b = field(b, "tool", e.Tool, false)
	b = field(b, "toolKind", e.ToolKind, false)
	b = field(b, "command", e.Command, false)
	b = append(b, `,"handlers":[`...)
	for i, h := range e.Handlers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = field(b, "command", h.Command, true)
		b = field(b, "decision", h.Decision, false)
		b = field(b, "error", h.Error, false)
		if h.Skipped {
			b = append(b, `,"skipped":true`...)
		}
		b = append(b, `,"latencyMs":`...)
		b = strconv.AppendFloat(b, h.LatencyMs, 'f', -1, 64)
		b = append(b, '}')
	}
	b = append(b, ']')
	b = field(b, "decision", e.Decision, true)
	b = field(b, "verdict", e.Verdict, true)
	b = field(b, "reason", e.Reason, false)
	b = field(b, "error", e.Error, false)
	if len(e.Evidence) > 0 {
		b = append(b, `,"evidence":[`...)
		for i, x := range e.Evidence {
			if i > 0 {
				b = append(b, ',')
			}
			b = str(b, x)
		}
		b = append(b, ']')
	}
	if e.Halted {
		b = append(b, `,"halted":true`...)
	}
	b = field(b, "haltReason", e.HaltReason, false)
	if e.HaltDropped {
		b = append(b, `,"haltDropped":true`...)
	}
	if e.StopCap != 0 {
		b = append(b, `,"stopCap":`...)
		b = strconv.AppendInt(b, int64(e.StopCap), 10)
	}
	b = append(b, `,"latencyMs":`...)
	b = strconv.AppendFloat(b, e.LatencyMs, 'f', -1, 64)
	return append(b, '}', '\n')
}

func field(b []byte, name, v string, always bool) []byte {
	if v == "" && !always {
		return b
	}
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return str(b, v)
}

const hex = "0123456789abcdef"

// str appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func str(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
