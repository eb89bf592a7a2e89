package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"sitter.dev/sitter/runtime/internal/jsonw"
)

// eventJSON is an encoded event in pieces, to be read one after the other:
// a raw value that is already as it must be written (compact JSON, valid
// UTF-8) is a piece of its own, the native payload's bytes themselves,
// not a copy.
type eventJSON [][]byte

// reader is one handler's stdin over the shared pieces.
func (e eventJSON) reader() io.Reader { return &pieceReader{p: e} }

// pieceReader reads pieces one after the other. Its WriteTo writes each
// piece to the handler's pipe as it is: no copy, and no copy buffer (as
// io.MultiReader would allocate for every handler).
type pieceReader struct {
	p   eventJSON
	off int // into p[0]
}

func (r *pieceReader) Read(b []byte) (int, error) {
	for len(r.p) > 0 && r.off == len(r.p[0]) {
		r.p, r.off = r.p[1:], 0
	}
	if len(r.p) == 0 {
		return 0, io.EOF
	}
	n := copy(b, r.p[0][r.off:])
	r.off += n
	return n, nil
}

func (r *pieceReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for ; len(r.p) > 0; r.p, r.off = r.p[1:], 0 {
		n, err := w.Write(r.p[0][r.off:])
		total += int64(n)
		r.off += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// bytes joins the pieces (a copy).
func (e eventJSON) bytes() []byte { return bytes.Join(e, nil) }

// encodeEvent writes ev as handlers read it on stdin: one line of JSON
// ending in '\n', the same document encoding/json writes with HTML escaping
// off (TestEncodeEventMatchesJSON holds the two together), except that it
// is always valid UTF-8: invalid bytes in the raw values (the native
// payload, a tool's input and response) become U+FFFD, as they already do
// in strings, so that a handler's JSON parser does not choke on them.
//
// encoding/json copied each raw value into a buffer it grew by doubling,
// then copied the buffer out: for a 50 MB payload whose tool input is
// most of it, ~300 MB. Here the raw values are the payload's own bytes
// when they are compact and valid (as harnesses send them), and the rest
// of the event is small.
func encodeEvent(ev Event) (eventJSON, error) {
	n := 256 + len(ev.Version) + len(ev.Harness) + len(ev.NativeEvent) + len(ev.Phase) + len(ev.Support) +
		len(ev.Session.ID) + len(ev.Session.Cwd) + len(ev.Session.ProjectDir) + len(ev.Session.TranscriptPath) + len(ev.Session.TurnID) +
		len(ev.Session.Model) + len(ev.Session.PermissionMode) +
		len(ev.Prompt) + len(ev.Source) + len(ev.Reason) + len(ev.LastAssistantMessage)
	if t := ev.Tool; t != nil {
		n += len(t.Name) + len(t.Kind) + len(t.CallID)
	}
	w := &pieces{b: make([]byte, 0, n)}
	var err error
	w.b = append(w.b, '{')
	w.str("version", ev.Version, false)
	w.str("harness", ev.Harness, false)
	w.str("nativeEvent", ev.NativeEvent, false)
	w.str("phase", ev.Phase, false)
	w.str("support", ev.Support, false)
	w.key("session")
	w.b = append(w.b, '{')
	ss := ev.Session
	w.str("id", ss.ID, true)
	w.str("cwd", ss.Cwd, true)
	w.str("projectDir", ss.ProjectDir, true)
	w.str("transcriptPath", ss.TranscriptPath, true)
	w.str("turnId", ss.TurnID, true)
	w.str("model", ss.Model, true)
	w.str("permissionMode", ss.PermissionMode, true)
	w.b = append(w.b, '}')
	if t := ev.Tool; t != nil {
		w.key("tool")
		w.b = append(w.b, '{')
		w.str("name", t.Name, true)
		w.str("kind", t.Kind, true)
		if err = w.raw("input", t.Input); err != nil {
			return nil, err
		}
		if err = w.raw("response", t.Response); err != nil {
			return nil, err
		}
		w.str("callId", t.CallID, true)
		w.b = append(w.b, '}')
	}
	w.str("prompt", ev.Prompt, true)
	w.str("source", ev.Source, true)
	w.str("reason", ev.Reason, true)
	if ev.StopHookActive != nil {
		w.key("stopHookActive")
		if *ev.StopHookActive {
			w.b = append(w.b, "true"...)
		} else {
			w.b = append(w.b, "false"...)
		}
	}
	w.str("lastAssistantMessage", ev.LastAssistantMessage, true)
	w.str("file", ev.File, true)
	if err = w.raw("raw", ev.Raw); err != nil {
		return nil, err
	}
	w.b = append(w.b, '}', '\n')
	w.flush()
	return w.done, nil
}

// key appends an object key and its colon, after a comma unless it is the
// object's first. An empty piece follows a raw value's piece: a comma.
func (w *pieces) key(k string) {
	if len(w.b) == 0 || w.b[len(w.b)-1] != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// str appends a string field.
func (w *pieces) str(k, v string, omitEmpty bool) {
	if v == "" && omitEmpty {
		return
	}
	w.key(k)
	w.b = jsonw.AppendStringNoHTML(w.b, v)
}

// pieces builds an eventJSON: b is the piece being written, done the
// pieces before it.
type pieces struct {
	done eventJSON
	b    []byte
}

// flush ends the current piece. The next one goes on in b's spare
// capacity, after it: the pieces never overlap.
func (w *pieces) flush() {
	if len(w.b) > 0 {
		w.done = append(w.done, w.b)
		w.b = w.b[len(w.b):]
	}
}

// raw writes a raw JSON value: as a piece of its own when it is compact
// and valid UTF-8 already, else compacted with invalid UTF-8 replaced. An
// empty value is omitted; a value that is not JSON is an error.
func (w *pieces) raw(k string, v json.RawMessage) error {
	if len(v) == 0 {
		return nil
	}
	w.key(k)
	if compactJSON(v) && utf8.Valid(v) && validJSON(v) {
		w.flush()
		w.done = append(w.done, v)
		return nil
	}
	// Compact appends in place, in room made for the value at once.
	start := len(w.b)
	buf := bytes.NewBuffer(slices.Grow(w.b, len(v)))
	if err := json.Compact(buf, v); err != nil {
		return fmt.Errorf("%s: %w", k, err)
	}
	w.b = buf.Bytes()
	if !utf8.Valid(w.b[start:]) {
		w.b = append(w.b[:start], ValidUTF8(w.b[start:])...)
	}
	return nil
}

// compactJSON reports whether a JSON text has no whitespace outside its
// strings.
func compactJSON(b []byte) bool {
	str := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case str && c == '\\':
			i++
		case c == '"':
			str = !str
		case !str && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// validJSON reports whether b is one JSON value, by the payload scanner
// (which accepts what encoding/json accepts: FuzzScanner), without
// decoding it.
func validJSON(b []byte) bool {
	s := NewScanner(b)
	return s.Skip() == nil && s.End()
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

// CompactPayload removes the whitespace outside strings from a valid JSON
// payload, in place, and returns it; anything else is returned as it is.
// Called on the payload before it is normalized, it lets the raw values of
// the event (the payload, a tool's input within it) be handed to handlers
// as they are, with no compacted copy of a pretty-printed payload.
func CompactPayload(b []byte) []byte {
	if compactJSON(b) || !validJSON(b) {
		return b
	}
	w := 0
	str := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case str && c == '\\':
			// The escaped byte is copied with it.
			b[w], b[w+1] = c, b[i+1]
			w += 2
			i++
			continue
		case c == '"':
			str = !str
		case !str && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		b[w] = c
		w++
	}
	return b[:w]
}
