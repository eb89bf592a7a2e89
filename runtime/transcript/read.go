package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// DefaultMaxLine bounds the bytes of one JSONL line the reader holds; a
// longer line is skipped and counted in Summary.SkippedLines.
const DefaultMaxLine = 8 << 20

// Options tune a read.
type Options struct {
	// MaxLine bounds one line (JSONL) in bytes; 0 = DefaultMaxLine.
	MaxLine int
	// MaxItems bounds the prompts and tool calls a summary keeps (the
	// latest); the counts cover all. 0 = DefaultMaxItems.
	MaxItems int
}

// DefaultMaxItems is how many prompts and tool calls a summary keeps.
const DefaultMaxItems = 1000

// Usage is a token count.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

func (u *Usage) add(v Usage, sign int64) {
	u.Input += sign * v.Input
	u.Output += sign * v.Output
	u.CacheRead += sign * v.CacheRead
	u.CacheWrite += sign * v.CacheWrite
}

// ToolCall is one tool call of the transcript.
type ToolCall struct {
	Name  string   `json:"name"`
	Files []string `json:"files,omitempty"` // files a write tool changes
}

// Summary is what a transcript says since a position.
type Summary struct {
	Harness string `json:"harness"`
	Format  string `json:"format"`
	// From and To are positions (line offsets for jsonl-cli, message
	// indices for json-event): To is where a later read continues, the
	// transcript's end. To < From when the transcript is shorter than
	// From (replaced or truncated since): nothing was read.
	From          int64      `json:"from"`
	To            int64      `json:"to"`
	Prompts       []string   `json:"prompts"` // the latest MaxItems
	PromptCount   int        `json:"promptCount"`
	LastAssistant string     `json:"lastAssistantMessage,omitempty"`
	ToolCalls     []ToolCall `json:"toolCalls"` // the latest MaxItems
	ToolCallCount int        `json:"toolCallCount"`
	ModifiedFiles []string   `json:"modifiedFiles"`
	Usage         Usage      `json:"usage"`
	// SkippedLines counts lines longer than the bound; BadLines lines that
	// are not JSON.
	SkippedLines int `json:"skippedLines,omitempty"`
	BadLines     int `json:"badLines,omitempty"`
}

// ReadFile summarises the transcript at path from position from.
func ReadFile(spec *Spec, path string, from int64, opt Options) (*Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(spec, f, from, opt)
}

// Read summarises a transcript stream from position from.
func Read(spec *Spec, r io.Reader, from int64, opt Options) (*Summary, error) {
	s := &Summary{Harness: spec.Harness, Format: spec.Format, From: from, Prompts: []string{}, ToolCalls: []ToolCall{}, ModifiedFiles: []string{}}
	a := newAcc(spec, s)
	a.max = opt.MaxItems
	if a.max <= 0 {
		a.max = DefaultMaxItems
	}
	var err error
	switch spec.Format {
	case JSONL:
		err = eachLine(r, from, opt, s, a.line)
	case JSONEvent:
		err = eachMessage(r, spec.Messages, from, s, a.record)
	default:
		err = fmt.Errorf("transcript format %q unknown", spec.Format)
	}
	a.flush()
	return s, err
}

// Position returns the end position of a transcript: its complete lines
// (jsonl-cli) or its messages (json-event).
func Position(spec *Spec, path string, opt Options) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := &Summary{}
	if spec.Format == JSONEvent {
		err = eachMessage(f, spec.Messages, 0, s, nil)
		return s.To, err
	}
	err = eachLine(f, 0, opt, s, nil)
	return s.To, err
}

// tailBytes is how much of a transcript's end LastAssistant reads first.
const tailBytes = 4 << 20

// LastAssistant returns the last assistant text of the transcript at path.
// A JSONL transcript is read from its last few megabytes first, and whole
// only when they hold no assistant text.
func LastAssistant(spec *Spec, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if spec.Format == JSONL {
		if st, err := f.Stat(); err == nil && st.Size() > tailBytes {
			if _, err := f.Seek(st.Size()-tailBytes, io.SeekStart); err == nil {
				br := bufio.NewReader(f)
				for { // drop the partial first line
					if _, err := br.ReadSlice('\n'); err != bufio.ErrBufferFull {
						break
					}
				}
				s, err := Read(spec, br, 0, Options{})
				if err == nil && s.LastAssistant != "" {
					return s.LastAssistant, nil
				}
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					return "", err
				}
			}
		}
	}
	s, err := Read(spec, f, 0, Options{})
	if err != nil {
		return "", err
	}
	return s.LastAssistant, nil
}

