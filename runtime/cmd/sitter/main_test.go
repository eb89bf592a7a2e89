package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/internal/golden"
	"sitter.dev/sitter/runtime/verbs"
)

// TestMain puts both binaries on PATH: sitter (this package's main,
// which execs sitter-host for the host verbs) and sitter-host.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sitter":      func() { os.Exit(sitterMain(os.Args[1:])) },
		"sitter-host": func() { os.Exit(verbs.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, registry.Registry)) },
	})
}

// TestScript runs testdata/script/*.txtar against the generated registry.
// Scripts that need a harness start with `[!harness:<id>] skip`, so they
// wait for the atlas to describe it; `[!registry]` is an empty registry.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		Condition:     condition,
		UpdateScripts: golden.Update(), // cmp against a script's own file rewrites it under -update
		Setup: func(env *testscript.Env) error {
			// Stop-loop counters go to the script's own directory.
			env.Setenv("SITTER_STATE_DIR", env.WorkDir+"/.state")
			return nil
		},
	})
}

func condition(cond string) (bool, error) {
	reg := registry.Registry()
	if cond == "registry" {
		return len(reg.Descriptors) > 0, nil
	}
	if id, ok := strings.CutPrefix(cond, "harness:"); ok {
		for _, d := range reg.Descriptors {
			if d.ID == id {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
