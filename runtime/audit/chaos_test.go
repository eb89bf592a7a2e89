package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sitter.dev/sitter/runtime/internal/testproc"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv makes this test binary one audited hook call (see
// TestAuditHelperProcess): the value is the state dir.
const helperEnv = "SITTER_AUDIT_CHAOS_DIR"

// TestAuditHelperProcess is not a test: run by the chaos tests as a child
// process, it waits for its stdin to close (so that all children start
// before any appends) and appends one entry, as a hook call does.
func TestAuditHelperProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("helper process of the chaos tests")
	}
	io.Copy(io.Discard, os.Stdin)
	max, _ := strconv.ParseInt(os.Getenv("SITTER_AUDIT_MAX_BYTES"), 10, 64)
	keep, _ := strconv.Atoi(os.Getenv("SITTER_AUDIT_KEEP"))
	e := Entry{Harness: "claude-code", NativeEvent: "PreToolUse", Phase: "preToolUse", Session: "chaos",
		Command: "call " + os.Getenv("SITTER_AUDIT_CHAOS_ID"), Decision: "noop", Handlers: []Handler{}}
	e.Finish(false)
	if err := Append(Config{Dir: dir, MaxBytes: max, Keep: keep}, e); err != nil {
		fmt.Fprintln(os.Stderr, "append:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// runAppenders runs n appending processes at once and returns their
// failures.
func runAppenders(t *testing.T, dir string, n int, env ...string) []string {
	t.Helper()
	var fails []string
	cs := testproc.Together(t, "TestAuditHelperProcess", n, func(i int) []string {
		return append([]string{helperEnv + "=" + dir, "SITTER_AUDIT_CHAOS_ID=" + strconv.Itoa(i)}, env...)
	})
	for i, c := range cs {
		if c.Err != nil {
			fails = append(fails, fmt.Sprintf("child %d: %v: %s", i, c.Err, c.Stderr.String()))
		}
	}
	return fails
}

// 200 concurrent audited calls with a log that rotates every few lines:
// every line is in audit.jsonl or a rotated file, once. Without the
// rotation lock, two calls that both found the log full both shifted the
// files, and the second shift overwrote a rotated file.
func TestChaosAuditRotation(t *testing.T) {
	const n = 200
	dir := filepath.Join(t.TempDir(), "state")
	// A line is about 200 bytes: 5 a file, 40 or more rotations; Keep
	// holds them all, so any line missing was lost, not rotated out.
	fails := runAppenders(t, dir, n, "SITTER_AUDIT_MAX_BYTES=1000", "SITTER_AUDIT_KEEP=1000")
	// On a machine loaded enough that a call waits out RotateLockWait,
	// it appends without rotating and says so (its line must still be
	// there, once: counted below); any other failure fails the test.
	var hard []string
	busy := 0
	for _, f := range fails {
		if strings.Contains(f, "appended without rotating") && strings.Contains(f, ErrLockBusy.Error()) {
			busy++
			continue
		}
		hard = append(hard, f)
	}
	if len(hard) > 0 {
		t.Fatalf("%d appends failed:\n%s", len(hard), strings.Join(hard, "\n"))
	}
	if busy > 0 {
		t.Logf("%d of %d calls found the rotation lock busy for %s and appended without rotating", busy, n, RotateLockWait)
	}
	c := Config{Dir: dir, MaxBytes: 1000, Keep: 1000}
	seen := map[string]int{}
	lines := 0
	for _, p := range Files(c) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s does not end with a newline", p)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l == "" {
				continue
			}
			lines++
			var e Entry
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Errorf("%s: torn line %q", p, l)
				continue
			}
			seen[e.Command]++
		}
	}
	if lines != n {
		t.Errorf("%d lines across %d files, want %d", lines, len(Files(c)), n)
	}
	var wrong []string
	for i := 0; i < n; i++ {
		if k := seen["call "+strconv.Itoa(i)]; k != 1 {
			wrong = append(wrong, fmt.Sprintf("%d (%d times)", i, k))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%d calls not logged once: %s", len(wrong), strings.Join(wrong, ", "))
	}
	if len(Files(c)) < 10 {
		t.Errorf("only %d files: the log did not rotate as the test means it to", len(Files(c)))
	}
}

