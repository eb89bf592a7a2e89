package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		e       Entry
		rewrote bool
		want    string
	}{
		{Entry{Decision: "deny"}, false, Deny},
		{Entry{Decision: "block"}, false, Deny},
		{Entry{Decision: "allow"}, true, Restricted},
		{Entry{Decision: "noop", Command: "echo sk-abcdefghijklmnopqrstu"}, false, Redacted},
		{Entry{Decision: "noop", Command: "ls"}, false, Allow},
	} {
		e := c.e
		e.Finish(c.rewrote)
		if e.Verdict != c.want || strings.Contains(e.Command, "sk-abc") {
			t.Errorf("%+v → %s, want %s", c.e, e.Verdict, c.want)
		}
	}
}

func TestAppendRotateQuery(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	c := Config{Dir: dir, MaxBytes: 2000, Keep: 2}
	for i := 0; i < 40; i++ {
		d := "noop"
		if i%4 == 0 {
			d = "deny"
		}
		e := Entry{Harness: "claude-code", Phase: "preToolUse", Session: fmt.Sprintf("s%d", i%2), Decision: d, Command: fmt.Sprintf("cmd %d", i), Handlers: []Handler{}}
		e.Finish(false)
		if err := Append(c, e); err != nil {
			t.Fatal(err)
		}
	}
	fs := Files(c)
	if len(fs) != 3 {
		t.Fatalf("files %q", fs)
	}
	for _, f := range fs {
		st, _ := os.Stat(f)
		if st.Size() > c.MaxBytes {
			t.Errorf("%s is %d bytes", f, st.Size())
		}
	}
	all, _, _ := Query(c, Filter{}, 0)
	if len(all) == 0 || len(all) >= 40 || all[len(all)-1].Command != "cmd 39" {
		t.Fatalf("%d entries kept, last %+v", len(all), all[len(all)-1])
	}
	// oldest first across files
	for i := 1; i < len(all); i++ {
		var a, b int
		fmt.Sscanf(all[i-1].Command, "cmd %d", &a)
		fmt.Sscanf(all[i].Command, "cmd %d", &b)
		if b != a+1 {
			t.Fatalf("out of order: %q then %q", all[i-1].Command, all[i].Command)
		}
	}
	denies, _, _ := Query(c, Filter{Session: "s0", Decision: "deny"}, 0)
	for _, e := range denies {
		if e.Session != "s0" || e.Decision != "deny" || e.Verdict != Deny {
			t.Errorf("filter let through %+v", e)
		}
	}
	if len(denies) == 0 {
		t.Error("no deny of s0")
	}
	last, _, _ := Query(c, Filter{}, 2)
	if len(last) != 2 || last[1].Command != "cmd 39" {
		t.Errorf("tail 2: %+v", last)
	}
}

func TestEncodeMatchesJSON(t *testing.T) {
	for _, e := range []Entry{
		{Time: "t", Harness: "h", NativeEvent: "E", Phase: "p", Decision: "noop", Verdict: "allow", Handlers: []Handler{}},
		{Time: "t", Harness: "h", NativeEvent: "E", Phase: "p", Session: "s", Tool: "Bash", ToolKind: "shell",
			Command: "echo \"<a&b>\"\n\t\\ é \u2028 \x01 \xff", Decision: "deny", Verdict: "deny", Reason: "r", Error: "sitter: bad",
			Handlers: []Handler{{Command: "x", Decision: "deny", LatencyMs: 1.25}, {Command: "y", Skipped: true}, {Command: "z", Error: "timeout: 1s", LatencyMs: 1000}, {Command: "w", Plugin: "acme-guard", Decision: "noop", Error: "exit: exit status 3"}, {Command: "v", Plugin: "p", Decision: "noop", Warning: "unknown result key \"decison\""}},
			Evidence: []string{"doc: u", "test: v"}, LatencyMs: 3.5},
		{Time: "t", Harness: "h", NativeEvent: "E", Phase: "p", Decision: "noop", Verdict: "allow", Handlers: []Handler{},
			Halted: true, HaltReason: "out of budget"},
		{Time: "t", Harness: "h", NativeEvent: "E", Phase: "p", Decision: "noop", Verdict: "allow", Handlers: []Handler{}, HaltDropped: true},
		{Time: "t", Harness: "h", NativeEvent: "Stop", Phase: "stop", Session: "s", Decision: "noop", Verdict: "allow",
			Handlers: []Handler{{Command: "x", Decision: "block", LatencyMs: 2}}, StopCap: 20},
	} {
		got := appendEntry(nil, &e)
		want, _ := json.Marshal(e)
		if string(got) != string(want)+"\n" {
			t.Errorf("encode:\n%s\nwant\n%s", got, want)
		}
	}
}