// eachLine calls fn on each complete line at or after line offset from,
// holding at most opt.MaxLine bytes of a line. A final line without a
// newline is being written: it is not read and not counted.
func eachLine(r io.Reader, from int64, opt Options, s *Summary, fn func([]byte)) error {
	max := opt.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	size := 64 << 10
	if size > max {
		size = max
	}
	br := bufio.NewReaderSize(r, size)
	var buf []byte // a line longer than the reader's buffer, up to max
	var n int64
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if !tooLong && len(buf)+len(chunk) <= max && n >= from {
				buf = append(buf, chunk...)
			} else {
				tooLong, buf = true, buf[:0]
			}
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		if err == io.EOF {
			break // an unterminated last line, or nothing
		}
		line := chunk
		if len(buf) > 0 {
			if len(buf)+len(chunk) > max {
				tooLong = true
			} else {
				buf = append(buf, chunk...)
				line = buf
			}
		}
		if n >= from {
			if tooLong {
				s.SkippedLines++
			} else if fn != nil {
				fn(bytes.TrimSpace(line))
			}
		}
		n++
		tooLong, buf = false, buf[:0]
		if cap(buf) > max {
			buf = nil
		}
	}
	s.To = n
	return nil
}

// eachMessage streams the array at path (dot-separated keys) of one JSON
// document, calling fn on each message at or after index from.
func eachMessage(r io.Reader, path string, from int64, s *Summary, fn func(any)) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	keys := strings.Split(path, ".")
	for _, k := range keys {
		if err := delim(dec, '{'); err != nil {
			return err
		}
		for {
			if !dec.More() {
				return fmt.Errorf("transcript: no %q in the document", path)
			}
			t, err := dec.Token()
			if err != nil {
				return err
			}
			if t == k {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	if err := delim(dec, '['); err != nil {
		return err
	}
	var n int64
	for dec.More() {
		if n < from || fn == nil {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		} else {
			var m any
			if err := dec.Decode(&m); err != nil {
				return err
			}
			fn(m)
		}
		n++
	}
	s.To = n
	return nil
}

func delim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return errors.New("transcript: unexpected JSON shape")
	}
	return nil
}

// acc accumulates a summary from records.
type acc struct {
	spec    *Spec
	s       *Summary
	max     int
	needles [][]byte // quoted values some record needs; a line with none is not parsed
	seen    map[string]bool
	// per usage record: the last key and the usage it contributed
	lastKey   []string
	lastUsage []Usage
	// per keyed tool call record: the last key and its calls, added when
	// a record with another key comes (or at the end), since a later
	// record with the same key restates them
	callKey []string
	pending [][]ToolCall
}

func newAcc(spec *Spec, s *Summary) *acc {
	a := &acc{spec: spec, s: s, seen: map[string]bool{}, lastKey: make([]string, len(spec.Usage)), lastUsage: make([]Usage, len(spec.Usage)),
		callKey: make([]string, len(spec.ToolCalls)), pending: make([][]ToolCall, len(spec.ToolCalls))}
	for _, rs := range [][]Record{spec.Prompts, spec.Assistant, spec.ToolCalls, spec.Usage} {
		for _, r := range rs {
			if len(r.When) == 0 {
				a.needles = nil // a record matching anything: parse every line
				return a
			}
			a.needles = append(a.needles, []byte(`"`+r.When[0].Value+`"`))
		}
	}
	return a
}

func (a *acc) line(b []byte) {
	if len(b) == 0 {
		return
	}
	if a.needles != nil {
		hit := false
		for _, n := range a.needles {
			if bytes.Contains(b, n) {
				hit = true
				break
			}
		}
		if !hit {
			return
		}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		a.s.BadLines++
		return
	}
	a.record(v)
}

func (a *acc) record(v any) {
	for _, r := range a.spec.Prompts {
		if matches(v, r.When) {
			if t := text(lookup(v, r.Text), r.SkipPrefix); t != "" {
				a.s.PromptCount++
				a.s.Prompts = keep(a.s.Prompts, t, a.max)
			}
		}
	}
	for _, r := range a.spec.Assistant {
		if matches(v, r.When) {
			if t := Text(lookup(v, r.Text)); t != "" {
				a.s.LastAssistant = t
			}
		}
	}
	for i, r := range a.spec.ToolCalls {
		if !matches(v, r.When) {
			continue
		}
		var calls []ToolCall
		if r.Each == "" {
			calls = appendCall(calls, r, v)
		} else {
			items, _ := lookup(v, r.Each).([]any)
			for _, it := range items {
				if matches(it, r.EachWhen) {
					calls = appendCall(calls, r, it)
				}
			}
		}
		k, _ := lookup(v, r.Key).(string)
		if r.Key == "" || k == "" {
			a.addCalls(calls)
			continue
		}
		if k != a.callKey[i] {
			a.addCalls(a.pending[i])
		}
		a.callKey[i], a.pending[i] = k, calls // a restatement replaces its predecessor
	}
	for i, r := range a.spec.Usage {
		if !matches(v, r.When) {
			continue
		}
		u := Usage{
			Input: num(lookup(v, r.Usage.Input)), Output: num(lookup(v, r.Usage.Output)),
			CacheRead: num(lookup(v, r.Usage.CacheRead)), CacheWrite: num(lookup(v, r.Usage.CacheWrite)),
		}
		if r.Key != "" {
			k, _ := lookup(v, r.Key).(string)
			if k != "" && k == a.lastKey[i] {
				a.s.Usage.add(a.lastUsage[i], -1) // a restatement replaces its predecessor
			}
			a.lastKey[i] = k
		}
		a.lastUsage[i] = u
		a.s.Usage.add(u, 1)
	}
}

