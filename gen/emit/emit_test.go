package emit

import (
	"strings"
	"testing"

	"sitter.dev/sitter/gen/model"
)

func TestGoName(t *testing.T) {
	for key, want := range map[string]string{
		"session_id": "SessionID", "sessionID": "SessionID", "toolUseId": "ToolUseID", "result_json": "ResultJSON",
		"tool.execute": "ToolExecute", "hook_event_name": "HookEventName", "teammateIdle": "TeammateIdle",
		"url": "URL", "9lives": "X9lives", "HTTPServer": "HTTPServer",
	} {
		if got := GoName(key); got != want {
			t.Errorf("GoName(%q) = %q, want %q", key, got, want)
		}
	}
	if got := Pascal("my-api"); got != "MyApi" {
		t.Errorf("Pascal(my-api) = %q: {namePascal} is a TypeScript name, without Go's initialisms", got)
	}
}

// The index names the bundles overrides.<harness>.skip leaves out, with the
// plugin's reason when it gives one, beside those its requires leave out.
func TestArtifactsIndexNamesSkipped(t *testing.T) {
	pkg := func(id string) *model.Harness {
		return &model.Harness{ID: id, Packaging: model.Packaging{Format: model.Named{Name: "acme-plugin"}}}
	}
	a := &model.Atlas{Harnesses: []*model.Harness{pkg("acme"), pkg("bolt"), pkg("cobra")}}
	plugins := []*model.Plugin{
		{Name: "demo", Dir: "plugins-src/demo", Overrides: map[string]model.Override{
			"bolt":  {Skip: true, SkipReason: "bolt ships its own guard"},
			"cobra": {Skip: true},
		}},
		{Name: "plain", Dir: "plugins-src/plain"},
	}
	got := string(ArtifactsIndex(a, plugins)[0].Bytes)
	for _, want := range []string{
		"- demo: [acme](demo/acme/)\n  - skipped for bolt (bolt ships its own guard); cobra: overrides.<harness>.skip in plugins-src/demo/plugin.yaml\n",
		"- plain: [acme](plain/acme/) [bolt](plain/bolt/) [cobra](plain/cobra/)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("index lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "skipped") != 1 {
		t.Errorf("a plugin without skips got a skipped line:\n%s", got)
	}
}
