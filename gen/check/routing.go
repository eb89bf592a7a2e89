package check

import (
	"regexp"
	"strings"

	"sitter.dev/sitter/gen/model"
)

// Routing checks the request signals of sitter proxy --routes: known
// protocols and harnesses, one kind of test per match, patterns that
// compile, and evidence.
func Routing(a *model.Atlas) model.Errors {
	var errs model.Errors
	known := map[string]bool{}
	for _, h := range a.Harnesses {
		known[h.ID] = true
	}
	for _, p := range a.Routing.Protocols {
		if !contains(model.Protocols, p.Protocol.Name) {
			errs.Addf(p.Protocol.Pos, "routing: unknown protocol %q (known: %s)", p.Protocol.Name, strings.Join(model.Protocols, ", "))
		}
		for _, ms := range [][]model.SignalMatch{p.Think, p.WebSearch, p.Image} {
			for _, m := range ms {
				errs = append(errs, checkMatch("routing protocol "+p.Protocol.Name, m)...)
			}
		}
	}
	for _, h := range a.Routing.Harnesses {
		if !known[h.Harness.Name] {
			errs.Addf(h.Harness.Pos, "routing: unknown harness %q", h.Harness.Name)
		}
		for _, g := range h.Background {
			for _, m := range g {
				errs = append(errs, checkMatch("routing harness "+h.Harness.Name, m)...)
			}
		}
	}
	return errs
}

func checkMatch(where string, m model.SignalMatch) model.Errors {
	var errs model.Errors
	kinds := 0
	for _, set := range []bool{len(m.Values) > 0, m.Prefix != "", m.Pattern != "", m.Present != ""} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		errs.Addf(m.Pos, "%s: match on %s: want exactly one of values, prefix, pattern and present, have %d", where, m.Path, kinds)
	}
	if m.Pattern != "" {
		if _, err := regexp.Compile(m.Pattern); err != nil {
			errs.Addf(m.Pos, "%s: match on %s: pattern: %v", where, m.Path, err)
		}
	}
	if len(m.Evidence) == 0 {
		errs.Addf(m.Pos, "%s: match on %s: no evidence", where, m.Path)
	}
	return errs
}
