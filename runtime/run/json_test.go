package run

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sitter.dev/sitter/runtime/journal"

	"sitter.dev/sitter/runtime/internal/jsonr"
	"sitter.dev/sitter/runtime/internal/jsonr/jsonrtest"
)

// realDocs are run.json and replay-cache.json as sitter writes them (and
// run.json as the SDK does): what the fast paths must read themselves.
func realDocs(tb testing.TB) (metas, headers [][]byte) {
	tb.Helper()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	read := func(path string) []byte {
		tb.Helper()
		b, err := os.ReadFile(path)
		must(err)
		return b
	}
	ctx := context.Background()
	ws := tb.TempDir()
	entry := filepath.Join(ws, "p.mjs")
	must(os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644))
	runs := filepath.Join(ws, "runs")
	plain, _, err := Create(ctx, CreateOptions{RunsDir: runs, ProcessID: "p", Entry: entry})
	must(err)
	metas = append(metas, read(filepath.Join(plain, MetadataFile)))
	dir, _, err := Create(ctx, CreateOptions{RunsDir: runs, ProcessID: "demo <&>", Entry: entry + "#main",
		Harness: "claude-code", SessionID: "s-1", Prompt: "fix \"it\"\n\tnow\u2028é", NonInteractive: true})
	must(err)
	metas = append(metas, read(filepath.Join(dir, MetadataFile)), []byte(sdkRunJSON))

	cache := filepath.Join(dir, StateDir, ReplayCacheFile)
	summary := func() {
		tb.Helper()
		_, err := LoadSummary(dir)
		must(err)
		headers = append(headers, read(cache))
	}
	summary() // no effect yet
	es, err := RequestEffects(ctx, dir, []NewEffect{{Key: "a", TaskID: "t", Kind: "shell", Label: "one"}, {Key: "b", TaskID: "t", Kind: "agent", Label: "two <b>"}})
	must(err)
	_, err = Post(ctx, dir, es[0].EffectID, PostOptions{Status: "error", Error: json.RawMessage(`{"message":"no"}`)})
	must(err)
	summary() // one pending, one resolved with an error
	_, err = Append(ctx, dir, journal.EffectRequested, map[string]any{"effectId": journal.NewULID(""), "invocationKey": "c",
		"taskId": "t", "kind": "breakpoint", "labels": []string{"x", "y"}, "stepId": "S9", "taskDefRef": "tasks/c/task.json"})
	must(err)
	_, err = Append(ctx, dir, journal.StopHookInvoked, map[string]any{"decision": "block"})
	must(err)
	headers = append(headers, read(cache)) // kept current by Append
	_, err = Append(ctx, dir, journal.RunFailed, map[string]any{"error": map[string]any{"name": "Error", "message": "boom <&>"}})
	must(err)
	summary() // a failure: raw JSON, which json.Marshal writes
	headers = append(headers, []byte(fullHeaderJSON))
	return metas, headers
}

// sdkRunJSON is run.json as the babysitter SDK (0.0.187, createRunDir)
// writes it: JSON.stringify(metadata, null, 2), its completion proof and
// other metadata after the fields, keys sitter does not know.
const sdkRunJSON = `{
  "runId": "01KBQZ8W0B8Y6Q3F4XN7T2C5DM",
  "request": "demo",
  "processId": "demo",
  "harness": "claude-code",
  "entrypoint": {
    "importPath": "../../../processes/demo.js",
    "exportName": "process"
  },
  "processPath": "../../../processes/demo.js",
  "processRevision": "r1",
  "layoutVersion": "2026.01-storage-preview",
  "createdAt": "2026-12-03T00:04:19.123Z",
  "prompt": "build \"it\" <now> & then",
  "nonInteractive": true,
  "completionProof": "9f86d081884c7d659a2feaa0c55ad015",
  "hookStatus": "executed",
  "extra": {
    "nested": [1, 2.5e3, null, true, {"k": "v"}],
    "empty": {}
  }
}
`

