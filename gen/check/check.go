// Package check holds the cross-record rules of the atlas that CUE's closed
// definitions cannot say: unknown phases, duplicate events, capabilities
// without render rules, alias collisions, families and profiles, defaults,
// evidence and payload paths. Every rule reports a positioned error.
package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"sitter.dev/sitter/gen/model"
	"sitter.dev/sitter/runtime/adapter"
)

// Atlas runs every rule and returns all violations, sorted.
func Atlas(a *model.Atlas) model.Errors {
	var errs model.Errors
	phases := map[string]bool{}
	for _, p := range a.Phases {
		phases[p.ID] = true
	}

	// Names: ids and aliases share one namespace.
	owner := map[string]string{}
	for _, h := range a.Harnesses {
		owner[h.ID] = h.ID
	}
	for _, h := range a.Harnesses {
		for _, al := range h.Aliases {
			if o, ok := owner[al.Name]; ok {
				if o == h.ID {
					errs.Addf(al.Pos, "harness %s: alias %q repeats a name it already has", h.ID, al.Name)
				} else {
					errs.Addf(al.Pos, "harness %s: alias %q collides with harness %s", h.ID, al.Name, o)
				}
				continue
			}
			owner[al.Name] = h.ID
		}
	}

	// Defaults.
	var defaults []*model.Harness
	for _, h := range a.Harnesses {
		if h.Default {
			defaults = append(defaults, h)
		}
	}
	if len(defaults) > 1 {
		// Each at its own default: the one just added may sort first.
		for _, h := range defaults {
			var others []string
			for _, o := range defaults {
				if o != h {
					others = append(others, o.ID)
				}
			}
			errs.Addf(h.DefaultPos, "harness %s: default: true, and %s is the default too: mark exactly one", h.ID, strings.Join(others, ", "))
		}
	}
	if len(defaults) == 0 && len(a.Harnesses) > 0 {
		errs.Addf(a.Harnesses[0].Pos, "no harness is the default: mark exactly one with default: true")
	}

	for _, h := range a.Harnesses {
		// Family and profile.
		f := a.Family(h.Family.Name)
		switch {
		case f == nil:
			errs.Addf(h.Family.Pos, "harness %s: unknown family %q (known: %s)", h.ID, h.Family.Name, familyIDs(a))
		case !contains(f.Profiles, h.Profile.Name):
			errs.Addf(h.Profile.Pos, "harness %s: profile %q is outside family %s (its profiles: %s); a harness file joins one with `families: %q: profiles: %q: true`", h.ID, h.Profile.Name, f.ID, strings.Join(f.Profiles, ", "), f.ID, h.Profile.Name)
		}
		if len(h.Evidence) == 0 {
			errs.Addf(h.Pos, "harness %s: no evidence", h.ID)
		}
		errs = append(errs, checkPaths(h)...)
		errs = append(errs, checkOutputs(h)...)
		errs = append(errs, checkShellTool(h)...)

		seen := map[string]*model.Event{}
		for _, e := range h.Events {
			if first, ok := seen[e.Name]; ok {
				errs.Addf(e.Pos, "harness %s: duplicate native event %q (first at %s)", h.ID, e.Name, first.Pos)
				continue
			}
			seen[e.Name] = e
			if !phases[e.Phase.Name] {
				// A typo of a declared phase is far likelier than a new
				// phase: name it before suggesting a declaration.
				if p := adapter.Closest(e.Phase.Name, slices.Collect(maps.Keys(phases))); p != "" {
					errs.Addf(e.Phase.Pos, "event %s: unknown phase %q: did you mean %q? (a new phase is declared in phases)", e.Name, e.Phase.Name, p)
				} else {
					errs.Addf(e.Phase.Pos, "event %s: unknown phase %q (declare it in phases)", e.Name, e.Phase.Name)
				}
			}
			if len(e.Evidence) == 0 {
				errs.Addf(e.Pos, "event %s: missing evidence: name the doc, package version or test that shows this event", e.Name)
			}
			errs = append(errs, checkRules(h, e)...)
			errs = append(errs, checkUnverifiable(e)...)
			if cb := e.ContextBeforePrompt; cb.Name != "" && !e.Has("addContext") {
				errs.Addf(cb.Pos, "event %s: contextBeforePrompt says where the event's context goes, but can does not list addContext", e.Name)
			}
		}
		if ae := h.AgentEnv; ae != nil {
			for _, n := range ae.Events {
				if seen[n.Name] == nil {
					errs.Addf(n.Pos, "harness %s: agentEnv names event %q, which the harness does not declare", h.ID, n.Name)
				}
			}
		}
	}
	errs = append(errs, Providers(a)...)
	errs = append(errs, Transcripts(a)...)
	errs = append(errs, Launches(a)...)
	errs = append(errs, Layouts(a)...)
	errs = append(errs, Routing(a)...)
	return errs.Sort()
}

