// Package load reads the CUE atlas and returns the plain-Go model with
// source positions. It is the only package of sitter that imports cue.
package load

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"

	"sitter.dev/sitter/gen/model"
	"sitter.dev/sitter/runtime/adapter"
)

// Config says where the atlas is.
type Config struct {
	// Root is the repository root; positions are reported relative to it.
	Root string
	// Atlas is the atlas module directory, relative to Root ("atlas").
	Atlas string
}

// Load evaluates and validates the atlas. All errors come back at once, as
// model.Errors with positions relative to Root.
func Load(cfg Config) (*model.Atlas, error) {
	if cfg.Atlas == "" {
		cfg.Atlas = "atlas"
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, cfg.Atlas)
	if _, err := os.Stat(filepath.Join(dir, "harnesses")); err != nil {
		return nil, fmt.Errorf("load atlas: %w", err)
	}
	l := &loader{root: root}
	insts := load.Instances([]string{"./harnesses"}, &load.Config{Dir: dir})
	if len(insts) != 1 {
		return nil, fmt.Errorf("load atlas: want one CUE instance in %s, have %d", dir, len(insts))
	}
	if err := insts[0].Err; err != nil {
		return nil, l.cueErrors(cue.Value{}, err)
	}
	v := cuecontext.New().BuildInstance(insts[0])
	if err := v.Validate(cue.Concrete(true), cue.All()); err != nil {
		// CUE reports one class of errors at a time; the model walk below
		// still finds what the Go checks can say, so that a user sees as
		// much as possible at once.
		cerrs := l.cueErrors(v, err)
		quiet := &loader{root: root, quiet: true}
		return quiet.atlas(v), cerrs
	}
	a := l.atlas(v)
	l.evidenceRefs(v)
	if len(l.errs) > 0 {
		return nil, l.errs.Sort()
	}
	return a, nil
}

type loader struct {
	root  string
	quiet bool // partial walk after CUE errors: report nothing
	errs  model.Errors
}

// vpos is the position of a value as the user wrote it: a value unified
// with the schema reports the schema's position first, so look through its
// conjuncts for one outside schema.cue.
func (l *loader) vpos(v cue.Value) model.Pos {
	p := l.pos(v.Pos())
	if !isSchema(p) {
		return p
	}
	if op, args := v.Expr(); op == cue.AndOp {
		for _, a := range args {
			if ap := l.vpos(a); ap.File != "" && !isSchema(ap) {
				return ap
			}
		}
	}
	return p
}

func isSchema(p model.Pos) bool { return p.File == "" || path.Base(p.File) == "schema.cue" }

func (l *loader) pos(p token.Pos) model.Pos {
	if !p.IsValid() {
		return model.Pos{}
	}
	f := p.Filename()
	if rel, err := filepath.Rel(l.root, f); err == nil && !strings.HasPrefix(rel, "..") {
		f = filepath.ToSlash(rel)
	}
	return model.Pos{File: f, Line: p.Line(), Col: p.Column()}
}

