package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestFlatMatchesJSON: for flat data, encodeFlat and marshalFlat write
// what encodeBody and json.Marshal write; other data is not theirs.
func TestFlatMatchesJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a \"q\" \\ / \n\r\t\b\f \x01\x1f <&> é \u2028\u2029 😀 \xff"} {
		checkFlat(t, s, -3, true)
	}
	for _, data := range []any{nil, map[string]any(nil), map[string]any{"f": 1.5}, map[string]any{"m": map[string]any{}},
		map[string]any{"s": []string{"a"}}, struct{ A string }{"a"}, "text"} {
		if _, ok := encodeFlat("T", "t", data, nil); ok {
			t.Errorf("encodeFlat took %#v", data)
		}
		if _, ok := marshalFlat(data); ok {
			t.Errorf("marshalFlat took %#v", data)
		}
	}
}

func FuzzFlatMatchesJSON(f *testing.F) {
	f.Add("a <b> & \"c\"", int64(7), true)
	f.Add("", int64(-1), false)
	f.Fuzz(checkFlat)
}

func checkFlat(t *testing.T, s string, n int64, b bool) {
	for _, link := range []*Link{nil, {Seq: int(n), ULID: s}, {Seq: 2, ULID: "u", Prev: s}} {
		for _, m := range []map[string]any{
			{},
			{"harness": s, "sessionId": s + "x", "decision": "block", "row": "pending", "reason": s, "iteration": int(n), "maxIterations": n, "ok": b, "none": nil},
			{s: s, "Z": 1, "a": false, "é": "<>"},
		} {
			want, err := encodeBody(s, s, m, link)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := encodeFlat(s, s, m, link)
			if !ok || string(got) != string(want) {
				t.Errorf("encodeFlat(%q, %v, %+v) = %v\n%s\nwant\n%s", s, m, link, ok, got, want)
			}
			want, err = json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := marshalFlat(m); !ok || string(got) != string(want) {
				t.Errorf("marshalFlat(%v) = %v %s, want %s", m, ok, got, want)
			}
		}
	}
}

// TestLockInfoMatchesJSON: the lock file holds what json.MarshalIndent
// writes for its holder.
func TestLockInfoMatchesJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	owner := "sitter:stop-check <\"é\"> & \xff"
	l, err := Acquire(context.Background(), path, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var info lockInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	want, _ := json.MarshalIndent(lockInfo{os.Getpid(), owner, info.AcquiredAt}, "", "  ")
	if string(b) != string(want)+"\n" || info.PID != os.Getpid() || info.Owner != "sitter:stop-check <\"é\"> & \ufffd" {
		t.Errorf("lock file:\n%s\nwant\n%s\n(%+v)", b, want, info)
	}
}

// TestFileName: fmt's "%06d.%s.json".
func TestFileName(t *testing.T) {
	for _, seq := range []int{0, 1, 9, 10, 99999, 100000, 999999, 1000000, 123456789} {
		if got, want := fileName(seq, "01J"), fmt.Sprintf("%06d.%s.json", seq, "01J"); got != want {
			t.Errorf("fileName(%d) = %q, want %q", seq, got, want)
		}
	}
}