// flush adds the tool calls still pending.
func (a *acc) flush() {
	for i := range a.pending {
		a.addCalls(a.pending[i])
		a.pending[i] = nil
	}
}

// addCalls counts tool calls and the files they modify.
func (a *acc) addCalls(calls []ToolCall) {
	for _, tc := range calls {
		for _, f := range tc.Files {
			if !a.seen[f] {
				a.seen[f] = true
				a.s.ModifiedFiles = append(a.s.ModifiedFiles, f)
			}
		}
		a.s.ToolCallCount++
		a.s.ToolCalls = keep(a.s.ToolCalls, tc, a.max)
	}
}

// appendCall appends the tool call of an item, if it names one.
func appendCall(calls []ToolCall, r Record, item any) []ToolCall {
	name, _ := lookup(item, r.Name).(string)
	if name == "" {
		return calls
	}
	tc := ToolCall{Name: name}
	if len(r.WriteTools) == 0 || slices.Contains(r.WriteTools, name) {
		in := lookup(item, r.Input)
		switch r.InputAs {
		case "json-string":
			if s, ok := in.(string); ok {
				var x any
				if json.Unmarshal([]byte(s), &x) == nil {
					in = x
				}
			}
		case "patch":
			if s, ok := in.(string); ok {
				tc.Files = append(tc.Files, patchFiles(s)...)
			}
		}
		if len(r.WriteTools) > 0 {
			for _, p := range r.Files {
				if f, ok := lookup(in, p).(string); ok && f != "" {
					tc.Files = append(tc.Files, f)
				}
			}
		}
	}
	return append(calls, tc)
}

// keep appends v and drops the oldest items beyond max.
func keep[T any](xs []T, v T, max int) []T {
	if len(xs) >= max {
		n := copy(xs, xs[len(xs)-max+1:])
		xs = xs[:n]
	}
	return append(xs, v)
}

// patchFiles returns the files an apply_patch text adds, updates, deletes
// or moves to.
func patchFiles(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if strings.HasPrefix(l, p) {
				out = append(out, strings.TrimSpace(l[len(p):]))
			}
		}
	}
	return out
}

// lookup walks a dot-separated path of object keys; "" is the value itself.
func lookup(v any, path string) any {
	if path == "" {
		return v
	}
	for len(path) > 0 {
		k := path
		if i := strings.IndexByte(path, '.'); i >= 0 {
			k, path = path[:i], path[i+1:]
		} else {
			path = ""
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func matches(v any, ms []Match) bool {
	for _, m := range ms {
		if s, ok := lookup(v, m.Path).(string); !ok || s != m.Value {
			return false
		}
	}
	return true
}

// Text is the text of a value: a string, or the joined texts of an array
// of strings and text parts ({"type":"text"|"input_text"|"output_text", "text"}
// or an untyped {"text"}).
func Text(v any) string { return text(v, nil) }

// text is Text without the strings and parts that start with a skip
// prefix: the harness's own context, which it may put beside the user's
// text in one message.
func text(v any, skip []string) string {
	switch x := v.(type) {
	case string:
		if hasPrefix(x, skip) {
			return ""
		}
		return x
	case []any:
		var parts []string
		for _, e := range x {
			switch p := e.(type) {
			case string:
				if !hasPrefix(p, skip) {
					parts = append(parts, p)
				}
			case map[string]any:
				t, _ := p["text"].(string)
				typ, _ := p["type"].(string)
				if t != "" && (typ == "" || strings.EqualFold(typ, "text") || typ == "input_text" || typ == "output_text") && !hasPrefix(t, skip) {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func num(v any) int64 {
	if f, ok := v.(float64); ok {
		return int64(f)
	}
	return 0
}

func hasPrefix(s string, ps []string) bool {
	s = strings.TrimSpace(s)
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
