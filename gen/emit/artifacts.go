package emit

import (
	"fmt"
	"slices"
	"strings"

	"sitter.dev/sitter/gen/model"
)

// ArtifactsIndex emits artifacts/README.md: the index of the plugin bundles
// the generator produced, one per plugin and harness.
func ArtifactsIndex(a *model.Atlas, plugins []*model.Plugin) []File {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- %s -->\n\n", Marker("atlas/ and plugins-src/"))
	b.WriteString("# Plugin bundles\n\n")
	b.WriteString("`make generate` compiles every plugin under `plugins-src/` into one installable bundle per harness: `artifacts/<plugin>/<harness>/`.\n\n")
	if len(plugins) == 0 {
		b.WriteString("No plugin sources yet: `plugins-src/` is empty.\n")
	}
	for _, p := range plugins {
		fmt.Fprintf(&b, "- %s:", p.Name)
		var without, skipped []string
		for _, h := range a.Harnesses {
			// Left out by the plugin itself, where it would build otherwise.
			if o := p.Overrides[h.ID]; o.Skip && h.Packaging.Format.Name != "" && (len(p.Harnesses) == 0 || slices.Contains(p.Harnesses, h.ID)) {
				if o.SkipReason != "" {
					skipped = append(skipped, fmt.Sprintf("%s (%s)", h.ID, o.SkipReason))
				} else {
					skipped = append(skipped, h.ID)
				}
			}
			if !targets(p, h) {
				continue
			}
			if miss := lacking(p, h); len(miss) > 0 {
				without = append(without, fmt.Sprintf("%s (no %s event that can act)", h.ID, strings.Join(miss, ", ")))
				continue
			}
			fmt.Fprintf(&b, " [%s](%s/%s/)", h.ID, p.Name, h.ID)
		}
		b.WriteString("\n")
		if len(without) > 0 {
			fmt.Fprintf(&b, "  - none for %s: the plugin requires it\n", strings.Join(without, "; "))
		}
		if len(skipped) > 0 {
			fmt.Fprintf(&b, "  - skipped for %s: overrides.<harness>.skip in %s/plugin.yaml\n", strings.Join(skipped, "; "), p.Dir)
		}
	}
	return []File{{Path: "artifacts/README.md", Bytes: []byte(b.String()), Mode: 0o644}}
}
