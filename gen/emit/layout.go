package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sitter.dev/sitter/gen/model"
)

// The one bundle interpreter: it writes any layout of the atlas
// (#Layout, atlas/layouts.cue) for a plugin and a harness.

// write is the table of contents of a bundle: the hook config (or hook
// scripts), the copied skills and commands, the layout's files, sitter's
// own files, then the marketplace beside the bundle.
func (b *bundle) write() {
	regs := b.registrations()
	b.scope = b.pluginScope(regs)
	b.hookConfig(regs)
	b.copySkills(b.lay.Skills.Name)
	b.copyCommands(b.lay.Commands.Name)
	for _, f := range b.lay.Files {
		b.layoutFile(b.dir, f)
	}
	b.common(names(regs))
	b.marketplace()
}

// pluginScope holds the value of every slot a layout template may name.
func (b *bundle) pluginScope(regs []registration) map[string]any {
	p := b.p
	s := map[string]any{
		"name": p.Name, "version": p.Version, "description": p.Description,
		"license": p.License, "homepage": p.Homepage, "keywords": p.Keywords,
		"author.name": p.Author.Name, "author.email": p.Author.Email, "author.url": p.Author.URL,
		"namePascal": Pascal(p.Name), "harness": b.h.ID,
		"generatedBy":    Marker(p.Dir + " and " + b.h.File),
		"mcpServers":     b.mcpServers(),
		model.SlotHooks:  b.hooksObject(regs),
		model.SlotEvents: names(regs),
	}
	if p.Author.Name != "" {
		a := map[string]any{"name": p.Author.Name}
		if p.Author.Email != "" {
			a["email"] = p.Author.Email
		}
		if p.Author.URL != "" {
			a["url"] = p.Author.URL
		}
		s["author"] = a
	}
	for _, l := range b.lay.EventLists {
		s[model.SlotEvents+"."+l.Name] = eventList(l, regs)
	}
	return s
}

// has reports whether the plugin has what a condition names.
func (b *bundle) has(cond string) bool {
	switch cond {
	case "":
		return true
	case "hooks":
		return !empty(b.scope[model.SlotHooks])
	case "skills":
		return len(b.p.Skills) > 0
	case "commands":
		return len(b.p.Commands) > 0
	case "mcpServers":
		return !empty(b.scope["mcpServers"])
	}
	return false
}

// items are the scopes of an `each` file or part: one per skill or command.
func (b *bundle) items(each string) []map[string]any {
	var out []map[string]any
	switch each {
	case "":
		return []map[string]any{b.scope}
	case "skills":
		for _, s := range b.p.Skills {
			out = append(out, with(b.scope, map[string]any{"skill.name": s.Name, "skill.description": s.Description}))
		}
	case "commands":
		for _, c := range b.p.Commands {
			out = append(out, with(b.scope, map[string]any{"command.name": c.Name, "command.description": c.Description, "command.prompt": b.commandText(c.Prompt)}))
		}
	}
	return out
}

// hookConfig writes the layout's hook config when the plugin registers
// hooks, or one executable script per registered event.
func (b *bundle) hookConfig(regs []registration) {
	hk := b.lay.Hooks
	switch {
	case hk == nil || len(regs) == 0:
	case hk.Scripts():
		for _, r := range regs {
			sc := with(b.scope, b.entryScope(r))
			b.add(fill(hk.Path.Name, sc), []byte(fill(hk.Script.Name, sc)), 0o755)
		}
	default:
		doc, _ := render(hk.Document, b.scope)
		b.json(hk.Path.Name, doc)
	}
}

// entryScope holds the slots of one registration: its event, the launcher
// call, the timeout in the harness's unit and the tool matcher.
func (b *bundle) entryScope(r registration) map[string]any {
	return map[string]any{
		model.SlotEvent:   r.event.Name,
		model.SlotCommand: b.command(r.event.Name),
		model.SlotTimeout: r.timeoutIn(b.h.Packaging.TimeoutUnit),
		model.SlotMatcher: r.matcher,
	}
}

