package verbs

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store/natsstore"
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

// A bad --max, --ack-wait, --reconcile or --kinds is a usage error, as every
// verb's bad flag value: the line naming the flag, the usage, exit 2,
// before the store is dialled, and before a missing --store is named
// (the README's `sitter worker --max x` names --max).
func TestWorkerBadFlags(t *testing.T) {
	t.Setenv("SITTER_STORE", "")
	for _, tc := range []struct{ flag, val, want string }{
		{"--max", "x", `--max "x" is not a count`},
		{"--max", "-1", `--max "-1" is not a count`},
		{"--ack-wait", "soon", `--ack-wait "soon": want a Go duration of at least 1s`},
		{"--ack-wait", "10ms", `--ack-wait "10ms": want a Go duration of at least 1s`},
		{"--reconcile", "10ms", `--reconcile "10ms": want a Go duration of at least 1s, or 0`},
		{"--reconcile", "-1s", `--reconcile "-1s": want a Go duration of at least 1s, or 0`},
		{"--reconcile", "soon", `--reconcile "soon": want a Go duration of at least 1s, or 0`},
		{"--kinds", "a.b", `--kinds: "a.b" is not a kind: a kind is letters, digits, - and _ (at most 64)`},
		{"--kinds", "shell,", `--kinds: "" is not a kind: a kind is letters, digits, - and _ (at most 64)`},
	} {
		for _, store := range [][]string{{"--store", "nats://127.0.0.1:1"}, nil} {
			var out, errb bytes.Buffer
			code := Run(append(append([]string{"worker"}, store...), tc.flag, tc.val), nil, &out, &errb, registry.Registry)
			if msg := errb.String(); code != 2 || !strings.HasPrefix(msg, "sitter: worker: "+tc.want+"\n") || !strings.Contains(msg, "Usage:") || out.Len() > 0 {
				t.Errorf("%v %s %s: exit %d, stderr %q; want exit 2, %q and the usage", store, tc.flag, tc.val, code, msg, tc.want)
			}
		}
	}
}

// A worker that fails to start (here: its kinds overlap those another set
// of kinds took on the store) says why, and no "0 effect(s) done" before.
func TestWorkerStartFailureSaysOnlyWhy(t *testing.T) {
	url := natsServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := openStore(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A worker of shell and node took its consumer, and ended.
	s.Work(ctx, natsstore.WorkOptions{Kinds: []string{"shell", "node"}, Reconcile: natsstore.ReconcileAtStart, Max: 1,
		Do: func(context.Context, json.RawMessage) run.PostOptions { return run.PostOptions{} }})
	var out, errb bytes.Buffer
	code := Run([]string{"worker", "--store", url, "--kinds", "shell"}, nil, &out, &errb, registry.Registry)
	if code != 1 || !strings.HasPrefix(errb.String(), "sitter: worker: work queue consumer: --kinds shell overlaps") || strings.Contains(errb.String(), "effect(s) done") {
		t.Errorf("exit %d, stderr %q; want exit 1 and only the overlap", code, errb.String())
	}
}
