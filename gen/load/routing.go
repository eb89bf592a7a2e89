package load

import (
	"encoding/json"
	"sort"

	"cuelang.org/go/cue"

	"sitter.dev/sitter/gen/model"
)

// routing reads `routing` (atlas/routing.cue).
func (l *loader) routing(v cue.Value, a *model.Atlas) {
	rv := v.LookupPath(cue.ParsePath("routing"))
	if !rv.Exists() {
		return
	}
	l.fields(rv.LookupPath(cue.ParsePath("protocols")), func(proto string, pv cue.Value) {
		ps := model.ProtocolSignals{Protocol: model.Named{Name: proto, Pos: l.vpos(pv)}}
		ps.Think = l.signalMatches(pv.LookupPath(cue.ParsePath("think")))
		ps.WebSearch = l.signalMatches(pv.LookupPath(cue.ParsePath("webSearch")))
		ps.Image = l.signalMatches(pv.LookupPath(cue.ParsePath("image")))
		a.Routing.Protocols = append(a.Routing.Protocols, ps)
	})
	sort.Slice(a.Routing.Protocols, func(i, j int) bool {
		return a.Routing.Protocols[i].Protocol.Name < a.Routing.Protocols[j].Protocol.Name
	})
	l.fields(rv.LookupPath(cue.ParsePath("harnesses")), func(h string, hv cue.Value) {
		hs := model.HarnessSignals{Harness: model.Named{Name: h, Pos: l.vpos(hv)}}
		l.list(hv.LookupPath(cue.ParsePath("background")), func(gv cue.Value) {
			hs.Background = append(hs.Background, l.signalMatches(gv))
		})
		hs.RoutedUnsetEnv = l.strings(hv, "routedLaunch.unsetEnv")
		a.Routing.Harnesses = append(a.Routing.Harnesses, hs)
	})
	sort.Slice(a.Routing.Harnesses, func(i, j int) bool {
		return a.Routing.Harnesses[i].Harness.Name < a.Routing.Harnesses[j].Harness.Name
	})
}

func (l *loader) signalMatches(v cue.Value) []model.SignalMatch {
	var out []model.SignalMatch
	l.list(v, func(mv cue.Value) {
		m := model.SignalMatch{
			Path:     l.str(mv, "path"),
			Prefix:   l.str(mv, "prefix"),
			Pattern:  l.str(mv, "pattern"),
			Evidence: l.evidence(mv.LookupPath(cue.ParsePath("evidence"))),
			Pos:      l.vpos(mv),
		}
		if pv := mv.LookupPath(cue.ParsePath("present")); pv.Exists() {
			if b, err := pv.Bool(); err == nil && b {
				m.Present = "true"
			} else {
				m.Present = "false"
			}
		}
		l.list(mv.LookupPath(cue.ParsePath("values")), func(ev cue.Value) {
			var x any
			if err := ev.Decode(&x); err != nil {
				l.fail(ev, "values: %v", err)
				return
			}
			b, _ := json.Marshal(x)
			m.Values = append(m.Values, string(b))
		})
		out = append(out, m)
	})
	return out
}
