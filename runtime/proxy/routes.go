package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/internal/jsonpos"
)

// Rule names of a routes file (docs/routing.md), in the order a request
// is tested against them after a direct "provider,model" and the custom
// rules.
const (
	RuleDirect      = "direct"
	RuleDefault     = "default"
	RuleBackground  = "background"
	RuleThink       = "think"
	RuleLongContext = "longContext"
	RuleWebSearch   = "webSearch"
	RuleImage       = "image"
)

var builtinRules = []string{RuleDefault, RuleBackground, RuleThink, RuleLongContext, RuleWebSearch, RuleImage}

// ProviderSpec is an atlas provider as a routes file may name it: the
// proxy's provider without its key, where the key comes from, and the
// base URL placeholders' variables (placeholder → variable).
type ProviderSpec struct {
	Provider Provider
	KeyEnv   string
	Params   [][2]string
}

// Target is where a rule sends a request: a provider of the routes file
// and a model.
type Target struct{ Provider, Model string }

func (t Target) String() string { return t.Provider + "," + t.Model }

// Rule is one rule of a routes file.
type Rule struct {
	Name string
	Use  Target
	// Chain is Use and then the fallbacks, rule references expanded,
	// without repeats.
	Chain []Target
	// Custom conditions (all that are set must hold).
	Model   *Pattern
	Harness string
	Header  string
	Value   *Pattern
	// Threshold: longContext's estimated input tokens.
	Threshold int

	fallbacks []fallbackRef
}

type fallbackRef struct {
	target *Target // provider,model
	rule   string  // or a rule's name
	off    int
}

// Routes is a loaded routes file.
type Routes struct {
	File string
	// Providers by the routes file's name, keys filled in.
	Providers map[string]Provider
	// Rules by name; Custom in file order.
	Rules  map[string]*Rule
	Custom []*Rule
	// Attempts bounds the upstream calls of one request (fallbacks
	// included); Timeout is the wait for an upstream's response headers.
	Attempts int
	Timeout  time.Duration

	// named: every provider name of the file, those whose entry is wrong
	// too (a rule naming one is not reported again).
	named []string
}

// routesErr collects positioned errors of a routes file.
type routesErr struct {
	file string
	data []byte
	msgs []string
}

func (e *routesErr) add(off int, format string, args ...any) {
	l, c := jsonpos.LineCol(e.data, off)
	m := fmt.Sprintf("%s:%d:%d: %s", e.file, l, c, fmt.Sprintf(format, args...))
	if !slices.Contains(e.msgs, m) {
		e.msgs = append(e.msgs, m)
	}
}

func (e *routesErr) err() error {
	if len(e.msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(e.msgs, "\n"))
}

// RoutesAtlas is what a routes file is checked against.
type RoutesAtlas struct {
	// Providers by atlas id.
	Providers map[string]ProviderSpec
	// Harnesses are the ids a custom rule may name.
	Harnesses []string
}

// LoadRoutes reads a routes file (JSON, the schema generated/schema/routes.json);
// getenv reads keys and base URL placeholders.
// Every problem comes back at once, each as file:line:col: message.
func LoadRoutes(file string, data []byte, atlas RoutesAtlas, getenv func(string) string) (*Routes, error) {
	e := &routesErr{file: file, data: data}
	root, err := parseJSONPos(data)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			// Not even the start of a JSON document (YAML, say): no JSON
			// detail helps.
			if i := len(data) - len(bytes.TrimLeft(data, " \t\r\n")); i == len(data) || data[i] != '{' && data[i] != '[' {
				e.add(i, "the routes file must be JSON: an object with providers and rules (docs/routing.md)")
				return nil, e.err()
			}
			e.add(pe.off, "%s", pe.msg)
			return nil, e.err()
		}
		return nil, err
	}
	rt := &Routes{File: file, Providers: map[string]Provider{}, Rules: map[string]*Rule{}, Attempts: 3, Timeout: 120 * time.Second}
	if root.kind != '{' {
		e.add(root.off, "want an object with providers and rules, have %s", root.kindName())
		return nil, e.err()
	}
	var provNode, rulesNode *jnode
	for _, k := range root.keys {
		switch k.name {
		case "providers":
			provNode = k.val
		case "rules":
			rulesNode = k.val
		case "retry":
			rt.retry(e, k.val)
		case "$schema":
		default:
			e.add(k.off, "unknown member %q (want providers, rules, retry)", k.name)
		}
	}
	if provNode == nil {
		e.add(root.off, "no providers")
	} else {
		rt.providers(e, provNode, atlas.Providers, getenv)
	}
	if rulesNode == nil {
		e.add(root.off, "no rules")
		return nil, e.err()
	}
	rt.rules(e, rulesNode, atlas.Harnesses)
	if len(e.msgs) == 0 {
		rt.chains(e)
	}
	if err := e.err(); err != nil {
		return nil, err
	}
	return rt, nil
}

