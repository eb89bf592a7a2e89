package check

import (
	"path"
	"strings"

	"sitter.dev/sitter/gen/model"
	"sitter.dev/sitter/runtime/adapter"
)

// Layouts checks the plugin layouts (atlas/layouts.cue) and the harnesses'
// choice of one: a format names a declared layout, a shell-hook harness's
// layout says where its hook config goes, every slot a template names is
// one the interpreter fills, keyWhen names keys the template has, and no
// two files of a bundle share a path.
func Layouts(a *model.Atlas) model.Errors {
	var errs model.Errors
	for _, h := range a.Harnesses {
		f := h.Packaging.Format
		if f.Name == "" {
			continue
		}
		lay := a.Layout(f.Name)
		if lay == nil {
			// As for a phase: a typo of a declared layout is likelier
			// than a new one.
			if near := adapter.Closest(f.Name, layoutNames(a)); near != "" {
				errs.Addf(f.Pos, "harness %s: packaging format %q is no layout: did you mean %q? (%s; a new layout is declared in layouts)", h.ID, f.Name, near, layoutIDs(a))
			} else {
				errs.Addf(f.Pos, "harness %s: packaging format %q is no layout (%s); declare it in layouts", h.ID, f.Name, layoutIDs(a))
			}
			continue
		}
		if fam := a.Family(h.Family.Name); fam != nil && fam.Delivery == "shell-hook" && (lay.Hooks == nil || lay.Hooks.Path.Name == "") {
			p := lay.Pos
			if lay.Hooks != nil {
				p = lay.Hooks.Pos
			}
			errs.Addf(p, "layout %s: no hook config location (hooks.path), but shell-hook harness %s registers its hooks there", lay.ID, h.ID)
		}
		t := h.Packaging.Target
		switch {
		case t.Kind == "hooks-folder" && !lay.Hooks.Scripts():
			errs.Addf(h.Packaging.Pos, "harness %s: install target hooks-folder, but layout %s writes no script per event (hooks.shape %q): sitter plugin install copies the bundle's scripts into the folder", h.ID, lay.ID, shapeOf(lay))
		case t.Kind != "hooks-folder" && lay.Hooks.Scripts():
			errs.Addf(h.Packaging.Pos, "harness %s: install target %s, but layout %s writes one script per event: the target must be kind hooks-folder, the folder the harness runs them from", h.ID, t.Kind, lay.ID)
		case t.Kind == "hooks-config" && lay.Hooks != nil && (t.Shape != lay.Hooks.Shape || t.CommandKey != lay.Hooks.CommandKey()):
			errs.Addf(h.Packaging.Pos, "harness %s: install target (shape %q, commandKey %q) disagrees with layout %s's hook config (%q, %q): sitter plugin install merges one into the other", h.ID, t.Shape, t.CommandKey, lay.ID, lay.Hooks.Shape, lay.Hooks.CommandKey())
		case t.Kind == "hooks-config" && lay.Hooks != nil && t.TimeoutKey != "" && t.TimeoutKey != lay.Hooks.TimeoutKey():
			errs.Addf(h.Packaging.Pos, "harness %s: install target timeoutKey %q is not the key that holds {timeout} in layout %s's hook entry (%q)", h.ID, t.TimeoutKey, lay.ID, lay.Hooks.TimeoutKey())
		}
		for _, x := range []struct {
			what, carried string
			dirs          model.TargetDirs
		}{{"skills", lay.Skills.Name, t.Skills}, {"commands", lay.Commands.Name, t.Commands}, {"mcp", mcpFile(lay), t.MCP}} {
			switch {
			case x.dirs == model.TargetDirs{}:
			case t.Kind != "hooks-config" && t.Kind != "hooks-folder":
				errs.Addf(h.Packaging.Pos, "harness %s: install target %s.%s: only a hooks-config or hooks-folder install copies %s (a %s install places the whole bundle)", h.ID, t.Kind, x.what, x.what, t.Kind)
			case x.carried == "":
				errs.Addf(h.Packaging.Pos, "harness %s: install target %s, but layout %s carries no %s", h.ID, x.what, lay.ID, x.what)
			}
		}
	}
	users := map[string][]string{}
	for _, h := range a.Harnesses {
		users[h.Packaging.Format.Name] = append(users[h.Packaging.Format.Name], h.ID)
	}
	for _, lay := range a.Layouts {
		if m := lay.Marketplace; m != nil && len(users[lay.ID]) > 1 {
			errs.Addf(m.Pos, "layout %s: harnesses %s would write one marketplace (marketplaces/%s): give the second harness a layout of its own", lay.ID, strings.Join(users[lay.ID], ", "), m.Dir)
		}
		c := layoutChecker{lay: lay, errs: &errs}
		c.check()
	}
	return errs
}

type layoutChecker struct {
	lay  *model.Layout
	errs *model.Errors
}

