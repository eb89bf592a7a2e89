package check

import (
	"strings"

	"sitter.dev/sitter/gen/model"
)

// locationVars are the placeholders runtime/transcript fills in a location.
var locationVars = []string{"sessionId", "sessionId8", "cwdSlug", "cwdDashed"}

// Transcripts checks atlas/transcripts.cue: the transcript format agrees
// with the harness's family, locations and resume commands use known
// placeholders, every record shape says what it reads, and each capability
// flag has the records it needs.
func Transcripts(a *model.Atlas) model.Errors {
	var errs model.Errors
	for _, ht := range a.Transcripts {
		h := a.Harness(ht.Harness)
		if t := ht.Transcript; t != nil {
			if h != nil {
				if f := a.Family(h.Family.Name); f != nil && f.Transcript != t.Format.Name {
					errs.Addf(t.Format.Pos, "harness %s: transcript format %q disagrees with its family %s (%q)", h.ID, t.Format.Name, f.ID, f.Transcript)
				}
			}
			if t.Format.Name == "json-event" && t.Messages == "" {
				errs.Addf(t.Format.Pos, "harness %s: a json-event transcript needs messages (the path of its message array)", ht.Harness)
			}
			for _, m := range placeholder.FindAllStringSubmatch(t.Location.Name, -1) {
				if !contains(locationVars, m[1]) {
					errs.Addf(t.Location.Pos, "harness %s: location placeholder {%s} is unknown (known: %s)", ht.Harness, m[1], strings.Join(locationVars, ", "))
				}
			}
			if t.Location.Name != "" && !strings.HasPrefix(t.Location.Name, "~/") {
				errs.Addf(t.Location.Pos, "harness %s: location %q must start with ~/", ht.Harness, t.Location.Name)
			}
			for _, m := range placeholder.FindAllStringSubmatch(t.Resume.Name, -1) {
				if m[1] != "sessionId" {
					errs.Addf(t.Resume.Pos, "harness %s: resume placeholder {%s} is unknown (known: sessionId)", ht.Harness, m[1])
				}
			}
			caps := t.Capabilities
			if caps.TranscriptAnalysis {
				if len(t.Prompts) == 0 || len(t.Assistant) == 0 {
					errs.Addf(t.Pos, "harness %s: transcriptAnalysis needs prompts and assistant records", ht.Harness)
				}
				if t.Location.Name == "" && !t.Payload {
					errs.Addf(t.Location.Pos, "harness %s: transcriptAnalysis needs a location or a payload transcript path", ht.Harness)
				}
			}
			if caps.TokenCalculation && len(t.Usage) == 0 {
				errs.Addf(t.Pos, "harness %s: tokenCalculation needs usage records", ht.Harness)
			}
			kinds := []struct {
				name string
				rs   []model.Record
			}{{"prompts", t.Prompts}, {"assistant", t.Assistant}, {"toolCalls", t.ToolCalls}, {"usage", t.Usage}}
			for _, k := range kinds {
				for _, r := range k.rs {
					if len(r.When) == 0 {
						errs.Addf(r.Pos, "harness %s: %s record without when: it would match every record", ht.Harness, k.name)
					}
					switch k.name {
					case "prompts", "assistant":
						if r.Text == "" {
							errs.Addf(r.Pos, "harness %s: %s record without text", ht.Harness, k.name)
						}
					case "toolCalls":
						if r.Name == "" {
							errs.Addf(r.Pos, "harness %s: toolCalls record without name", ht.Harness)
						}
						if len(r.WriteTools) > 0 && len(r.Files) == 0 && r.InputAs != "patch" {
							errs.Addf(r.Pos, "harness %s: writeTools without files (or inputAs patch): no file could be found", ht.Harness)
						}
					case "usage":
						if r.Usage == (model.UsagePaths{}) {
							errs.Addf(r.Pos, "harness %s: usage record without any usage path", ht.Harness)
						}
					}
					if len(r.EachWhen) > 0 && r.Each == "" {
						errs.Addf(r.Pos, "harness %s: %s record has eachWhen without each", ht.Harness, k.name)
					}
				}
			}
		}
		if p := ht.Presence; p != nil && len(p.Binaries) == 0 && len(p.ProjectDirs) == 0 && len(p.ProjectFiles) == 0 {
			errs.Addf(p.Pos, "harness %s: presence names no binary, project dir or project file", ht.Harness)
		}
	}
	return errs
}
