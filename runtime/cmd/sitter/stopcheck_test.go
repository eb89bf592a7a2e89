package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/runtime/hook"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// The babysitter stop handler's call, `sitter session stop-check` with a
// hook event naming its session, is answered in this process; any other
// stop-check goes to sitter-host with the same stdin.
func TestStopCheckInProcess(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	ws := t.TempDir()
	entry := filepath.Join(ws, "p.mjs")
	os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644)
	ctx := context.Background()
	dir, m, err := runs.Create(ctx, runs.CreateOptions{RunsDir: filepath.Join(ws, "runs"), ProcessID: "p", Entry: entry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runs.RequestEffects(ctx, dir, []runs.NewEffect{{Key: "k", TaskID: "t", Kind: "agent", Label: "review"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := session.Bind("claude-code", "s1", m.RunID, dir, 0); err != nil {
		t.Fatal(err)
	}
	// A stand-in sitter-host on PATH shows what was forwarded.
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "sitter-host"), []byte("#!/bin/sh\necho \"host: $*\"\ncat\nexit 3\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	ev, _ := json.Marshal(hook.Event{Version: hook.Version, Harness: "claude-code", NativeEvent: "Stop", Phase: "stop", Session: hook.Session{ID: "s1"}})
	for _, tc := range []struct {
		name, args, stdin string
		code              int
		stdout            string // a prefix
	}{
		{"hook event", "session stop-check", string(ev), 0, `{"decision":"block","reason":"Babysitter run ` + m.RunID},
		{"no session in the event", "session stop-check", `{"harness":"claude-code"}`, 3, "host: session stop-check\n{\"harness\":\"claude-code\"}"},
		{"not an event", "session stop-check", "{", 3, "host: session stop-check\n{"},
		{"no event", "session stop-check", "", 3, "host: session stop-check\n"},
		{"flags", "session stop-check --harness codex", string(ev), -1, ""}, // sitter-host is exec'd: not in a test
	} {
		if tc.code < 0 {
			if isStopCheck(strings.Fields(tc.args)) {
				t.Errorf("%s: answered in process", tc.name)
			}
			continue
		}
		var stdout, stderr bytes.Buffer
		code := run(strings.Fields(tc.args), strings.NewReader(tc.stdin), &stdout, &stderr, nil)
		if code != tc.code || !strings.HasPrefix(stdout.String(), tc.stdout) || stderr.Len() > 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q…", tc.name, code, stdout.String(), stderr.String(), tc.code, tc.stdout)
		}
	}
	st, _, err := session.Read("claude-code", "s1")
	if err != nil || st.Iteration != 1 {
		t.Errorf("session after one in-process block: %+v, %v", st, err)
	}
	// A session that drives a run of a shared store: its stop check goes
	// to sitter-host, which has the network client the hook binary lacks.
	if _, _, _, err := session.RebindStore("claude-code", "s2", "", "R2", filepath.Join(ws, "copy"), "nats://127.0.0.1:4222", 0); err != nil {
		t.Fatal(err)
	}
	ev2, _ := json.Marshal(hook.Event{Version: hook.Version, Harness: "claude-code", NativeEvent: "Stop", Phase: "stop", Session: hook.Session{ID: "s2"}})
	var stdout, stderr bytes.Buffer
	code := run([]string{"session", "stop-check"}, bytes.NewReader(ev2), &stdout, &stderr, nil)
	if want := "host: session stop-check\n" + string(ev2); code != 3 || !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("stop check of a stored run's session: exit %d, stdout %q; want it handed to sitter-host (exit 3, %q)", code, stdout.String(), want)
	}
}
