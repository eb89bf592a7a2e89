package check

import (
	"regexp"
	"strings"

	"sitter.dev/sitter/gen/model"
)

var placeholder = regexp.MustCompile(`\{([a-z]+)\}`)

// Providers checks the providers and the protocols each harness speaks:
// known protocols, unambiguous model aliases, base URL placeholders with a
// parameter, Azure-style auth with an api-version, and evidence.
func Providers(a *model.Atlas) model.Errors {
	var errs model.Errors
	known := strings.Join(model.Protocols, ", ")
	for _, p := range a.Providers {
		if p.Protocol.Name != "" && !contains(model.Protocols, p.Protocol.Name) {
			errs.Addf(p.Protocol.Pos, "provider %s: unknown protocol %q (known: %s)", p.ID, p.Protocol.Name, known)
		}
		if len(p.Evidence) == 0 {
			errs.Addf(p.Pos, "provider %s: no evidence: name the API reference that documents its protocol, URL and auth", p.ID)
		}
		// Aliases resolve case-insensitively, and an alias must not shadow
		// a model id the provider serves under another alias.
		seen := map[string]model.ModelAlias{}
		ids := map[string]bool{p.DefaultModel: true}
		for _, m := range p.Models {
			ids[m.Model] = true
		}
		for _, m := range p.Models {
			k := strings.ToLower(m.Alias)
			if first, ok := seen[k]; ok {
				errs.Addf(m.Pos, "provider %s: duplicate model alias %q (first as %q at %s)", p.ID, m.Alias, first.Alias, first.Pos)
				continue
			}
			seen[k] = m
			if ids[m.Alias] && m.Alias != m.Model {
				errs.Addf(m.Pos, "provider %s: alias %q is also a model id of this provider but maps to %q", p.ID, m.Alias, m.Model)
			}
		}
		params := map[string]bool{}
		for _, pr := range p.Params {
			params[pr.Name] = true
		}
		for _, mm := range placeholder.FindAllStringSubmatch(p.BaseURL, -1) {
			if !params[mm[1]] {
				errs.Addf(p.Pos, "provider %s: baseURL placeholder {%s} has no params entry naming its environment variable", p.ID, mm[1])
			}
		}
		if p.Auth == "api-key" && p.APIVersion == "" {
			errs.Addf(p.Pos, "provider %s: auth \"api-key\" (Azure) needs apiVersion", p.ID)
		}
	}
	for _, h := range a.Harnesses {
		seen := map[string]bool{}
		for _, s := range h.Speaks {
			if !contains(model.Protocols, s.Name) {
				errs.Addf(s.Pos, "harness %s: speaks unknown protocol %q (known: %s)", h.ID, s.Name, known)
			}
			if seen[s.Name] {
				errs.Addf(s.Pos, "harness %s: protocol %q listed twice in speaks", h.ID, s.Name)
			}
			seen[s.Name] = true
		}
	}
	return errs
}
