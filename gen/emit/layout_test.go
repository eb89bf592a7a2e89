package emit

import (
	"encoding/json"
	"testing"

	"sitter.dev/sitter/gen/model"
)

func str(s string) *model.Tmpl { return &model.Tmpl{Kind: model.TmplString, Str: s} }

func obj(kv ...any) *model.Tmpl {
	t := &model.Tmpl{Kind: model.TmplObject, Keys: []model.TmplKey{}}
	for i := 0; i < len(kv); i += 2 {
		t.Keys = append(t.Keys, model.TmplKey{Key: kv[i].(string), Val: kv[i+1].(*model.Tmpl)})
	}
	return t
}

// The template rules of docs/plugin-layouts.md: a whole slot keeps its
// value's type and is left out when empty (or falls back to its default),
// a slot inside a string is interpolated, and an object that only omitted
// slots emptied is left out; a literal empty object stays.
func TestRenderTemplate(t *testing.T) {
	scope := map[string]any{
		"name":       "guard",
		"keywords":   []string{"a", "b"},
		"license":    "",
		"mcpServers": map[string]any{},
		"timeout":    15,
	}
	tmpl := obj(
		"name", str("{name}"),
		"market", str("{name}-marketplace"),
		"keywords", str("{keywords}"),
		"license", str("{license}"),
		"owner", obj("name", str("{author.name|sitter}")),
		"mcp", obj("mcpServers", str("{mcpServers}")),
		"empty", obj(),
		"timeout", str("{timeout}"),
	)
	v, ok := render(tmpl, scope)
	got, _ := json.Marshal(v)
	want := `{"empty":{},"keywords":["a","b"],"market":"guard-marketplace","name":"guard","owner":{"name":"sitter"},"timeout":15}`
	if !ok || string(got) != want {
		t.Errorf("render = %s, %v; want %s", got, ok, want)
	}
	if s := fill("const E: string[] = {events};", map[string]any{"events": []string{"x", "y.z"}}); s != `const E: string[] = ["x", "y.z"];` {
		t.Errorf("fill list = %s", s)
	}
	if s := fill("{ input, encoding } {}", nil); s != "{ input, encoding } {}" {
		t.Errorf("fill touched braces that are no slot: %s", s)
	}
}

// commandText writes the layout's placeholder for $ARGUMENTS, leaves
// Claude's indexed $ARGUMENTS[N] alone, and with no placeholder (the
// harness appends the text itself) drops the token and the blanks it
// leaves at the end of its line.
func TestCommandText(t *testing.T) {
	src := "Task: $ARGUMENTS\nFirst: $ARGUMENTS[0]\nDo $ARGUMENTS now.\n"
	for _, c := range []struct{ placeholder, want string }{
		{"$ARGUMENTS", src},
		{"{{args}}", "Task: {{args}}\nFirst: $ARGUMENTS[0]\nDo {{args}} now.\n"},
		{"", "Task:\nFirst: $ARGUMENTS[0]\nDo  now.\n"},
	} {
		b := &bundle{lay: &model.Layout{CommandArgs: &model.CommandArgs{Placeholder: c.placeholder}}}
		if got := b.commandText(src); got != c.want {
			t.Errorf("placeholder %q:\n%s\nwant:\n%s", c.placeholder, got, c.want)
		}
	}
}
