package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The hook binary links only the hook path and the stop check: every package it links costs
// each hook call start-up time, and cue, jsonschema and net/http are far
// too heavy for it (the host verbs live in sitter-host, the gateway in
// sitter-proxy).
func TestHookBinaryDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := []string{
		"sitter.dev/sitter/runtime/cmd/sitter", "sitter.dev/sitter/runtime/hook", "sitter.dev/sitter/runtime/adapter",
		"sitter.dev/sitter/runtime/audit", "sitter.dev/sitter/runtime/redact", "sitter.dev/sitter/runtime/guard", "sitter.dev/sitter/runtime/internal/sibling",
		// The usage texts and version of hook, guard and version; JSON
		// read and written without reflection (stdlib only).
		"sitter.dev/sitter/runtime/internal/hookcli", "sitter.dev/sitter/runtime/internal/jsonw", "sitter.dev/sitter/runtime/internal/jsonr",
		"sitter.dev/sitter/generated/registry", "sitter.dev/sitter/generated/harness/",
		// The babysitter stop check (sitter session stop-check), a hook
		// handler on every turn of an agent: session state, run replay
		// through its cache, transcripts through the atlas's shapes.
		"sitter.dev/sitter/runtime/session", "sitter.dev/sitter/runtime/run", "sitter.dev/sitter/runtime/journal",
		"sitter.dev/sitter/runtime/transcript", "sitter.dev/sitter/generated/transcript",
	}
	forbidden := []string{"net", "crypto/tls", "text/template", "html/template"}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			ok := false
			for _, a := range allowed {
				if p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("the hook binary links %s", p)
			}
			continue
		}
		for _, f := range forbidden {
			if p == f || strings.HasPrefix(p, f+"/") {
				t.Errorf("the hook binary links %s", p)
			}
		}
	}
}
