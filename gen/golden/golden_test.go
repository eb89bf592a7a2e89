package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/gen/model"
	"sitter.dev/sitter/generated/registry"
	gold "sitter.dev/sitter/internal/golden"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
)

func compile(t *testing.T, path string, schema any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, schema); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func loadJSON(t *testing.T, path string) any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func descriptor(t *testing.T, id string) *adapter.Descriptor {
	t.Helper()
	d, _, err := registry.Registry().Resolve(id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestNormalize feeds every payload under testdata/normalize/<harness>/ to
// the harness's generated Normalize and compares the canonical event (raw
// left out) with the golden; every event must also satisfy the published
// event schema.
func TestNormalize(t *testing.T) {
	eventSchema := compile(t, "event.json", loadJSON(t, "../../generated/schema/event.json"))
	paths, _ := filepath.Glob("testdata/normalize/*/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no normalize cases")
	}
	for _, path := range paths {
		harness := filepath.Base(filepath.Dir(path))
		// <Event>.txtar, or <Event>@<version>.txtar for a payload the
		// e2e suite captured from that harness version.
		event, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".txtar"), "@")
		t.Run(harness+"/"+event, func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// A new sample may hold its payload alone: -update writes its
			// event.json (gold.Section says so otherwise).
			payload := section(ar, "payload.json")
			if payload == nil {
				t.Fatal("want a payload.json section")
			}
			d := descriptor(t, harness)
			// The environment variables Normalize reads are the case's
			// own (an env section of NAME=value lines), never the
			// caller's.
			for _, k := range d.NormalizeEnv {
				t.Setenv(k, "")
			}
			if env := section(ar, "env"); env != nil {
				for _, line := range strings.Fields(string(env.Data)) {
					k, v, _ := strings.Cut(line, "=")
					t.Setenv(k, v)
				}
			}
			ev, err := d.Normalize(payload.Data, event)
			if err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			if !bytes.Equal(ev.Raw, payload.Data) {
				t.Errorf("raw is not the payload untouched")
			}
			full, _ := json.Marshal(ev)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(full))
			if err != nil {
				t.Fatal(err)
			}
			if err := eventSchema.Validate(inst); err != nil {
				t.Errorf("event does not satisfy generated/schema/event.json: %v", err)
			}
			ev.Raw = nil
			got, _ := json.MarshalIndent(ev, "", "  ")
			gold.Section(t, path, ar, "event.json", append(got, '\n'))
		})
	}
}

func section(ar *txtar.Archive, name string) *txtar.File {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			return &ar.Files[i]
		}
	}
	return nil
}

// results are the canonical results rendered for every event.
var results = []struct {
	name string
	r    hook.Result
}{
	{"noop", hook.Result{Decision: hook.Noop}},
	{"allow", hook.Result{Decision: hook.Allow, Reason: "read-only command"}},
	{"ask", hook.Result{Decision: hook.Ask, Reason: "touches prod config"}},
	{"deny", hook.Result{Decision: hook.Deny, Reason: "git push is blocked by policy"}},
	{"block", hook.Result{Decision: hook.Block, Reason: "tests still fail: run them again"}},
	{"context", hook.Result{AdditionalContext: "Repo uses pnpm; never run npm install."}},
	{"userMessage", hook.Result{UserMessage: "lint hook: 2 warnings"}},
	{"rewrite", hook.Result{Decision: hook.Allow, UpdatedInput: json.RawMessage(`{"command": "npm test -- --ci"}`)}},
	{"halt", hook.Result{Halt: true, Reason: "budget exhausted"}},
	{"deny+context+userMessage", hook.Result{Decision: hook.Deny, Reason: "no <rm -rf> & co", AdditionalContext: "see policy", UserMessage: "blocked a command"}},
}

// codexSchema names Codex's embedded output schema for an event:
// PreToolUse → pre-tool-use.command.output.
func codexSchema(event string) string {
	var b strings.Builder
	for i, r := range event {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String()) + ".command.output"
}

// TestRender renders every canonical result for every event of every
// harness and compares the native answers with testdata/render/<harness>.txtar.
// Codex answers are also validated against Codex's own output schemas,
// because Codex rejects output with keys it does not know.
func TestRender(t *testing.T) {
	codex := loadJSON(t, "testdata/codex-hook-schemas.json").(map[string]any)
	for _, d := range registry.Registry().Descriptors {
		t.Run(d.ID, func(t *testing.T) {
			path := filepath.Join("testdata", "render", d.ID+".txtar")
			var got txtar.Archive
			got.Comment = []byte("Native answers of " + d.DisplayName + " for each canonical result (go test ./gen/golden -update rewrites).\n")
			for _, spec := range d.Events {
				var schema *jsonschema.Schema
				if d.ID == "codex" {
					if s, ok := codex[codexSchema(spec.Name)]; ok {
						schema = compile(t, codexSchema(spec.Name)+".json", s)
					}
				}
				for _, c := range results {
					ev := hook.Event{Harness: d.ID, NativeEvent: spec.Name, Phase: spec.Phase}
					out := d.Render(ev, c.r)
					var b strings.Builder
					fmt.Fprintf(&b, "exit %d\n", out.Exit)
					if len(out.Stdout) > 0 {
						fmt.Fprintf(&b, "stdout %s", out.Stdout)
						if !json.Valid(out.Stdout) {
							t.Errorf("%s/%s: stdout is not JSON: %s", spec.Name, c.name, out.Stdout)
						}
						if schema != nil {
							inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(out.Stdout))
							if err := schema.Validate(inst); err != nil {
								t.Errorf("%s/%s: Codex would reject %s: %v", spec.Name, c.name, out.Stdout, err)
							}
						}
					}
					if len(out.Stderr) > 0 {
						fmt.Fprintf(&b, "stderr %s", out.Stderr)
					}
					for _, diag := range out.Diags {
						fmt.Fprintf(&b, "diag %s\n", diag)
					}
					got.Files = append(got.Files, txtar.File{Name: spec.Name + "/" + c.name, Data: []byte(b.String())})
				}
			}
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !gold.Update() {
				// A new harness's answers are pinned once someone has
				// checked them: its golden is optional until then.
				t.Skipf("no %s yet: go test ./gen/golden -update writes it, to be checked against the harness", path)
			}
			gold.File(t, path, txtar.Format(&got))
		})
	}
}

// TestToolKindShell pins the cross-harness promise: every harness that
// names its tools has a shell tool, so one handler matching kind "shell"
// works in each.
func TestToolKindShell(t *testing.T) {
	for _, d := range registry.Registry().Descriptors {
		if len(d.Tools) == 0 {
			continue
		}
		if !slices.Contains(slices.Collect(maps.Values(d.Tools)), "shell") {
			t.Errorf("%s: no tool of kind shell among %v", d.ID, d.Tools)
		}
	}
}

// TestPhaseFacts holds the runtime's stop phases to the generator's: the
// checker's deny/block rules and the hook's stop cap must agree on every
// phase a harness uses.
func TestPhaseFacts(t *testing.T) {
	phases := map[string]bool{"stop": true, "subagentStop": true, "preToolUse": true}
	for _, d := range registry.Registry().Descriptors {
		for _, e := range d.Events {
			phases[e.Phase] = true
		}
	}
	for p := range phases {
		if hook.IsStopPhase(p) != model.Stops(p) {
			t.Errorf("phase %s: runtime/hook.IsStopPhase = %v, gen/model.Stops = %v", p, hook.IsStopPhase(p), model.Stops(p))
		}
	}
}
