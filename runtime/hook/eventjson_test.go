package hook

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"

	"sitter.dev/sitter/runtime/internal/jsonr"
	"sitter.dev/sitter/runtime/internal/jsonr/jsonrtest"
)

// eventSeeds are events as handlers read them (encodeEvent's output) and
// documents that only encoding/json decodes as it does.
func eventSeeds(t testing.TB) (fast, slow [][]byte) {
	tricky := "a \"q\" \\ / \n\r\t\b\f \x01\x1f <&> é \u2028\u2029 😀 "
	var full Event
	fill(t, reflect.ValueOf(&full).Elem(), tricky)
	f := false
	for _, ev := range []Event{full, {}, shellEvent("preToolUse"), {Version: Version, Tool: &Tool{}, StopHookActive: &f},
		{Raw: json.RawMessage("null")}, {Tool: &Tool{Input: json.RawMessage("{\n  \"command\": \"ls\"\n}\n")}}} {
		e, err := encodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(e.reader())
		if err != nil {
			t.Fatal(err)
		}
		fast = append(fast, b)
	}
	fast = append(fast, []byte(`{"version":"sitter.hook.v1","harness":"claude-code","session":{"id":"s","future":1},"tool":null,"stopHookActive":null,"extra":[{"x":"y"}]}`),
		[]byte("{\"prompt\":\"bad \xff utf-8 \\ud800\"}"))
	for _, s := range []string{`null`, `{"Harness":"x"}`, `{"session":{"id":"a"},"session":{"cwd":"b"}}`, `{"session":{"ID":"a"}}`,
		`{"tool":{"name":"a","Name":"b"}}`, `{"stopHookActive":"yes"}`, `{"tool":[]}`, `{"version":1}`, `{"raw":}`, `{} x`, `[]`, ``} {
		slow = append(slow, []byte(s))
	}
	return fast, slow
}

// TestDecodeEvent: DecodeEvent decodes what encoding/json decodes, with
// the same error, and the events handlers read take the fast path.
func TestDecodeEvent(t *testing.T) {
	fast, slow := eventSeeds(t)
	for _, b := range fast {
		checkDecodeEvent(t, b)
		var ev Event
		if err := scanEvent(jsonr.NewScanner(b), &ev); err != nil {
			t.Errorf("%s: the fast path gave up: %v", b, err)
		}
	}
	for _, b := range slow {
		checkDecodeEvent(t, b)
		var ev Event
		if scanEvent(jsonr.NewScanner(b), &ev) == nil {
			t.Errorf("%s: took the fast path", b)
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	fast, slow := eventSeeds(f)
	for _, b := range append(fast, slow...) {
		f.Add(b)
	}
	f.Fuzz(checkDecodeEvent)
}

func checkDecodeEvent(t *testing.T, b []byte) {
	got, err := DecodeEvent(b)
	var want Event
	wantErr := json.Unmarshal(b, &want)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
		t.Errorf("%q:\n got %+v, %v\nwant %+v, %v", b, got, err, want, wantErr)
	}
}

// TestMarshalResult: json.Marshal's bytes (html) and a json.Encoder's
// with SetEscapeHTML(false), for every field.
func TestMarshalResult(t *testing.T) {
	for _, s := range []string{"", "plain", "a \"q\" \\ \n <&> \x01 \u2028 \xff é"} {
		checkMarshalResult(t, s, true)
		checkMarshalResult(t, s, false)
	}
}

func FuzzMarshalResult(f *testing.F) {
	f.Add("a <b> & \"c\"", true)
	f.Add("", false)
	f.Fuzz(checkMarshalResult)
}

func checkMarshalResult(t *testing.T, s string, halt bool) {
	for _, r := range []Result{
		{}, {Decision: Block, Reason: s}, {Decision: Allow, UserMessage: s, AdditionalContext: s + s, Halt: halt, WatchPaths: []string{s, "x"}},
		{Decision: Allow, UpdatedInput: json.RawMessage(`{ "command" : "ls <x>" }`), Reason: s}, {WatchPaths: []string{}},
	} {
		for _, html := range []bool{true, false} {
			got, err := MarshalResult(r, html)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
			want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if string(got) != string(want) {
				t.Errorf("%+v html %v:\n got %s\nwant %s", r, html, got, want)
			}
		}
	}
}

// TestEventFields: the fast path knows every field.
func TestEventFields(t *testing.T) {
	jsonrtest.CheckFields(t, Event{}, eventFields)
	jsonrtest.CheckFields(t, Session{}, sessionFields)
	jsonrtest.CheckFields(t, Tool{}, toolFields)
}