// fullHeaderJSON has every field of a replay cache's first file.
const fullHeaderJSON = `{"version":"sitter.replay-cache.v4","metaHash":"0123abcd","files":7,"namesHash":"00112233445566ff",` +
	`"head":{"seq":7,"ulid":"01KBQZ8W0B8Y6Q3F4XN7T2C5DM","file":"000007.01KBQZ8W0B8Y6Q3F4XN7T2C5DM.json","checksum":"sha256:ab"},` +
	`"journal":{"kernel":"6.8.0","dev":18446744073709551615,"ino":123456,"mtime":-1733184259123456789},` +
	`"fine":{"kernel":"6.8.0","dev":2049,"fine":true},"lifecycle":"halted","processHash":"sha256:cd",` +
	`"failure":{"name":"Error","message":"a \u003c b"},"haltReason":"stop","stopChecks":3,"runtimeError":"no node",` +
	`"pending":[{"effectId":"E1","invocationKey":"k1","invocationHash":"h","stepId":"S1","taskId":"t","kind":"shell",` +
	`"label":"l","labels":["a","b"],"taskDefRef":"d","inputsRef":"i","status":"requested","resultRef":"r","stdoutRef":"o",` +
	`"stderrRef":"e","error":null,"requestedAt":"2026-12-03T00:04:19.123Z","resolvedAt":"x","resultDigest":"sha256:ef"}],` +
	`"effects":4,"effectsFile":"replay-effects.0123456789abcdef.json"}`

var (
	// fastMetas and fastHeaders take the fast path, slowMetas and
	// slowHeaders do not: encoding/json reads them otherwise (or not).
	fastMetas = []string{
		`{}`,
		`{"runId":null,"entrypoint":null,"nonInteractive":null}`,
		`{"runId":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u2028 \u0000 \ud83d\ude00 \ud800 lone","entrypoint":{}}`,
		"{\"prompt\":\"bad \xff utf-8 \xed\xa0\x80\"}",
		`{"unknown":{"deep":[1,{"x":"y"}]},"entrypoint":{"importPath":"p","other":[],"exportName":"e"},"nonInteractive":false}`,
	}
	slowMetas = []string{
		``, `null`, `[]`, `"run"`, `{"runId":"a"} {}`, `{"runId":"a",}`,
		`{"RunId":"folded"}`, `{"runid":"folded"}`, `{"proceſsId":"long s"}`, `{"entrypoint":{"IMPORTPATH":"x"}}`,
		`{"runId":"a","runId":"twice"}`, `{"entrypoint":{"importPath":"a"},"entrypoint":{"exportName":"b"}}`,
		`{"entrypoint":{"exportName":"a","exportName":"b"}}`,
		`{"runId":1}`, `{"runId":true}`, `{"nonInteractive":"true"}`, `{"nonInteractive":1}`, `{"entrypoint":"x"}`,
		`{"entrypoint":[]}`, "{\"runId\":\"ctl \x01\"}", `{"runId":"\q"}`, `{"runId":"\u12"}`, `{"unknown":[1,,2]}`,
		`{"unknown":01}`, `{"runId":"unterminated`,
	}
	fastHeaders = []string{
		`{}`, fullHeaderJSON,
		`{"head":null,"journal":null,"fine":null,"failure":null,"pending":null,"files":null,"stopChecks":-0}`,
		`{"pending":[],"failure":"x","files":-12}`,
		`{"pending":[null,{},{"labels":[],"error":[1, 2]},{"labels":null,"error":"\u003c"},{"labels":["a",null]}]}`,
		`{"head":{},"journal":{"dev":0,"mtime":-9223372036854775808},"fine":{"fine":null},"other":{"files":"x"}}`,
	}
	slowHeaders = []string{
		``, `null`, `[]`, `{"Version":"x"}`, `{"files":1,"files":2}`, `{"head":{"seq":1},"head":{"ulid":"u"}}`,
		`{"pending":[{"effectId":"a","EffectId":"b"}]}`, `{"fine":{"FINE":true}}`, `{"journal":{"ino":1,"ino":2}}`,
		`{"files":1.5}`, `{"files":1e3}`, `{"files":"1"}`, `{"files":99999999999999999999}`,
		`{"journal":{"dev":-1}}`, `{"journal":{"dev":-0}}`, `{"journal":{"mtime":9223372036854775808}}`,
		`{"pending":{}}`, `{"pending":[1]}`, `{"pending":[{"labels":[1]}]}`, `{"pending":[{"labels":"a"}]}`,
		`{"head":[]}`, `{"head":"h"}`, `{"fine":{"fine":"yes"}}`, `{"failure":}`, `{"failure":[1,]}`,
		`{"pending":[{"error":nul}]}`, "{\"version\":\"\xff\x01\"}",
	}
)

