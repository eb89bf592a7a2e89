package load

import (
	"sort"

	"cuelang.org/go/cue"

	"sitter.dev/sitter/gen/model"
)

// layouts reads `layouts` (atlas/layouts.cue) into a.Layouts and gives each
// harness its layout's root variable and timeout unit where it names none.
func (l *loader) layouts(v cue.Value, a *model.Atlas) {
	l.fields(v.LookupPath(cue.ParsePath("layouts")), func(id string, lv cue.Value) {
		a.Layouts = append(a.Layouts, l.layout(id, lv))
	})
	sort.Slice(a.Layouts, func(i, j int) bool { return a.Layouts[i].ID < a.Layouts[j].ID })
	for _, h := range a.Harnesses {
		if lay := a.Layout(h.Packaging.Format.Name); lay != nil && lay.Hooks != nil {
			if !h.Packaging.HasRootVar {
				h.Packaging.RootVar = lay.Hooks.RootVar
			}
			if h.Packaging.TimeoutUnit == "" {
				h.Packaging.TimeoutUnit = lay.Hooks.TimeoutUnit
			}
		}
		if h.Packaging.Format.Name != "" && h.Packaging.TimeoutUnit == "" {
			h.Packaging.TimeoutUnit = "s" // a bridge module's registrations have no timeout
		}
	}
}

func (l *loader) layout(id string, lv cue.Value) *model.Layout {
	lay := &model.Layout{
		ID:  id,
		Pos: l.vpos(lv),
		Manifest: model.LayoutManifest{
			Path:      l.named(lv, "manifest.path"),
			Schema:    l.str(lv, "manifest.schema"),
			Overrides: l.boolean(lv, "manifest.overrides"),
		},
		Skills:      l.named(lv, "skills"),
		Commands:    l.named(lv, "commands"),
		CommandForm: l.str(lv, "commandForm"),
		Evidence:    l.evidence(lv.LookupPath(cue.ParsePath("evidence"))),
	}
	if av := lv.LookupPath(cue.ParsePath("commandArgs")); av.Exists() {
		lay.CommandArgs = &model.CommandArgs{
			Placeholder: l.str(av, "placeholder"),
			Evidence:    l.evidence(av.LookupPath(cue.ParsePath("evidence"))),
			Pos:         l.vpos(av),
		}
	}
	if rv := lv.LookupPath(cue.ParsePath("mcpRoot")); rv.Exists() {
		lay.MCPRoot = &model.MCPRoot{
			Var:      l.str(rv, "var"),
			Evidence: l.evidence(rv.LookupPath(cue.ParsePath("evidence"))),
			Pos:      l.vpos(rv),
		}
	}
	l.fields(lv.LookupPath(cue.ParsePath("manifest.paths")), func(key string, pv cue.Value) {
		lay.Manifest.Paths = append(lay.Manifest.Paths, model.ManifestPath{
			Key: key, Folder: l.boolean(pv, "folder"), Skills: l.boolean(pv, "skills"), Pos: l.vpos(pv),
		})
	})
	sort.Slice(lay.Manifest.Paths, func(i, j int) bool { return lay.Manifest.Paths[i].Key < lay.Manifest.Paths[j].Key })
	l.list(lv.LookupPath(cue.ParsePath("manifest.requires")), func(rv cue.Value) {
		lay.Manifest.Requires = append(lay.Manifest.Requires, model.ManifestValue{
			Key: l.str(rv, "key"), Value: l.str(rv, "value"), Why: l.str(rv, "why"), Pos: l.vpos(rv),
		})
	})
	if hv := lv.LookupPath(cue.ParsePath("hooks")); hv.Exists() {
		lay.Hooks = &model.LayoutHooks{
			Path:        l.named(hv, "path"),
			Document:    l.tmpl(hv.LookupPath(cue.ParsePath("document"))),
			Shape:       l.str(hv, "shape"),
			Entry:       l.tmpl(hv.LookupPath(cue.ParsePath("entry"))),
			Script:      l.named(hv, "script"),
			RootVar:     l.str(hv, "rootVar"),
			TimeoutUnit: l.str(hv, "timeoutUnit"),
			Schema:      l.str(hv, "schema"),
			Pos:         l.vpos(hv),
		}
	}
	l.list(lv.LookupPath(cue.ParsePath("files")), func(fv cue.Value) {
		lay.Files = append(lay.Files, l.layoutFile(fv))
	})
	l.fields(lv.LookupPath(cue.ParsePath("eventLists")), func(name string, ev cue.Value) {
		lay.EventLists = append(lay.EventLists, model.EventList{
			Name:           name,
			Prefixes:       l.strings(ev, "prefixes"),
			ExceptPrefixes: l.strings(ev, "exceptPrefixes"),
			Phases:         l.strings(ev, "phases"),
			Sorted:         l.boolean(ev, "sorted"),
			Pos:            l.vpos(ev),
		})
	})
	sort.Slice(lay.EventLists, func(i, j int) bool { return lay.EventLists[i].Name < lay.EventLists[j].Name })
	if mv := lv.LookupPath(cue.ParsePath("marketplace")); mv.Exists() {
		m := &model.Marketplace{Dir: l.str(mv, "dir"), Copy: l.str(mv, "copy"), Pos: l.vpos(mv)}
		l.list(mv.LookupPath(cue.ParsePath("files")), func(fv cue.Value) {
			m.Files = append(m.Files, l.layoutFile(fv))
		})
		lay.Marketplace = m
	}
	return lay
}