// cueErrors turns CUE's errors into positioned model errors. When an error
// has several positions, the one in a harness file is the useful one: the
// schema is rarely what the user got wrong.
func (l *loader) cueErrors(v cue.Value, err error) model.Errors {
	var items []cueItem
	for _, e := range cueerrors.Errors(err) {
		var best model.Pos
		for _, p := range cueerrors.Positions(e) {
			mp := l.pos(p)
			if best.File == "" || (isSchema(best) && !isSchema(mp)) {
				best = mp
			}
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if isSchema(best) {
			// Errors about missing values point into the schema; the
			// user needs the record in their harness file instead.
			if p, ok := l.userPos(v, e.Path()); ok {
				best = p
			}
		}
		if rest, ok := strings.CutPrefix(msg, "incomplete value "); ok {
			msg = "missing or incomplete value (want " + rest + ")"
			if nonEmpty(rest) {
				msg = "must be a non-empty string, is missing"
			}
		} else if rest, ok := strings.CutPrefix(msg, `invalid value "" (out of bound `); ok && nonEmpty(strings.TrimSuffix(rest, ")")) {
			msg = `must be a non-empty string, is ""`
		}
		path := e.Path()
		if list, ok := l.missingList(v, path); ok {
			// events: [#Event, ...#Event] left out: CUE reports each
			// field of the first entry the schema stands in for.
			path, msg = list, "field is required but not present (a list of at least one entry)"
		} else if strings.HasPrefix(msg, "incompatible list lengths (0 and ") {
			msg = "needs at least one entry, has none"
		}
		if msg == "field not allowed" && len(path) > 1 {
			if near := adapter.Closest(strings.Trim(path[len(path)-1], `"`), l.allowed(v, path[:len(path)-1])); near != "" {
				msg += "; did you mean " + near + "?"
			}
		}
		if msg == "field is required but not present" && strings.HasSuffix(strings.Join(e.Path(), "."), ".effect") {
			msg += ": say what the output does, effect: {call: …, session: …, evidence: […]} (docs/adding-a-harness.md)"
		}
		if name, rel, p, ok := l.throughLet(v, path, best); ok {
			// A value shared through a let and wrong in the let is
			// reported at the let, where the fix goes, once for all
			// its uses.
			best, path = p, append([]string{"let " + name}, rel...)
		}
		it := cueItem{best, strings.Join(path, "."), msg}
		if !slices.Contains(items, it) {
			items = append(items, it)
		}
	}
	// A value outside an enumeration comes back as one "conflicting values"
	// error per alternative plus a summary without position: say it once.
	type key struct {
		pos  model.Pos
		path string
	}
	alts := map[key][][2]string{}
	for _, it := range items {
		if a, b, ok := conflict(it.msg); ok {
			k := key{it.pos, it.path}
			alts[k] = append(alts[k], [2]string{a, b})
		}
	}
	var out model.Errors
	done := map[key]bool{}
	for _, it := range items {
		k := key{it.pos, it.path}
		if strings.HasSuffix(it.msg, "errors in empty disjunction:") || strings.HasSuffix(it.msg, "errors in empty disjunction") {
			if hasPath(items, it.path) {
				continue
			}
		}
		if pairs := alts[k]; len(pairs) > 1 {
			if done[k] {
				continue
			}
			done[k] = true
			got, want := enumerate(pairs)
			out.Addf(it.pos, "%s: %s is not allowed here (want one of %s)", it.path, got, strings.Join(want, ", "))
			continue
		}
		msg := it.msg
		if it.path != "" {
			msg = it.path + ": " + msg
		}
		out.Addf(it.pos, "%s", msg)
	}
	if len(out) == 0 {
		out.Addf(model.Pos{}, "%v", err) // CUE named no position: the atlas as a whole
	}
	return out.Sort()
}

// nonEmpty reports whether a constraint CUE prints is the schema's
// non-empty string (string & !=""), which reads as noise to a user.
func nonEmpty(constraint string) bool {
	return constraint == `!=""` || constraint == `string & !=""`
}

// missingList reports the prefix of path that is a list the user did not
// write, when path reaches into its first entry: the schema requires at
// least one entry ([#Event, ...#Event]) and stands in for it.
func (l *loader) missingList(v cue.Value, path []string) ([]string, bool) {
	if !v.Exists() {
		return nil, false
	}
	for i := 1; i < len(path)-1; i++ {
		if path[i] != "0" {
			continue
		}
		list := v.LookupPath(cuePath(path[:i]))
		if list.IncompleteKind() == cue.ListKind && isSchema(l.vpos(list)) {
			return path[:i], true
		}
	}
	return nil, false
}

// cuePath is the CUE path of an error's path elements (list indexes as
// numbers, labels unquoted).
func cuePath(path []string) cue.Path {
	sels := make([]cue.Selector, 0, len(path))
	for _, s := range path {
		if n, err := strconv.Atoi(s); err == nil {
			sels = append(sels, cue.Index(n))
		} else {
			sels = append(sels, cue.Str(strings.Trim(s, `"`)))
		}
	}
	return cue.MakePath(sels...)
}

// throughLet reports whether the error at path, placed at pos, is placed
// where a let is used (CUE puts a value's missing field there: at the
// reference, or at the field whose value it is): then it gives the let's
// name, the rest of path inside the let's value and the position of that
// value.
func (l *loader) throughLet(v cue.Value, path []string, pos model.Pos) (string, []string, model.Pos, bool) {
	if !v.Exists() || isSchema(pos) {
		return "", nil, model.Pos{}, false
	}
	for n := len(path) - 1; n > 0; n-- {
		pv := v.LookupPath(cuePath(path[:n]))
		conj := []cue.Value{pv}
		if op, args := pv.Expr(); op == cue.AndOp {
			conj = args
		}
		for _, c := range conj {
			src := c.Source()
			if f, ok := src.(*ast.Field); ok {
				src = f.Value
			}
			id, ok := src.(*ast.Ident)
			if !ok || (l.pos(c.Pos()) != pos && l.pos(id.Pos()) != pos) {
				continue
			}
			if let, ok := id.Node.(*ast.LetClause); ok {
				return let.Ident.Name, path[n:], l.pos(let.Expr.Pos()), true
			}
		}
	}
	return "", nil, model.Pos{}, false
}

// allowed lists the fields the schema's definition declares for the
// struct at path: its regular and optional fields, and the names a
// pattern of string literals admits (fields: [#Field]: […]).
func (l *loader) allowed(v cue.Value, path []string) []string {
	if !v.Exists() {
		return nil
	}
	pv := v.LookupPath(cuePath(path))
	conj := []cue.Value{pv}
	if op, args := pv.Expr(); op == cue.AndOp {
		conj = args
	}
	var out []string
	for _, c := range conj {
		if !isSchema(l.pos(c.Pos())) {
			continue
		}
		it, err := c.Fields(cue.Optional(true))
		if err != nil {
			continue
		}
		for it.Next() {
			out = append(out, it.Selector().Unquoted())
		}
		out = append(out, patternNames(v, c)...)
	}
	return out
}

// patternNames lists the labels the pattern fields of a schema struct
// admit when a pattern is a disjunction of strings ([#Field]: …), its
// names resolved in root; a pattern of a regular expression admits no
// list of names.
func patternNames(root, c cue.Value) []string {
	src := c.Source()
	if f, ok := src.(*ast.Field); ok {
		src = f.Value
	}
	st, ok := src.(*ast.StructLit)
	if !ok {
		return nil
	}
	var out []string
	for _, d := range st.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		pat, ok := f.Label.(*ast.ListLit)
		if !ok || len(pat.Elts) != 1 {
			continue
		}
		label := pat.Elts[0]
		if a, ok := label.(*ast.Alias); ok { // [ID=string]
			label = a.Expr
		}
		// The schema's names are already resolved in its AST: look a
		// name up by its path rather than build it again.
		var lv cue.Value
		if id, ok := label.(*ast.Ident); ok {
			lv = root.LookupPath(cue.ParsePath(id.Name))
		} else {
			lv = root.Context().BuildExpr(label)
		}
		alts := []cue.Value{lv}
		if op, args := lv.Expr(); op == cue.OrOp {
			alts = args
		}
		for _, a := range alts {
			if s, err := a.String(); err == nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// userPos finds the nearest enclosing value of path that is written in a
// harness file.
func (l *loader) userPos(v cue.Value, path []string) (model.Pos, bool) {
	for n := len(path); n > 0; n-- {
		p := l.vpos(v.LookupPath(cuePath(path[:n])))
		if !isSchema(p) {
			return p, true
		}
	}
	return model.Pos{}, false
}

type cueItem struct {
	pos  model.Pos
	path string
	msg  string
}

// hasPath reports whether more errors than a summary concern path.
func hasPath(items []cueItem, path string) bool {
	n := 0
	for _, it := range items {
		if it.path == path || strings.HasPrefix(it.path, path+".") {
			n++
		}
	}
	return n > 1
}

// conflict splits `conflicting values A and B`.
func conflict(msg string) (string, string, bool) {
	rest, ok := strings.CutPrefix(msg, "conflicting values ")
	if !ok {
		return "", "", false
	}
	a, b, ok := strings.Cut(rest, " and ")
	return a, b, ok
}

// enumerate finds the value common to every pair (what the user wrote) and
// the alternatives it was compared with.
func enumerate(pairs [][2]string) (string, []string) {
	count := map[string]int{}
	for _, p := range pairs {
		count[p[0]]++
		if p[1] != p[0] {
			count[p[1]]++
		}
	}
	got := ""
	for v, n := range count {
		if n == len(pairs) && (got == "" || v < got) {
			got = v
		}
	}
	var want []string
	for v := range count {
		if v != got {
			want = append(want, v)
		}
	}
	sort.Strings(want)
	return got, want
}

func (l *loader) fail(v cue.Value, format string, args ...any) {
	if l.quiet {
		return
	}
	l.errs.Addf(l.vpos(v), format, args...)
}

// fields iterates a struct's regular fields in declaration order.
func (l *loader) fields(v cue.Value, fn func(name string, fv cue.Value)) {
	it, err := v.Fields()
	if err != nil {
		l.fail(v, "want a struct: %v", err)
		return
	}
	for it.Next() {
		fn(it.Selector().Unquoted(), it.Value())
	}
}

func (l *loader) list(v cue.Value, fn func(ev cue.Value)) {
	if !v.Exists() {
		return
	}
	it, err := v.List()
	if err != nil {
		if l.quiet {
			// After CUE errors a list with a bad entry is itself an
			// error; its entries are still there, and the checks must
			// see them (an evidence list with one misspelt kind is not
			// "no evidence").
			for i := 0; ; i++ {
				ev := v.LookupPath(cue.MakePath(cue.Index(i)))
				if !ev.Exists() {
					return
				}
				fn(ev)
			}
		}
		l.fail(v, "want a list: %v", err)
		return
	}
	for it.Next() {
		fn(it.Value())
	}
}

func (l *loader) str(v cue.Value, path string) string {
	f := v.LookupPath(cue.ParsePath(path))
	if !f.Exists() {
		return ""
	}
	s, err := f.String()
	if err != nil {
		l.fail(f, "%s: want a string: %v", path, err)
	}
	return s
}

func (l *loader) named(v cue.Value, path string) model.Named {
	f := v.LookupPath(cue.ParsePath(path))
	return model.Named{Name: l.str(v, path), Pos: l.vpos(f)}
}

func (l *loader) boolean(v cue.Value, path string) bool {
	f := v.LookupPath(cue.ParsePath(path))
	if !f.Exists() {
		return false
	}
	b, err := f.Bool()
	if err != nil {
		l.fail(f, "%s: want a bool: %v", path, err)
	}
	return b
}

func (l *loader) strings(v cue.Value, path string) []string {
	var out []string
	l.list(v.LookupPath(cue.ParsePath(path)), func(ev cue.Value) {
		s, err := ev.String()
		if err != nil {
			l.fail(ev, "want a string: %v", err)
		}
		out = append(out, s)
	})
	return out
}

func (l *loader) atlas(v cue.Value) *model.Atlas {
	a := &model.Atlas{}
	l.fields(v.LookupPath(cue.ParsePath("phases")), func(id string, pv cue.Value) {
		a.Phases = append(a.Phases, model.Phase{ID: id, Extended: l.boolean(pv, "extended"), Doc: l.str(pv, "doc"), Pos: l.vpos(pv)})
	})
	sort.Slice(a.Phases, func(i, j int) bool { return a.Phases[i].ID < a.Phases[j].ID })
	l.fields(v.LookupPath(cue.ParsePath("families")), func(id string, fv cue.Value) {
		f := model.Family{ID: id, Delivery: l.str(fv, "delivery"), Transcript: l.str(fv, "transcript"), Pos: l.vpos(fv)}
		l.fields(fv.LookupPath(cue.ParsePath("profiles")), func(p string, _ cue.Value) { f.Profiles = append(f.Profiles, p) })
		sort.Strings(f.Profiles)
		a.Families = append(a.Families, f)
	})
	sort.Slice(a.Families, func(i, j int) bool { return a.Families[i].ID < a.Families[j].ID })
	l.fields(v.LookupPath(cue.ParsePath("harnesses")), func(id string, hv cue.Value) {
		a.Harnesses = append(a.Harnesses, l.harness(id, hv))
	})
	sort.Slice(a.Harnesses, func(i, j int) bool { return a.Harnesses[i].ID < a.Harnesses[j].ID })
	l.providers(v, a)
	l.transcripts(v, a)
	l.launches(v, a)
	l.layouts(v, a)
	l.routing(v, a)
	return a
}

func (l *loader) harness(id string, hv cue.Value) *model.Harness {
	h := &model.Harness{
		ID:          id,
		Pos:         l.vpos(hv),
		DisplayName: l.str(hv, "displayName"),
		Family:      l.named(hv, "family"),
		Profile:     l.named(hv, "profile"),
		Default:     l.boolean(hv, "default"),
		DefaultPos:  l.vpos(hv.LookupPath(cue.ParsePath("default"))),
		Package: model.Package{
			Name:       l.str(hv, "package.name"),
			Source:     l.str(hv, "package.source"),
			Trust:      l.str(hv, "package.trust"),
			Lifecycle:  l.str(hv, "package.lifecycle"),
			NpmInstall: l.strings(hv, "package.npmInstall"),
		},
		Verified:   l.strings(hv, "compatibility.verified"),
		NotRunHere: l.str(hv, "compatibility.notRunHere"),
		SidePrefix: l.str(hv, "sideSessionPrefix"),
	}
	// The declaring file is where displayName is written; a harness may be
	// spread over files, but one of them names it.
	h.File = l.vpos(hv.LookupPath(cue.ParsePath("displayName"))).File
	l.list(hv.LookupPath(cue.ParsePath("aliases")), func(av cue.Value) {
		s, _ := av.String()
		h.Aliases = append(h.Aliases, model.Named{Name: s, Pos: l.vpos(av)})
	})
	l.fields(hv.LookupPath(cue.ParsePath("config")), func(key string, cv cue.Value) {
		k := model.ConfigKey{Key: key, Type: l.str(cv, "type"), Description: l.str(cv, "description")}
		if d := cv.LookupPath(cue.ParsePath("default")); d.Exists() {
			b, err := d.MarshalJSON()
			if err != nil {
				l.fail(d, "config %s default: %v", key, err)
			}
			k.Default = string(b)
		}
		h.Config = append(h.Config, k)
	})
	sort.Slice(h.Config, func(i, j int) bool { return h.Config[i].Key < h.Config[j].Key })
	l.list(hv.LookupPath(cue.ParsePath("readiness")), func(cv cue.Value) {
		h.Readiness = append(h.Readiness, model.Check{Kind: l.str(cv, "kind"), Value: l.str(cv, "value")})
	})
	h.Packaging = model.Packaging{
		Format:      l.named(hv, "packaging.format"),
		RootVar:     l.str(hv, "packaging.rootVar"),
		TimeoutUnit: l.str(hv, "packaging.timeoutUnit"),
		Install:     l.str(hv, "packaging.install"),
		Target: model.Target{
			Kind:       l.str(hv, "packaging.target.kind"),
			Project:    l.str(hv, "packaging.target.project"),
			User:       l.str(hv, "packaging.target.user"),
			Shape:      l.str(hv, "packaging.target.shape"),
			CommandKey: l.str(hv, "packaging.target.commandKey"),
			TimeoutKey: l.str(hv, "packaging.target.timeoutKey"),
			Entry:      l.str(hv, "packaging.target.entry"),
			Skills:     model.TargetDirs{Project: l.str(hv, "packaging.target.skills.project"), User: l.str(hv, "packaging.target.skills.user")},
			Commands:   model.TargetDirs{Project: l.str(hv, "packaging.target.commands.project"), User: l.str(hv, "packaging.target.commands.user")},
			MCP:        model.TargetDirs{Project: l.str(hv, "packaging.target.mcp.project"), User: l.str(hv, "packaging.target.mcp.user")},
			MCPKey:     l.str(hv, "packaging.target.mcp.key"),
		},
		HasRootVar: hv.LookupPath(cue.ParsePath("packaging.rootVar")).Exists(),
		Pos:        l.vpos(hv.LookupPath(cue.ParsePath("packaging"))),
	}
	h.EventName = l.strings(hv, "eventName")
	h.Fields = l.fieldSources(hv.LookupPath(cue.ParsePath("fields")))
	h.Tools = l.toolKinds(hv.LookupPath(cue.ParsePath("tools")))
	h.Prefixes = l.toolKinds(hv.LookupPath(cue.ParsePath("toolPrefixes")))
	h.Evidence = l.evidence(hv.LookupPath(cue.ParsePath("evidence")))
	if av := hv.LookupPath(cue.ParsePath("agentEnv")); av.Exists() {
		a := &model.AgentEnv{Kind: l.str(av, "kind"), Variable: l.str(av, "variable"),
			Evidence: l.evidence(av.LookupPath(cue.ParsePath("evidence"))), Pos: l.vpos(av)}
		l.list(av.LookupPath(cue.ParsePath("events")), func(ev cue.Value) {
			s, _ := ev.String()
			a.Events = append(a.Events, model.Named{Name: s, Pos: l.vpos(ev)})
		})
		h.AgentEnv = a
	}
	h.Halts = l.outputMatches(hv.LookupPath(cue.ParsePath("sessionOutputs.halts")))
	h.Continues = l.outputMatches(hv.LookupPath(cue.ParsePath("sessionOutputs.continues")))
	l.list(hv.LookupPath(cue.ParsePath("events")), func(ev cue.Value) {
		h.Events = append(h.Events, l.event(ev))
	})
	return h
}

// outputMatches reads a list of #OutputMatch.
func (l *loader) outputMatches(v cue.Value) []model.OutputMatch {
	var out []model.OutputMatch
	l.list(v, func(mv cue.Value) {
		m := model.OutputMatch{Key: l.str(mv, "key"), Pos: l.vpos(mv)}
		if x := mv.LookupPath(cue.ParsePath("value")); x.Exists() {
			b, err := x.MarshalJSON()
			if err != nil {
				l.fail(x, "value: %v", err)
			}
			m.Value = string(b)
		}
		if x := mv.LookupPath(cue.ParsePath("exit")); x.Exists() {
			n, err := x.Int64()
			if err != nil {
				l.fail(x, "exit: %v", err)
			}
			m.Exit = int(n)
		}
		if x := mv.LookupPath(cue.ParsePath("phases")); x.Exists() {
			m.Phases = l.strings(mv, "phases")
		}
		out = append(out, m)
	})
	return out
}

func (l *loader) toolKinds(v cue.Value) []model.ToolKind {
	var out []model.ToolKind
	if !v.Exists() {
		return nil
	}
	l.fields(v, func(name string, kv cue.Value) {
		k, _ := kv.String()
		out = append(out, model.ToolKind{Name: name, Kind: k, Pos: l.vpos(kv)})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// evidenceRefs checks every evidence ref of the atlas, wherever it is
// declared: none may point outside the repository ("../…", or a file by
// an absolute path), and a file of this repository that a doc, test or
// run ref names ("docs/harnesses.md#codex-cli", "e2e/claude_test.go") must
// exist (a notes/SPECS.md it does not have is a dead reference), so that `sitter atlas show`
// and the audit log never cite a dead reference. A package ref's paths
// are inside the package it names ("@google/gemini-cli@0.61.0:
// bundle/docs/hooks/reference.md"), a doc ref's beside a URL inside what
// the URL names.
func (l *loader) evidenceRefs(v cue.Value) {
	switch v.Kind() {
	case cue.StructKind:
		it, _ := v.Fields()
		for it.Next() {
			if it.Selector().String() == "evidence" {
				l.list(it.Value(), l.evidenceRef)
				continue
			}
			l.evidenceRefs(it.Value())
		}
	case cue.ListKind:
		l.list(v, l.evidenceRefs)
	}
}

func (l *loader) evidenceRef(ev cue.Value) {
	kind := l.str(ev, "kind")
	ref := ev.LookupPath(cue.ParsePath("ref"))
	s, _ := ref.String()
	// A package ref's paths are inside the package; a doc ref with a URL
	// names paths of what the URL is ("https://github.com/o/r schemas/x.json").
	elsewhere := kind == "package" || kind == "doc" && strings.Contains(s, "://")
	for _, tok := range strings.Fields(s) {
		tok = strings.Trim(tok, "(),;:`'\"")
		path, _, _ := strings.Cut(tok, "#")
		switch {
		case strings.HasPrefix(path, "../"), !elsewhere && strings.HasPrefix(path, "/") && repoPath(path):
			l.fail(ref, "evidence %q points outside the repository (%s): cite a file of this repository, a URL or a package version", s, path)
		case !elsewhere && repoPath(path) && l.wholeRepo():
			if _, err := os.Stat(filepath.Join(l.root, filepath.FromSlash(path))); err != nil {
				l.fail(ref, "evidence %q names %s, which is not in the repository", s, path)
			}
		}
	}
}

// wholeRepo reports whether the whole repository is at the root (its docs
// and e2e folders are there): a test that copies only the atlas has no
// files to check refs against.
func (l *loader) wholeRepo() bool {
	for _, d := range []string{"docs", "e2e"} {
		if fi, err := os.Stat(filepath.Join(l.root, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// repoPath reports whether a ref token reads as a file of the repository:
// a relative path with a known extension, not a URL or a package.
func repoPath(tok string) bool {
	if strings.Contains(tok, "://") || strings.HasPrefix(tok, "@") || !strings.Contains(tok, "/") {
		return false
	}
	switch filepath.Ext(tok) {
	case ".md", ".go", ".cue", ".json", ".txtar":
		return !strings.ContainsAny(tok, "*{}<>")
	}
	return false
}

func (l *loader) evidence(v cue.Value) []model.Evidence {
	var out []model.Evidence
	l.list(v, func(ev cue.Value) {
		out = append(out, model.Evidence{Kind: l.str(ev, "kind"), Ref: l.str(ev, "ref"), Note: l.str(ev, "note"), Pos: l.vpos(ev)})
	})
	return out
}

func (l *loader) fieldSources(v cue.Value) []model.FieldSources {
	if !v.Exists() {
		return nil
	}
	var out []model.FieldSources
	l.fields(v, func(field string, fv cue.Value) {
		fs := model.FieldSources{Field: field, Pos: l.vpos(fv)}
		l.list(fv, func(sv cue.Value) {
			src := model.Source{Pos: l.vpos(sv)}
			if s, err := sv.String(); err == nil {
				src.Path = s
			} else {
				src.Path = l.str(sv, "path")
				src.As = l.str(sv, "as")
				src.Env = l.str(sv, "env")
			}
			fs.Sources = append(fs.Sources, src)
		})
		out = append(out, fs)
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

func (l *loader) event(ev cue.Value) *model.Event {
	e := &model.Event{
		Name:     l.str(ev, "name"),
		Pos:      l.vpos(ev),
		Phase:    l.named(ev, "phase"),
		Support:  l.str(ev, "support"),
		Tool:     l.str(ev, "tool"),
		Since:    l.str(ev, "since"),
		ToolKind: l.str(ev, "toolKind"),
		Note:     l.str(ev, "note"),
	}
	l.list(ev.LookupPath(cue.ParsePath("can")), func(cv cue.Value) {
		s, _ := cv.String()
		e.Can = append(e.Can, model.Named{Name: s, Pos: l.vpos(cv)})
	})
	e.Fields = l.fieldSources(ev.LookupPath(cue.ParsePath("fields")))
	e.Evidence = l.evidence(ev.LookupPath(cue.ParsePath("evidence")))
	if uv := ev.LookupPath(cue.ParsePath("unverifiable")); uv.Exists() {
		l.fields(uv, func(cell string, rv cue.Value) {
			s, err := rv.String()
			if err != nil {
				l.fail(rv, "unverifiable.%s: want a string: %v", cell, err)
			}
			e.Unverifiable = append(e.Unverifiable, model.Reason{Cell: cell, Reason: s, Pos: l.vpos(rv)})
		})
		sort.Slice(e.Unverifiable, func(i, j int) bool { return e.Unverifiable[i].Cell < e.Unverifiable[j].Cell })
	}
	if cb := ev.LookupPath(cue.ParsePath("contextBeforePrompt")); cb.Exists() {
		if b, _ := cb.Bool(); b {
			e.ContextBeforePrompt = model.Named{Name: "true", Pos: l.vpos(cb)}
		}
	}
	if rp := ev.LookupPath(cue.ParsePath("replaces")); rp.Exists() {
		e.Replaces = &model.Replaces{What: l.str(rp, "what"), Output: l.str(rp, "output"), Instead: l.str(rp, "instead"),
			Evidence: l.evidence(rp.LookupPath(cue.ParsePath("evidence"))), Pos: l.vpos(rp)}
	}
	rv := ev.LookupPath(cue.ParsePath("render"))
	for _, aspect := range model.RuleOrder {
		r := rv.LookupPath(cue.MakePath(cue.Str(aspect)))
		if !r.Exists() {
			continue
		}
		rule := &model.Rule{Aspect: aspect, Pos: l.vpos(r)}
		if x := r.LookupPath(cue.ParsePath("exit")); x.Exists() {
			x, _ = x.Default()
			n, err := x.Int64()
			if err != nil {
				l.fail(x, "exit: %v", err)
			}
			rule.Exit = int(n)
		}
		if s := l.str(r, "stderr"); s != "" {
			rule.Stderr = strings.Trim(s, "{}")
		}
		if so := r.LookupPath(cue.ParsePath("stdout")); so.Exists() {
			rule.Stdout = l.members(so)
		}
		if fx := r.LookupPath(cue.ParsePath("effect")); fx.Exists() {
			rule.Effect = model.Effect{Call: l.named(fx, "call"), Session: l.named(fx, "session"),
				Evidence: l.evidence(fx.LookupPath(cue.ParsePath("evidence"))), Pos: l.vpos(fx)}
		}
		e.Rules = append(e.Rules, rule)
	}
	return e
}

// members reads a stdout skeleton in declaration order.
func (l *loader) members(v cue.Value) []model.Member {
	out := []model.Member{}
	l.fields(v, func(key string, fv cue.Value) {
		m := model.Member{Key: key, Pos: l.vpos(fv)}
		switch fv.Kind() {
		case cue.StructKind:
			m.Kids = l.members(fv)
		case cue.StringKind:
			s, _ := fv.String()
			if len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' {
				m.Slot = s[1 : len(s)-1]
				break
			}
			b, _ := json.Marshal(s)
			m.Const = string(b)
		default:
			b, err := fv.MarshalJSON()
			if err != nil {
				l.fail(fv, "stdout %s: %v", key, err)
			}
			m.Const = string(b)
		}
		out = append(out, m)
	})
	return out
}
