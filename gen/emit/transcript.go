package emit

import (
	"github.com/dave/jennifer/jen"

	"sitter.dev/sitter/gen/model"
)

const transcriptPkg = Module + "/runtime/transcript"

// TranscriptGo emits generated/transcript: per harness the transcript spec
// and the presence facts of atlas/transcripts.cue, as values of the
// runtime/transcript types, which the generic reader interprets. Slices of
// constants only: no init-time work.
func TranscriptGo(a *model.Atlas) []File {
	path := Module + "/generated/transcript"
	f := jen.NewFilePathName(path, "transcript")
	f.ImportName(transcriptPkg, "transcript")
	f.HeaderComment(Marker("atlas/transcripts.cue"))
	f.PackageComment("Package transcript holds each harness's transcript record shapes and presence facts.")

	strs := func(ss []string) jen.Code {
		var v []jen.Code
		for _, s := range ss {
			v = append(v, jen.Lit(s))
		}
		return jen.Index().String().Values(v...)
	}
	matches := func(ms []model.Match) jen.Code {
		var v []jen.Code
		for _, m := range ms {
			v = append(v, jen.Values(keyed(jen.Dict{jen.Id("Path"): jen.Lit(m.Path), jen.Id("Value"): jen.Lit(m.Value)})))
		}
		return jen.Index().Qual(transcriptPkg, "Match").Values(v...)
	}
	records := func(rs []model.Record) jen.Code {
		var v []jen.Code
		for _, r := range rs {
			d := jen.Dict{jen.Id("When"): matches(r.When)}
			set := func(k, s string) {
				if s != "" {
					d[jen.Id(k)] = jen.Lit(s)
				}
			}
			set("Each", r.Each)
			set("Text", r.Text)
			set("Key", r.Key)
			set("Name", r.Name)
			set("Input", r.Input)
			set("InputAs", r.InputAs)
			if len(r.EachWhen) > 0 {
				d[jen.Id("EachWhen")] = matches(r.EachWhen)
			}
			if len(r.SkipPrefix) > 0 {
				d[jen.Id("SkipPrefix")] = strs(r.SkipPrefix)
			}
			if len(r.Files) > 0 {
				d[jen.Id("Files")] = strs(r.Files)
			}
			if len(r.WriteTools) > 0 {
				d[jen.Id("WriteTools")] = strs(r.WriteTools)
			}
			if r.Usage != (model.UsagePaths{}) {
				d[jen.Id("Usage")] = jen.Qual(transcriptPkg, "UsagePaths").Values(keyed(jen.Dict{
					jen.Id("Input"): jen.Lit(r.Usage.Input), jen.Id("Output"): jen.Lit(r.Usage.Output),
					jen.Id("CacheRead"): jen.Lit(r.Usage.CacheRead), jen.Id("CacheWrite"): jen.Lit(r.Usage.CacheWrite),
				}))
			}
			v = append(v, jen.Values(keyed(d)))
		}
		return jen.Index().Qual(transcriptPkg, "Record").Values(v...)
	}
	evidence := func(es []model.Evidence) jen.Code {
		var v []string
		for _, e := range es {
			v = append(v, e.Kind+": "+e.Ref)
		}
		return strs(v)
	}

	var specs, presences []jen.Code
	for _, ht := range a.Transcripts {
		if t := ht.Transcript; t != nil {
			d := jen.Dict{
				jen.Id("Harness"):            jen.Lit(ht.Harness),
				jen.Id("Format"):             jen.Lit(t.Format.Name),
				jen.Id("Messages"):           jen.Lit(t.Messages),
				jen.Id("Payload"):            jen.Lit(t.Payload),
				jen.Id("Location"):           jen.Lit(t.Location.Name),
				jen.Id("HomeEnv"):            jen.Lit(t.HomeEnv),
				jen.Id("Prompts"):            records(t.Prompts),
				jen.Id("Assistant"):          records(t.Assistant),
				jen.Id("ToolCalls"):          records(t.ToolCalls),
				jen.Id("Usage"):              records(t.Usage),
				jen.Id("Resume"):             jen.Lit(t.Resume.Name),
				jen.Id("HookInstallation"):   jen.Lit(t.Capabilities.HookInstallation),
				jen.Id("TranscriptAnalysis"): jen.Lit(t.Capabilities.TranscriptAnalysis),
				jen.Id("TokenCalculation"):   jen.Lit(t.Capabilities.TokenCalculation),
				jen.Id("Evidence"):           evidence(t.Evidence),
			}
			if t.Store != "" {
				d[jen.Id("Store")] = jen.Lit(t.Store)
			}
			if t.WriteLagMs > 0 {
				d[jen.Id("WriteLagMs")] = jen.Lit(t.WriteLagMs)
			}
			specs = append(specs, jen.Values(keyed(d)))
		}
		if p := ht.Presence; p != nil {
			presences = append(presences, jen.Values(keyed(jen.Dict{
				jen.Id("Harness"):       jen.Lit(ht.Harness),
				jen.Id("ProjectDirs"):   strs(p.ProjectDirs),
				jen.Id("ProjectFiles"):  strs(p.ProjectFiles),
				jen.Id("Binaries"):      strs(p.Binaries),
				jen.Id("VersionArgs"):   strs(p.VersionArgs),
				jen.Id("ProtectedDirs"): strs(p.ProtectedDirs),
				jen.Id("HookConfigs"):   strs(p.HookConfigs),
				jen.Id("Evidence"):      evidence(p.Evidence),
			})))
		}
	}
	f.Comment("Specs lists the transcript spec of every harness that has one, sorted by harness id.")
	f.Var().Id("Specs").Op("=").Index().Qual(transcriptPkg, "Spec").Values(specs...)
	f.Comment("Presences lists how to detect each harness, sorted by harness id.")
	f.Var().Id("Presences").Op("=").Index().Qual(transcriptPkg, "Presence").Values(presences...)
	return []File{renderGo("generated/transcript/transcript.go", f)}
}