// A rotation whose lock cannot be had appends without rotating, says
// why, and never waits past the bound.
func TestChaosAuditRotationLockBusy(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("flock")
	}
	dir := t.TempDir()
	c := Config{Dir: dir, MaxBytes: 100, Keep: 2}
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, bytes.Repeat([]byte("{}\n"), 50), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := LockState(filepath.Join(dir, LockName), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	start := time.Now()
	err = Append(c, Entry{Decision: "noop", Verdict: Allow, Handlers: []Handler{}})
	if !errors.Is(err, ErrLockBusy) || !strings.Contains(err.Error(), "without rotating") {
		t.Errorf("Append = %v, want the busy lock said", err)
	}
	if d := time.Since(start); d > RotateLockWait+time.Second {
		t.Errorf("Append waited %v", d)
	}
	if fs := Files(c); len(fs) != 1 {
		t.Errorf("files %q: rotated without the lock", fs)
	}
	if b, _ := os.ReadFile(path); !bytes.HasSuffix(b, []byte("\"latencyMs\":0}\n")) {
		t.Errorf("entry not appended: ...%q", b[max(0, len(b)-40):])
	}
}

// One line over the reader's limit is skipped and counted: the entries
// before and after it are read (it used to fail every read until it
// rotated out).
func TestChaosAuditOversizedLine(t *testing.T) {
	dir := t.TempDir()
	c := Config{Dir: dir}
	add := func(cmd string) {
		e := Entry{Harness: "h", Phase: "preToolUse", Decision: "noop", Command: cmd, Handlers: []Handler{}}
		e.Finish(false)
		if err := Append(c, e); err != nil {
			t.Fatal(err)
		}
	}
	add("before")
	huge := Entry{Harness: "h", Phase: "stop", Decision: "block", Reason: strings.Repeat("x", 5<<20), Handlers: []Handler{}}
	huge.Finish(false)
	if err := Append(c, huge); err != nil {
		t.Fatal(err)
	}
	add("after")
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{torn")
	f.Close()

	es, sk, err := Query(c, Filter{}, 0)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	if len(es) != 2 || es[0].Command != "before" || es[1].Command != "after" {
		t.Errorf("entries %+v, want before and after", es)
	}
	if sk.TooLong != 1 || sk.Bad != 1 {
		t.Errorf("skipped %+v, want 1 too long and 1 bad", sk)
	}
	if s := sk.String(); !strings.Contains(s, "1 line longer than 4 MiB") || !strings.Contains(s, "1 line that is not an entry") {
		t.Errorf("skipped says %q", s)
	}
	// A line of exactly MaxLine bytes is still read.
	dir2 := t.TempDir()
	line := []byte(`{"decision":"noop","reason":"` + strings.Repeat("y", MaxLine-len(`{"decision":"noop","reason":""}`)) + `"}` + "\n")
	if len(line) != MaxLine+1 {
		t.Fatalf("line is %d bytes", len(line))
	}
	if err := os.WriteFile(filepath.Join(dir2, FileName), line, 0o600); err != nil {
		t.Fatal(err)
	}
	es, sk, err = Query(Config{Dir: dir2}, Filter{}, 0)
	if err != nil || len(es) != 1 || sk.TooLong != 0 {
		t.Errorf("a line of MaxLine bytes: %d entries, %+v, %v", len(es), sk, err)
	}
}

// A symbolic link planted at audit.jsonl (or at the rotation lock) is
// refused: the file it points at is not written, and the call says so.
func TestChaosAuditSymlink(t *testing.T) {
	for _, name := range []string{FileName, LockName} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			outside := filepath.Join(t.TempDir(), "precious")
			const content = "not the audit log\n"
			if err := os.WriteFile(outside, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
				t.Skip("no symlinks:", err)
			}
			c := Config{Dir: dir, Keep: 2}
			if name == LockName {
				c.MaxBytes = 10
				// a full log, so that the call wants to rotate
				if err := os.WriteFile(filepath.Join(dir, FileName), bytes.Repeat([]byte("{}\n"), 10), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := Append(c, Entry{Decision: "noop", Verdict: Allow, Handlers: []Handler{}})
			if !errors.Is(err, ErrSymlink) {
				t.Errorf("Append = %v, want the link refused", err)
			}
			if b, _ := os.ReadFile(outside); string(b) != content {
				t.Errorf("the file outside was changed: %q", b)
			}
			if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link is gone: %v", err)
			}
			if name == FileName {
				_, sk, err := Query(c, Filter{}, 0)
				if err != nil || len(sk.Refused) != 1 {
					t.Errorf("Query through a link: %+v, %v", sk, err)
				}
			}
		})
	}
}
