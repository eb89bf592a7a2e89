package emit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"sitter.dev/sitter/gen/model"
)

const hookPkg = Module + "/runtime/hook"

// node is one key of the payload struct tree.
type node struct {
	key    string
	goName string
	typ    string // "string", "json", "bool", "strings" (array of strings), "object"
	kids   []*node
}

func (n *node) child(key, typ string) *node {
	for _, k := range n.kids {
		if k.key == key {
			return k
		}
	}
	k := &node{key: key, typ: typ}
	n.kids = append(n.kids, k)
	return k
}

// payloadTree builds the union of every path the harness reads.
func payloadTree(h *model.Harness) *node {
	root := &node{typ: "object"}
	add := func(path, typ string) {
		segs := strings.Split(path, ".")
		n := root
		for i, s := range segs {
			if i < len(segs)-1 {
				n = n.child(s, "object")
				continue
			}
			if strings.HasSuffix(s, "[0]") {
				n.child(strings.TrimSuffix(s, "[0]"), "strings")
			} else {
				n.child(s, typ)
			}
		}
	}
	visit := func(fss []model.FieldSources) {
		for _, fs := range fss {
			for _, s := range fs.Sources {
				if s.Env != "" {
					continue // not in the payload
				}
				typ := model.FieldType[fs.Field]
				if s.As == "command-object" {
					typ = "string"
				}
				add(s.Path, typ)
			}
		}
	}
	visit(h.Fields)
	for _, e := range h.Events {
		visit(e.Fields)
	}
	for _, p := range h.EventName {
		add(p, "string")
	}
	var name func(n *node)
	name = func(n *node) {
		sort.Slice(n.kids, func(i, j int) bool { return n.kids[i].key < n.kids[j].key })
		used := map[string]int{}
		for _, k := range n.kids {
			g := GoName(k.key)
			used[g]++
			if used[g] > 1 {
				g = fmt.Sprintf("%s%d", g, used[g])
			}
			k.goName = g
			name(k)
		}
	}
	name(root)
	return root
}

// accessor returns the Go expression reading a path from p.
func accessor(root *node, path string) *jen.Statement {
	segs := strings.Split(path, ".")
	n := root
	expr := jen.Id("p")
	for i, s := range segs {
		idx := strings.HasSuffix(s, "[0]")
		key := strings.TrimSuffix(s, "[0]")
		for _, k := range n.kids {
			if k.key == key {
				n = k
				break
			}
		}
		expr = expr.Dot(n.goName)
		if idx && i == len(segs)-1 {
			return jen.Qual(hookPkg, "Index0").Call(expr)
		}
	}
	return expr
}

// HarnessGo emits the Go package of one harness: its payload struct,
// Normalize, the render tables and the tool-kind table.
func HarnessGo(a *model.Atlas, h *model.Harness) []File {
	pkg := PkgName(h.ID)
	path := Module + "/generated/harness/" + pkg
	f := jen.NewFilePathName(path, pkg)
	f.HeaderComment(Marker(h.File))
	f.PackageComment(fmt.Sprintf("Package %s normalizes %s hook payloads into canonical sitter events", pkg, h.DisplayName))
	f.PackageComment(fmt.Sprintf("and renders canonical results as %s's native answers.", h.DisplayName))
	f.ImportName(hookPkg, "hook")

	root := payloadTree(h)
	genPayload(f, h, root)
	genNormalize(f, h, root)
	genToolKind(f, h)
	genRules(f, h)
	return []File{renderGo("generated/harness/"+pkg+"/"+pkg+".go", f)}
}