// TestDecode: every seed and real document decodes as encoding/json
// decodes it, and the common forms (sitter's and the SDK's documents
// above all) take the fast path; otherwise the fast paths would be
// right but useless.
func TestDecode(t *testing.T) {
	metas, headers := realDocs(t)
	for _, b := range metas {
		checkMetadata(t, b)
		if err := scanMetadata(jsonr.NewScanner(b), new(Metadata)); err != nil {
			t.Errorf("run.json %s: slow path: %v", b, err)
		}
	}
	for _, b := range headers {
		checkHeader(t, b)
		if err := scanHeader(jsonr.NewScanner(b), new(replayHeader)); err != nil {
			t.Errorf("replay cache %s: slow path: %v", b, err)
		}
	}
	for _, c := range []struct {
		docs []string
		scan func([]byte) error
		fast bool
	}{
		{fastMetas, func(b []byte) error { return scanMetadata(jsonr.NewScanner(b), new(Metadata)) }, true},
		{slowMetas, func(b []byte) error { return scanMetadata(jsonr.NewScanner(b), new(Metadata)) }, false},
		{fastHeaders, func(b []byte) error { return scanHeader(jsonr.NewScanner(b), new(replayHeader)) }, true},
		{slowHeaders, func(b []byte) error { return scanHeader(jsonr.NewScanner(b), new(replayHeader)) }, false},
	} {
		for _, s := range c.docs {
			checkMetadata(t, []byte(s))
			checkHeader(t, []byte(s))
			if err := c.scan([]byte(s)); (err == nil) != c.fast {
				t.Errorf("%q: fast path error %v, want the fast path %v", s, err, c.fast)
			}
		}
	}
}

// TestDecodeDeep: a value nested as deep as encoding/json allows, or a
// level deeper, reads as encoding/json reads it.
func TestDecodeDeep(t *testing.T) {
	for _, n := range []int{9990, 9996, 9997, 9998, 9999, 10000, 10001, 10002, 10005} {
		deep := strings.Repeat("[", n) + strings.Repeat("]", n)
		checkMetadata(t, []byte(`{"unknown":`+deep+`}`))
		checkHeader(t, []byte(`{"failure":`+deep+`}`))
		checkHeader(t, []byte(`{"pending":[{"error":`+deep+`}]}`))
		checkHeader(t, []byte(`{"pending":[{"unknown":`+deep+`}]}`))
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	metas, headers := realDocs(f)
	for _, b := range append(metas, headers...) {
		f.Add(b)
	}
	for _, s := range append(fastMetas, slowMetas...) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkMetadata)
}

func FuzzDecodeHeader(f *testing.F) {
	metas, headers := realDocs(f)
	for _, b := range append(headers, metas...) {
		f.Add(b)
	}
	for _, s := range append(fastHeaders, slowHeaders...) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkHeader)
}

func checkMetadata(t *testing.T, b []byte) {
	checkDecode(t, b, decodeMetadata, scanMetadata)
}

func checkHeader(t *testing.T, b []byte) {
	checkDecode(t, b, decodeHeader, scanHeader)
}

// checkDecode holds decode to json.Unmarshal into a fresh value: the
// same value, the same error.
func checkDecode[T any](t *testing.T, b []byte, decode func([]byte) (*T, error), scan func(*jsonr.Scanner, *T) error) {
	t.Helper()
	got, err := decode(b)
	want := new(T)
	wantErr := json.Unmarshal(b, want)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
		t.Errorf("%q (fast path error %v):\n got %+v, %v\nwant %+v, %v", b, scan(jsonr.NewScanner(b), new(T)), got, err, want, wantErr)
	}
}

// TestMarshalHeader: random headers, with every kind of string, integer
// and optional member, are written as json.Marshal writes them.
func TestMarshalHeader(t *testing.T) {
	pieces := []string{"", "a", "é", "日本", "\"", "\\", "/", "<", ">", "&", "\x00", "\x1f", "\n", "\t", "\x7f",
		"\xff", "\xed\xa0\x80", "\u2028", "\u2029", "\U0001F600"}
	ints := []int64{0, 1, -1, 42, -7, math.MaxInt64, math.MinInt64, math.MaxInt32 + 1}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var s strings.Builder
		for range rnd.IntN(6) {
			s.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		checkMarshal(t, s.String(), ints[rnd.IntN(len(ints))], rnd.Uint64()>>rnd.IntN(64), rnd.Uint32())
	}
	// sitter's own headers (the real documents), decoded and written again.
	_, headers := realDocs(t)
	for _, b := range headers {
		h, err := decodeHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		checkMarshalOf(t, h)
	}
}

func FuzzMarshalHeader(f *testing.F) {
	for i, s := range []string{"", "plain", "q\"b\\s/", "<a&b>", "\x00\x01\n\u2028\u2029", "bad \xff utf-8", "é日"} {
		f.Add(s, int64(-i), uint64(i)<<60, uint32(i)*0x9e3779b9)
	}
	f.Add("", int64(math.MinInt64), uint64(math.MaxUint64), uint32(math.MaxUint32))
	f.Fuzz(checkMarshal)
}

