package load

import (
	"sort"

	"cuelang.org/go/cue"

	"sitter.dev/sitter/gen/model"
)

// launches reads each harness's `launch` (atlas/launch.cue) into a.
func (l *loader) launches(v cue.Value, a *model.Atlas) {
	for _, h := range a.Harnesses {
		lv := v.LookupPath(cue.MakePath(cue.Str("harnesses"), cue.Str(h.ID), cue.Str("launch")))
		if !lv.Exists() {
			continue
		}
		x := &model.Launch{
			Harness:          h.ID,
			Pos:              l.vpos(lv.LookupPath(cue.ParsePath("binary"))),
			Binary:           l.str(lv, "binary"),
			NpmBin:           l.str(lv, "npmBin"),
			Headless:         l.strings(lv, "headless"),
			Resume:           l.strings(lv, "resume"),
			ResumeID:         l.strings(lv, "resumeId"),
			MaxTurns:         l.strings(lv, "maxTurns"),
			ModelArgs:        l.strings(lv, "modelArgs"),
			Interactive:      l.strings(lv, "interactive"),
			Unattended:       l.strings(lv, "unattended"),
			Env:              l.kvs(lv.LookupPath(cue.ParsePath("env"))),
			Files:            l.launchFiles(lv.LookupPath(cue.ParsePath("files"))),
			PluginKind:       l.str(lv, "plugin.kind"),
			PluginArgs:       l.strings(lv, "plugin.args"),
			ExitsHeadless:    l.boolean(lv, "exitsAfterTask.headless"),
			ExitsInteractive: l.boolean(lv, "exitsAfterTask.interactive"),
			Evidence:         l.evidence(lv.LookupPath(cue.ParsePath("evidence"))),
			Note:             l.str(lv, "note"),
		}
		l.list(lv.LookupPath(cue.ParsePath("connect")), func(cv cue.Value) {
			x.Connect = append(x.Connect, model.Connect{
				Protocol:  l.named(cv, "protocol"),
				ProxyPath: l.str(cv, "proxyPath"),
				Env:       l.kvs(cv.LookupPath(cue.ParsePath("env"))),
				Files:     l.launchFiles(cv.LookupPath(cue.ParsePath("files"))),
			})
		})
		l.list(lv.LookupPath(cue.ParsePath("onboarding")), func(pv cue.Value) {
			x.Onboarding = append(x.Onboarding, model.LaunchPrompt{
				ID:       l.str(pv, "id"),
				Match:    l.str(pv, "match"),
				Keys:     l.str(pv, "keys"),
				Pos:      l.vpos(pv.LookupPath(cue.ParsePath("match"))),
				Evidence: l.evidence(pv.LookupPath(cue.ParsePath("evidence"))),
			})
		})
		if tv := lv.LookupPath(cue.ParsePath("turnEnd")); tv.Exists() {
			x.TurnEnd = &model.LaunchTurnEnd{
				Event:    l.named(tv, "event"),
				Files:    l.launchFiles(tv.LookupPath(cue.ParsePath("files"))),
				Evidence: l.evidence(tv.LookupPath(cue.ParsePath("evidence"))),
			}
		}
		for _, role := range []string{"sessionStart", "stop", "sessionEnd"} {
			bv := lv.LookupPath(cue.MakePath(cue.Str("bridge"), cue.Str(role)))
			if !bv.Exists() {
				continue
			}
			x.Bridge = append(x.Bridge, model.LaunchHook{Role: role, Event: l.named(bv, "event"), Payload: l.str(bv, "payload")})
		}
		a.Launches = append(a.Launches, x)
	}
	sort.Slice(a.Launches, func(i, j int) bool { return a.Launches[i].Harness < a.Launches[j].Harness })
}

func (l *loader) kvs(v cue.Value) []model.KV {
	var out []model.KV
	if !v.Exists() {
		return nil
	}
	l.fields(v, func(name string, fv cue.Value) {
		s, err := fv.String()
		if err != nil {
			l.fail(fv, "%s: want a string: %v", name, err)
		}
		out = append(out, model.KV{Name: name, Value: s})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (l *loader) launchFiles(v cue.Value) []model.LaunchFile {
	var out []model.LaunchFile
	l.list(v, func(fv cue.Value) {
		out = append(out, model.LaunchFile{Path: l.str(fv, "path"), Content: l.str(fv, "content"), Pos: l.vpos(fv)})
	})
	return out
}