// A filter value no entry can hold is the reader's mistake, said with the
// values there are; a harness alias is the entries' harness id.
func TestFilterCheck(t *testing.T) {
	resolve := func(name string) (string, error) {
		if name == "claude" || name == "cc" || name == "claude-code" {
			return "claude-code", nil
		}
		return "", fmt.Errorf("unknown harness %q", name)
	}
	for _, tt := range []struct {
		in, want Filter
		wantErr  string
	}{
		{in: Filter{Decision: "deny", Verdict: "restricted"}, want: Filter{Decision: "deny", Verdict: "restricted"}},
		{in: Filter{Harness: "cc"}, want: Filter{Harness: "claude-code"}},
		{in: Filter{Harness: "claude"}, want: Filter{Harness: "claude-code"}},
		// A harness the registry does not know is matched as given: a
		// call that named it was recorded with it.
		{in: Filter{Harness: "nope"}, want: Filter{Harness: "nope"}},
		{in: Filter{Decision: "bogus"}, wantErr: `--decision "bogus": want deny, block, ask, allow or noop`},
		{in: Filter{Verdict: "nope"}, wantErr: `--verdict "nope": want allow, deny, restricted or redacted`},
	} {
		got, err := tt.in.Check(resolve)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Check(%+v) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Check(%+v) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// Query refuses a decision or verdict no entry can have rather than
// answering nothing, as if there were no such calls.
func TestQueryRefusesImpossibleFilter(t *testing.T) {
	c := Config{Dir: t.TempDir()}
	e := Entry{Harness: "claude-code", Decision: "deny", Handlers: []Handler{}}
	e.Finish(false)
	if err := Append(c, e); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{Decision: "bogus"}, {Verdict: "nope"}} {
		if es, _, err := Query(c, f, 0); err == nil || !strings.Contains(err.Error(), "want ") {
			t.Errorf("Query(%+v) = %d entries, %v; want an error naming the values", f, len(es), err)
		}
	}
	if es, _, err := Query(c, Filter{Decision: "deny", Verdict: Deny}, 0); err != nil || len(es) != 1 {
		t.Errorf("Query(deny) = %d entries, %v", len(es), err)
	}
}

// TestFromEnv: the rotation settings are whole numbers above 0; any
// other value leaves the default and is named in the error.
func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		max, keep string
		want      Config
		errs      []string
	}{
		{"", "", Config{Dir: "d"}, nil},
		{"2048", "5", Config{Dir: "d", MaxBytes: 2048, Keep: 5}, nil},
		{"10MB", "0", Config{Dir: "d"}, []string{`SITTER_AUDIT_MAX_BYTES="10MB"`, `SITTER_AUDIT_KEEP="0"`}},
		{"-1", "abc", Config{Dir: "d"}, []string{`SITTER_AUDIT_MAX_BYTES="-1"`, `SITTER_AUDIT_KEEP="abc"`}},
	} {
		t.Setenv("SITTER_AUDIT_MAX_BYTES", c.max)
		t.Setenv("SITTER_AUDIT_KEEP", c.keep)
		got, errs := FromEnv("d")
		err := errors.Join(errs...)
		if got != c.want {
			t.Errorf("max %q keep %q: %+v, want %+v", c.max, c.keep, got, c.want)
		}
		if (err != nil) != (c.errs != nil) {
			t.Errorf("max %q keep %q: error %v, want one naming %q", c.max, c.keep, err, c.errs)
			continue
		}
		for _, e := range c.errs {
			if !strings.Contains(err.Error(), e) {
				t.Errorf("max %q keep %q: error %v does not name %s", c.max, c.keep, err, e)
			}
		}
	}
}

// A handler's warning quotes what the handler printed: its secrets are
// masked like its error's.
func TestFinishMasksWarning(t *testing.T) {
	e := Entry{Decision: "noop", Handlers: []Handler{{Command: "x", Warning: `unknown result key "sk-ant-abcdefghijklmnopqrstuvwxyz0123"`}}}
	e.Finish(false)
	if w := e.Handlers[0].Warning; strings.Contains(w, "sk-ant-") || e.Verdict != Redacted {
		t.Errorf("Finish: warning %q, verdict %q; want the key masked, redacted", w, e.Verdict)
	}
}