// genPayload declares Payload, the union of every payload field the atlas
// reads, with a field method per struct that decodes only those keys.
func genPayload(f *jen.File, h *model.Harness, root *node) {
	var structs []jen.Code
	var decl func(name string, n *node)
	decl = func(name string, n *node) {
		var fields, cases []jen.Code
		for _, k := range n.kids {
			target := jen.Id("p").Dot(k.goName)
			var read jen.Code
			switch k.typ {
			case "string":
				read = jen.List(target.Clone(), jen.Err()).Op("=").Id("s").Dot("String").Call(jen.Lit(k.key))
			case "bool":
				read = jen.List(target.Clone(), jen.Err()).Op("=").Id("s").Dot("Bool").Call(jen.Lit(k.key))
			case "json":
				read = jen.List(target.Clone(), jen.Err()).Op("=").Id("s").Dot("Raw").Call()
			case "strings":
				read = jen.List(target.Clone(), jen.Err()).Op("=").Id("s").Dot("Strings").Call(jen.Lit(k.key))
			case "object":
				read = jen.Err().Op("=").Id("s").Dot("Object").Call(jen.Func().Params(jen.Id("k").String()).Error().Block(
					jen.Return(target.Clone().Dot("field").Call(jen.Id("s"), jen.Id("k"))),
				))
			}
			cases = append(cases, jen.Case(jen.Lit(k.key)).Block(read))
			st := jen.Id(k.goName)
			switch k.typ {
			case "string":
				st.String()
			case "bool":
				st.Op("*").Bool()
			case "json":
				st.Qual("encoding/json", "RawMessage")
			case "strings":
				st.Index().String()
			case "object":
				st.Id(name + k.goName)
				decl(name+k.goName, k)
			}
			fields = append(fields, st.Tag(map[string]string{"json": k.key}))
		}
		cases = append(cases, jen.Default().Block(jen.Err().Op("=").Id("s").Dot("Skip").Call()))
		method := jen.Comment("field decodes the value of one key; keys the atlas does not read are skipped.").Line().
			Func().Params(jen.Id("p").Op("*").Id(name)).Id("field").Params(jen.Id("s").Op("*").Qual(hookPkg, "Scanner"), jen.Id("key").String()).Params(jen.Err().Error()).Block(
			jen.Switch(jen.Id("key")).Block(cases...),
			jen.Return(jen.Err()),
		)
		structs = append([]jen.Code{jen.Type().Id(name).Struct(fields...), jen.Line(), method}, structs...)
	}
	decl("Payload", root)
	f.Comment("Payload is the union of every payload field the atlas reads for " + h.DisplayName + ".")
	for _, s := range structs {
		f.Add(s)
		f.Line()
	}
}

// genNormalize writes Normalize: the harness-wide sources are read once;
// each event's case sets its phase and support and only what it reads
// differently.
func genNormalize(f *jen.File, h *model.Harness, root *node) {
	hasName := func(fss []model.FieldSources, tool string) bool {
		if tool != "" {
			return true
		}
		for _, fs := range fss {
			if fs.Field == "toolName" {
				return true
			}
		}
		return false
	}
	defaultHasName := hasName(h.Fields, "")
	common := []jen.Code{
		jen.Var().Id("toolName").Op(",").Id("toolCallID").Op(",").Id("toolKind").String(),
		jen.Var().Id("toolInput").Op(",").Id("toolResponse").Qual("encoding/json", "RawMessage"),
		jen.Id("hasName").Op(":=").Lit(defaultHasName),
	}
	common = append(common, assignFields(root, h.Fields)...)
	var cases []jen.Code
	for _, e := range h.Events {
		body := []jen.Code{
			jen.Id("ev").Dot("Phase").Op("=").Lit(e.Phase.Name),
			jen.Id("ev").Dot("Support").Op("=").Lit(e.Support),
		}
		body = append(body, assignFields(root, e.Fields)...)
		if e.Tool != "" {
			body = append(body, jen.Id("toolName").Op("=").Qual(hookPkg, "First").Call(jen.Id("toolName"), jen.Lit(e.Tool)))
		}
		if e.ToolKind != "" {
			body = append(body, jen.Id("toolKind").Op("=").Lit(e.ToolKind))
		}
		if has := hasName(h.EffectiveFields(e), e.Tool); has != defaultHasName {
			body = append(body, jen.Id("hasName").Op("=").Lit(has))
		}
		cases = append(cases, jen.Case(jen.Lit(e.Name)).Block(body...))
	}
	cases = append(cases, jen.Default().Block(
		jen.Return(jen.Id("ev"), jen.Qual(hookPkg, "UnknownEvent").Call(jen.Lit(h.ID), jen.Id("nativeEvent"))),
	))
	tail := []jen.Code{
		jen.If(jen.Id("toolKind").Op("==").Lit("").Op("&&").Id("hasName")).Block(
			jen.Id("toolKind").Op("=").Id("ToolKind").Call(jen.Id("toolName")),
		),
		jen.If(jen.Id("toolName").Op("!=").Lit("").Op("||").Id("toolCallID").Op("!=").Lit("").
			Op("||").Len(jen.Id("toolInput")).Op(">").Lit(0).Op("||").Len(jen.Id("toolResponse")).Op(">").Lit(0)).Block(
			jen.Id("ev").Dot("Tool").Op("=").Op("&").Qual(hookPkg, "Tool").Values(keyed(jen.Dict{
				jen.Id("Name"): jen.Id("toolName"), jen.Id("Kind"): jen.Id("toolKind"),
				jen.Id("Input"): jen.Id("toolInput"), jen.Id("Response"): jen.Id("toolResponse"),
				jen.Id("CallID"): jen.Id("toolCallID"),
			})),
		),
	}
	nameExpr := []jen.Code{}
	for _, p := range h.EventName {
		nameExpr = append(nameExpr, accessor(root, p))
	}
	fallback := jen.Null()
	if len(nameExpr) > 0 {
		fallback = jen.If(jen.Id("nativeEvent").Op("==").Lit("")).Block(
			jen.Id("nativeEvent").Op("=").Qual(hookPkg, "First").Call(nameExpr...),
		)
	}
	f.Comment("Normalize turns a native payload into the canonical event. An empty nativeEvent")
	f.Comment("falls back to the event name the payload carries.")
	stmts := []jen.Code{
		jen.Var().Id("p").Id("Payload"),
		jen.Id("s").Op(":=").Qual(hookPkg, "NewScanner").Call(jen.Id("raw")),
		jen.If(jen.Err().Op(":=").Id("s").Dot("Document").Call(jen.Func().Params(jen.Id("k").String()).Error().Block(
			jen.Return(jen.Id("p").Dot("field").Call(jen.Id("s"), jen.Id("k"))),
		)), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual(hookPkg, "Event").Values(), jen.Err()),
		),
		fallback,
		jen.Id("ev").Op(":=").Qual(hookPkg, "Event").Values(keyed(jen.Dict{
			jen.Id("Version"):     jen.Qual(hookPkg, "Version"),
			jen.Id("Harness"):     jen.Lit(h.ID),
			jen.Id("NativeEvent"): jen.Id("nativeEvent"),
			jen.Id("Raw"):         jen.Id("raw"),
		})),
	}
	stmts = append(stmts, common...)
	stmts = append(stmts, jen.Switch(jen.Id("nativeEvent")).Block(cases...))
	stmts = append(stmts, tail...)
	stmts = append(stmts, jen.Return(jen.Id("ev"), jen.Nil()))
	f.Func().Id("Normalize").Params(jen.Id("raw").Index().Byte(), jen.Id("nativeEvent").String()).Params(jen.Qual(hookPkg, "Event"), jen.Error()).Block(stmts...)
	f.Line()
}

