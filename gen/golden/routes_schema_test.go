package golden

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestRoutesSchemaAcceptsDocExample: the routes file docs/routing.md
// shows, with the "$schema" member it tells the reader to add for an
// editor's help, is valid against generated/schema/routes.json (the
// loader accepts both; an editor must not flag either).
func TestRoutesSchemaAcceptsDocExample(t *testing.T) {
	schema := compile(t, "routes.json", loadJSON(t, "../../generated/schema/routes.json"))
	doc, err := os.ReadFile("../../docs/routing.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n```json\n")
	example, _, ok2 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("docs/routing.md: no ```json example")
	}
	for name, text := range map[string]string{
		"as shown":     example,
		"with $schema": strings.Replace(example, "{", `{"$schema": "../generated/schema/routes.json",`, 1),
		"retry 1m30s":  strings.Replace(example, `"timeout": "120s"`, `"timeout": "1m30s"`, 1),
		"retry 1h":     strings.Replace(example, `"timeout": "120s"`, `"timeout": "1h"`, 1),
		"retry 1.5s":   strings.Replace(example, `"timeout": "120s"`, `"timeout": "1.5s"`, 1),
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
