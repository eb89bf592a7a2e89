// Package gen runs the generator's stages: load the atlas, check it, run
// every emitter, and hand the files to the writer.
package gen

import (
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
	a, err := load.Load(load.Config{Root: root, Atlas: "atlas"})
	if cerrs, ok := err.(model.Errors); ok && a != nil {
		// CUE errors come with a partial atlas: add what the checks say
		// about it, except at positions CUE already complained about.
		at := map[model.Pos]bool{}
		for _, e := range cerrs {
			at[e.Pos] = true
		}
		for _, e := range check.Atlas(a) {
			if !at[e.Pos] {
				cerrs = append(cerrs, e)
			}
		}
		return nil, nil, cerrs.Sort()
	}
	if err != nil {
		return nil, nil, err
	}
	if errs := check.Atlas(a); len(errs) > 0 {
		return a, nil, errs
	}
	var files []emit.File
	for _, h := range a.Harnesses {
		files = append(files, emit.HarnessGo(a, h)...)
	}
	files = append(files, emit.RegistryGo(a)...)
	files = append(files, emit.Schemas(a)...)
	files = append(files, emit.ProvidersGo(a)...)
	files = append(files, emit.TranscriptGo(a)...)
	files = append(files, emit.LaunchGo(a)...)
	pschema := emit.PluginSchema(a)
	files = append(files, pschema)
	plugins, err := plugin.Load(root, pschema.Bytes, a)
	if err != nil {
		return a, nil, err
	}
	bundles, err := emit.Bundles(a, plugins)
	if err != nil {
		return a, nil, err
	}
	files = append(files, bundles...)
	var names []string
	for _, p := range plugins {
		names = append(names, p.Name)
	}
	files = append(files, emit.ArtifactsIndex(a, names)...)
	return a, files, nil
}
