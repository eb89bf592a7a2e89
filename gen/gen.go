// Package gen runs the generator's stages: load the atlas, check it, run
// every emitter, and hand the files to the writer.
package gen

import (
	"fmt"
	"path"
	"time"

	"sitter.dev/sitter/gen/check"
	"sitter.dev/sitter/gen/emit"
	"sitter.dev/sitter/gen/load"
	"sitter.dev/sitter/gen/model"
	"sitter.dev/sitter/gen/plugin"
)

// Owned are the directories whose every file the generator produces.
var Owned = []string{"generated", "artifacts"}

// Generate loads and checks the atlas under root and returns every file the
// emitters produce. Errors are model.Errors when they have positions.
func Generate(root string) (*model.Atlas, []emit.File, error) {
	return GenerateWith(root, Options{})
}

// Options is what a caller hears of a run besides its result: Progress,
// one line per stage done; Warn, each warning (a plugin handler left out of
// a bundle, emit.Refusals), positioned. Either may be nil.
type Options struct {
	Progress func(line string)
	Warn     func(w model.Error)
}

// GenerateWith is Generate with o.
func GenerateWith(root string, o Options) (*model.Atlas, []emit.File, error) {
	progress := o.Progress
	start := time.Now()
	say := func(stage, format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf("%-8s %s (%s)", stage, fmt.Sprintf(format, args...), time.Since(start).Round(time.Millisecond)))
		}
		start = time.Now()
	}
	a, err := load.Load(load.Config{Root: root, Atlas: "atlas"})
	if cerrs, ok := err.(model.Errors); ok && a != nil {
		// CUE errors come with a partial atlas: add what the checks say
		// about it, except at positions CUE already complained about and
		// in the schema. A check finding placed in the schema is about a
		// value the harness file left out (the schema stands in for it:
		// `unknown family ""`), which CUE has reported as missing already.
		// A finding on the line of a CUE error is most likely that error
		// seen again (a key and its value: `observe: "two\nlines"`).
		type line struct {
			file string
			n    int
		}
		at := map[line]bool{}
		for _, e := range cerrs {
			at[line{e.Pos.File, e.Pos.Line}] = true
		}
		for _, e := range check.Atlas(a) {
			if !at[line{e.Pos.File, e.Pos.Line}] && path.Base(e.Pos.File) != "schema.cue" {
				cerrs = append(cerrs, e)
			}
		}
		return nil, nil, cerrs.Sort()
	}
	if err != nil {
		return nil, nil, err
	}
	say("load", "atlas/: %d harnesses, %d phases, %d providers", len(a.Harnesses), len(a.Phases), len(a.Providers))
	if errs := check.Atlas(a); len(errs) > 0 {
		return a, nil, errs
	}
	say("check", "atlas consistent")
	var files []emit.File
	for _, h := range a.Harnesses {
		files = append(files, emit.HarnessGo(a, h)...)
	}
	files = append(files, emit.RegistryGo(a)...)
	files = append(files, emit.Schemas(a)...)
	files = append(files, emit.ProvidersGo(a)...)
	files = append(files, emit.RoutingGo(a)...)
	files = append(files, emit.RoutesSchema(a))
	files = append(files, emit.TranscriptGo(a)...)
	files = append(files, emit.LaunchGo(a)...)
	pschema := emit.PluginSchema(a)
	files = append(files, pschema)
	say("emit", "generated/: %d files (Go, JSON Schemas)", len(files))
	plugins, err := plugin.Load(root, pschema.Bytes, a)
	if err != nil {
		return a, nil, err
	}
	var names []string
	for _, p := range plugins {
		names = append(names, p.Name)
	}
	say("plugins", "plugins-src/: %d plugins %v", len(plugins), names)
	bundles, warns, err := emit.Bundles(a, plugins)
	if o.Warn != nil {
		for _, w := range warns {
			o.Warn(w)
		}
	}
	if err != nil {
		return a, nil, err
	}
	files = append(files, bundles...)
	files = append(files, emit.ArtifactsIndex(a, plugins)...)
	say("bundles", "artifacts/: %d files", len(bundles)+1)
	return a, files, nil
}