// check is the table of contents of one layout's rules.
func (c layoutChecker) check() {
	lay := c.lay
	paths := map[string]model.Pos{}
	claim := func(path string, p model.Pos, what string) {
		if path == "" {
			return
		}
		if contains(model.BundleFiles, path) {
			c.errs.Addf(p, "layout %s: two files at %s (%s, and sitter's own file of every bundle)", lay.ID, path, what)
			return
		}
		if first, ok := paths[path]; ok {
			c.errs.Addf(p, "layout %s: two files at %s (%s; first at %s)", lay.ID, path, what, first)
			return
		}
		paths[path] = p
	}
	if hk := lay.Hooks; hk.Scripts() {
		claim(hk.Path.Name, hk.Path.Pos, "the hook scripts")
		c.scripts(hk)
	} else if hk != nil {
		claim(hk.Path.Name, hk.Path.Pos, "the hook config")
		if hk.Script.Name != "" {
			c.errs.Addf(hk.Script.Pos, "layout %s: hooks.script is for shape %q; a %s layout registers its hooks in hooks.entry", lay.ID, model.ShapeScripts, hk.Shape)
		}
		c.template(hk.Document, model.PluginSlots, "hooks.document")
		c.template(hk.Entry, model.EntrySlots, "hooks.entry")
		if !hooksAtTop(hk.Document) {
			c.errs.Addf(hk.Pos, "layout %s: hooks.document needs hooks: \"{%s}\" at its top: sitter plugin install and verify read the registrations there", lay.ID, model.SlotHooks)
		}
		if hk.CommandKey() == "" {
			c.errs.Addf(hk.Pos, "layout %s: hooks.entry has no key whose value is \"{%s}\": nothing runs the launcher", lay.ID, model.SlotCommand)
		}
	}
	if lay.CarriesCommands() && lay.CommandArgs == nil {
		c.errs.Addf(lay.Pos, "layout %s carries commands but declares no commandArgs: say what the harness writes for the text typed after a command (placeholder, \"\" when it appends that text itself), with evidence", lay.ID)
	}
	manifest := lay.Manifest.Path.Name == "" // a layout without one
	for _, f := range lay.Files {
		claim(f.Path.Name, f.Path.Pos, "a layout file")
		manifest = manifest || f.Path.Name == lay.Manifest.Path.Name
		c.file(f)
	}
	if !manifest {
		c.errs.Addf(lay.Manifest.Path.Pos, "layout %s: manifest %s is none of its files", lay.ID, lay.Manifest.Path.Name)
	}
	if m := lay.Marketplace; m != nil {
		market := map[string]model.Pos{}
		for _, f := range m.Files {
			if first, ok := market[f.Path.Name]; ok {
				c.errs.Addf(f.Path.Pos, "layout %s: two marketplace files at %s (first at %s)", lay.ID, f.Path.Name, first)
			}
			market[f.Path.Name] = f.Path.Pos
			c.file(f)
		}
	}
}

// scripts checks a script-per-event layout's hooks: a file name made from
// the event, a script that starts with "#!" and runs {command} on a line
// of its own (the line sitter plugin install rewrites), known slots.
func (c layoutChecker) scripts(hk *model.LayoutHooks) {
	id := c.lay.ID
	if hk.Path.Name != "" {
		c.slots(hk.Path.Name, hk.Path.Pos, []string{model.SlotEvent}, "hooks.path")
		if !strings.Contains(path.Base(hk.Path.Name), "{"+model.SlotEvent+"}") {
			c.errs.Addf(hk.Path.Pos, "layout %s: hooks.path %q: a script per event needs {%s} in its file name", id, hk.Path.Name, model.SlotEvent)
		}
	}
	if hk.Entry != nil {
		c.errs.Addf(hk.Entry.Pos, "layout %s: hooks.entry is for a hook config; a %s layout writes hooks.script", id, model.ShapeScripts)
	}
	s := hk.Script
	if s.Name == "" {
		c.errs.Addf(hk.Pos, "layout %s: shape %s needs hooks.script, the text of each event's script", id, model.ShapeScripts)
		return
	}
	c.slots(s.Name, s.Pos, append(append([]string{}, model.PluginSlots...), model.ScriptSlots...), "hooks.script")
	if !strings.HasPrefix(s.Name, "#!") {
		c.errs.Addf(s.Pos, "layout %s: hooks.script does not start with \"#!\": the harness runs the script by its interpreter line", id)
	}
	lines := 0
	for _, line := range strings.Split(s.Name, "\n") {
		if strings.Contains(line, "{"+model.SlotCommand+"}") {
			lines++
			if rest := strings.TrimPrefix(strings.TrimSpace(line), "exec "); rest != "{"+model.SlotCommand+"}" {
				c.errs.Addf(s.Pos, "layout %s: hooks.script: {%s} must stand alone on its line (optionally after \"exec \"), not in %q: sitter plugin install rewrites that line", id, model.SlotCommand, strings.TrimSpace(line))
			}
		}
	}
	if lines != 1 {
		c.errs.Addf(s.Pos, "layout %s: hooks.script runs {%s} on %d lines, want one: it is the call of the launcher", id, model.SlotCommand, lines)
	}
}