// hooksObject is the value of the {hooks} slot: {event: [...]} for a
// hook config, {event: its script's path} for hook scripts.
func (b *bundle) hooksObject(regs []registration) map[string]any {
	hk := b.lay.Hooks
	hooks := map[string]any{}
	if hk == nil {
		return hooks
	}
	for _, r := range regs {
		if hk.Scripts() {
			hooks[r.event.Name] = fill(hk.Path.Name, map[string]any{model.SlotEvent: r.event.Name})
			continue
		}
		entry, _ := render(hk.Entry, b.entryScope(r))
		if hk.Shape == "versioned-list" {
			hooks[r.event.Name] = []any{entry}
			continue
		}
		group := map[string]any{"hooks": []any{entry}}
		if r.matcher != "" {
			group["matcher"] = r.matcher
		}
		hooks[r.event.Name] = []any{group}
	}
	return hooks
}

// layoutFile writes one file of the layout under dir (once per item for
// an `each` file), unless its condition fails.
func (b *bundle) layoutFile(dir string, f *model.LayoutFile) {
	if !b.has(f.When.Name) {
		return
	}
	for _, sc := range b.items(f.Each.Name) {
		b.ship(f.Each.Name, sc)
		path := dir + "/" + fill(f.Path.Name, sc)
		var data []byte
		switch {
		case f.JSON != nil:
			v, _ := render(b.prune(f.JSON, f.KeyWhen, ""), sc)
			if m, ok := v.(map[string]any); ok && f.Path.Name == b.lay.Manifest.Path.Name && b.lay.Manifest.Overrides {
				if o, ok := b.p.Overrides[b.h.ID]; ok {
					for k, v := range o.Manifest {
						m[k] = v
					}
				}
			}
			data = mustJSON(v)
		case f.TOML != nil:
			data = tomlDoc(f.TOML, sc)
		case f.Frontmatter != nil:
			data = markdown(f.Frontmatter, f.Body.Name, sc)
		default:
			var t strings.Builder
			for _, part := range f.Text {
				if b.has(part.When) {
					for _, psc := range b.items(part.Each) {
						t.WriteString(fill(part.Text, with(sc, psc)))
					}
				}
			}
			data = []byte(t.String())
		}
		b.files = append(b.files, File{Path: path, Bytes: data, Mode: 0o644})
	}
}

// marketplace writes the layout's marketplace files beside the bundle,
// with a copy of the bundle inside when the layout asks for one.
func (b *bundle) marketplace() {
	m := b.lay.Marketplace
	if m == nil {
		return
	}
	bundleFiles := b.files
	dir := "artifacts/" + b.p.Name + "/marketplaces/" + m.Dir
	for _, f := range m.Files {
		b.layoutFile(dir, f)
	}
	if m.Copy == "" {
		return
	}
	into := dir + "/" + fill(m.Copy, b.scope) + "/"
	for _, f := range bundleFiles {
		if rel, ok := strings.CutPrefix(f.Path, b.dir+"/"); ok {
			b.files = append(b.files, File{Path: into + rel, Bytes: f.Bytes, Mode: f.Mode})
		}
	}
}

// prune drops the keys of a JSON template whose keyWhen condition fails.
func (b *bundle) prune(t *model.Tmpl, conds []model.KeyWhen, at string) *model.Tmpl {
	if t.Kind != model.TmplObject || len(conds) == 0 {
		return t
	}
	out := *t
	out.Keys = nil
	for _, k := range t.Keys {
		path := strings.TrimPrefix(at+"."+k.Key, ".")
		keep := true
		for _, c := range conds {
			if c.Path == path && !b.has(c.Cond) {
				keep = false
			}
		}
		if keep {
			out.Keys = append(out.Keys, model.TmplKey{Key: k.Key, Val: b.prune(k.Val, conds, path)})
		}
	}
	return &out
}

