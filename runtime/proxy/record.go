package proxy

import (
	"encoding/json"
	"strconv"
	"time"

	"sitter.dev/sitter/runtime/internal/jsonw"
)

// appendRecord appends r as one JSON line, as encoding/json writes a
// RouteRecord (its field names and omitempty), without reflection: a busy
// proxy writes one per request, and on a small machine the writer's CPU
// is the requests' latency.
func appendRecord(b []byte, r *RouteRecord) []byte {
	t := r.Time
	if t == "" && !r.at.IsZero() {
		b = append(b, `{"time":"`...)
		b = r.at.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	} else {
		b = append(b, `{"time":`...)
		b = jsonw.AppendString(b, t)
	}
	b = append(b, `,"rule":`...)
	b = jsonw.AppendString(b, r.Rule)
	b = append(b, `,"provider":`...)
	b = jsonw.AppendString(b, r.Provider)
	b = append(b, `,"model":`...)
	b = jsonw.AppendString(b, r.Model)
	if r.Alias != "" {
		b = append(b, `,"alias":`...)
		b = jsonw.AppendString(b, r.Alias)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"latency_ms":`...)
	b = appendFloat(b, r.LatencyMS)
	b = append(b, `,"input_tokens":`...)
	b = strconv.AppendInt(b, int64(r.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(r.Attempts), 10)
	if len(r.Failed) > 0 {
		b = append(b, `,"failed":`...)
		b = jsonw.AppendStrings(b, r.Failed)
	}
	if len(r.FailedMS) > 0 {
		b = append(b, `,"failed_ms":[`...)
		for i, ms := range r.FailedMS {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFloat(b, ms)
		}
		b = append(b, ']')
	}
	if r.Harness != "" {
		b = append(b, `,"harness":`...)
		b = jsonw.AppendString(b, r.Harness)
	}
	b = append(b, `,"client":`...)
	b = jsonw.AppendString(b, r.Client)
	if r.Stream {
		b = append(b, `,"stream":true`...)
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonw.AppendString(b, r.Error)
	}
	return append(b, "}\n"...)
}

// appendFloat writes f as encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	if a := max(f, -f); a != 0 && (a < 1e-6 || a >= 1e21) || a != a {
		q, err := json.Marshal(f)
		if err != nil { // NaN or an infinity: no JSON number
			return append(b, '0')
		}
		return append(b, q...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
