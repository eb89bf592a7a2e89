package verbs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sitter audit ship copies the local log to the store once; audit query
// and tail --store read it back, with the local filters and --source.
func TestAuditShipCLI(t *testing.T) {
	url := natsServer(t)
	dir := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", dir)
	t.Setenv("SITTER_AUDIT_MAX_BYTES", "")
	t.Setenv("SITTER_AUDIT_KEEP", "")
	t.Setenv("SITTER_STORE", "")
	line := func(session, decision string) string {
		return `{"time":"2026-01-01T00:00:00Z","harness":"codex","nativeEvent":"PreToolUse","phase":"preToolUse","session":"` + session +
			`","handlers":[],"decision":"` + decision + `","verdict":"allow","latencyMs":1}` + "\n"
	}
	log := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(log, []byte(line("s1", "allow")+line("s2", "deny")), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(args, nil, &out, &errb, nil)
		return out.String(), errb.String(), code
	}
	ship := func(want int) {
		t.Helper()
		out, errs, code := run("audit", "ship", "--store", url, "--source", "box-1", "--json")
		var r struct{ Shipped, Skipped int }
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Shipped != want {
			t.Fatalf("audit ship: exit %d, %q, %q; want %d shipped", code, out, errs, want)
		}
	}
	ship(2)
	ship(0)
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line("s3", "deny"))
	f.Close()
	ship(1)

	out, errs, code := run("audit", "query", "--store", url, "--decision", "deny", "--json")
	var sessions []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct{ Source, Session string }
		json.Unmarshal([]byte(l), &e)
		if e.Source != "box-1" {
			t.Errorf("entry %s: source %q", l, e.Source)
		}
		sessions = append(sessions, e.Session)
	}
	if code != 0 || strings.Join(sessions, ",") != "s2,s3" {
		t.Fatalf("audit query --store --decision deny: exit %d, %q, %q", code, out, errs)
	}
	if out, _, code = run("audit", "tail", "--store", url, "-n", "1"); code != 0 || !strings.HasPrefix(out, "box-1 ") || !strings.Contains(out, " s3 ") {
		t.Errorf("audit tail --store -n 1: exit %d, %q", code, out)
	}
	// A source that shipped nothing has no entries, said at once.
	start := time.Now()
	if out, errs, code = run("audit", "query", "--store", url, "--source", "box-2"); code != 0 || out != "no entries match in the audit of "+url+"\n" || errs != "" {
		t.Errorf("--source box-2: exit %d, %q, %q; want the one line that says no entry matches", code, out, errs)
	}
	if out, errs, code = run("audit", "query", "--store", url, "--source", "box-2", "--json"); code != 0 || out != "" || errs != "" {
		t.Errorf("--source box-2 --json: exit %d, %q, %q; want nothing", code, out, errs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("--source box-2 took %s", d)
	}
	// An error names the verb.
	if _, errs, code = run("audit", "tail", "--store", "nats://127.0.0.1:1"); code != 1 || !strings.HasPrefix(errs, "sitter: audit tail: ") {
		t.Errorf("audit tail --store of no server: exit %d, %q", code, errs)
	}
	if _, errs, code = run("audit", "ship"); code != 1 || !strings.Contains(errs, "--store") {
		t.Errorf("audit ship without a store: exit %d, %q", code, errs)
	}
	if _, errs, code = run("audit", "query", "--source", "box-1"); code != 2 {
		t.Errorf("--source without --store: exit %d, %q", code, errs)
	}
}
