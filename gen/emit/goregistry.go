package emit

import (
	"sort"

	"github.com/dave/jennifer/jen"

	"sitter.dev/sitter/gen/model"
)

const adapterPkg = Module + "/runtime/adapter"

// RegistryGo emits generated/registry: every descriptor of the atlas, wired
// to its harness package's Normalize and Rules.
func RegistryGo(a *model.Atlas) []File {
	path := Module + "/generated/registry"
	f := jen.NewFilePathName(path, "registry")
	f.HeaderComment(Marker("atlas/"))
	f.PackageComment("Package registry holds the adapter descriptors of every harness in the atlas.")
	f.ImportName(adapterPkg, "adapter")

	// Families.
	famDict := map[string]jen.Code{}
	for _, fam := range a.Families {
		var profiles []jen.Code
		for _, p := range fam.Profiles {
			profiles = append(profiles, jen.Lit(p))
		}
		famDict[fam.ID] = jen.Qual(adapterPkg, "Family").Values(keyed(jen.Dict{
			jen.Id("ID"):         jen.Lit(fam.ID),
			jen.Id("Delivery"):   jen.Lit(fam.Delivery),
			jen.Id("Transcript"): jen.Lit(fam.Transcript),
			jen.Id("Profiles"):   jen.Index().String().Values(profiles...),
		}))
	}

	var descs, lookup, hookLookup, ids []jen.Code
	// Every alias and display name, with its id, for the hook path's
	// did-you-mean (adapter.Registry.Names).
	otherNames, seen := jen.Dict{}, map[string]bool{}
	for _, h := range a.Harnesses {
		for _, n := range append(aliasNames(h), h.DisplayName) {
			if n != "" && n != h.ID && !seen[n] {
				seen[n] = true
				otherNames[jen.Lit(n)] = jen.Lit(h.ID)
			}
		}
	}
	for _, h := range a.Harnesses {
		pkg := Module + "/generated/harness/" + PkgName(h.ID)
		f.ImportName(pkg, PkgName(h.ID))
		var aliases []jen.Code
		for _, al := range h.Aliases {
			aliases = append(aliases, jen.Lit(al.Name))
		}
		var verified []jen.Code
		for _, v := range h.Verified {
			verified = append(verified, jen.Lit(v))
		}
		npmInstall := jen.Nil()
		if len(h.Package.NpmInstall) > 0 {
			var specs []jen.Code
			for _, s := range h.Package.NpmInstall {
				specs = append(specs, jen.Lit(s))
			}
			npmInstall = jen.Index().String().Values(specs...)
		}
		var config []jen.Code
		for _, c := range h.Config {
			config = append(config, jen.Values(keyed(jen.Dict{
				jen.Id("Key"): jen.Lit(c.Key), jen.Id("Type"): jen.Lit(c.Type),
				jen.Id("Default"): jen.Lit(c.Default), jen.Id("Description"): jen.Lit(c.Description),
			})))
		}
		var checks []jen.Code
		for _, c := range h.Readiness {
			checks = append(checks, jen.Values(keyed(jen.Dict{jen.Id("Kind"): jen.Lit(c.Kind), jen.Id("Value"): jen.Lit(c.Value)})))
		}
		tools := jen.Dict{}
		for _, t := range h.Tools {
			tools[jen.Lit(t.Name)] = jen.Lit(t.Kind)
		}
		prefixes := jen.Dict{}
		for _, t := range h.Prefixes {
			prefixes[jen.Lit(t.Name)] = jen.Lit(t.Kind)
		}
		var events, eventCases []jen.Code
		for _, e := range h.Events {
			var can []jen.Code
			for _, c := range e.Can {
				can = append(can, jen.Lit(c.Name))
			}
			spec := jen.Dict{
				jen.Id("Name"):     jen.Lit(e.Name),
				jen.Id("Phase"):    jen.Lit(e.Phase.Name),
				jen.Id("Support"):  jen.Lit(e.Support),
				jen.Id("Can"):      jen.Index().String().Values(can...),
				jen.Id("Evidence"): evidenceLit(e.Evidence),
			}
			if e.Note != "" {
				spec[jen.Id("Note")] = jen.Lit(e.Note)
			}
			if e.ContextBeforePrompt.Name != "" {
				spec[jen.Id("ContextBeforePrompt")] = jen.True()
			}
			if len(e.Unverifiable) > 0 {
				reasons := jen.Dict{}
				for _, r := range e.Unverifiable {
					reasons[jen.Lit(r.Cell)] = jen.Lit(r.Reason)
				}
				spec[jen.Id("Unverifiable")] = jen.Map(jen.String()).String().Values(reasons)
			}
			if r := e.Replaces; r != nil {
				spec[jen.Id("Replaces")] = jen.Op("&").Qual(adapterPkg, "Replaces").Values(keyed(jen.Dict{
					jen.Id("What"): jen.Lit(r.What), jen.Id("Output"): jen.Lit(r.Output),
					jen.Id("Instead"): jen.Lit(r.Instead), jen.Id("Evidence"): evidenceLit(r.Evidence),
				}))
			}
			if len(e.Rules) > 0 {
				var fx []jen.Code
				for _, r := range e.Rules {
					fx = append(fx, jen.Values(jen.Dict{jen.Id("Aspect"): jen.Lit(r.Aspect), jen.Id("Call"): jen.Lit(r.Effect.Call.Name), jen.Id("Session"): jen.Lit(r.Effect.Session.Name)}))
				}
				spec[jen.Id("Effects")] = jen.Index().Qual(adapterPkg, "Effect").Values(fx...)
			}
			events = append(events, jen.Lit(e.Name))
			eventCases = append(eventCases, jen.Case(jen.Lit(e.Name)).Block(
				jen.Return(jen.Op("&").Qual(adapterPkg, "EventSpec").Values(keyed(spec)), jen.True())))
		}
		fam, ok := famDict[h.Family.Name]
		if !ok {
			fam = jen.Qual(adapterPkg, "Family").Values()
		}
		ctor := "descriptor" + GoName(h.ID)
		var names []jen.Code
		for _, n := range append([]string{h.ID}, aliasNames(h)...) {
			names = append(names, jen.Lit(n))
		}
		if h.Default {
			names = append(names, jen.Lit(""))
		}
		lookup = append(lookup, jen.Case(names...).Block(jen.Return(jen.Id(ctor).Call())))
		hookCtor := "hook" + GoName(h.ID)
		eventFn := "event" + GoName(h.ID)
		hookLookup = append(hookLookup, jen.Case(names...).Block(jen.Return(jen.Id(hookCtor).Call())))
		f.Comment(eventFn + " builds the spec of one " + h.DisplayName + " event.")
		f.Func().Id(eventFn).Params(jen.Id("name").String()).Params(jen.Op("*").Qual(adapterPkg, "EventSpec"), jen.Bool()).Block(
			jen.Switch(jen.Id("name")).Block(eventCases...),
			jen.Return(jen.Nil(), jen.False()),
		)
		f.Line()
		f.Comment(hookCtor + " builds the part of the " + h.DisplayName + " descriptor a hook call uses.")
		f.Func().Id(hookCtor).Params().Op("*").Qual(adapterPkg, "Descriptor").Block(jen.Return(jen.Op("&").Qual(adapterPkg, "Descriptor").Values(keyed(jen.Dict{
			jen.Id("ID"):        jen.Lit(h.ID),
			jen.Id("Profile"):   jen.Lit(h.Profile.Name),
			jen.Id("Normalize"): jen.Qual(Module+"/generated/harness/"+PkgName(h.ID), "Normalize"),
			jen.Id("Rules"):     jen.Qual(Module+"/generated/harness/"+PkgName(h.ID), "Rules"),
			jen.Id("FindEvent"): jen.Id(eventFn),
		}))))
		f.Line()
		ids = append(ids, jen.Lit(h.ID))
		descs = append(descs, jen.Id(ctor).Call())
		desc := jen.Dict{
			jen.Id("ID"):          jen.Lit(h.ID),
			jen.Id("DisplayName"): jen.Lit(h.DisplayName),
			jen.Id("Aliases"):     jen.Index().String().Values(aliases...),
			jen.Id("Family"):      fam,
			jen.Id("Profile"):     jen.Lit(h.Profile.Name),
			jen.Id("Default"):     jen.Lit(h.Default),
			jen.Id("Package"): jen.Qual(adapterPkg, "Package").Values(keyed(jen.Dict{
				jen.Id("Name"): jen.Lit(h.Package.Name), jen.Id("Source"): jen.Lit(h.Package.Source),
				jen.Id("Trust"): jen.Lit(h.Package.Trust), jen.Id("Lifecycle"): jen.Lit(h.Package.Lifecycle),
				jen.Id("NpmInstall"): npmInstall,
			})),
			jen.Id("Verified"):  jen.Index().String().Values(verified...),
			jen.Id("Config"):    jen.Index().Qual(adapterPkg, "ConfigKey").Values(config...),
			jen.Id("Readiness"): jen.Index().Qual(adapterPkg, "Check").Values(checks...),
			jen.Id("Packaging"): jen.Qual(adapterPkg, "Packaging").Values(keyed(jen.Dict{
				jen.Id("Format"): jen.Lit(h.Packaging.Format.Name), jen.Id("RootVar"): jen.Lit(h.Packaging.RootVar),
				jen.Id("TimeoutUnit"): jen.Lit(h.Packaging.TimeoutUnit), jen.Id("Install"): jen.Lit(h.Packaging.Install),
				jen.Id("Target"): jen.Qual(adapterPkg, "Target").Values(targetDict(h.Packaging.Target)),
				jen.Id("Bundle"): bundleLit(a.Layout(h.Packaging.Format.Name)),
			})),
			jen.Id("Tools"):        jen.Map(jen.String()).String().Values(tools),
			jen.Id("ToolPrefixes"): jen.Map(jen.String()).String().Values(prefixes),
			jen.Id("Events"):       jen.Id("specs").Call(append([]jen.Code{jen.Id("event" + GoName(h.ID))}, events...)...),
			jen.Id("Evidence"):     evidenceLit(h.Evidence),
			jen.Id("Source"):       jen.Lit(h.File),
			jen.Id("Normalize"):    jen.Qual(pkg, "Normalize"),
			jen.Id("Rules"):        jen.Qual(pkg, "Rules"),
		}
		if h.NotRunHere != "" {
			desc[jen.Id("NotRunHere")] = jen.Lit(h.NotRunHere)
		}
		if env := envSources(h); len(env) > 0 {
			var lits []jen.Code
			for _, e := range env {
				lits = append(lits, jen.Lit(e))
			}
			desc[jen.Id("NormalizeEnv")] = jen.Index().String().Values(lits...)
		}
		if h.SidePrefix != "" {
			desc[jen.Id("SideSessionPrefix")] = jen.Lit(h.SidePrefix)
		}
		if a := h.AgentEnv; a != nil {
			var evs []jen.Code
			for _, e := range a.Events {
				evs = append(evs, jen.Lit(e.Name))
			}
			desc[jen.Id("AgentEnv")] = jen.Op("&").Qual(adapterPkg, "AgentEnv").Values(keyed(jen.Dict{
				jen.Id("Kind"): jen.Lit(a.Kind), jen.Id("Variable"): jen.Lit(a.Variable),
				jen.Id("Events"): jen.Index().String().Values(evs...), jen.Id("Evidence"): evidenceLit(a.Evidence),
			}))
		}
		f.Comment(ctor + " builds the " + h.DisplayName + " descriptor.")
		f.Func().Id(ctor).Params().Op("*").Qual(adapterPkg, "Descriptor").Block(jen.Return(jen.Op("&").Qual(adapterPkg, "Descriptor").Values(keyed(desc))))
		f.Line()
	}

	f.Comment("Lookup builds the descriptor an id or alias names (\"\" = the default), or nil.")
	f.Func().Id("Lookup").Params(jen.Id("name").String()).Op("*").Qual(adapterPkg, "Descriptor").Block(
		jen.Switch(jen.Id("name")).Block(lookup...),
		jen.Return(jen.Nil()),
	)
	f.Line()
	f.Comment("IDs lists every descriptor id, sorted.")
	f.Var().Id("IDs").Op("=").Index().String().Values(ids...)
	f.Line()
	f.Comment("Registry returns every harness descriptor in the atlas, sorted by id.")
	f.Var().Id("Registry").Op("=").Qual("sync", "OnceValue").Call(
		jen.Func().Params().Op("*").Qual(adapterPkg, "Registry").Block(
			jen.Return(jen.Op("&").Qual(adapterPkg, "Registry").Values(keyed(jen.Dict{
				jen.Id("Descriptors"): jen.Index().Op("*").Qual(adapterPkg, "Descriptor").Values(descs...),
				jen.Id("Find"):        jen.Id("Lookup"),
				jen.Id("Known"):       jen.Id("IDs"),
			}))),
		),
	)
	f.Line()
	f.Comment("specs lists the specs of events in atlas order; each is written once, in its event function.")
	f.Func().Id("specs").Params(jen.Id("find").Func().Params(jen.String()).Params(jen.Op("*").Qual(adapterPkg, "EventSpec"), jen.Bool()), jen.Id("names").Op("...").String()).Index().Qual(adapterPkg, "EventSpec").Block(
		jen.Id("out").Op(":=").Make(jen.Index().Qual(adapterPkg, "EventSpec"), jen.Lit(0), jen.Len(jen.Id("names"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Id("names")).Block(
			jen.List(jen.Id("e"), jen.Id("_")).Op(":=").Id("find").Call(jen.Id("n")),
			jen.Id("out").Op("=").Append(jen.Id("out"), jen.Op("*").Id("e")),
		),
		jen.Return(jen.Id("out")),
	)
	f.Line()
	f.Comment("lookupHook builds the hook-path part of the descriptor a name names, or nil.")
	f.Func().Id("lookupHook").Params(jen.Id("name").String()).Op("*").Qual(adapterPkg, "Descriptor").Block(
		jen.Switch(jen.Id("name")).Block(hookLookup...),
		jen.Return(jen.Nil()),
	)
	f.Line()
	f.Comment("names maps every alias and display name to its harness's id; built only")
	f.Comment("when called, for the did-you-mean of a name that resolves to none.")
	f.Func().Id("names").Params().Map(jen.String()).String().Block(
		jen.Return(jen.Map(jen.String()).String().Values(otherNames)),
	)
	f.Line()
	f.Comment("Hooks is the registry of the hook path: it builds only what a call needs of")
	f.Comment("the one descriptor it names (id, normalizer, render rules, the event's")
	f.Comment("spec), not every descriptor with all its events and evidence.")
	f.Func().Id("Hooks").Params().Op("*").Qual(adapterPkg, "Registry").Block(
		jen.Return(jen.Op("&").Qual(adapterPkg, "Registry").Values(keyed(jen.Dict{
			jen.Id("Find"):  jen.Id("lookupHook"),
			jen.Id("Known"): jen.Id("IDs"),
			jen.Id("Names"): jen.Id("names"),
		}))),
	)
	return []File{renderGo("generated/registry/registry.go", f)}
}

func aliasNames(h *model.Harness) []string {
	out := make([]string, len(h.Aliases))
	for i, a := range h.Aliases {
		out[i] = a.Name
	}
	return out
}

func evidenceLit(es []model.Evidence) jen.Code {
	var items []jen.Code
	for _, e := range es {
		d := jen.Dict{jen.Id("Kind"): jen.Lit(e.Kind), jen.Id("Ref"): jen.Lit(e.Ref)}
		if e.Note != "" {
			d[jen.Id("Note")] = jen.Lit(e.Note)
		}
		items = append(items, jen.Values(keyed(d)))
	}
	return jen.Index().Qual(adapterPkg, "Evidence").Values(items...)
}

// bundleLit is what the runtime reads of a bundle of the layout (nil: none).
func bundleLit(l *model.Layout) jen.Code {
	d := jen.Dict{}
	if l == nil {
		return jen.Qual(adapterPkg, "Bundle").Values(keyed(d))
	}
	lit := func(field, v string) {
		if v != "" {
			d[jen.Id(field)] = jen.Lit(v)
		}
	}
	lit("Manifest", l.Manifest.Path.Name)
	lit("ManifestSchema", l.Manifest.Schema)
	if req := l.Required(); len(req) > 0 {
		var items []jen.Code
		for _, r := range req {
			items = append(items, jen.Lit(r))
		}
		d[jen.Id("Required")] = jen.Index().String().Values(items...)
	}
	lit("Skills", l.Skills.Name)
	lit("Commands", l.CommandFiles())
	mcpFile, mcpKey := l.MCPServers()
	lit("MCPFile", mcpFile)
	lit("MCPKey", mcpKey)
	if len(l.Manifest.Paths) > 0 {
		var items []jen.Code
		for _, p := range l.Manifest.Paths {
			d := jen.Dict{jen.Id("Key"): jen.Lit(p.Key)}
			if p.Folder {
				d[jen.Id("Folder")] = jen.True()
			}
			if p.Skills {
				d[jen.Id("Skills")] = jen.True()
			}
			items = append(items, jen.Values(keyed(d)))
		}
		d[jen.Id("Paths")] = jen.Index().Qual(adapterPkg, "BundlePath").Values(items...)
	}
	if len(l.Manifest.Requires) > 0 {
		var items []jen.Code
		for _, r := range l.Manifest.Requires {
			items = append(items, jen.Values(keyed(jen.Dict{jen.Id("Key"): jen.Lit(r.Key), jen.Id("Value"): jen.Lit(r.Value), jen.Id("Why"): jen.Lit(r.Why)})))
		}
		d[jen.Id("Requires")] = jen.Index().Qual(adapterPkg, "BundleValue").Values(items...)
	}
	if hk := l.Hooks; hk != nil {
		lit("Hooks", hk.Path.Name)
		lit("HooksSchema", hk.Schema)
		lit("Shape", hk.Shape)
		lit("CommandKey", hk.CommandKey())
	}
	return jen.Qual(adapterPkg, "Bundle").Values(keyed(d))
}

// envSources lists, sorted and once each, the environment variables the
// harness's fields are read from.
func envSources(h *model.Harness) []string {
	seen := map[string]bool{}
	var out []string
	add := func(fss []model.FieldSources) {
		for _, fs := range fss {
			for _, s := range fs.Sources {
				if s.Env != "" && !seen[s.Env] {
					seen[s.Env] = true
					out = append(out, s.Env)
				}
			}
		}
	}
	add(h.Fields)
	for _, e := range h.Events {
		add(e.Fields)
	}
	sort.Strings(out)
	return out
}

// targetDict is the keyed fields of an install target's literal.
func targetDict(t model.Target) jen.Dict {
	d := keyed(jen.Dict{
		jen.Id("Kind"): jen.Lit(t.Kind), jen.Id("Project"): jen.Lit(t.Project),
		jen.Id("User"): jen.Lit(t.User), jen.Id("Shape"): jen.Lit(t.Shape),
		jen.Id("CommandKey"): jen.Lit(t.CommandKey), jen.Id("TimeoutKey"): jen.Lit(t.TimeoutKey),
		jen.Id("Entry"): jen.Lit(t.Entry), jen.Id("MCPKey"): jen.Lit(t.MCPKey),
	})
	for name, dirs := range map[string]model.TargetDirs{"Skills": t.Skills, "Commands": t.Commands, "MCP": t.MCP} {
		if dirs != (model.TargetDirs{}) {
			d[jen.Id(name)] = jen.Qual(adapterPkg, "TargetDirs").Values(jen.Dict{
				jen.Id("Project"): jen.Lit(dirs.Project), jen.Id("User"): jen.Lit(dirs.User),
			})
		}
	}
	return d
}
