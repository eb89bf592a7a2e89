package session

import (
	"encoding/json"
	"reflect"
	"testing"

	"sitter.dev/sitter/runtime/internal/jsonr"
	"sitter.dev/sitter/runtime/internal/jsonr/jsonrtest"
)

// stateSeeds: states as write saves them, and documents only encoding/json
// decodes as it does.
func stateSeeds() (fast, slow []string) {
	full := State{Version: Version, Harness: "claude-code", SessionID: "s <1>", Active: true, RunID: "01J", RunDir: "/tmp/r \"x\"",
		Iteration: 3, MaxIterations: 256, Cwd: "/w", StartedAt: "t0", UpdatedAt: "t1", EndedBecause: "proof", Told: true, Store: "nats://h/x?a&b"}
	for _, st := range []State{full, {}, {Harness: "codex", SessionID: "x", Iteration: -1}} {
		b, _ := json.MarshalIndent(st, "", "  ")
		fast = append(fast, string(b))
	}
	fast = append(fast, `{"sessionId":"x","future":{"a":[1]},"active":null,"iteration":null}`)
	slow = []string{`null`, `{"SessionId":"x"}`, `{"iteration":1.5}`, `{"iteration":"1"}`, `{"active":"true"}`, `{"runId":"a","runId":"b"}`, `{`, `[]`}
	return fast, slow
}

// TestStateJSON: decodeState is json.Unmarshal, marshalState is
// json.MarshalIndent, and states as write saves them take the fast path.
func TestStateJSON(t *testing.T) {
	fast, slow := stateSeeds()
	for _, s := range append(fast, slow...) {
		checkDecodeState(t, []byte(s))
	}
	for _, s := range fast {
		var st State
		if err := scanState(jsonr.NewScanner([]byte(s)), &st); err != nil {
			t.Errorf("%s: the fast path gave up: %v", s, err)
		}
	}
	for _, s := range slow {
		var st State
		if scanState(jsonr.NewScanner([]byte(s)), &st) == nil {
			t.Errorf("%s: took the fast path", s)
		}
	}
	// Every field of State is written: one that marshalState forgets is
	// missing from its output.
	var full State
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("<" + v.Type().Field(i).Name + "> \"é\" \n \xff")
		case reflect.Int:
			f.SetInt(int64(-i))
		case reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("State.%s: teach marshalState and scanState about %s", v.Type().Field(i).Name, f.Kind())
		}
	}
	checkMarshalState(t, full)
	checkMarshalState(t, State{})
}

func FuzzStateJSON(f *testing.F) {
	fast, slow := stateSeeds()
	for _, s := range append(fast, slow...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeState(t, b)
		var st State
		if json.Unmarshal(b, &st) == nil {
			checkMarshalState(t, st)
		}
	})
}

func checkDecodeState(t *testing.T, b []byte) {
	got, err := decodeState(b)
	var want State
	wantErr := json.Unmarshal(b, &want)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || got != want {
		t.Errorf("%q:\n got %+v, %v\nwant %+v, %v", b, got, err, want, wantErr)
	}
}

func checkMarshalState(t *testing.T, st State) {
	want, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if got := marshalState(&st); string(got) != string(want) {
		t.Errorf("%+v:\n got %s\nwant %s", st, got, want)
	}
}

// TestStateFields: the fast path knows every field.
func TestStateFields(t *testing.T) { jsonrtest.CheckFields(t, State{}, stateFields) }
