package load

import (
	"sort"

	"cuelang.org/go/cue"

	"sitter.dev/sitter/gen/model"
)

// providers reads `providers` and each harness's `speaks` into a.
func (l *loader) providers(v cue.Value, a *model.Atlas) {
	l.fields(v.LookupPath(cue.ParsePath("providers")), func(id string, pv cue.Value) {
		p := &model.Provider{
			ID: id,
			// The schema's `providers: [ID]: #Provider` line is no
			// place to point at: the user wrote displayName.
			Pos:          l.vpos(pv.LookupPath(cue.ParsePath("displayName"))),
			DisplayName:  l.str(pv, "displayName"),
			Protocol:     l.named(pv, "protocol"),
			BaseURL:      l.str(pv, "baseURL"),
			Auth:         l.str(pv, "auth"),
			KeyEnv:       l.str(pv, "keyEnv"),
			APIVersion:   l.str(pv, "apiVersion"),
			DefaultModel: l.str(pv, "defaultModel"),
			Note:         l.str(pv, "note"),
			Limits: model.Limits{
				MaxOutputTokens: l.integer(pv, "limits.maxOutputTokens"),
				ContextTokens:   l.integer(pv, "limits.contextTokens"),
				MaxToolName:     l.integer(pv, "limits.maxToolName"),
			},
			Evidence: l.evidence(pv.LookupPath(cue.ParsePath("evidence"))),
		}
		if ps := pv.LookupPath(cue.ParsePath("params")); ps.Exists() {
			l.fields(ps, func(name string, ev cue.Value) {
				s, _ := ev.String()
				p.Params = append(p.Params, model.Param{Name: name, Env: s})
			})
		}
		sort.Slice(p.Params, func(i, j int) bool { return p.Params[i].Name < p.Params[j].Name })
		if ms := pv.LookupPath(cue.ParsePath("models")); ms.Exists() {
			l.fields(ms, func(alias string, mv cue.Value) {
				s, _ := mv.String()
				p.Models = append(p.Models, model.ModelAlias{Alias: alias, Model: s, Pos: l.vpos(mv)})
			})
		}
		sort.Slice(p.Models, func(i, j int) bool { return p.Models[i].Alias < p.Models[j].Alias })
		a.Providers = append(a.Providers, p)
	})
	sort.Slice(a.Providers, func(i, j int) bool { return a.Providers[i].ID < a.Providers[j].ID })
	for _, h := range a.Harnesses {
		l.list(v.LookupPath(cue.MakePath(cue.Str("harnesses"), cue.Str(h.ID), cue.Str("speaks"))), func(sv cue.Value) {
			s, _ := sv.String()
			h.Speaks = append(h.Speaks, model.Named{Name: s, Pos: l.vpos(sv)})
		})
	}
}

func (l *loader) integer(v cue.Value, path string) int {
	f := v.LookupPath(cue.ParsePath(path))
	if !f.Exists() {
		return 0
	}
	n, err := f.Int64()
	if err != nil {
		l.fail(f, "%s: want an integer: %v", path, err)
	}
	return int(n)
}
