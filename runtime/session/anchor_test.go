package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/runtime/journal"
)

// Synthetic process chains: a handler under harness A, the agent shells of
// harnesses A and B, all below one terminal and one test runner.
var (
	terminal = proc{pid: 100, ppid: 1, start: "10", comm: "bash"}
	runner   = proc{pid: 90, ppid: 100, start: "9", comm: "go"}
	harnessA = proc{pid: 200, ppid: 90, start: "20", comm: "claude"}
	harnessB = proc{pid: 300, ppid: 90, start: "30", comm: "node"}
)

func chain(ps ...proc) []proc { return ps }

func TestAnchorOfSkipsShellsAndSitter(t *testing.T) {
	handler := chain(
		proc{pid: 205, comm: "sitter-host"}, proc{pid: 204, comm: "sh"}, proc{pid: 203, comm: "sitter"},
		proc{pid: 202, comm: "sitter-hook"}, proc{pid: 201, comm: "sh"}, harnessA, runner, terminal)
	a, ok := anchorOf(handler)
	if !ok || a.pid != harnessA.pid {
		t.Fatalf("anchor = %+v, %t; want the harness process %d", a, ok, harnessA.pid)
	}
	if _, ok := anchorOf(chain(proc{pid: 5, comm: "sh"}, proc{pid: 4, comm: "bash"})); ok {
		t.Errorf("a chain of shells has no harness")
	}
}

func TestDiscoverChain(t *testing.T) {
	dir := t.TempDir()
	if err := recordAt(dir, harnessA, "claude-code", "sa", "/p"); err != nil {
		t.Fatal(err)
	}
	if err := recordAt(dir, harnessB, "gemini-cli", "sb", "/p"); err != nil {
		t.Fatal(err)
	}
	shellA := chain(proc{pid: 211, comm: "sitter-host"}, proc{pid: 210, comm: "bash"}, harnessA, runner, terminal)
	shellB := chain(proc{pid: 311, comm: "sitter-host"}, proc{pid: 310, comm: "bash"}, harnessB, runner, terminal)
	for _, tc := range []struct {
		name  string
		chain []proc
		want  string
	}{
		{"agent of A", shellA, "sa"},
		{"agent of B", shellB, "sb"},
	} {
		c, err := discoverChain(dir, tc.chain)
		if err != nil || c.SessionID != tc.want || c.Via != "ancestry" {
			t.Errorf("%s: %+v, %v; want session %s", tc.name, c, err, tc.want)
		}
	}
	// A harness whose session was never recorded finds nothing, never
	// the session of a sibling harness under the same terminal.
	other := chain(proc{pid: 411, comm: "sitter-host"}, proc{pid: 410, comm: "bash"}, proc{pid: 400, ppid: 90, start: "40", comm: "codex"}, runner, terminal)
	if c, err := discoverChain(dir, other); err == nil {
		t.Errorf("an unrecorded harness found %+v", c)
	}
	// A pid reused by a later process is another process.
	reused := harnessA
	reused.start = "99"
	if c, err := discoverChain(dir, chain(reused)); err == nil {
		t.Errorf("a reused pid found %+v", c)
	}
	// A later session in the same process (a cleared conversation) wins.
	if err := recordAt(dir, harnessA, "claude-code", "sa2", "/p"); err != nil {
		t.Fatal(err)
	}
	if c, _ := discoverChain(dir, shellA); c.SessionID != "sa2" {
		t.Errorf("after a new session in A: %+v, want sa2", c)
	}
}

// TestDiscoverRealProcesses: this test process records itself as the
// harness; a shell it starts, and a command under that shell, find the
// session by walking the real process table.
func TestDiscoverRealProcesses(t *testing.T) {
	if os.Getenv("SITTER_ANCHOR_CHILD") == "1" {
		c, err := Discover()
		if err != nil {
			os.Stdout.WriteString("ERR " + err.Error())
			os.Exit(0)
		}
		os.Stdout.WriteString(c.Harness + " " + c.SessionID + " " + c.Via)
		os.Exit(0)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: the ps fallback is not exercised here")
	}
	state := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", state)
	t.Setenv("SITTER_SESSION_ID", "")
	dir, _ := anchorDir()
	self, ok := procStat(os.Getpid())
	if !ok {
		t.Fatal("cannot read this process")
	}
	if err := recordAt(dir, self, "codex", "real-session", "/p"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `"$0" -test.run '^TestDiscoverRealProcesses$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "SITTER_ANCHOR_CHILD=1", "SITTER_SESSION_ID=", "SITTER_HARNESS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "codex real-session ancestry") {
		t.Errorf("child discovered %q, want codex real-session via ancestry", got)
	}
}

func TestDiscoverEnvFirst(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	t.Setenv("SITTER_SESSION_ID", "from-env")
	t.Setenv("SITTER_HARNESS", "claude-code")
	c, err := Discover()
	if err != nil || c.SessionID != "from-env" || c.Via != "env" {
		t.Errorf("%+v, %v", c, err)
	}
}

// The anchors dir's prune mark is never written through a link planted at
// its name: the link's target keeps its content, the mark is made anew,
// and the anchor is recorded.
func TestChaosAnchorPruneMarkRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	// Old enough that a mark read through the link calls for a prune.
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(victim, old, old)
	if err := os.Symlink(victim, filepath.Join(dir, ".pruned")); err != nil {
		t.Skip(err)
	}
	if err := recordAt(dir, harnessA, "claude-code", "s1", "/w"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".pruned")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("prune mark: %v, %v; want a regular file", fi, err)
	}
	if a, err := readAnchor(anchorFile(dir, harnessA)); err != nil || a.SessionID != "s1" {
		t.Errorf("anchor: %+v, %v", a, err)
	}
}

// A session state file planted as a link in the state dir is not read
// through: Read says so, naming the file, and List leaves it out; a
// write replaces the link with the state, the link's target untouched.
func TestChaosSessionStateRefusesSymlink(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	elsewhere := filepath.Join(t.TempDir(), "state.json")
	planted := `{"version":"1","harness":"claude-code","sessionId":"s1","active":true,"runDir":"/elsewhere"}` + "\n"
	os.WriteFile(elsewhere, []byte(planted), 0o644)
	p, err := Path("claude-code", "s1")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(elsewhere, p); err != nil {
		t.Skip(err)
	}
	st, _, err := Read("claude-code", "s1")
	if err == nil || st != nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Read through a link: %+v, %v; want an error naming %s", st, err, p)
	}
	if all, _ := List(); len(all) != 0 {
		t.Errorf("List read through a link: %+v", all[0])
	}
	if err := writeAt(p, &State{Harness: "claude-code", SessionID: "s1"}, journal.WriteFileAtomic); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != planted {
		t.Errorf("the link's target was written: %s", b)
	}
	if st, _, err := Read("claude-code", "s1"); err != nil || st == nil || st.RunDir != "" {
		t.Errorf("after a write: %+v, %v", st, err)
	}
}
