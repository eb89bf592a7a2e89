package emit

import (
	"github.com/dave/jennifer/jen"

	"sitter.dev/sitter/gen/model"
)

// RoutingGo emits generated/providers/routing.go: the request signals of
// sitter proxy --routes (atlas/routing.cue) as tables of constants.
func RoutingGo(a *model.Atlas) []File {
	path := Module + "/generated/providers"
	f := jen.NewFilePathName(path, "providers")
	f.HeaderComment(Marker("atlas/routing.cue"))

	f.Comment("Match tests one path of a request's JSON body: Values (JSON literals),")
	f.Comment("Prefix, Pattern (a regular expression) or Present (\"true\" or \"false\").")
	f.Type().Id("Match").Struct(
		jen.Id("Path").String(),
		jen.Id("Values").Index().String(),
		jen.List(jen.Id("Prefix"), jen.Id("Pattern"), jen.Id("Present")).String(),
	)
	f.Comment("ProtocolSignals: any match makes a request of Protocol a think,")
	f.Comment("web-search or image request.")
	f.Type().Id("ProtocolSignals").Struct(
		jen.Id("Protocol").String(),
		jen.List(jen.Id("Think"), jen.Id("WebSearch"), jen.Id("Image")).Index().Id("Match"),
	)
	f.Comment("HarnessSignals: a request from Harness is a background call when every")
	f.Comment("match of one Background group holds.")
	f.Type().Id("HarnessSignals").Struct(
		jen.Id("Harness").String(),
		jen.Id("Background").Index().Index().Id("Match"),
		jen.Comment("RoutedUnsetEnv: variables sitter launch --routes leaves out of the launch environment."),
		jen.Id("RoutedUnsetEnv").Index().String(),
	)
	matches := func(ms []model.SignalMatch) jen.Code {
		var rows []jen.Code
		for _, m := range ms {
			var vals []jen.Code
			for _, v := range m.Values {
				vals = append(vals, jen.Lit(v))
			}
			d := jen.Dict{
				jen.Id("Path"):    jen.Lit(m.Path),
				jen.Id("Prefix"):  jen.Lit(m.Prefix),
				jen.Id("Pattern"): jen.Lit(m.Pattern),
				jen.Id("Present"): jen.Lit(m.Present),
			}
			if len(vals) > 0 {
				d[jen.Id("Values")] = jen.Index().String().Values(vals...)
			}
			rows = append(rows, jen.Values(keyed(d)))
		}
		return jen.Index().Id("Match").Values(rows...)
	}
	var protos []jen.Code
	for _, p := range a.Routing.Protocols {
		protos = append(protos, jen.Line().Values(jen.Dict{
			jen.Id("Protocol"):  jen.Lit(p.Protocol.Name),
			jen.Id("Think"):     matches(p.Think),
			jen.Id("WebSearch"): matches(p.WebSearch),
			jen.Id("Image"):     matches(p.Image),
		}))
	}
	f.Comment("Signals lists the request signals of each protocol, sorted by protocol.")
	f.Var().Id("Signals").Op("=").Index().Id("ProtocolSignals").Values(append(protos, jen.Line())...)
	var hs []jen.Code
	for _, h := range a.Routing.Harnesses {
		var groups []jen.Code
		for _, g := range h.Background {
			groups = append(groups, matches(g))
		}
		var unset []jen.Code
		for _, v := range h.RoutedUnsetEnv {
			unset = append(unset, jen.Lit(v))
		}
		d := jen.Dict{
			jen.Id("Harness"):    jen.Lit(h.Harness.Name),
			jen.Id("Background"): jen.Index().Index().Id("Match").Values(groups...),
		}
		if len(unset) > 0 {
			d[jen.Id("RoutedUnsetEnv")] = jen.Index().String().Values(unset...)
		}
		hs = append(hs, jen.Line().Values(d))
	}
	f.Comment("Background lists each harness's background-call signals, sorted by harness.")
	f.Var().Id("Background").Op("=").Index().Id("HarnessSignals").Values(append(hs, jen.Line())...)
	return []File{renderGo("generated/providers/routing.go", f)}
}