// checkShellTool: a harness with an event that gives handlers a tool
// whose kind its tables decide must say which of its tools is the shell,
// as every coding agent has one. With none classified every tool reaches
// handlers as "other": a handler for shell commands (a guard) would be
// registered and never run.
func checkShellTool(h *model.Harness) model.Errors {
	var errs model.Errors
	if h.HasToolKind("shell") {
		return nil
	}
	for _, e := range h.Events {
		if e.Support != "unsupported" && h.NamesTool(e) {
			errs.Addf(e.Pos, "harness %s: event %s gives handlers its tool's kind, but no tool of %s is of kind shell: classify its tools (tools: native name → kind), the shell tool at least", h.ID, e.Name, h.DisplayName)
			break
		}
	}
	return errs
}

// checkUnverifiable holds an event's unverifiable reasons against what it
// claims: a reason for a cell the matrix shows as "not supported" explains
// nothing and would hide a mistake in can or support.
func checkUnverifiable(e *model.Event) model.Errors {
	var errs model.Errors
	for _, r := range e.Unverifiable {
		switch {
		case !contains(model.FidelityCells, r.Cell):
			errs.Addf(r.Pos, "event %s: unverifiable names cell %q (cells: %s)", e.Name, r.Cell, strings.Join(model.FidelityCells, ", "))
		case e.Support == "unsupported":
			errs.Addf(r.Pos, "event %s: unverifiable.%s gives a reason for an event whose support is unsupported: the matrix says \"not supported\" there already", e.Name, r.Cell)
		case r.Cell != "observe" && !e.Has(r.Cell):
			errs.Addf(r.Pos, "event %s: unverifiable.%s gives a reason for a capability that can does not list", e.Name, r.Cell)
		case strings.TrimSpace(r.Reason) == "" || strings.Contains(r.Reason, "\n"):
			errs.Addf(r.Pos, "event %s: unverifiable.%s: the reason must be one non-empty line", e.Name, r.Cell)
		}
	}
	return errs
}

func checkRules(h *model.Harness, e *model.Event) model.Errors {
	var errs model.Errors
	stop := model.Stops(e.Phase.Name)
	seen := map[string]bool{}
	for _, c := range e.Can {
		if seen[c.Name] {
			errs.Addf(c.Pos, "event %s: capability %q listed twice", e.Name, c.Name)
			continue
		}
		seen[c.Name] = true
		aspect := model.CapabilityRule[c.Name]
		if e.Rule(aspect) == nil {
			errs.Addf(c.Pos, "event %s: capability %q cannot be expressed: no render rule %q", e.Name, c.Name, aspect)
		}
		if c.Name == "block" && !stop {
			errs.Addf(c.Pos, "event %s: capability \"block\" keeps a stop going, but phase %s is no stop phase: use \"deny\"", e.Name, e.Phase.Name)
		}
		if c.Name == "deny" && stop {
			errs.Addf(c.Pos, "event %s: phase %s refuses to stop with \"block\", not \"deny\"", e.Name, e.Phase.Name)
		}
	}
	for _, r := range e.Rules {
		cap := ""
		for c, a := range model.CapabilityRule {
			if a == r.Aspect {
				cap = c
			}
		}
		if !seen[cap] {
			errs.Addf(r.Pos, "event %s: render rule %q has no capability %q in can", e.Name, r.Aspect, cap)
		}
		slots := map[string]bool{}
		if r.Stderr != "" {
			slots[r.Stderr] = true
		}
		walkSlots(r.Stdout, func(m model.Member) {
			if !contains(model.Slots, m.Slot) {
				errs.Addf(m.Pos, "event %s: render rule %q: unknown slot {%s} (slots: {%s})", e.Name, r.Aspect, m.Slot, strings.Join(model.Slots, "}, {"))
			}
			slots[m.Slot] = true
		})
		if len(r.Stdout) == 0 && r.Exit == 0 && r.Stderr == "" {
			errs.Addf(r.Pos, "event %s: render rule %q writes nothing", e.Name, r.Aspect)
		}
		need := map[string]string{"rewrite": "updatedInput", "context": "context", "userMessage": "userMessage", "watch": "watchPaths"}[r.Aspect]
		if need != "" && !slots[need] {
			errs.Addf(r.Pos, "event %s: render rule %q never writes {%s}", e.Name, r.Aspect, need)
		}
		errs = append(errs, checkEffect(h, e, r)...)
	}
	return errs
}

