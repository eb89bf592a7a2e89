package plugin

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/generated/registry"
)

func TestValidator(t *testing.T) {
	const schema = `{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "title": "test",
	  "type": "object",
	  "required": ["name"],
	  "additionalProperties": false,
	  "properties": {
	    "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
	    "n": {"type": "integer"},
	    "x": {"type": "number"},
	    "tags": {"type": "array", "items": {"type": "string"}},
	    "kind": {"enum": ["a", "b"]},
	    "version": {"const": 1},
	    "either": {"type": ["string", "object"]},
	    "map": {"type": "object", "additionalProperties": {"type": "boolean"}},
	    "nul": {"type": "null"}
	  }
	}`
	s, err := CompileSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want []string
	}{
		{`{"name": "ab"}`, nil},
		{`{"name": "abcde", "n": 3, "x": 1.5, "tags": ["p"], "kind": "b", "version": 1.0, "either": {}, "map": {"k": true}, "nul": null}`, nil},
		{`{"name": "ab", "n": 2.0}`, nil}, // 2020-12: 2.0 is an integer
		{`{"name": "ab", "x": 7}`, nil},   // an integer is a number
		{`{}`, []string{`/: missing required field "name"`}},
		{`[]`, []string{`/: is array, want object`}},
		{`{"name": 7}`, []string{`/name: is integer, want string`}},
		{`{"name": "a"}`, []string{`/name: "a" is shorter than 2 characters`}},
		{`{"name": "abcdef"}`, []string{`/name: is longer than 5 characters`}},
		{`{"name": "Ab"}`, []string{`/name: "Ab" does not match ^[a-z]+$`}},
		{`{"name": "ab", "n": 1.5}`, []string{`/n: is number, want integer`}},
		{`{"name": "ab", "tags": ["p", 3]}`, []string{`/tags/1: is integer, want string`}},
		{`{"name": "ab", "kind": "c"}`, []string{`/kind: "c" is not one of "a", "b"`}},
		{`{"name": "ab", "version": 2}`, []string{`/version: must be 1`}},
		{`{"name": "ab", "either": []}`, []string{`/either: is array, want string or object`}},
		{`{"name": "ab", "map": {"k": "yes", "a/b": 1}}`, []string{`/map/a~1b: is integer, want boolean`, `/map/k: is string, want boolean`}},
		{`{"name": "ab", "extra": 1}`, []string{`/: unknown field "extra"`}},
		{`{"name": "ab", "nul": false}`, []string{`/nul: is boolean, want null`}},
	}
	for _, tt := range tests {
		got, err := s.ValidateJSON([]byte(tt.doc))
		if err != nil {
			t.Errorf("%s: %v", tt.doc, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: problems (-want +got):\n%s", tt.doc, diff)
		}
	}
}

func TestValidatorRejectsUnsupportedKeywords(t *testing.T) {
	for _, schema := range []string{
		`{"type": "object", "oneOf": [{"type": "string"}]}`,
		`{"properties": {"a": {"minimum": 3}}}`,
		`{"type": "strin"}`,
		`{"pattern": "("}`,
		`{"minLength": -1}`,
		`{"enum": []}`,
		`[]`,
	} {
		if _, err := CompileSchema([]byte(schema)); err == nil {
			t.Errorf("CompileSchema(%s) = nil error; want a refusal", schema)
		}
	}
}