// RoutesSchema emits generated/schema/routes.json: the JSON Schema of a
// routes file (docs/routing.md), its provider ids and protocols from the
// atlas.
func RoutesSchema(a *model.Atlas) File {
	var ids []string
	for _, p := range a.Providers {
		ids = append(ids, p.ID)
	}
	var harnesses []string
	for _, h := range a.Harnesses {
		harnesses = append(harnesses, h.ID)
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	target := map[string]any{
		"type":        "string",
		"pattern":     "^[a-z][a-z0-9-]*,.+$",
		"description": "provider,model: a name under providers, a comma, the model the provider is asked for",
	}
	fallback := map[string]any{
		"type":        "string",
		"pattern":     "^[A-Za-z][A-Za-z0-9-]*(,.+)?$",
		"description": "provider,model, or the name of a rule whose target and fallbacks are tried next",
	}
	ruleObj := func(extra map[string]any, required ...string) map[string]any {
		props := map[string]any{
			"use":       target,
			"fallbacks": map[string]any{"type": "array", "items": fallback, "description": "tried in order when the target answers 429, 5xx or times out, within retry.attempts"},
		}
		for k, v := range extra {
			props[k] = v
		}
		return map[string]any{"type": "object", "additionalProperties": false, "required": append([]string{"use"}, required...), "properties": props}
	}
	rule := map[string]any{"oneOf": []any{target, ruleObj(nil)}}
	custom := ruleObj(map[string]any{
		"name":    str("the rule's name in stats and fallbacks (default: custom-N)"),
		"model":   str("regular expression matched against the requested model"),
		"harness": map[string]any{"enum": harnesses, "description": "the harness sitter launch runs (or --harness)"},
		"header":  str("a request header that must be present"),
		"value":   str("regular expression its value must match (with header)"),
	})
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  "urn:sitter:proxy:v1:routes",
		"title":                "sitter proxy routes file (" + Marker("atlas/providers.cue and atlas/protocols.cue") + ")",
		"description":          "Which provider and model serve each request: see docs/routing.md.",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"providers", "rules"},
		"properties": map[string]any{
			// The member the docs tell the reader to add for an editor's
			// help; the loader skips it.
			"$schema": map[string]any{"type": "string", "description": "this schema, for an editor's help"},
			"providers": map[string]any{
				"type":          "object",
				"minProperties": 1,
				"propertyNames": map[string]any{"pattern": "^[a-z][a-z0-9-]*$"},
				"additionalProperties": map[string]any{
					"type":                 "object",
					"additionalProperties": false,
					"properties": map[string]any{
						"provider": map[string]any{"enum": ids, "description": "atlas provider id (default: the name)"},
						"baseURL":  map[string]any{"type": "string", "pattern": "^https?://", "description": "overrides the provider's base URL (as its SDK takes it)"},
						"keyEnv":   map[string]any{"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$", "description": "environment variable holding the key (default: the provider's)"},
						"models":   map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 1}, "description": "the models a rule may name (empty: any)"},
					},
				},
			},
			"rules": map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"required":             []string{"default"},
				"properties": map[string]any{
					"default":    rule,
					"background": rule,
					"think":      rule,
					"webSearch":  rule,
					"image":      rule,
					"longContext": ruleObj(map[string]any{
						"threshold": map[string]any{"type": "integer", "minimum": 1, "description": "estimated input tokens (request bytes / 4) above which the rule applies"},
					}, "threshold"),
					"custom": map[string]any{"type": "array", "items": custom},
				},
			},
			"retry": map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"properties": map[string]any{
					"attempts": map[string]any{"type": "integer", "minimum": 1, "description": "upstream calls per request at most, fallbacks included (default 3)"},
					"timeout":  map[string]any{"type": "string", "pattern": "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$", "description": "time to the upstream's response headers before the next fallback, a Go duration such as 90s or 1m30s (default 120s)"},
				},
			},
		},
	}
	return jsonFile("generated/schema/routes.json", schema)
}