// checkEffect holds a rule's declared effect against its aspect (the
// canonical decision it renders), its event's can list, the phase, and the
// harness's sessionOutputs.
func checkEffect(h *model.Harness, e *model.Event, r *model.Rule) model.Errors {
	var errs model.Errors
	fx := r.Effect
	if fx.Call.Name == "" || fx.Session.Name == "" {
		return nil // CUE reports the missing effect
	}
	// An effect written in the event is reported where it is written; one
	// shared through a let, at the rule that uses it.
	at := func(n model.Named) model.Pos {
		if n.Pos.File == e.Pos.File && n.Pos.Line >= e.Pos.Line {
			return n.Pos
		}
		return r.Pos
	}
	fx.Call.Pos, fx.Session.Pos = at(fx.Call), at(fx.Session)
	stop := model.Stops(e.Phase.Name)
	mismatch := ""
	switch want := model.AspectEffect[r.Aspect]; want {
	case model.ContinuesSession, model.HaltsSession:
		if fx.Session.Name != want {
			mismatch = fx.Session.Name
			errs.Addf(fx.Session.Pos, "event %s: render rule %q says session: %s, but %q %s (session: %s)", e.Name, r.Aspect, fx.Session.Name, r.Aspect, aspectMeans[r.Aspect], want)
		}
	default:
		if fx.Call.Name != want {
			mismatch = fx.Call.Name
			errs.Addf(fx.Call.Pos, "event %s: render rule %q says call: %s, but %q %s (call: %s)", e.Name, r.Aspect, fx.Call.Name, r.Aspect, aspectMeans[r.Aspect], want)
		}
	}
	if stop && fx.Call.Name == model.DeniesCall {
		errs.Addf(fx.Call.Pos, "event %s: render rule %q says call: deniesCall, but phase %s has no call to deny: a stop is refused with a block, which continues the session (session: continuesSession)", e.Name, r.Aspect, e.Phase.Name)
	}
	for _, x := range []model.Named{fx.Call, fx.Session} {
		c := model.EffectCapability[x.Name]
		// The aspect's own effect is checked as "render rule without its capability".
		if c == "" || e.Has(c) || x.Name == model.AspectEffect[r.Aspect] || x.Name == mismatch || (stop && x.Name == model.DeniesCall) {
			continue
		}
		errs.Addf(x.Pos, "event %s: render rule %q claims %s, but the event's can list has no %q", e.Name, r.Aspect, x.Name, c)
	}
	halt := firstMatch(h.Halts, e.Phase.Name, r)
	cont := firstMatch(h.Continues, e.Phase.Name, r)
	where := func(o *model.OutputMatch) string { return fmt.Sprintf("%s sessionOutputs at %s", h.ID, o.Pos) }
	switch fx.Session.Name {
	case model.HaltsSession:
		if cont != nil {
			errs.Addf(fx.Session.Pos, "event %s: render rule %q says it halts the session, but writes %s, which continues the session (%s)", e.Name, r.Aspect, cont, where(cont))
		} else if halt == nil {
			errs.Addf(fx.Session.Pos, "event %s: render rule %q says it halts the session, but writes nothing that %s's sessionOutputs.halts lists for phase %s", e.Name, r.Aspect, h.ID, e.Phase.Name)
		}
	case model.ContinuesSession:
		if halt != nil {
			errs.Addf(fx.Session.Pos, "event %s: render rule %q says it continues the session, but writes %s, which halts the session (%s)", e.Name, r.Aspect, halt, where(halt))
		} else if cont == nil {
			errs.Addf(fx.Session.Pos, "event %s: render rule %q says it continues the session, but writes nothing that %s's sessionOutputs.continues lists for phase %s", e.Name, r.Aspect, h.ID, e.Phase.Name)
		}
	default:
		for _, o := range []*model.OutputMatch{halt, cont} {
			if o == nil {
				continue
			}
			what := "halts"
			if o == cont {
				what = "continues"
			}
			errs.Addf(fx.Session.Pos, "event %s: render rule %q says session: none, but writes %s, which %s the session (%s)", e.Name, r.Aspect, o, what, where(o))
		}
	}
	return errs
}

// aspectMeans says what each render aspect does, for error messages.
var aspectMeans = map[string]string{
	"allow": "lets the call run", "ask": "asks the user", "deny": "refuses the call",
	"rewrite": "runs the call with a new input", "context": "adds context", "userMessage": "shows the user a message",
	"block": "keeps the session going", "halt": "halts the session",
	"watch": "makes the harness watch files",
}

func firstMatch(os []model.OutputMatch, phase string, r *model.Rule) *model.OutputMatch {
	for i := range os {
		if os[i].Applies(phase) && os[i].Matches(r) {
			return &os[i]
		}
	}
	return nil
}

