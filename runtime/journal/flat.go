package journal

import (
	"maps"
	"slices"

	"sitter.dev/sitter/runtime/internal/jsonw"
)

// An event whose data is a flat map of strings, integers and booleans
// (STOP_HOOK_INVOKED, journaled at every stop check) is written without
// encoding/json, whose first use costs a fresh hook process more than
// the whole append: encodeFlat and marshalFlat write encodeBody's and
// json.Marshal's bytes for it (TestFlatMatchesJSON), and report false
// for any other data.

// encodeFlat is encodeBody for flat data.
func encodeFlat(typ, recordedAt string, data any, link *Link) ([]byte, bool) {
	m, ok := data.(map[string]any)
	if !ok || !flat(m) {
		return nil, false
	}
	// Sized at once: each buffer a growing append leaves behind is one
	// more allocation in a fresh process. The room at the end is for the
	// checksum encode splices in.
	e := jsonw.Enc{Indent: "  ", B: make([]byte, 0, 384+flatSize(m)+len(typ)+len(recordedAt))}
	e.Open()
	e.KeyStr("type", typ)
	e.KeyStr("recordedAt", recordedAt)
	e.Key("data")
	writeFlat(&e, m)
	if link != nil {
		e.Key("sitter")
		e.Open()
		e.KeyInt("seq", int64(link.Seq))
		e.KeyStr("ulid", link.ULID)
		e.OmitStr("prev", link.Prev)
		e.Close()
	}
	e.Close()
	return append(e.B, '\n'), true
}

// marshalFlat is json.Marshal(data) for flat data.
func marshalFlat(data any) ([]byte, bool) {
	m, ok := data.(map[string]any)
	if !ok || !flat(m) {
		return nil, false
	}
	e := jsonw.Enc{HTML: true, B: make([]byte, 0, 64+flatSize(m))}
	writeFlat(&e, m)
	return e.B, true
}

// flatSize is a guess at m's JSON length, for a buffer's first size.
func flatSize(m map[string]any) int {
	n := 0
	for k, v := range m {
		n += len(k) + 24
		if s, ok := v.(string); ok {
			n += len(s) + len(s)/8
		}
	}
	return n
}

func flat(m map[string]any) bool {
	if m == nil {
		return false // encoding/json writes null
	}
	for _, v := range m {
		switch v.(type) {
		case string, int, int64, bool, nil:
		default:
			return false
		}
	}
	return true
}

// writeFlat writes m with its keys sorted, as encoding/json does.
func writeFlat(e *jsonw.Enc, m map[string]any) {
	e.Open()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e.Key(k)
		switch v := m[k].(type) {
		case string:
			e.Str(v)
		case int:
			e.Int(int64(v))
		case int64:
			e.Int(v)
		case bool:
			e.Bool(v)
		case nil:
			e.Null()
		}
	}
	e.Close()
}
