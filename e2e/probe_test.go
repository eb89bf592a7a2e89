//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"sitter.dev/sitter/gen"
	"sitter.dev/sitter/gen/write"
	"sitter.dev/sitter/generated/registry"
)

// The probe plugin records every canonical event it sees, adds context at
// session start and prompt submit, and answers stop with a block driven by
// a mode file: "once" blocks the first stop only, "always" every stop. Its
// prompt-submit handler answers what the file prompt-reply holds (a
// canonical result) when it exists, the context otherwise; its tool
// handlers answer what the files pre-tool-reply and post-tool-reply hold,
// nothing when they are absent.
const probePlugin = `name: probe
version: 0.0.1
description: e2e probe
handlers:
  - phase: sessionStart
    command: 'cat >> "$E2E_DIR/events.jsonl"; echo "{\"additionalContext\":\"CTX-SESSION-START\"}"'
  - phase: userPromptSubmit
    command: 'cat >> "$E2E_DIR/events.jsonl"; cat "$E2E_DIR/prompt-reply" 2>/dev/null || echo "{\"additionalContext\":\"CTX-PROMPT-SUBMIT\"}"'
  - phase: beforePromptBuild
    command: 'cat >> "$E2E_DIR/events.jsonl"; echo "{\"additionalContext\":\"CTX-PROMPT-BUILD\"}"'
  - phase: preToolUse
    command: 'cat >> "$E2E_DIR/events.jsonl"; cat "$E2E_DIR/pre-tool-reply" 2>/dev/null; true'
  - phase: postToolUse
    command: 'cat >> "$E2E_DIR/events.jsonl"; cat "$E2E_DIR/post-tool-reply" 2>/dev/null; true'
  - phase: stop
    command: '"$SITTER_PLUGIN_DIR/stop.sh"'
files: [stop.sh]
`

const stopScript = `#!/bin/sh
cat >> "$E2E_DIR/events.jsonl"
mode=$(cat "$E2E_DIR/stop-mode" 2>/dev/null)
case "$mode" in
once)
	if [ ! -e "$E2E_DIR/stopped-once" ]; then
		: > "$E2E_DIR/stopped-once"
		echo '{"decision":"block","reason":"REASON-CONTINUE: run the tests once more"}'
	fi ;;
always)
	echo '{"decision":"block","reason":"REASON-ALWAYS: keep going"}' ;;
esac
`

var (
	probeOnce sync.Once
	probeRoot string
	probeErr  error
)

