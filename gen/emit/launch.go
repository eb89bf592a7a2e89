package emit

import (
	"github.com/dave/jennifer/jen"

	"sitter.dev/sitter/gen/model"
)

// LaunchGo emits generated/launch: the launch settings of every harness
// (atlas/launch.cue) as a table of runtime/launch.Spec values. Plain data:
// runtime/launch reads it, with no per-harness code.
func LaunchGo(a *model.Atlas) []File {
	path := Module + "/generated/launch"
	rt := Module + "/runtime/launch"
	f := jen.NewFilePathName(path, "launch")
	f.ImportAlias(rt, "rl")
	f.HeaderComment(Marker("atlas/launch.cue"))
	f.PackageComment("Package launch holds how sitter launch runs each harness: binary, arguments, env and files, plugin loading, the emulated lifecycle and the interactive onboarding prompts.")
	strs := func(ss []string) jen.Code {
		var v []jen.Code
		for _, s := range ss {
			v = append(v, jen.Lit(s))
		}
		return jen.Index().String().Values(v...)
	}
	kvs := func(xs []model.KV) jen.Code {
		var v []jen.Code
		for _, x := range xs {
			v = append(v, jen.Values(keyed(jen.Dict{jen.Id("Name"): jen.Lit(x.Name), jen.Id("Value"): jen.Lit(x.Value)})))
		}
		return jen.Index().Qual(rt, "KV").Values(v...)
	}
	files := func(xs []model.LaunchFile) jen.Code {
		var v []jen.Code
		for _, x := range xs {
			v = append(v, jen.Values(keyed(jen.Dict{jen.Id("Path"): jen.Lit(x.Path), jen.Id("Content"): jen.Lit(x.Content)})))
		}
		return jen.Index().Qual(rt, "File").Values(v...)
	}
	var rows []jen.Code
	for _, l := range a.Launches {
		h := a.Harness(l.Harness)
		names := []string{h.ID}
		for _, al := range h.Aliases {
			names = append(names, al.Name)
		}
		var conns []jen.Code
		for _, c := range l.Connect {
			conns = append(conns, jen.Values(keyed(jen.Dict{
				jen.Id("Protocol"):  jen.Lit(c.Protocol.Name),
				jen.Id("ProxyPath"): jen.Lit(c.ProxyPath),
				jen.Id("Env"):       kvs(c.Env),
				jen.Id("Files"):     files(c.Files),
			})))
		}
		bridge := jen.Dict{}
		for _, b := range l.Bridge {
			key := map[string]string{"sessionStart": "SessionStart", "stop": "Stop", "sessionEnd": "SessionEnd"}[b.Role]
			bridge[jen.Id(key)] = jen.Qual(rt, "Hook").Values(keyed(jen.Dict{jen.Id("Event"): jen.Lit(b.Event.Name), jen.Id("Payload"): jen.Lit(b.Payload)}))
		}
		var ev []string
		for _, e := range l.Evidence {
			ev = append(ev, e.Ref)
		}
		var prompts []jen.Code
		for _, p := range l.Onboarding {
			prompts = append(prompts, jen.Values(keyed(jen.Dict{jen.Id("ID"): jen.Lit(p.ID), jen.Id("Match"): jen.Lit(p.Match), jen.Id("Keys"): jen.Lit(p.Keys)})))
		}
		turnEnd := jen.Dict{}
		if te := l.TurnEnd; te != nil {
			turnEnd[jen.Id("Event")] = jen.Lit(te.Event.Name)
			turnEnd[jen.Id("Files")] = files(te.Files)
		}
		rows = append(rows, jen.Values(keyed(jen.Dict{
			jen.Id("Harness"):          jen.Lit(l.Harness),
			jen.Id("Names"):            strs(names),
			jen.Id("Binary"):           jen.Lit(l.Binary),
			jen.Id("NpmBin"):           jen.Lit(l.NpmBin),
			jen.Id("Headless"):         strs(l.Headless),
			jen.Id("Resume"):           strs(l.Resume),
			jen.Id("ResumeID"):         strs(l.ResumeID),
			jen.Id("MaxTurns"):         strs(l.MaxTurns),
			jen.Id("ModelArgs"):        strs(l.ModelArgs),
			jen.Id("Interactive"):      strs(l.Interactive),
			jen.Id("Unattended"):       strs(l.Unattended),
			jen.Id("Env"):              kvs(l.Env),
			jen.Id("Files"):            files(l.Files),
			jen.Id("Connect"):          jen.Index().Qual(rt, "Connect").Values(conns...),
			jen.Id("PluginKind"):       jen.Lit(l.PluginKind),
			jen.Id("PluginArgs"):       strs(l.PluginArgs),
			jen.Id("Bridge"):           jen.Qual(rt, "Bridge").Values(keyed(bridge)),
			jen.Id("ExitsHeadless"):    jen.Lit(l.ExitsHeadless),
			jen.Id("ExitsInteractive"): jen.Lit(l.ExitsInteractive),
			jen.Id("Onboarding"):       jen.Index().Qual(rt, "Prompt").Values(prompts...),
			jen.Id("TurnEnd"):          jen.Qual(rt, "TurnEnd").Values(keyed(turnEnd)),
			jen.Id("Evidence"):         strs(ev),
		})))
	}
	f.Comment("Specs lists the launch settings of every harness that has them, sorted by id.")
	f.Var().Id("Specs").Op("=").Index().Qual(rt, "Spec").Values(rows...)
	return []File{renderGo("generated/launch/launch.go", f)}
}