func (l *loader) layoutFile(fv cue.Value) *model.LayoutFile {
	f := &model.LayoutFile{
		Path: l.named(fv, "path"),
		When: l.named(fv, "when"),
		Each: l.named(fv, "each"),
		Body: l.named(fv, "body"),
		Pos:  l.vpos(fv),
	}
	if jv := fv.LookupPath(cue.ParsePath("json")); jv.Exists() {
		f.JSON = l.tmpl(jv)
	}
	l.fields(fv.LookupPath(cue.ParsePath("keyWhen")), func(path string, cv cue.Value) {
		s, _ := cv.String()
		f.KeyWhen = append(f.KeyWhen, model.KeyWhen{Path: path, Cond: s, Pos: l.vpos(cv)})
	})
	l.fields(fv.LookupPath(cue.ParsePath("toml")), func(key string, tv cue.Value) {
		f.TOML = append(f.TOML, model.TmplKey{Key: key, Val: l.tmpl(tv)})
	})
	if mv := fv.LookupPath(cue.ParsePath("frontmatter")); mv.Exists() {
		f.Frontmatter = l.tmpl(mv)
	}
	tv := fv.LookupPath(cue.ParsePath("text"))
	switch tv.IncompleteKind() {
	case cue.StringKind:
		s, _ := tv.String()
		f.Text = []model.TextPart{{Text: s, Pos: l.vpos(tv)}}
	case cue.ListKind:
		l.list(tv, func(pv cue.Value) {
			f.Text = append(f.Text, model.TextPart{Text: l.str(pv, "text"), When: l.str(pv, "when"), Each: l.str(pv, "each"), Pos: l.vpos(pv)})
		})
	}
	return f
}

// tmpl reads a JSON template in declaration order; nil when v is absent.
func (l *loader) tmpl(v cue.Value) *model.Tmpl {
	if !v.Exists() {
		return nil
	}
	if d, ok := v.Default(); ok {
		v = d
	}
	t := &model.Tmpl{Pos: l.vpos(v)}
	switch v.Kind() {
	case cue.StructKind:
		t.Kind = model.TmplObject
		t.Keys = []model.TmplKey{}
		l.fields(v, func(key string, fv cue.Value) {
			t.Keys = append(t.Keys, model.TmplKey{Key: key, Val: l.tmpl(fv)})
		})
	case cue.ListKind:
		t.Kind = model.TmplList
		t.Items = []*model.Tmpl{}
		l.list(v, func(ev cue.Value) { t.Items = append(t.Items, l.tmpl(ev)) })
	case cue.StringKind:
		t.Kind = model.TmplString
		t.Str, _ = v.String()
	default:
		b, err := v.MarshalJSON()
		if err != nil {
			l.fail(v, "template value: %v", err)
		}
		t.Kind, t.Const = model.TmplConst, string(b)
	}
	return t
}