// checkOutputs checks the harness's sessionOutputs: each names a key or an
// exit code, and no output both halts and continues on a phase.
func checkOutputs(h *model.Harness) model.Errors {
	var errs model.Errors
	for _, os := range [][]model.OutputMatch{h.Halts, h.Continues} {
		for _, o := range os {
			if (o.Key == "") == (o.Exit == 0) {
				errs.Addf(o.Pos, "harness %s: a session output names a stdout key or an exit code, one of the two", h.ID)
			}
		}
	}
	for _, a := range h.Halts {
		for _, b := range h.Continues {
			if a.Key != b.Key || a.Exit != b.Exit || (a.Value != b.Value && a.Value != "" && b.Value != "") {
				continue
			}
			for _, p := range phaseSet(a, b) {
				if a.Applies(p) && b.Applies(p) {
					errs.Addf(b.Pos, "harness %s: session output %s both continues and halts the session (halts at %s)", h.ID, b, a.Pos)
					break
				}
			}
		}
	}
	return errs
}

// phaseSet lists the phases two matches name; "" stands for every phase.
func phaseSet(a, b model.OutputMatch) []string {
	if a.Phases == nil && b.Phases == nil {
		return []string{""}
	}
	return append(append([]string{}, a.Phases...), b.Phases...)
}

func walkSlots(ms []model.Member, fn func(model.Member)) {
	for _, m := range ms {
		if m.Kids != nil {
			walkSlots(m.Kids, fn)
		} else if m.Slot != "" {
			fn(m)
		}
	}
}

// checkPaths makes sure each payload path has one decoded type across the
// harness and uses valid syntax.
func checkPaths(h *model.Harness) model.Errors {
	var errs model.Errors
	type use struct {
		typ   string
		field string
		pos   model.Pos
	}
	uses := map[string]use{}
	visit := func(fss []model.FieldSources) {
		for _, fs := range fss {
			typ, ok := model.FieldType[fs.Field]
			if !ok {
				errs.Addf(fs.Pos, "unknown canonical field %q", fs.Field)
				continue
			}
			for _, s := range fs.Sources {
				if s.Env != "" {
					if typ != "string" {
						errs.Addf(s.Pos, "field %s: an environment variable can feed string fields only", fs.Field)
					}
					continue
				}
				// A command-object source holds a string (it may be the
				// first of an array, "commands[0]"); it is read as such.
				// Only this source: the field's other sources keep its type.
				st := typ
				if s.As == "command-object" {
					st = "string"
				}
				if msg := PathError(s.Path, st); msg != "" {
					errs.Addf(s.Pos, "field %s: %s", fs.Field, msg)
					continue
				}
				if s.As != "" && typ != "json" {
					errs.Addf(s.Pos, "field %s: %s applies only to JSON fields (toolInput, toolResponse)", fs.Field, s.As)
				}
				if u, ok := uses[s.Path]; ok && u.typ != st {
					errs.Addf(s.Pos, "payload path %q is read as %s for %s but as %s for %s (at %s)", s.Path, st, fs.Field, u.typ, u.field, u.pos)
					continue
				}
				uses[s.Path] = use{st, fs.Field, s.Pos}
			}
		}
	}
	visit(h.Fields)
	for _, e := range h.Events {
		visit(e.Fields)
	}
	// A path that is a leaf must not also be an object prefix of another.
	paths := make([]string, 0, len(uses))
	for p := range uses {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, q := range paths {
			if strings.HasPrefix(q, strings.TrimSuffix(p, "[0]")+".") {
				u := uses[q]
				errs.Addf(u.pos, "payload path %q goes inside %q, which another field reads as a %s", q, p, uses[p].typ)
			}
		}
	}
	return errs
}

// PathError validates a payload path's syntax; "" when it is fine.
func PathError(path, typ string) string {
	if path == "" {
		return "empty payload path"
	}
	segs := strings.Split(path, ".")
	for i, s := range segs {
		name := strings.TrimSuffix(s, "[0]")
		if name == "" || strings.ContainsAny(name, "[]") {
			return fmt.Sprintf("bad payload path %q: segments are keys, the last may end in [0]", path)
		}
		if name != s && (i != len(segs)-1 || typ != "string") {
			return fmt.Sprintf("bad payload path %q: [0] takes the first string of an array and must end the path of a string field", path)
		}
	}
	return ""
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func familyIDs(a *model.Atlas) string {
	ids := make([]string, len(a.Families))
	for i, f := range a.Families {
		ids[i] = f.ID
	}
	return strings.Join(ids, ", ")
}
