package emit

import (
	"github.com/dave/jennifer/jen"

	"sitter.dev/sitter/gen/model"
)

// ProvidersGo emits generated/providers: the provider table of the atlas
// and, from each harness's `speaks`, ProxyRequired(harness, provider). All
// tables are slices of constants, so importing the package costs no
// init-time work on the hook path.
func ProvidersGo(a *model.Atlas) []File {
	path := Module + "/generated/providers"
	f := jen.NewFilePathName(path, "providers")
	f.HeaderComment(Marker("atlas/providers.cue and atlas/protocols.cue"))
	f.PackageComment("Package providers holds the LLM providers of the atlas and the wire protocols each harness speaks.")

	f.Comment("Provider is an LLM provider sitter proxy can forward to.")
	f.Type().Id("Provider").Struct(
		jen.Id("ID").String(),
		jen.Id("DisplayName").String(),
		jen.Comment("Protocol is anthropic, openai-chat, openai-responses or gemini."),
		jen.Id("Protocol").String(),
		jen.Comment("BaseURL as the provider's SDK takes it; {name} placeholders come from Params."),
		jen.Id("BaseURL").String(),
		jen.Comment("Auth is x-api-key, bearer, api-key (Azure) or x-goog-api-key."),
		jen.Id("Auth").String(),
		jen.Id("KeyEnv").String(),
		jen.Id("APIVersion").String(),
		jen.Id("Params").Index().Id("Param"),
		jen.Id("DefaultModel").String(),
		jen.Id("Models").Index().Id("ModelAlias"),
		jen.Id("MaxOutputTokens").Int(),
		jen.Id("ContextTokens").Int(),
		jen.Id("MaxToolName").Int(),
		jen.Id("Evidence").Index().String(),
		jen.Id("Note").String(),
	)
	f.Comment("Param fills the {Name} placeholder of a base URL from the environment variable Env.")
	f.Type().Id("Param").Struct(jen.List(jen.Id("Name"), jen.Id("Env")).String())
	f.Comment("ModelAlias maps a model name a harness sends to the provider's model id.")
	f.Type().Id("ModelAlias").Struct(jen.List(jen.Id("Alias"), jen.Id("Model")).String())

	var rows []jen.Code
	for _, p := range a.Providers {
		var params, models, ev []jen.Code
		for _, pr := range p.Params {
			params = append(params, jen.Values(jen.Lit(pr.Name), jen.Lit(pr.Env)))
		}
		for _, m := range p.Models {
			models = append(models, jen.Values(jen.Lit(m.Alias), jen.Lit(m.Model)))
		}
		for _, e := range p.Evidence {
			ev = append(ev, jen.Lit(e.Ref))
		}
		rows = append(rows, jen.Values(keyed(jen.Dict{
			jen.Id("ID"):              jen.Lit(p.ID),
			jen.Id("DisplayName"):     jen.Lit(p.DisplayName),
			jen.Id("Protocol"):        jen.Lit(p.Protocol.Name),
			jen.Id("BaseURL"):         jen.Lit(p.BaseURL),
			jen.Id("Auth"):            jen.Lit(p.Auth),
			jen.Id("KeyEnv"):          jen.Lit(p.KeyEnv),
			jen.Id("APIVersion"):      jen.Lit(p.APIVersion),
			jen.Id("Params"):          jen.Index().Id("Param").Values(params...),
			jen.Id("DefaultModel"):    jen.Lit(p.DefaultModel),
			jen.Id("Models"):          jen.Index().Id("ModelAlias").Values(models...),
			jen.Id("MaxOutputTokens"): jen.Lit(p.Limits.MaxOutputTokens),
			jen.Id("ContextTokens"):   jen.Lit(p.Limits.ContextTokens),
			jen.Id("MaxToolName"):     jen.Lit(p.Limits.MaxToolName),
			jen.Id("Evidence"):        jen.Index().String().Values(ev...),
			jen.Id("Note"):            jen.Lit(p.Note),
		})))
	}
	f.Comment("All lists every provider, sorted by id.")
	f.Var().Id("All").Op("=").Index().Id("Provider").Values(rows...)

	var speaks []jen.Code
	for _, h := range a.Harnesses {
		var names, protos []jen.Code
		names = append(names, jen.Lit(h.ID))
		for _, al := range h.Aliases {
			names = append(names, jen.Lit(al.Name))
		}
		for _, s := range h.Speaks {
			protos = append(protos, jen.Lit(s.Name))
		}
		speaks = append(speaks, jen.Line().Values(jen.Index().String().Values(names...), jen.Index().String().Values(protos...)))
	}
	f.Comment("speaks lists, per harness (id first, then aliases), the protocols it calls natively.")
	f.Var().Id("speaks").Op("=").Index().Struct(
		jen.Id("names").Index().String(),
		jen.Id("protocols").Index().String(),
	).Values(append(speaks, jen.Line())...)

	f.Comment("Lookup returns the provider with an id.")
	f.Func().Id("Lookup").Params(jen.Id("id").String()).Params(jen.Id("Provider"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("p")).Op(":=").Range().Id("All")).Block(
			jen.If(jen.Id("p").Dot("ID").Op("==").Id("id")).Block(jen.Return(jen.Id("p"), jen.True())),
		),
		jen.Return(jen.Id("Provider").Values(), jen.False()),
	)
	f.Comment("IDs lists every provider id, in the atlas's order.")
	f.Func().Id("IDs").Params().Index().String().Block(
		jen.Id("ids").Op(":=").Make(jen.Index().String(), jen.Lit(0), jen.Len(jen.Id("All"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("p")).Op(":=").Range().Id("All")).Block(
			jen.Id("ids").Op("=").Append(jen.Id("ids"), jen.Id("p").Dot("ID")),
		),
		jen.Return(jen.Id("ids")),
	)
	f.Comment("Speaks returns the protocols a harness (id or alias) calls natively.")
	f.Func().Id("Speaks").Params(jen.Id("harness").String()).Params(jen.Index().String(), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("h")).Op(":=").Range().Id("speaks")).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Id("h").Dot("names")).Block(
				jen.If(jen.Id("n").Op("==").Id("harness")).Block(jen.Return(jen.Id("h").Dot("protocols"), jen.True())),
			),
		),
		jen.Return(jen.Nil(), jen.False()),
	)
	f.Comment("HarnessID returns the id of a harness named by id or alias.")
	f.Func().Id("HarnessID").Params(jen.Id("name").String()).Params(jen.String(), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("h")).Op(":=").Range().Id("speaks")).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Id("h").Dot("names")).Block(
				jen.If(jen.Id("n").Op("==").Id("name")).Block(jen.Return(jen.Id("h").Dot("names").Index(jen.Lit(0)), jen.True())),
			),
		),
		jen.Return(jen.Lit(""), jen.False()),
	)
	f.Comment("HarnessIDs lists every harness id, sorted.")
	f.Func().Id("HarnessIDs").Params().Index().String().Block(
		jen.Id("ids").Op(":=").Make(jen.Index().String(), jen.Lit(0), jen.Len(jen.Id("speaks"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("h")).Op(":=").Range().Id("speaks")).Block(
			jen.Id("ids").Op("=").Append(jen.Id("ids"), jen.Id("h").Dot("names").Index(jen.Lit(0))),
		),
		jen.Return(jen.Id("ids")),
	)
	f.Comment("ProxyRequired reports whether a harness needs sitter proxy to use a")
	f.Comment("provider: true when the provider's protocol is not one the harness speaks.")
	f.Comment("A harness that speaks no configurable protocol (Cursor) cannot use any")
	f.Comment("provider through the proxy either: that is an error.")
	f.Func().Id("ProxyRequired").Params(jen.List(jen.Id("harness"), jen.Id("provider")).String()).Params(jen.Bool(), jen.Error()).Block(
		jen.List(jen.Id("p"), jen.Id("ok")).Op(":=").Id("Lookup").Call(jen.Id("provider")),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.False(), jen.Qual("fmt", "Errorf").Call(jen.Lit("unknown provider %q"), jen.Id("provider")))),
		jen.List(jen.Id("protos"), jen.Id("ok")).Op(":=").Id("Speaks").Call(jen.Id("harness")),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.False(), jen.Qual("fmt", "Errorf").Call(jen.Lit("unknown harness %q"), jen.Id("harness")))),
		jen.If(jen.Len(jen.Id("protos")).Op("==").Lit(0)).Block(jen.Return(jen.False(), jen.Qual("fmt", "Errorf").Call(jen.Lit("harness %s has no configurable LLM endpoint: it cannot use provider %s"), jen.Id("harness"), jen.Id("provider")))),
		jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Id("protos")).Block(
			jen.If(jen.Id("s").Op("==").Id("p").Dot("Protocol")).Block(jen.Return(jen.False(), jen.Nil())),
		),
		jen.Return(jen.True(), jen.Nil()),
	)
	return []File{renderGo("generated/providers/providers.go", f)}
}
