package load

import (
	"sort"

	"cuelang.org/go/cue"

	"sitter.dev/sitter/gen/model"
)

// transcripts reads each harness's `transcript` and `presence`
// (atlas/transcripts.cue) into a.Transcripts.
func (l *loader) transcripts(v cue.Value, a *model.Atlas) {
	for _, h := range a.Harnesses {
		hv := v.LookupPath(cue.MakePath(cue.Str("harnesses"), cue.Str(h.ID)))
		ht := &model.HarnessTranscript{Harness: h.ID}
		if tv := hv.LookupPath(cue.ParsePath("transcript")); tv.Exists() {
			t := &model.Transcript{
				Pos:        l.vpos(tv.LookupPath(cue.ParsePath("format"))),
				Format:     l.named(tv, "format"),
				Messages:   l.str(tv, "messages"),
				Payload:    l.boolean(tv, "payload"),
				Location:   l.named(tv, "location"),
				HomeEnv:    l.str(tv, "homeEnv"),
				Store:      l.str(tv, "store"),
				Resume:     l.named(tv, "resume"),
				WriteLagMs: l.integer(tv, "writeLagMs"),
				Capabilities: model.TranscriptCaps{
					HookInstallation:   l.boolean(tv, "capabilities.hookInstallation"),
					TranscriptAnalysis: l.boolean(tv, "capabilities.transcriptAnalysis"),
					TokenCalculation:   l.boolean(tv, "capabilities.tokenCalculation"),
				},
				Evidence: l.evidence(tv.LookupPath(cue.ParsePath("evidence"))),
				Note:     l.str(tv, "note"),
			}
			t.Prompts = l.records(tv.LookupPath(cue.ParsePath("prompts")))
			t.Assistant = l.records(tv.LookupPath(cue.ParsePath("assistant")))
			t.ToolCalls = l.records(tv.LookupPath(cue.ParsePath("toolCalls")))
			t.Usage = l.records(tv.LookupPath(cue.ParsePath("usage")))
			ht.Transcript = t
		}
		if pv := hv.LookupPath(cue.ParsePath("presence")); pv.Exists() {
			ht.Presence = &model.Presence{
				Pos:           l.vpos(pv.LookupPath(cue.ParsePath("binaries"))),
				ProjectDirs:   l.strings(pv, "projectDirs"),
				ProjectFiles:  l.strings(pv, "projectFiles"),
				Binaries:      l.strings(pv, "binaries"),
				VersionArgs:   l.strings(pv, "versionArgs"),
				ProtectedDirs: l.strings(pv, "protectedDirs"),
				HookConfigs:   l.strings(pv, "hookConfigs"),
				Evidence:      l.evidence(pv.LookupPath(cue.ParsePath("evidence"))),
			}
		}
		if ht.Transcript != nil || ht.Presence != nil {
			a.Transcripts = append(a.Transcripts, ht)
		}
	}
	sort.Slice(a.Transcripts, func(i, j int) bool { return a.Transcripts[i].Harness < a.Transcripts[j].Harness })
}

func (l *loader) records(v cue.Value) []model.Record {
	var out []model.Record
	l.list(v, func(rv cue.Value) {
		out = append(out, model.Record{
			Pos:        l.vpos(rv),
			When:       l.matches(rv.LookupPath(cue.ParsePath("when"))),
			Each:       l.str(rv, "each"),
			EachWhen:   l.matches(rv.LookupPath(cue.ParsePath("eachWhen"))),
			Text:       l.str(rv, "text"),
			SkipPrefix: l.strings(rv, "skipPrefix"),
			Key:        l.str(rv, "key"),
			Name:       l.str(rv, "name"),
			Input:      l.str(rv, "input"),
			InputAs:    l.str(rv, "inputAs"),
			Files:      l.strings(rv, "files"),
			WriteTools: l.strings(rv, "writeTools"),
			Usage: model.UsagePaths{
				Input:      l.str(rv, "usage.input"),
				Output:     l.str(rv, "usage.output"),
				CacheRead:  l.str(rv, "usage.cacheRead"),
				CacheWrite: l.str(rv, "usage.cacheWrite"),
			},
		})
	})
	return out
}

func (l *loader) matches(v cue.Value) []model.Match {
	if !v.Exists() {
		return nil
	}
	var out []model.Match
	l.fields(v, func(name string, fv cue.Value) {
		s, err := fv.String()
		if err != nil {
			l.fail(fv, "%s: want a string: %v", name, err)
		}
		out = append(out, model.Match{Path: name, Value: s})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