// probeBundle generates the probe plugin's bundles (with the real atlas and
// generator) and returns the bundle dir for a harness.
func probeBundle(t *testing.T, harness string) string {
	t.Helper()
	probeOnce.Do(func() {
		root, err := os.MkdirTemp("", "sitter-e2e-probe-")
		if err != nil {
			probeErr = err
			return
		}
		if err := copyDir(filepath.Join(repo(t), "atlas"), filepath.Join(root, "atlas")); err != nil {
			probeErr = err
			return
		}
		src := filepath.Join(root, "plugins-src", "probe")
		os.MkdirAll(src, 0o755)
		os.WriteFile(filepath.Join(src, "plugin.yaml"), []byte(probePlugin), 0o644)
		os.WriteFile(filepath.Join(src, "stop.sh"), []byte(stopScript), 0o755)
		stopper := filepath.Join(root, "plugins-src", "stopper")
		os.MkdirAll(stopper, 0o755)
		os.WriteFile(filepath.Join(stopper, "plugin.yaml"), []byte(stopperPlugin), 0o644)
		os.WriteFile(filepath.Join(stopper, "stop.sh"), []byte(stopScript), 0o755)
		obs := filepath.Join(root, "plugins-src", "observer")
		os.MkdirAll(obs, 0o755)
		os.WriteFile(filepath.Join(obs, "plugin.yaml"), []byte(observerPlugin()), 0o644)
		rep := filepath.Join(root, "plugins-src", "replier")
		os.MkdirAll(rep, 0o755)
		os.WriteFile(filepath.Join(rep, "plugin.yaml"), []byte(replierPlugin()), 0o644)
		os.WriteFile(filepath.Join(rep, "reply.sh"), []byte(replyScript), 0o755)
		w := filepath.Join(root, "plugins-src", "watcher")
		os.MkdirAll(w, 0o755)
		os.WriteFile(filepath.Join(w, "plugin.yaml"), []byte(watcherPlugin), 0o644)
		_, files, err := gen.Generate(root)
		if err != nil {
			probeErr = err
			return
		}
		if _, err := write.Files(root, files, gen.Owned); err != nil {
			probeErr = err
			return
		}
		probeRoot = root
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return filepath.Join(probeRoot, "artifacts", "probe", harness)
}

// stopperPlugin has the probe's stop handler only.
const stopperPlugin = `name: stopper
version: 0.0.1
description: e2e stop handler
handlers:
  - phase: stop
    command: '"$SITTER_PLUGIN_DIR/stop.sh"'
files: [stop.sh]
`

// watcherPlugin has two fileChanged handlers, each with a watch list of
// one project file, recording what it gets in its own folder of $E2E_DIR
// (the folders must exist). It has no sessionStart handler.
const watcherPlugin = `name: watcher
version: 0.0.1
description: e2e fileChanged handlers with watch lists
handlers:
  - phase: fileChanged
    command: 'cat >> "$E2E_DIR/notes/events.jsonl"'
    watch: [notes.txt]
  - phase: fileChanged
    command: 'cat >> "$E2E_DIR/todo/events.jsonl"'
    watch: [docs/todo.md]
`

// watcherBundle is the watcher plugin's bundle for a harness.
func watcherBundle(t *testing.T, harness string) string {
	t.Helper()
	probeBundle(t, harness)
	return filepath.Join(probeRoot, "artifacts", "watcher", harness)
}

// stopperBundle is the stopper plugin's bundle for a harness.
func stopperBundle(t *testing.T, harness string) string {
	t.Helper()
	probeBundle(t, harness)
	return filepath.Join(probeRoot, "artifacts", "stopper", harness)
}

// observerBundle is the observer plugin's bundle for a harness: a handler
// on every canonical phase of the atlas that only records the event.
func observerBundle(t *testing.T, harness string) string {
	t.Helper()
	probeBundle(t, harness)
	return filepath.Join(probeRoot, "artifacts", "observer", harness)
}

// observerPlugin registers a recording handler on every phase some harness
// has, except those whose mere registration changes what the harness does
// (atlas replaces: Claude's WorktreeCreate hook replaces worktree creation),
// which the generator refuses.
func observerPlugin() string {
	var b strings.Builder
	b.WriteString("name: observer\nversion: 0.0.1\ndescription: e2e observer\nhandlers:\n")
	for _, p := range observedPhases() {
		fmt.Fprintf(&b, "  - phase: %s\n    command: 'cat >> \"$E2E_DIR/events.jsonl\"'\n", p)
	}
	return b.String()
}

// observedPhases is every canonical phase some harness has, sorted, but
// those with an event whose mere registration changes what the harness
// does (atlas replaces: Claude's WorktreeCreate and WorktreeRemove).
func observedPhases() []string {
	skip := map[string]bool{}
	seen := map[string]bool{}
	for _, d := range registry.Registry().Descriptors {
		for _, e := range d.Events {
			seen[e.Phase] = true
			if e.Replaces != nil {
				skip[e.Phase] = true
			}
		}
	}
	var ps []string
	for p := range seen {
		if !skip[p] {
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}

// replierBundle is the replier plugin's bundle for a harness: a handler on
// every phase the observer has, which records the event and answers what
// $E2E_DIR/<phase>-reply holds (see replyScript).
func replierBundle(t *testing.T, harness string) string {
	t.Helper()
	probeBundle(t, harness)
	return filepath.Join(probeRoot, "artifacts", "replier", harness)
}

// replyScript records the event, then answers what $E2E_DIR/<phase>-reply-once
// holds (once: the file is removed) or else $E2E_DIR/<phase>-reply, nothing
// when neither exists.
const replyScript = `#!/bin/sh
cat >> "$E2E_DIR/events.jsonl"
if [ -e "$E2E_DIR/$1-reply-once" ]; then
	cat "$E2E_DIR/$1-reply-once"
	rm -f "$E2E_DIR/$1-reply-once"
	exit 0
fi
cat "$E2E_DIR/$1-reply" 2>/dev/null
true
`

// replierPlugin registers reply.sh on every phase the observer has.
func replierPlugin() string {
	var b strings.Builder
	b.WriteString("name: replier\nversion: 0.0.1\ndescription: e2e replier\nhandlers:\n")
	for _, p := range observedPhases() {
		fmt.Fprintf(&b, "  - phase: %s\n    command: '\"$SITTER_PLUGIN_DIR/reply.sh\" %s'\n", p, p)
	}
	b.WriteString("files: [reply.sh]\n")
	return b.String()
}

func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// event is the part of a canonical event the e2e cases check.
type event struct {
	Harness     string `json:"harness"`
	NativeEvent string `json:"nativeEvent"`
	Phase       string `json:"phase"`
	Session     struct {
		ID         string `json:"id"`
		Cwd        string `json:"cwd"`
		ProjectDir string `json:"projectDir"`
	} `json:"session"`
	Tool *struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	} `json:"tool"`
	StopHookActive *bool           `json:"stopHookActive"`
	File           string          `json:"file"`
	Raw            json.RawMessage `json:"raw"`
}

// events reads the probe's recorded canonical events.
func events(t *testing.T, dir string) []event {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Errorf("recorded event is not JSON: %v: %s", err, sc.Bytes())
			continue
		}
		out = append(out, e)
	}
	return out
}

func phases(evs []event) map[string]int {
	m := map[string]int{}
	for _, e := range evs {
		m[e.Phase]++
	}
	return m
}

// sidePrefix is the atlas's sideSessionPrefix of a harness: the prefix
// of the session id under which it makes calls of its own through the
// same hooks ("" for none).
func sidePrefix(harness string) string {
	if d, _, err := registry.Registry().Resolve(harness); err == nil {
		return d.SideSessionPrefix
	}
	return ""
}

// checkEvents asserts the canonical facts every recorded event must have.
func checkEvents(t *testing.T, harness, cwd string, evs []event, wantPhases ...string) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("no hook call reached the probe")
	}
	ph := phases(evs)
	for _, p := range wantPhases {
		if ph[p] == 0 {
			t.Errorf("no %s event recorded; got %v", p, ph)
		}
	}
	prefix := sidePrefix(harness)
	session := evs[0].Session.ID
	for _, e := range evs {
		if prefix == "" || !strings.HasPrefix(e.Session.ID, prefix) {
			session = e.Session.ID
			break
		}
	}
	for _, e := range evs {
		if e.Harness != harness {
			t.Errorf("%s: harness %q", e.NativeEvent, e.Harness)
		}
		side := prefix != "" && e.Session.ID == prefix+session // the harness's own side session
		if e.Session.ID == "" || e.Session.ID != session && !side {
			t.Errorf("%s: session id %q, want %q for every event", e.NativeEvent, e.Session.ID, session)
		}
		if cwd != "" && e.Session.Cwd != "" && e.Session.Cwd != cwd {
			t.Errorf("%s: cwd %q, want %q", e.NativeEvent, e.Session.Cwd, cwd)
		}
		if (e.Phase == "preToolUse" || e.Phase == "postToolUse") && (e.Tool == nil || e.Tool.Kind != "shell") {
			t.Errorf("%s: tool %+v, want kind shell", e.NativeEvent, e.Tool)
		}
	}
}