func TestValidateJSONRejectsBadJSON(t *testing.T) {
	s, err := CompileSchema([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{`{`, `{} {}`, ``} {
		if _, err := s.ValidateJSON([]byte(doc)); err == nil {
			t.Errorf("ValidateJSON(%q) = nil error", doc)
		}
	}
}

// Every embedded schema compiles, so none uses a keyword the validator
// would ignore.
func TestEmbeddedSchemasCompile(t *testing.T) {
	names, err := fs.Glob(schemaFS, "schemas/*.json")
	if err != nil || len(names) < 10 {
		t.Fatalf("embedded schemas: %v %v", names, err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "schemas/"), ".json")
		if _, err := BundleSchema(name); err != nil {
			t.Error(err)
		}
	}
	reg := registry.Registry()
	for _, id := range reg.IDs() {
		d, _, _ := reg.Resolve(id)
		f := formatOf(d)
		for _, s := range []string{f.schema, f.hooksSchema} {
			if s == "" {
				continue
			}
			if _, err := BundleSchema(s); err != nil {
				t.Errorf("format schema %s: %v", s, err)
			}
		}
	}
}

// The manifest schemas hold the facts of HARNESS-SPECS.md.
func TestManifestSchemas(t *testing.T) {
	tests := []struct {
		schema, doc string
		ok          bool
	}{
		{"claude-plugin", `{"name": "guard"}`, true},
		{"claude-plugin", `{"version": "1"}`, false},
		{"claude-plugin", `{"name": "my plugin"}`, false},
		{"claude-plugin", `{"name": "guard", "somethingNew": {}}`, true},
		{"cursor-plugin", `{"name": "guard", "hooks": "./hooks/hooks.json", "rules": "./rules/"}`, true},
		{"cursor-plugin", `{"name": "Guard"}`, false},
		{"cursor-plugin", `{"name": "guard-"}`, false},
		{"cursor-plugin", `{"name": "g.d-1"}`, true},
		{"cursor-plugin", `{"name": "guard", "unknown": 1}`, false},
		{"gemini-extension", `{"name": "guard", "version": "0.1.0"}`, true},
		{"gemini-extension", `{"name": "guard"}`, false},
		{"gemini-extension", `{"name": "Guard_x", "version": "1"}`, false},
		{"codex-plugin", `{"name": "guard", "skills": "./skills/"}`, true},
		{"codex-plugin", `{"description": "x"}`, false},
		{"copilot-plugin", `{"name": "guard"}`, true},
		{"copilot-plugin", `{"name": "` + strings.Repeat("a", 65) + `"}`, false},
		{"copilot-plugin", `{"name": "Guard"}`, false},
		{"pi-package", `{"name": "guard-pi", "keywords": ["pi-package"], "pi": {"extensions": ["./extensions"]}}`, true},
		{"pi-package", `{"name": "guard-pi", "keywords": ["pi-package"], "pi": {}}`, false},
		{"opencode-package", `{"name": "guard-opencode", "main": "index.ts", "type": "module"}`, true},
		{"opencode-package", `{"name": "guard-opencode"}`, false},
		{"hooks-matcher-groups", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": 15}]}]}}`, true},
		{"hooks-matcher-groups", `{"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "command": "x"}]}]}}`, false},
		{"hooks-matcher-groups", `{"hooks": {"PreToolUse": [{"type": "command", "command": "x"}]}}`, false},
		{"hooks-cursor", `{"version": 1, "hooks": {"preToolUse": [{"command": "x", "timeout": 15}]}}`, true},
		{"hooks-cursor", `{"version": 2, "hooks": {}}`, false},
		{"hooks-copilot", `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "x", "timeoutSec": 15}]}}`, true},
		{"hooks-copilot", `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "command": "x"}]}}`, false},
		{"handlers", `{"handlers": [{"phase": "preToolUse", "command": "x", "kinds": ["shell"], "onError": "open"}]}`, true},
		{"handlers", `{"handlers": [{"phase": "preToolUse", "command": "x", "kinds": ["shel"]}]}`, false},
		{"handlers", `{"handlers": [{"phase": "preToolUse", "command": "x", "redact": true}, {"phase": "fileChanged", "command": "x", "watch": ["notes.txt"]}]}`, true},
		{"handlers", `{"handlers": [{"phase": "fileChanged", "command": "x", "watch": "notes.txt"}]}`, false},
	}
	for _, tt := range tests {
		s, err := BundleSchema(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ValidateJSON([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) == 0) != tt.ok {
			t.Errorf("%s %s: problems %q, want ok=%v", tt.schema, tt.doc, got, tt.ok)
		}
	}
}