// genToolKind writes ToolKind, the harness's table of native tool names
// and name prefixes to canonical kinds.
func genToolKind(f *jen.File, h *model.Harness) {
	byKind := map[string][]string{}
	for _, t := range h.Tools {
		byKind[t.Kind] = append(byKind[t.Kind], t.Name)
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var kcases []jen.Code
	for _, k := range kinds {
		var names []jen.Code
		for _, n := range byKind[k] {
			names = append(names, jen.Lit(n))
		}
		kcases = append(kcases, jen.Case(names...).Block(jen.Return(jen.Lit(k))))
	}
	var prefixes []jen.Code
	for _, p := range h.Prefixes {
		prefixes = append(prefixes, jen.If(jen.Qual("strings", "HasPrefix").Call(jen.Id("name"), jen.Lit(p.Name))).Block(jen.Return(jen.Lit(p.Kind))))
	}
	f.Comment("ToolKind classifies a native tool name.")
	body := []jen.Code{}
	if len(kcases) > 0 {
		body = append(body, jen.Switch(jen.Id("name")).Block(kcases...))
	}
	body = append(body, prefixes...)
	body = append(body, jen.Return(jen.Lit("other")))
	f.Func().Id("ToolKind").Params(jen.Id("name").String()).String().Block(body...)
	f.Line()
}

// genRules writes Rules, how each aspect of a result is written back for
// each native event.
func genRules(f *jen.File, h *model.Harness) {
	var rcases []jen.Code
	for _, e := range h.Events {
		rcases = append(rcases, jen.Case(jen.Lit(e.Name)).Block(jen.Return(rulesLit(e))))
	}
	f.Comment("Rules returns how each aspect of a result is written back for a native event;")
	f.Comment("nil for an event the atlas does not know.")
	f.Func().Id("Rules").Params(jen.Id("nativeEvent").String()).Op("*").Qual(hookPkg, "Rules").Block(
		jen.Switch(jen.Id("nativeEvent")).Block(rcases...),
		jen.Return(jen.Nil()),
	)
}

// fieldTarget is where a canonical field goes in Normalize: the event, or a
// tool variable the tool is built from after the switch.
func fieldTarget(field string) *jen.Statement {
	ev := func(path ...string) *jen.Statement {
		st := jen.Id("ev")
		for _, p := range path {
			st = st.Dot(p)
		}
		return st
	}
	switch field {
	case "sessionId":
		return ev("Session", "ID")
	case "cwd":
		return ev("Session", "Cwd")
	case "transcriptPath":
		return ev("Session", "TranscriptPath")
	case "projectDir":
		return ev("Session", "ProjectDir")
	case "turnId":
		return ev("Session", "TurnID")
	case "model":
		return ev("Session", "Model")
	case "permissionMode":
		return ev("Session", "PermissionMode")
	case "prompt":
		return ev("Prompt")
	case "source":
		return ev("Source")
	case "reason":
		return ev("Reason")
	case "stopHookActive":
		return ev("StopHookActive")
	case "lastAssistantMessage":
		return ev("LastAssistantMessage")
	case "file":
		return ev("File")
	case "toolName":
		return jen.Id("toolName")
	case "toolInput":
		return jen.Id("toolInput")
	case "toolResponse":
		return jen.Id("toolResponse")
	case "callId":
		return jen.Id("toolCallID")
	}
	panic("unknown canonical field " + field) // gen/check rejects these first
}

// assignFields reads each field from its sources, tried in order. An
// event's list replaces the harness-wide one, so it is assigned even when
// it finds nothing.
func assignFields(root *node, fss []model.FieldSources) []jen.Code {
	var out []jen.Code
	for _, fs := range fss {
		var args []jen.Code
		for _, src := range fs.Sources {
			if src.Env != "" {
				args = append(args, jen.Qual("os", "Getenv").Call(jen.Lit(src.Env)))
				continue
			}
			acc := accessor(root, src.Path)
			switch src.As {
			case "json-string":
				acc = jen.Qual(hookPkg, "JSONString").Call(acc)
			case "command-object":
				acc = jen.Qual(hookPkg, "CommandObject").Call(acc)
			}
			args = append(args, acc)
		}
		fn := map[string]string{"string": "First", "json": "FirstJSON", "bool": "FirstBool"}[model.FieldType[fs.Field]]
		var value jen.Code = jen.Qual(hookPkg, fn).Call(args...)
		if len(args) == 1 && fn == "First" {
			value = args[0]
		}
		out = append(out, fieldTarget(fs.Field).Op("=").Add(value))
	}
	return out
}

func rulesLit(e *model.Event) jen.Code {
	d := jen.Dict{}
	fields := map[string]string{"allow": "Allow", "ask": "Ask", "deny": "Deny", "block": "Block",
		"rewrite": "Rewrite", "context": "Context", "userMessage": "UserMessage", "halt": "Halt", "watch": "Watch"}
	for _, r := range e.Rules {
		rd := jen.Dict{}
		if len(r.Stdout) > 0 {
			rd[jen.Id("Stdout")] = membersLit(r.Stdout)
		}
		if r.Exit != 0 {
			rd[jen.Id("Exit")] = jen.Lit(r.Exit)
		}
		if r.Stderr != "" {
			rd[jen.Id("Stderr")] = slotLit(r.Stderr)
		}
		if r.Effect.Session.Name == model.HaltsSession {
			rd[jen.Id("HaltsSession")] = jen.True()
		}
		d[jen.Id(fields[r.Aspect])] = jen.Op("&").Qual(hookPkg, "Rule").Values(keyed(rd))
	}
	return jen.Op("&").Qual(hookPkg, "Rules").Values(keyed(d))
}

func membersLit(ms []model.Member) jen.Code {
	var items []jen.Code
	for _, m := range ms {
		d := jen.Dict{jen.Id("Key"): jen.Lit(m.Key)}
		switch {
		case m.Kids != nil:
			d[jen.Id("Kids")] = membersLit(m.Kids)
		case m.Slot != "":
			d[jen.Id("Slot")] = slotLit(m.Slot)
		default:
			d[jen.Id("Const")] = jen.Lit(m.Const)
		}
		items = append(items, jen.Values(keyed(d)))
	}
	return jen.Index().Qual(hookPkg, "Member").Values(items...)
}

func slotLit(slot string) jen.Code {
	name := map[string]string{"reason": "SlotReason", "context": "SlotContext", "userMessage": "SlotUserMessage", "updatedInput": "SlotUpdatedInput", "watchPaths": "SlotWatchPaths"}[slot]
	return jen.Qual(hookPkg, name)
}