// capture saves the raw native payloads the probe saw as golden fixtures
// for the unit goldens (gen/golden/testdata/normalize/<harness>/), with
// machine paths scrubbed, when SITTER_E2E_CAPTURE=1.
func capture(t *testing.T, harness, version string, evs []event, scrub map[string]string) {
	if os.Getenv("SITTER_E2E_CAPTURE") != "1" {
		return
	}
	dir := filepath.Join(repo(t), "gen", "golden", "testdata", "normalize", harness)
	os.MkdirAll(dir, 0o755)
	seen := map[string]bool{}
	for _, e := range evs {
		if seen[e.NativeEvent] || len(e.Raw) == 0 {
			continue
		}
		seen[e.NativeEvent] = true
		var v any
		if json.Unmarshal(e.Raw, &v) != nil {
			continue
		}
		pretty, _ := json.MarshalIndent(v, "", "  ")
		s := strings.ReplaceAll(string(pretty), cacheDir(), "/home/e2e/.cache/sitter-e2e")
		for from, to := range scrub {
			s = strings.ReplaceAll(s, from, to)
		}
		name := filepath.Join(dir, e.NativeEvent+"@"+version+".txtar")
		body := e.NativeEvent + " payload captured from " + harness + " " + version + " by the e2e suite (paths scrubbed).\n-- payload.json --\n" + s + "\n-- event.json --\n"
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Error(err)
		}
	}
}
