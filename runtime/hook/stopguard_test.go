package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func stopEvent(session string, active *bool) Event {
	return Event{Harness: "claude-code", NativeEvent: "Stop", Phase: "stop", Session: Session{ID: session}, StopHookActive: active}
}

// countOnDisk reads a counter file as the guard left it; zero when none.
func countOnDisk(t *testing.T, path string) stopCount {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return stopCount{}
	}
	var c stopCount
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("counter %s: %v %q", path, err, b)
	}
	return c
}

func TestStopGuard(t *testing.T) {
	yes, no := true, false
	block := Result{Decision: Block, Reason: "tests fail"}
	deny := Result{Decision: Deny, Reason: "tests fail"} // a deny on stop is a block
	allow := Result{Decision: Allow}
	noop := Result{Decision: Noop}
	capped := "sitter: stop blocked 3 times in a row for session s1; letting it stop"
	let := Result{Decision: Noop}

	type step struct {
		ev    Event
		r     Result
		same  bool // another plugin's call at the same stop as the step before
		want  Result
		diags []string
		count int // counter on disk after the step; 0 = no file
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "cap reached: the chain's blocks pass until a stop the harness says is fresh",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", &yes), r: deny, want: deny, count: 2},
				{ev: stopEvent("s1", &yes), r: block, want: block, count: 3},
				{ev: stopEvent("s1", &yes), r: block, want: let, diags: []string{capped}, count: 4},
				{ev: stopEvent("s1", &yes), r: block, want: let, diags: []string{capped}, count: 4},
				{ev: stopEvent("s1", &no), r: block, want: block, count: 1},
			},
		},
		{
			name: "a harness that does not say: the cap is reached, then counting starts over",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", nil), r: block, want: block, count: 2},
				{ev: stopEvent("s1", nil), r: block, want: block, count: 3},
				{ev: stopEvent("s1", nil), r: block, want: let, diags: []string{capped}, count: 4},
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
			},
		},
		{
			name: "a harness that does not say: a stop no call blocked ends the chain",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", nil), r: block, want: block, count: 2},
				{ev: stopEvent("s1", nil), r: allow, want: allow, count: 2}, // another plugin may block this stop
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", nil), r: noop, want: noop, count: 1},
				{ev: stopEvent("s1", nil), r: noop, want: noop},
			},
		},
		{
			name: "stopHookActive true: an allow does not end the chain (another hook blocked that stop)",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", &yes), r: allow, want: allow, count: 1},
				{ev: stopEvent("s1", &yes), r: block, want: block, count: 2},
				{ev: stopEvent("s1", &no), r: allow, want: allow},
			},
		},
		{
			name: "stopHookActive false starts a new chain (each plugin's call of that stop starts it)",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", &yes), r: block, want: block, count: 2},
				{ev: stopEvent("s1", &no), r: block, want: block, count: 1},
				{ev: stopEvent("s1", &no), r: block, same: true, want: block, count: 1},
				{ev: stopEvent("s1", &yes), r: block, want: block, count: 2},
			},
		},
		{
			name: "two plugins blocking every stop: the session stops at the cap",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", nil), r: block, same: true, want: block, count: 2},
				{ev: stopEvent("s1", nil), r: block, want: block, count: 3},
				{ev: stopEvent("s1", nil), r: block, same: true, want: let, diags: []string{capped}, count: 4},
				{ev: stopEvent("s1", nil), r: block, want: let, diags: []string{capped}, count: 4},
				{ev: stopEvent("s1", nil), r: block, same: true, want: let, diags: []string{capped}, count: 4},
				// the session stopped; the next stop starts a chain
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
			},
		},
		{
			name: "one plugin blocks, another allows: the blocks still reach the cap",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", nil), r: allow, same: true, want: allow, count: 1},
				{ev: stopEvent("s1", nil), r: allow, want: allow, count: 1},
				{ev: stopEvent("s1", nil), r: block, same: true, want: block, count: 2},
				{ev: stopEvent("s1", nil), r: block, want: block, count: 3},
				{ev: stopEvent("s1", nil), r: noop, same: true, want: noop, count: 3},
				{ev: stopEvent("s1", nil), r: noop, want: noop, count: 3},
				{ev: stopEvent("s1", nil), r: block, same: true, want: let, diags: []string{capped}, count: 4},
			},
		},
		{
			name: "sessions count apart",
			steps: []step{
				{ev: stopEvent("s1", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s2", nil), r: block, want: block, count: 1},
				{ev: stopEvent("s1", &yes), r: block, want: block, count: 2},
			},
		},
		{
			name: "no session id: no persistence, blocks pass",
			steps: []step{
				{ev: stopEvent("", nil), r: block, want: block},
				{ev: stopEvent("", nil), r: block, want: block},
				{ev: stopEvent("", nil), r: block, want: block},
				{ev: stopEvent("", nil), r: block, want: block},
				{ev: stopEvent("", nil), r: block, want: block},
			},
		},
		{
			name: "other phases are untouched",
			steps: []step{
				{ev: Event{Harness: "claude-code", Phase: "preToolUse", Session: Session{ID: "s1"}}, r: Result{Decision: Deny}, want: Result{Decision: Deny}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := StopGuard{Dir: t.TempDir(), Cap: 3, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			for i, s := range tt.steps {
				if i > 0 && !s.same {
					g.Start = g.Start.Add(time.Minute)
				}
				got, diags := g.Apply(s.ev, s.r)
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Errorf("step %d: result (-want +got):\n%s", i, diff)
				}
				if diff := cmp.Diff(s.diags, diags); diff != "" {
					t.Errorf("step %d: diags (-want +got):\n%s", i, diff)
				}
				if s.ev.Session.ID == "" {
					if ents, _ := os.ReadDir(filepath.Join(g.Dir, "stop")); len(ents) > 0 {
						t.Errorf("step %d: counter files without a session id: %v", i, ents)
					}
					continue
				}
				path := g.path(s.ev.Harness, s.ev.Session.ID)
				if n := countOnDisk(t, path).Count; n != s.count {
					t.Errorf("step %d: count on disk = %d; want %d", i, n, s.count)
				}
				if _, err := os.Lstat(path); s.count == 0 && err == nil {
					t.Errorf("step %d: a counter file with nothing counted", i)
				}
			}
		})
	}
}

func TestStopGuardFileName(t *testing.T) {
	g := StopGuard{Dir: "/state", Cap: 1}
	p := g.path("claude-code", "../../etc/passwd")
	if !regexp.MustCompile(`^/state/stop/[0-9a-f]{32}\.json$`).MatchString(p) {
		t.Errorf("path = %q, want a hashed name under /state/stop", p)
	}
	if g.path("a", "bc") == g.path("ab", "c") {
		t.Error("harness and session are not separated in the hash")
	}
}

func TestStopGuardErrorsAreDiagnostics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	block := Result{Decision: Block, Reason: "again"}

	// A corrupt counter counts from zero.
	g := StopGuard{Dir: dir, Cap: 3}
	p := g.path("claude-code", "s1")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, diags := g.Apply(stopEvent("s1", nil), block)
	if diff := cmp.Diff(block, got); diff != "" || len(diags) != 1 {
		t.Errorf("corrupt counter: (-want +got):\n%s\ndiags %q", diff, diags)
	}
	if n := countOnDisk(t, p).Count; n != 1 {
		t.Errorf("count after corrupt = %d, want 1", n)
	}

	// A state dir that cannot be created cannot count: the stop is let
	// through, with the reason.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	g = StopGuard{Dir: filepath.Join(file, "sub"), Cap: 3}
	got, diags = g.Apply(stopEvent("s1", nil), block)
	if diff := cmp.Diff(Result{Decision: Noop}, got); diff != "" || len(diags) != 1 || !strings.HasSuffix(diags[0], "; letting the session stop") {
		t.Errorf("bad dir: (-want +got):\n%s\ndiags %q", diff, diags)
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	check := func(want string) {
		t.Helper()
		if got, err := StateDir(); err != nil || got != want {
			t.Errorf("StateDir() = %q, %v; want %q", got, err, want)
		}
	}
	check("/home/u/.local/state/sitter")
	t.Setenv("XDG_STATE_HOME", "/xdg")
	check("/xdg/sitter")
	t.Setenv("SITTER_STATE_DIR", "/explicit")
	check("/explicit")
}

func TestStopCap(t *testing.T) {
	if n, err := StopCap("5"); n != 5 || err != nil {
		t.Errorf("StopCap(5) = %d, %v", n, err)
	}
	for _, bad := range []string{"", "x", "-1"} {
		if n, err := StopCap(bad); err == nil || n != DefaultStopCap {
			t.Errorf("StopCap(%q) = %d, %v; want the default and an error", bad, n, err)
		}
	}
}
