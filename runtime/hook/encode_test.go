package hook

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

// jsonEncode is the event as encoding/json writes it for handlers.
func jsonEncode(t *testing.T, ev Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fill sets every field of v, recursively, to a non-zero value: a field
// added to Event that encodeEvent does not write shows up as a difference.
func fill(t testing.TB, v reflect.Value, str string) {
	t.Helper()
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		s, _ := json.Marshal(str)
		v.SetBytes([]byte("{ \"k\" : [1, 2.5e3, \"x y\\u00e9\", null, true, {}],\n \"s\": " + string(s) + " }"))
	case v.Kind() == reflect.String:
		v.SetString(str)
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), str+v.Type().Field(i).Name)
		}
	case v.Kind() == reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), str)
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("fill: field of kind %s: teach encodeEvent and this test about it", v.Kind())
	}
}

func TestEncodeEventMatchesJSON(t *testing.T) {
	tricky := "a \"q\" \\ / \n\r\t\b\f \x01\x1f <&> é \u2028\u2029 😀 "
	var full Event
	fill(t, reflect.ValueOf(&full).Elem(), tricky)
	f := false
	events := map[string]Event{
		"every field":      full,
		"empty":            {},
		"shell event":      shellEvent("preToolUse"),
		"empty tool":       {Version: Version, Tool: &Tool{}, StopHookActive: &f},
		"raw is null":      {Raw: json.RawMessage("null")},
		"raw is a string":  {Raw: json.RawMessage(` "x" `)},
		"pretty raw input": {Tool: &Tool{Input: json.RawMessage("{\n  \"command\": \"ls\"\n}\n")}},
		"compact raw values": {
			Version: Version, Session: Session{ID: "s"}, Prompt: "p",
			Tool: &Tool{Name: "Bash", Input: json.RawMessage(`{"command":"a b"}`), Response: json.RawMessage(`["x",1]`), CallID: "c"},
			Raw:  json.RawMessage(`{"a":"x \" y","b":[1,{"c":null}]}`),
		},
		"invalid UTF-8 raw": {Tool: &Tool{Input: json.RawMessage("{\"c\":\"\xff\"}")}, Raw: json.RawMessage("\"\xfe\"")},
	}
	for name, ev := range events {
		t.Run(name, func(t *testing.T) {
			e, err := encodeEvent(ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(e.reader())
			if err != nil {
				t.Fatal(err)
			}
			// encoding/json leaves invalid UTF-8 in raw values as it is.
			if want := ValidUTF8(jsonEncode(t, ev)); !bytes.Equal(got, want) || !bytes.Equal(e.bytes(), want) {
				t.Errorf("encodeEvent =\n%s\nencoding/json =\n%s", got, want)
			}
		})
	}
}

// Compact, valid raw values are not copied: the handlers read the
// payload's own bytes.
func TestEncodeEventSharesRaw(t *testing.T) {
	ev := shellEvent("preToolUse")
	e, err := encodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	shared := map[string]bool{}
	for _, p := range e {
		if len(p) > 0 && &p[0] == &ev.Raw[0] {
			shared["raw"] = true
		}
		if len(p) > 0 && &p[0] == &ev.Tool.Input[0] {
			shared["input"] = true
		}
	}
	if !shared["raw"] || !shared["input"] {
		t.Errorf("pieces share %v of raw and tool input, want both", shared)
	}
}

func TestEncodeEventBadRaw(t *testing.T) {
	for _, raw := range []string{"{", "not json", `{"a":1} {"b":2}`} {
		if _, err := encodeEvent(Event{Raw: json.RawMessage(raw)}); err == nil {
			t.Errorf("encodeEvent with raw %q succeeded", raw)
		}
		if _, err := encodeEvent(Event{Tool: &Tool{Input: json.RawMessage(raw)}}); err == nil {
			t.Errorf("encodeEvent with tool input %q succeeded", raw)
		}
	}
}

func TestValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "",
		"plain é":               "plain é",
		"a\xffb":                "a\uFFFDb",
		"\xc3":                  "\uFFFD",
		"{\"k\":\"v\xfe\xff\"}": "{\"k\":\"v\uFFFD\"}",
		"\xed\xa0\x80 lone sg":  "\uFFFD lone sg",
	} {
		if got := string(ValidUTF8([]byte(in))); got != want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkEncodeEvent(b *testing.B) {
	ev := shellEvent("preToolUse")
	b.ReportAllocs()
	for b.Loop() {
		encodeEvent(ev)
	}
}

func TestCompactPayload(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"a\" : \"x y\\\" z\\\\\",\n  \"b\": [ 1, 2 ] ,\"c\":{ }\n}\n": `{"a":"x y\" z\\","b":[1,2],"c":{}}`,
		`{"a":"b"}`:     `{"a":"b"}`,
		"not json ":     "not json ",
		"{\"a\": \"b\"": "{\"a\": \"b\"",
		" \"\\t\\n\" ":  `"\t\n"`,
	} {
		if got := string(CompactPayload([]byte(in))); got != want {
			t.Errorf("CompactPayload(%q) = %q, want %q", in, got, want)
		}
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(in)) == nil && buf.String() != want {
			t.Errorf("json.Compact(%q) = %q, CompactPayload's want %q", in, buf.String(), want)
		}
	}
}

