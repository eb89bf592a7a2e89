package gen_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The import rules of docs/architecture.md: gen/load is the only package
// that imports cue; nothing under runtime/ or generated/ links cue,
// jsonschema, yaml or jennifer (the generator's libraries), so the three
// binaries start without their init-time work; runtime's library packages
// never import generated/ (generated code imports them; only the mains
// and runtime/verbs wire generated tables in). TestHookBinaryDeps
// (runtime/cmd/sitter) holds the hook binary to a tighter list.
func TestImportRules(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "sitter.dev/sitter/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		wires := strings.HasPrefix(f[0], "sitter.dev/sitter/runtime/cmd/") || f[0] == "sitter.dev/sitter/runtime/verbs"
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "cuelang.org/") && f[0] != "sitter.dev/sitter/gen/load" {
				t.Errorf("%s imports %s: only gen/load may import cue", f[0], imp)
			}
			if strings.HasPrefix(f[0], "sitter.dev/sitter/runtime/") && !wires && strings.HasPrefix(imp, "sitter.dev/sitter/generated/") {
				t.Errorf("%s imports %s: runtime libraries take generated tables from their callers", f[0], imp)
			}
		}
	}
	generatorOnly := []string{"cuelang.org/", "github.com/santhosh-tekuri/jsonschema", "go.yaml.in/yaml", "github.com/dave/jennifer"}
	out, err = exec.Command(goBin, "list", "-deps", "-test=false", "sitter.dev/sitter/runtime/...", "sitter.dev/sitter/generated/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, g := range generatorOnly {
			if strings.HasPrefix(p, g) {
				t.Errorf("runtime/ or generated/ links %s, a generator-only library", p)
			}
		}
	}
}