// render fills a JSON template from a scope. A string that is one slot
// takes the slot's value, whatever its type; a slot, or an object or list
// that only omitted slots left empty, is absent (false).
func render(t *model.Tmpl, scope map[string]any) (any, bool) {
	switch t.Kind {
	case model.TmplString:
		if r, ok := model.WholeSlot(t.Str); ok {
			v := scope[r.Name]
			if empty(v) {
				return r.Default, r.HasDefault
			}
			return v, true
		}
		return fill(t.Str, scope), true
	case model.TmplObject:
		m := map[string]any{}
		for _, k := range t.Keys {
			if v, ok := render(k.Val, scope); ok {
				m[k.Key] = v
			}
		}
		return m, len(m) > 0 || len(t.Keys) == 0
	case model.TmplList:
		l := []any{}
		for _, it := range t.Items {
			if v, ok := render(it, scope); ok {
				l = append(l, v)
			}
		}
		return l, len(l) > 0 || len(t.Items) == 0
	}
	d := json.NewDecoder(strings.NewReader(t.Const))
	d.UseNumber()
	var v any
	d.Decode(&v)
	return v, true
}

// fill interpolates the slots of a string: a string value as is, a list of
// strings as ["a", "b"] (a TypeScript or JSON array), empty ones as their
// default or nothing.
func fill(s string, scope map[string]any) string {
	var out strings.Builder
	last := 0
	for _, r := range model.TemplateSlots(s) {
		out.WriteString(s[last:r.Start])
		last = r.End
		switch v := scope[r.Name].(type) {
		case nil:
			out.WriteString(r.Default)
		case string:
			if v == "" {
				v = r.Default
			}
			out.WriteString(v)
		case []string:
			q := make([]string, len(v))
			for i, x := range v {
				q[i] = strconv.Quote(x)
			}
			out.WriteString("[" + strings.Join(q, ", ") + "]")
		default:
			fmt.Fprint(&out, v)
		}
	}
	out.WriteString(s[last:])
	return out.String()
}

// tomlDoc writes one `key = "value"` line per non-empty value, in order.
func tomlDoc(keys []model.TmplKey, scope map[string]any) []byte {
	var t bytes.Buffer
	for _, k := range keys {
		if v, ok := render(k.Val, scope); ok {
			fmt.Fprintf(&t, "%s = %s\n", k.Key, tomlString(fmt.Sprint(v)))
		}
	}
	return t.Bytes()
}

// markdown writes YAML front matter (one line per non-empty key, in
// order) and the body.
func markdown(front *model.Tmpl, body string, scope map[string]any) []byte {
	var t bytes.Buffer
	t.WriteString("---\n")
	for _, k := range front.Keys {
		v, ok := render(k.Val, scope)
		if !ok {
			continue
		}
		if s, isStr := v.(string); isStr {
			fmt.Fprintf(&t, "%s: %s\n", k.Key, strconv.Quote(strings.ReplaceAll(s, "\n", " ")))
		} else {
			j, _ := json.Marshal(v)
			fmt.Fprintf(&t, "%s: %s\n", k.Key, j)
		}
	}
	t.WriteString("---\n\n")
	t.WriteString(fill(body, scope))
	return t.Bytes()
}

// eventList is the registered events an event list selects.
func eventList(l model.EventList, regs []registration) []string {
	out := []string{}
	for _, r := range regs {
		n := r.event.Name
		if (len(l.Prefixes) == 0 || hasPrefix(n, l.Prefixes)) && !hasPrefix(n, l.ExceptPrefixes) &&
			(len(l.Phases) == 0 || slices.Contains(l.Phases, r.event.Phase.Name)) {
			out = append(out, n)
		}
	}
	if l.Sorted {
		sort.Strings(out)
	}
	return out
}

// with is base plus more, base unchanged.
func with(base, more map[string]any) map[string]any {
	m := make(map[string]any, len(base)+len(more))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range more {
		m[k] = v
	}
	return m
}

// empty reports whether a slot value counts as absent.
func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []string:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// tomlString quotes s as a TOML basic string (multi-line when needed).
func tomlString(s string) string {
	if !strings.Contains(s, "\n") {
		return strconv.Quote(s)
	}
	esc := strings.ReplaceAll(s, `\`, `\\`)
	esc = strings.ReplaceAll(esc, `"""`, `\"\"\"`)
	return `"""` + "\n" + esc + `"""`
}
