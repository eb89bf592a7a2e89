package plugin

import (
	"strings"
	"testing"

	"sitter.dev/sitter/gen/model"
)

// An override may not drop a value the layout's manifest must carry (no
// layout of the atlas both requires one and takes overrides today, so the
// real atlas cannot show it).
func TestCheckManifestRequires(t *testing.T) {
	lay := &model.Layout{ID: "acme-plugin",
		Manifest: model.LayoutManifest{Path: model.Named{Name: "acme.json"}, Overrides: true,
			Requires: []model.ManifestValue{{Key: "keywords", Value: "acme-package", Why: "acme finds packages by it"}}},
		Files: []*model.LayoutFile{{Path: model.Named{Name: "acme.json"}, JSON: &model.Tmpl{}}}}
	h := &model.Harness{ID: "acme", DisplayName: "Acme", Packaging: model.Packaging{Format: model.Named{Name: "acme-plugin"}}}
	a := &model.Atlas{Harnesses: []*model.Harness{h}, Layouts: []*model.Layout{lay}}
	at := map[string]model.Pos{"/overrides/acme/manifest/keywords": {File: "plugin.yaml", Line: 7, Col: 7}}
	for _, tt := range []struct {
		keys map[string]any
		want string
	}{
		{map[string]any{"keywords": []any{"x"}}, `plugin.yaml:7:7: overrides.acme.manifest.keywords: drops keywords "acme-package", which the manifest must carry (acme finds packages by it)`},
		{map[string]any{"keywords": []any{"x", "acme-package"}}, ""},
		{map[string]any{"other": 1}, ""},
	} {
		errs := checkManifest(a, h, tt.keys, "/overrides/acme/manifest", at)
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("checkManifest(%v) = %q, want %q", tt.keys, got, tt.want)
		}
	}
}
