package verbs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A worker's shell effect: ok with the output on exit 0, an error with
// the exit code otherwise, killed by its timeout or an output flood.
func TestWorkerShellEffect(t *testing.T) {
	for _, tc := range []struct {
		name, def, status, want string
	}{
		{"ok", `{"kind":"shell","shell":{"command":"echo hi; echo oops >&2"}}`, "ok", `{"exitCode":0,"stderr":"oops\n","stdout":"hi\n"}`},
		{"exit code", `{"kind":"shell","shell":{"command":"exit 7"}}`, "error", `exit status 7`},
		{"timeout", `{"kind":"shell","timeoutMs":200,"shell":{"command":"sleep 5"}}`, "error", "timed out after 200ms"},
		{"flood", `{"kind":"shell","shell":{"command":"yes"}}`, "error", "output over 256 KiB"},
		{"no command", `{"kind":"agent"}`, "error", "no shell.command"},
	} {
		r := shellEffect(context.Background(), json.RawMessage(tc.def))
		got := string(r.Value)
		if r.Status == "error" {
			got = string(r.Error)
		}
		if r.Status != tc.status || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s %s, want %s containing %s", tc.name, r.Status, got, tc.status, tc.want)
		}
	}
}

// --reconcile takes 0 (at start only) or a duration of at least 1s; a bad
// value is refused before the store is dialled.
func TestWorkerReconcileFlag(t *testing.T) {
	for _, v := range []string{"10ms", "-1s", "soon"} {
		out, err := sitterCmd(nil, "worker", "--store", "nats://127.0.0.1:1", "--reconcile", v).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `--reconcile "`+v+`": want a Go duration of at least 1s, or 0`) {
			t.Errorf("--reconcile %s: %v\n%s", v, err, out)
		}
	}
}