// shapeOf is a layout's hook shape, "" for one without hooks.
func shapeOf(lay *model.Layout) string {
	if lay.Hooks == nil {
		return ""
	}
	return lay.Hooks.Shape
}

// file checks the slots of one file and its keyWhen paths.
func (c layoutChecker) file(f *model.LayoutFile) {
	slots := append(append([]string{}, model.PluginSlots...), model.EachSlots[f.Each.Name]...)
	c.slots(f.Path.Name, f.Path.Pos, slots, "path")
	c.template(f.JSON, slots, "json")
	for _, k := range f.TOML {
		c.template(k.Val, slots, "toml")
	}
	c.template(f.Frontmatter, slots, "frontmatter")
	c.slots(f.Body.Name, f.Body.Pos, slots, "body")
	for _, p := range f.Text {
		c.slots(p.Text, p.Pos, append(slots, model.EachSlots[p.Each]...), "text")
	}
	for _, k := range f.KeyWhen {
		if f.JSON == nil || !hasKey(f.JSON, k.Path) {
			c.errs.Addf(k.Pos, "layout %s: keyWhen %q names no key of %s's json", c.lay.ID, k.Path, f.Path.Name)
		}
	}
	bodies := 0
	for _, set := range []bool{f.JSON != nil, f.TOML != nil, f.Frontmatter != nil, f.Text != nil} {
		if set {
			bodies++
		}
	}
	if bodies != 1 {
		c.errs.Addf(f.Pos, "layout %s: file %s needs exactly one of json, toml, frontmatter (with body) or text; it has %d", c.lay.ID, f.Path.Name, bodies)
	}
}

// template checks every string of a JSON template.
func (c layoutChecker) template(t *model.Tmpl, slots []string, where string) {
	if t == nil {
		return
	}
	switch t.Kind {
	case model.TmplString:
		c.slots(t.Str, t.Pos, slots, where)
	case model.TmplObject:
		for _, k := range t.Keys {
			c.template(k.Val, slots, where)
		}
	case model.TmplList:
		for _, it := range t.Items {
			c.template(it, slots, where)
		}
	}
}

// slots reports the slots of s that the interpreter does not fill.
func (c layoutChecker) slots(s string, p model.Pos, known []string, where string) {
	for _, r := range model.TemplateSlots(s) {
		if contains(known, r.Name) {
			continue
		}
		list, isEvents := model.IsEventsSlot(r.Name)
		if where == "hooks.entry" || where == "hooks.path" {
			c.errs.Addf(p, "layout %s: %s: unknown slot {%s} (slots: {%s})", c.lay.ID, where, r.Name, strings.Join(known, "}, {"))
			continue
		}
		if isEvents && (list == "" || c.hasList(list)) {
			continue
		}
		if each := eachOf(r.Name); each != "" {
			c.errs.Addf(p, "layout %s: %s: slot {%s} is filled only in a file or text part with each: %q", c.lay.ID, where, r.Name, each)
			continue
		}
		c.errs.Addf(p, "layout %s: %s: unknown slot {%s} (slots: {%s}, {events}, {events.<list>} of eventLists)", c.lay.ID, where, r.Name, strings.Join(known, "}, {"))
	}
}

func (c layoutChecker) hasList(name string) bool {
	for _, l := range c.lay.EventLists {
		if l.Name == name {
			return true
		}
	}
	return false
}

// hasKey reports whether an object template has the dotted key path.
func hasKey(t *model.Tmpl, path string) bool {
	head, rest, nested := strings.Cut(path, ".")
	for _, k := range t.Keys {
		if k.Key == head {
			return !nested || (k.Val.Kind == model.TmplObject && hasKey(k.Val, rest))
		}
	}
	return false
}

func layoutIDs(a *model.Atlas) string {
	if len(a.Layouts) == 0 {
		return "no layout is declared"
	}
	return "known: " + strings.Join(layoutNames(a), ", ")
}

// layoutNames lists the ids of the declared layouts.
func layoutNames(a *model.Atlas) []string {
	ids := make([]string, len(a.Layouts))
	for i, l := range a.Layouts {
		ids[i] = l.ID
	}
	return ids
}

// hooksAtTop reports whether a hook config document holds the
// registrations under its top-level "hooks" key.
func hooksAtTop(doc *model.Tmpl) bool {
	if doc == nil {
		return false
	}
	for _, k := range doc.Keys {
		if k.Key == "hooks" && k.Val.Kind == model.TmplString && k.Val.Str == "{"+model.SlotHooks+"}" {
			return true
		}
	}
	return false
}

// eachOf is the each set whose items fill a slot, "" when none does.
func eachOf(slot string) string {
	for each, slots := range model.EachSlots {
		if contains(slots, slot) {
			return each
		}
	}
	return ""
}

// mcpFile is the file of the layout that holds the MCP servers, "" if none.
func mcpFile(l *model.Layout) string {
	f, _ := l.MCPServers()
	return f
}