// checkMarshal builds a header from s, i and u; bits choose its optional
// members, pointers and pending effects.
func checkMarshal(t *testing.T, s string, i int64, u uint64, bits uint32) {
	bit := func(n int) bool { return bits&(1<<n) != 0 }
	opt := func(n int, v string) string {
		if bit(n) {
			return v
		}
		return ""
	}
	h := &replayHeader{Version: s, MetaHash: s + "<>", Files: int(i), NamesHash: "&" + s, ProcessHash: s,
		Lifecycle: opt(0, s), HaltReason: opt(1, s+"\u2028"), RuntimeErr: opt(2, "\x00"+s),
		StopChecks: int(-i), Effects: int(u), EffectsFile: s + ".json"}
	if bit(3) {
		h.Head = &replayHead{Seq: int(i), ULID: s, File: "f" + s, Checksum: opt(4, s)}
	}
	if bit(5) {
		h.Journal = &dirStamp{Kernel: s, Dev: u, Ino: ^u, Mtime: i}
	}
	if bit(6) {
		h.Fine = &fineProbe{Kernel: s, Dev: u, Fine: bit(7)}
	}
	raw := func() json.RawMessage {
		// Valid JSON, not compact, with characters json.Marshal escapes.
		q, _ := json.Marshal(s)
		return json.RawMessage(fmt.Sprintf(` { "m" : %s , "n" : [ 1 , "<&>" ] } `, q))
	}
	if bit(8) {
		h.Failure = raw()
	}
	switch bits >> 9 & 3 {
	case 0:
	case 1:
		h.Pending = []*Effect{}
	default:
		full := &Effect{EffectID: s, InvocationKey: "k" + s, InvocationHash: opt(11, s), StepID: opt(12, s), TaskID: s,
			Kind: opt(13, s), Label: opt(14, s), TaskDefRef: opt(15, s), InputsRef: opt(16, s), Status: s,
			ResultRef: opt(17, s), StdoutRef: opt(18, s), StderrRef: opt(19, s), RequestedAt: opt(20, s),
			ResolvedAt: opt(21, s), ResultDigest: opt(22, s)}
		switch bits >> 23 & 3 {
		case 1:
			full.Labels = []string{}
		case 2:
			full.Labels = []string{s}
		case 3:
			full.Labels = []string{s, "", "<x>"}
		}
		if bit(25) {
			full.Error = raw()
		}
		h.Pending = []*Effect{full, {}}
		if bit(26) {
			h.Pending = append(h.Pending, nil)
		}
	}
	checkMarshalOf(t, h)
}

// checkMarshalOf: marshalHeader writes json.Marshal's bytes, and what it
// writes reads back through the fast path.
func checkMarshalOf(t *testing.T, h *replayHeader) {
	t.Helper()
	want, werr := json.Marshal(h)
	got, err := marshalHeader(h)
	if werr != nil || err != nil || string(got) != string(want) {
		t.Fatalf("%+v:\n got %s, %v\nwant %s, %v", h, got, err, want, werr)
	}
	raw := len(h.Failure) > 0 || slices.ContainsFunc(h.Pending, func(e *Effect) bool { return e != nil && len(e.Error) > 0 })
	if app := h.appendJSON([]byte("prefix")); !raw && string(app) != "prefix"+string(want) {
		t.Errorf("appendJSON after a prefix:\n got %s\nwant prefix%s", app, want)
	}
	if err := scanHeader(jsonr.NewScanner(got), new(replayHeader)); err != nil {
		t.Errorf("%s: slow path: %v", got, err)
	}
	checkHeader(t, got)
}

// TestFormatSum: fmt's "%016x".
func TestFormatSum(t *testing.T) {
	for _, n := range []uint64{0, 1, 0xf, 0x10, namesSum0, 1<<64 - 1} {
		if got, want := formatSum(n), fmt.Sprintf("%016x", n); got != want {
			t.Errorf("formatSum(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestFastPathFields: the fast paths know every field.
func TestFastPathFields(t *testing.T) {
	jsonrtest.CheckFields(t, Metadata{}, metadataFields)
	jsonrtest.CheckFields(t, Entrypoint{}, entrypointFields)
	jsonrtest.CheckFields(t, replayHeader{}, headerFields)
	jsonrtest.CheckFields(t, replayHead{}, headFields)
	jsonrtest.CheckFields(t, dirStamp{}, stampFields)
	jsonrtest.CheckFields(t, fineProbe{}, probeFields)
	jsonrtest.CheckFields(t, Effect{}, effectFields)
}