func (rt *Routes) retry(e *routesErr, n *jnode) {
	if n.kind != '{' {
		e.add(n.off, "retry: want an object, have %s", n.kindName())
		return
	}
	for _, k := range n.keys {
		switch k.name {
		case "attempts":
			v, err := strconv.Atoi(string(k.val.num))
			if k.val.kind != '0' || err != nil || v < 1 {
				e.add(k.val.off, "retry.attempts: want a whole number ≥ 1")
				continue
			}
			rt.Attempts = v
		case "timeout":
			d, err := time.ParseDuration(k.val.str)
			if k.val.kind != '"' || err != nil || d <= 0 {
				e.add(k.val.off, "retry.timeout: want a duration such as \"60s\"")
				continue
			}
			rt.Timeout = d
		default:
			e.add(k.off, "retry: unknown member %q (want attempts, timeout)", k.name)
		}
	}
}

var nameRe = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

func (rt *Routes) providers(e *routesErr, n *jnode, atlas map[string]ProviderSpec, getenv func(string) string) {
	if n.kind != '{' || len(n.keys) == 0 {
		e.add(n.off, "providers: want an object naming at least one provider")
		return
	}
	for _, k := range n.keys {
		rt.named = append(rt.named, k.name)
		if !nameRe.MatchString(k.name) {
			e.add(k.off, "providers: name %q: want lower-case letters, digits and dashes", k.name)
			continue
		}
		if k.val.kind != '{' {
			e.add(k.val.off, "providers.%s: want an object, have %s", k.name, k.val.kindName())
			continue
		}
		id, idOff := k.name, k.off
		var base, keyEnv string
		baseOff, keyOff := k.off, k.off
		badKey := false
		var models []string
		for _, m := range k.val.keys {
			switch m.name {
			case "provider":
				id, idOff = m.val.str, m.val.off
			case "baseURL":
				base, baseOff = m.val.str, m.val.off
				if CheckBaseURL(base) != nil {
					e.add(m.val.off, "providers.%s.baseURL: want an http:// or https:// URL with a host, have %q", k.name, base)
				}
			case "keyEnv":
				// Given, it names the variable: empty or not a string is
				// a mistake, not a request for the atlas's variable.
				if m.val.kind != '"' || m.val.str == "" {
					have := m.val.kindName()
					if m.val.kind == '"' {
						have = `""`
					}
					e.add(m.val.off, "providers.%s.keyEnv: want the name of an environment variable, have %s", k.name, have)
					badKey = true // no second error for its key
					continue
				}
				keyEnv, keyOff = m.val.str, m.val.off
			case "models":
				if m.val.kind != '[' {
					e.add(m.val.off, "providers.%s.models: want an array of model names", k.name)
					continue
				}
				for _, x := range m.val.arr {
					if x.kind != '"' || x.str == "" {
						e.add(x.off, "providers.%s.models: want a model name", k.name)
						continue
					}
					models = append(models, x.str)
				}
			default:
				e.add(m.off, "providers.%s: unknown member %q (want provider, baseURL, keyEnv, models)", k.name, m.name)
			}
		}
		spec, ok := atlas[id]
		if !ok {
			var ids []string
			for id := range atlas {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			e.add(idOff, "providers.%s: unknown provider %q (the atlas has: %s)", k.name, id, strings.Join(ids, ", "))
			continue
		}
		p := spec.Provider
		p.ID = k.name
		if base != "" {
			p.BaseURL = base
		} else {
			for _, pr := range spec.Params {
				v := getenv(pr[1])
				if v == "" {
					e.add(baseOff, "providers.%s: set %s (fills {%s} in %s), or give baseURL", k.name, pr[1], pr[0], p.BaseURL)
					continue
				}
				p.BaseURL = strings.ReplaceAll(p.BaseURL, "{"+pr[0]+"}", v)
			}
		}
		if keyEnv == "" {
			keyEnv = spec.KeyEnv
		}
		if p.Key = getenv(keyEnv); p.Key == "" && !badKey {
			e.add(keyOff, "providers.%s: the key variable %s is not set", k.name, keyEnv)
		}
		if len(models) > 0 {
			p.routeModels = models
		}
		rt.Providers[k.name] = p
	}
}

func (rt *Routes) rules(e *routesErr, n *jnode, harnesses []string) {
	if n.kind != '{' {
		e.add(n.off, "rules: want an object, have %s", n.kindName())
		return
	}
	hasDefault := false
	for _, k := range n.keys {
		switch k.name {
		case RuleDefault, RuleBackground, RuleThink, RuleLongContext, RuleWebSearch, RuleImage:
			// A rule given but wrong is reported as what is wrong with it.
			hasDefault = hasDefault || k.name == RuleDefault
			if r := rt.rule(e, k.name, k.val, nil); r != nil {
				rt.Rules[k.name] = r
			}
		case "custom":
			if k.val.kind != '[' {
				e.add(k.val.off, "rules.custom: want an array of rules")
				continue
			}
			for i, c := range k.val.arr {
				r := rt.rule(e, fmt.Sprintf("custom-%d", i+1), c, harnesses)
				if r == nil {
					continue
				}
				if rt.Rules[r.Name] != nil {
					e.add(c.off, "rules.custom: a second rule named %q", r.Name)
					continue
				}
				rt.Rules[r.Name] = r
				rt.Custom = append(rt.Custom, r)
			}
		default:
			e.add(k.off, "rules: unknown rule %q (want %s, custom)", k.name, strings.Join(builtinRules, ", "))
		}
	}
	if !hasDefault {
		e.add(n.off, "rules: no default rule")
	}
	if r := rt.Rules[RuleLongContext]; r != nil && r.Threshold == 0 {
		e.add(n.off, "rules.longContext: no threshold (estimated input tokens)")
	}
}

// rule reads one rule: "provider,model" or an object. harnesses is nil
// for the built-in rules (no conditions) and the known harness ids for
// custom ones.
func (rt *Routes) rule(e *routesErr, name string, n *jnode, harnesses []string) *Rule {
	custom := harnesses != nil
	r := &Rule{Name: name}
	where := "rules." + name
	if n.kind == '"' && !custom {
		t, ok := rt.target(e, where, n)
		if !ok {
			return nil
		}
		r.Use = t
		return r
	}
	if n.kind != '{' {
		e.add(n.off, "%s: want \"provider,model\" or an object with use", where)
		return nil
	}
	var use *jnode
	ok := true
	for _, k := range n.keys {
		switch {
		case k.name == "use":
			use = k.val
		case k.name == "fallbacks":
			if k.val.kind != '[' {
				e.add(k.val.off, "%s.fallbacks: want an array", where)
				ok = false
				continue
			}
			for _, f := range k.val.arr {
				if f.kind != '"' {
					e.add(f.off, "%s.fallbacks: want \"provider,model\" or a rule name", where)
					ok = false
					continue
				}
				if strings.Contains(f.str, ",") {
					t, tok := rt.target(e, where+".fallbacks", f)
					if !tok {
						ok = false
						continue
					}
					r.fallbacks = append(r.fallbacks, fallbackRef{target: &t, off: f.off})
					continue
				}
				r.fallbacks = append(r.fallbacks, fallbackRef{rule: f.str, off: f.off})
			}
		case k.name == "threshold" && name == RuleLongContext:
			v, err := strconv.Atoi(string(k.val.num))
			if k.val.kind != '0' || err != nil || v < 1 {
				e.add(k.val.off, "%s.threshold: want a whole number of tokens ≥ 1", where)
				ok = false
				continue
			}
			r.Threshold = v
		case custom && k.name == "name":
			if k.val.kind != '"' || !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`).MatchString(k.val.str) || slices.Contains(builtinRules, k.val.str) {
				e.add(k.val.off, "%s.name: want a name of letters, digits and dashes that is not a built-in rule's", where)
				ok = false
				continue
			}
			r.Name = k.val.str
		case custom && (k.name == "model" || k.name == "value"):
			re, err := CompilePattern(k.val.str)
			if k.val.kind != '"' || err != nil {
				e.add(k.val.off, "%s.%s: want a regular expression: %v", where, k.name, err)
				ok = false
				continue
			}
			if k.name == "model" {
				r.Model = re
			} else {
				r.Value = re
			}
		case custom && k.name == "harness":
			if !slices.Contains(harnesses, k.val.str) {
				e.add(k.val.off, "%s.harness: unknown harness %q", where, k.val.str)
				ok = false
				continue
			}
			r.Harness = k.val.str
		case custom && k.name == "header":
			if k.val.kind != '"' || k.val.str == "" {
				e.add(k.val.off, "%s.header: want a header name", where)
				ok = false
				continue
			}
			r.Header = k.val.str
		default:
			want := "use, fallbacks"
			if name == RuleLongContext {
				want += ", threshold"
			}
			if custom {
				want += ", name, model, harness, header, value"
			}
			e.add(k.off, "%s: unknown member %q (want %s)", where, k.name, want)
			ok = false
		}
	}
	if use == nil {
		e.add(n.off, "%s: no use (\"provider,model\")", where)
		return nil
	}
	t, tok := rt.target(e, where+".use", use)
	if !tok || !ok {
		return nil
	}
	r.Use = t
	if custom && r.Model == nil && r.Harness == "" && r.Header == "" {
		e.add(n.off, "%s: a custom rule needs model, harness or header", where)
		return nil
	}
	if r.Value != nil && r.Header == "" {
		e.add(n.off, "%s: value without header", where)
		return nil
	}
	return r
}

func (rt *Routes) target(e *routesErr, where string, n *jnode) (Target, bool) {
	if n.kind != '"' {
		e.add(n.off, "%s: want \"provider,model\", have %s", where, n.kindName())
		return Target{}, false
	}
	p, m, ok := strings.Cut(n.str, ",")
	if !ok || p == "" || m == "" {
		e.add(n.off, "%s: want \"provider,model\", have %q", where, n.str)
		return Target{}, false
	}
	prov, known := rt.Providers[p]
	if !known {
		if slices.Contains(rt.named, p) {
			return Target{}, false // its entry is wrong, and reported
		}
		if len(rt.named) == 0 {
			e.add(n.off, "%s: unknown provider %q (the routes file names no provider)", where, p)
			return Target{}, false
		}
		names := slices.Sorted(slices.Values(rt.named))
		e.add(n.off, "%s: unknown provider %q (the routes file names: %s)", where, p, strings.Join(names, ", "))
		return Target{}, false
	}
	if len(prov.routeModels) > 0 && !slices.Contains(prov.routeModels, m) {
		e.add(n.off, "%s: provider %s has no model %q (its models: %s)", where, p, m, strings.Join(prov.routeModels, ", "))
		return Target{}, false
	}
	return Target{Provider: p, Model: m}, true
}

// chains expands every rule's fallbacks; a rule reference that comes
// back to a rule on its way is a cycle.
func (rt *Routes) chains(e *routesErr) {
	names := make([]string, 0, len(rt.Rules))
	for n := range rt.Rules {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		r := rt.Rules[n]
		var chain []Target
		if !rt.expand(e, r, []string{r.Name}, &chain) {
			continue
		}
		r.Chain = chain
	}
}

func (rt *Routes) expand(e *routesErr, r *Rule, path []string, chain *[]Target) bool {
	add := func(t Target) {
		if !slices.Contains(*chain, t) {
			*chain = append(*chain, t)
		}
	}
	add(r.Use)
	for _, f := range r.fallbacks {
		if f.target != nil {
			add(*f.target)
			continue
		}
		next := rt.Rules[f.rule]
		if next == nil {
			e.add(f.off, "rules.%s.fallbacks: no rule %q (a fallback is \"provider,model\" or a rule's name)", r.Name, f.rule)
			return false
		}
		if slices.Contains(path, f.rule) {
			e.add(f.off, "rules.%s.fallbacks: cyclic fallback %s → %s", r.Name, strings.Join(path, " → "), f.rule)
			return false
		}
		if !rt.expand(e, next, append(slices.Clip(path), f.rule), chain) {
			return false
		}
	}
	return true
}
