package audit

import (
	"strconv"

	"sitter.dev/sitter/runtime/internal/jsonw"
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
		b = field(b, "plugin", h.Plugin, false)
		b = field(b, "decision", h.Decision, false)
		b = field(b, "error", h.Error, false)
		b = field(b, "warning", h.Warning, false)
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
		b = append(b, `,"evidence":`...)
		b = jsonw.AppendStrings(b, e.Evidence)
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
	return jsonw.AppendString(b, v)
}