// FuzzCompactPayload: on JSON, CompactPayload writes what json.Compact
// writes; anything else it leaves alone.
func FuzzCompactPayload(f *testing.F) {
	for _, seed := range []string{"{\n \"a\": [1, \"x \\\" y\"]\n}", `{"a":"\\"}`, "[ ]", "{", "\"\xff \"", " 1 "} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		in := bytes.Clone(doc)
		got := CompactPayload(doc)
		var want bytes.Buffer
		if json.Compact(&want, in) != nil {
			if !bytes.Equal(got, in) {
				t.Fatalf("CompactPayload(%q) = %q, want it unchanged", in, got)
			}
			return
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("CompactPayload(%q) = %q, json.Compact %q", in, got, want.Bytes())
		}
	})
}

// TestRenderHalted: an answer halts the session when a rendered rule says so
// (the atlas effect haltsSession), not when a halt was asked for but the
// event cannot express it, nor for a rule that only refuses the call.
func TestRenderHalted(t *testing.T) {
	rules := &Rules{
		Deny: &Rule{Stdout: []Member{{Key: "decision", Const: `"deny"`}}},
		Halt: &Rule{Stdout: []Member{{Key: "continue", Const: "false"}}, HaltsSession: true},
	}
	ev := Event{Phase: "preToolUse", Harness: "h", NativeEvent: "E"}
	for _, c := range []struct {
		name  string
		r     Result
		rules *Rules
		want  bool
	}{
		{"halt", Result{Decision: Noop, Halt: true}, rules, true},
		{"deny and halt", Result{Decision: Deny, Halt: true}, rules, true},
		{"deny", Result{Decision: Deny}, rules, false},
		{"halt dropped", Result{Decision: Noop, Halt: true}, &Rules{Deny: rules.Deny}, false},
		{"deny that halts", Result{Decision: Deny}, &Rules{Deny: &Rule{Stdout: rules.Deny.Stdout, HaltsSession: true}}, true},
	} {
		if got := Render(ev, c.r, c.rules).Halted; got != c.want {
			t.Errorf("%s: Halted = %v, want %v", c.name, got, c.want)
		}
	}
}

// watchPaths render as a JSON array where the event can watch, and are
// dropped with a diagnostic where it cannot.
func TestRenderWatch(t *testing.T) {
	rules := &Rules{
		Context: &Rule{Stdout: []Member{{Key: "out", Kids: []Member{{Key: "ctx", Slot: SlotContext}}}}},
		Watch:   &Rule{Stdout: []Member{{Key: "out", Kids: []Member{{Key: "paths", Slot: SlotWatchPaths}}}}},
	}
	ev := Event{Phase: "sessionStart", Harness: "h", NativeEvent: "E"}
	r := Result{Decision: Noop, AdditionalContext: "hi", WatchPaths: []string{"/p/a \"x\".txt", "/p/b"}}
	out := Render(ev, r, rules)
	if want := `{"out":{"ctx":"hi","paths":["/p/a \"x\".txt","/p/b"]}}` + "\n"; string(out.Stdout) != want || len(out.Diags) > 0 {
		t.Errorf("Render = %q %q, want %q", out.Stdout, out.Diags, want)
	}
	out = Render(ev, r, &Rules{Context: rules.Context})
	if want := `{"out":{"ctx":"hi"}}` + "\n"; string(out.Stdout) != want || len(out.Diags) != 1 || out.Diags[0] != "sitter: h E cannot express watchPaths; dropped" {
		t.Errorf("Render without a watch rule = %q %q, want %q and a drop", out.Stdout, out.Diags, want)
	}
	out = Render(ev, Result{Decision: Noop}, rules)
	if len(out.Stdout) != 0 {
		t.Errorf("Render of nothing to watch = %q, want nothing", out.Stdout)
	}
}

// An allow that came with a rewrite the event cannot take is dropped with
// it: said alone it would approve the call as the agent wrote it. Where
// the rewrite is taken, or no rewrite came, the allow stands.
func TestRenderAllowWithDroppedRewrite(t *testing.T) {
	allow := &Rule{Stdout: []Member{{Key: "permission", Const: `"allow"`}}}
	rewrite := &Rule{Stdout: []Member{{Key: "input", Slot: SlotUpdatedInput}}}
	ev := Event{Phase: "preToolUse", Harness: "h", NativeEvent: "E"}
	in := json.RawMessage(`{"command":"npm test -- --ci"}`)
	for _, c := range []struct {
		name      string
		r         Result
		rules     *Rules
		stdout    string
		diagCount int
	}{
		{"allow and rewrite, no rewrite rule", Result{Decision: Allow, UpdatedInput: in}, &Rules{Allow: allow}, "", 2},
		{"allow and rewrite", Result{Decision: Allow, UpdatedInput: in}, &Rules{Allow: allow, Rewrite: rewrite}, `{"permission":"allow","input":{"command":"npm test -- --ci"}}`, 0},
		{"allow alone", Result{Decision: Allow}, &Rules{Allow: allow}, `{"permission":"allow"}`, 0},
		{"rewrite alone, no rewrite rule", Result{Decision: Noop, UpdatedInput: in}, &Rules{Allow: allow}, "", 1},
	} {
		out := Render(ev, c.r, c.rules)
		if got := strings.TrimSuffix(string(out.Stdout), "\n"); got != c.stdout || len(out.Diags) != c.diagCount {
			t.Errorf("%s: Render = %q %q, want %q and %d diagnostics", c.name, got, out.Diags, c.stdout, c.diagCount)
		}
	}
}
