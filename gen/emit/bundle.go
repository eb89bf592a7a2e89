package emit

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"sitter.dev/sitter/gen/model"
)

// HandlerTable is the file of a bundle the runtime reads its handlers from
// (sitter hook --plugin DIR).
const HandlerTable = "sitter-handlers.json"

// BundleMarker marks a folder as a sitter-generated bundle and says what it is.
const BundleMarker = ".sitter-bundle.json"

// Launcher is the bundle script every shell-hook registration calls.
const Launcher = "bin/sitter-hook"

// bundle collects the files of one plugin × harness bundle.
type bundle struct {
	p     *model.Plugin
	h     *model.Harness
	lay   *model.Layout
	dir   string         // artifacts/<plugin>/<harness>
	scope map[string]any // slot values (layout.go)
	files []File
	// The skills and commands the bundle carries (copied, or written by a
	// layout file per item), by name: the README lists only these.
	shipped map[string]bool // "skill:<name>", "command:<name>"
}

// ship records that the bundle carries the skill or command of an item
// scope (items), for the README.
func (b *bundle) ship(each string, sc map[string]any) {
	if b.shipped == nil {
		b.shipped = map[string]bool{}
	}
	switch each {
	case "skills":
		b.shipped[fmt.Sprint("skill:", sc["skill.name"])] = true
	case "commands":
		b.shipped[fmt.Sprint("command:", sc["command.name"])] = true
	}
}

func (b *bundle) add(path string, data []byte, mode uint32) {
	b.files = append(b.files, File{Path: b.dir + "/" + path, Bytes: data, Mode: mode})
}

func (b *bundle) json(path string, v any) {
	f := jsonFile(path, v)
	b.add(path, f.Bytes, 0o644)
}

// handlers are the plugin's handlers for this harness: an override's list
// replaces the plugin's, and phases the harness lacks, or has only on
// events whose hooks replace its own work (atlas replaces), are dropped.
func (b *bundle) handlers() []model.Handler {
	hs, _ := handlersFor(b.p, b.h)
	var out []model.Handler
	for _, h := range hs {
		for _, e := range b.h.EventsOf(h.Phase) {
			if e.Replaces == nil {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// handlersFor is the handler list of p for harness h: its override's list
// when it has one (override true), else the plugin's.
func handlersFor(p *model.Plugin, h *model.Harness) (hs []model.Handler, override bool) {
	if o, ok := p.Overrides[h.ID]; ok && o.Handlers != nil {
		return o.Handlers, true
	}
	return p.Handlers, false
}

// replacing lists the events of phase whose hooks stand in for the
// harness's own work: no bundle registers them.
func replacing(h *model.Harness, phase string) []*model.Event {
	var out []*model.Event
	for _, e := range h.EventsOf(phase) {
		if e.Replaces != nil {
			out = append(out, e)
		}
	}
	return out
}

// serves reports whether a handler on phase runs in harness h: h has an
// event of the phase that replaces nothing, is fired (not unsupported) and
// is registered (every verified version has it).
func serves(h *model.Harness, phase string) bool { return registers(h, phase, false) }

// registers is serves; with acting, the event must also be able to do
// something (a capability in its can list).
func registers(h *model.Harness, phase string, acting bool) bool {
	for _, e := range h.EventsOf(phase) {
		if e.Replaces == nil && e.Support != "unsupported" && everyVerifiedHas(h, e) && (!acting || len(e.Can) > 0) {
			return true
		}
	}
	return false
}

// Refusals holds every plugin handler on a phase whose event, in a harness
// the plugin builds for, replaces the harness's own work (atlas replaces):
// registering it would change what the harness does, whatever the handler
// answers (Claude Code's WorktreeCreate hook must print the worktree's
// path). A handler of the plugin's list that runs in another harness the
// plugin builds for is left out of that bundle with a warning (and a note
// in its README); one that would run nowhere, or one an override names
// for that very harness, is an error. Both name the handler's phase in
// plugin.yaml.
func Refusals(a *model.Atlas, p *model.Plugin) (errs, warns model.Errors) {
	type hit struct {
		h *model.Harness
		e *model.Event
	}
	hits := map[int][]hit{} // index in p.Handlers → its replacing events
	runs := map[int]bool{}  // index in p.Handlers → it runs in some built harness
	for _, h := range a.Harnesses {
		if !builds(p, h) {
			continue
		}
		hs, override := handlersFor(p, h)
		for i, hd := range hs {
			for _, e := range replacing(h, hd.Phase) {
				if override {
					errs.Addf(hd.Pos, "%s", refusal(hd, h, e, "An override for "+h.ID+" cannot register it: remove the handler"))
					continue
				}
				hits[i] = append(hits[i], hit{h, e})
			}
			if !override && serves(h, hd.Phase) {
				runs[i] = true
			}
		}
	}
	for i, hd := range p.Handlers {
		for _, x := range hits[i] {
			if runs[i] {
				warns.Addf(hd.Pos, "warning: %s", refusal(hd, x.h, x.e, "It is left out of the "+x.h.ID+" bundle, whose README says so (to leave it out silently, give overrides."+x.h.ID+".handlers without it)"))
			} else {
				errs.Addf(hd.Pos, "%s", refusal(hd, x.h, x.e, "No harness this plugin builds for runs it otherwise: remove the handler"))
			}
		}
	}
	return errs, warns
}

// refusal says why a handler cannot be registered on a replacing event,
// what happens to it (what) and what to do instead.
func refusal(hd model.Handler, h *model.Harness, e *model.Event, what string) string {
	r := e.Replaces
	return fmt.Sprintf("%s.phase: %s cannot be a plugin handler for %s: its %s hook replaces %s and must give back %s, which a canonical result cannot say; registered, it would break that for every user of the plugin. %s. Instead: %s (sitter atlas show %s)",
		hd.Field, hd.Phase, h.DisplayName, e.Name, r.What, r.Output, what, r.Instead, h.ID)
}

// defaultTimeout is the timeout of a handler that sets none in plugin.yaml
// (sitter hook's --timeout default). A registration gives the harness
// timeoutGrace more, so that sitter, which kills a handler at its timeout,
// still answers.
const (
	defaultTimeout = 30 * time.Second
	timeoutGrace   = 5 * time.Second
)

// registration is one native event a bundle subscribes to.
type registration struct {
	event   *model.Event
	matcher string // tool-name regex, "" = every tool
	timeout time.Duration
}

// registrations lists, in atlas order, the native events the handlers need:
// those of their phases and, when a handler watches files, the events that
// tell the harness which files to watch (atlas can watchFiles).
func (b *bundle) registrations() []registration {
	byPhase := map[string][]model.Handler{}
	watches := false
	for _, h := range b.handlers() {
		byPhase[h.Phase] = append(byPhase[h.Phase], h)
		watches = watches || len(h.Watch) > 0
	}
	var out []registration
	for _, e := range b.h.Events {
		hs := byPhase[e.Phase.Name]
		if !everyVerifiedHas(b.h, e) || e.Replaces != nil {
			continue
		}
		if len(hs) == 0 {
			if watches && e.Has("watchFiles") {
				// sitter answers it without running a handler.
				out = append(out, registration{event: e, timeout: defaultTimeout + timeoutGrace})
			}
			continue
		}
		r := registration{event: e}
		kinds := map[string]bool{}
		all := false
		for _, h := range hs {
			d := defaultTimeout
			if h.Timeout != "" {
				d = h.Limit // gen/plugin checked it (hook.ParseTimeout)
			}
			// The harness's own timeout must outlast sitter's, which
			// kills the handler and still answers.
			if d+timeoutGrace > r.timeout {
				r.timeout = d + timeoutGrace
			}
			if len(h.Kinds) == 0 {
				all = true
			}
			for _, k := range h.Kinds {
				kinds[k] = true
			}
		}
		if model.CarriesTool(e.Phase.Name) && !all {
			if kind := eventKind(b.h, e); kind != "" {
				// The event is about one kind of tool: register it
				// only when a handler wants that kind.
				if !kinds[kind] {
					continue
				}
			} else {
				r.matcher = toolMatcher(b.h, kinds)
			}
		}
		out = append(out, r)
	}
	return out
}

// eventKind is the tool kind an event is fixed to, "" when its payload's
// tool name decides.
func eventKind(h *model.Harness, e *model.Event) string {
	switch {
	case e.ToolKind != "":
		return e.ToolKind
	case e.Tool != "":
		return h.ToolKind(e.Tool)
	}
	return ""
}

// everyVerifiedHas reports whether every verified version of the harness has
// the event (an event without `since` is as old as the harness).
func everyVerifiedHas(h *model.Harness, e *model.Event) bool {
	if e.Since == "" {
		return true
	}
	for _, v := range h.Verified {
		if versionLess(v, e.Since) {
			return false
		}
	}
	return true
}

// versionLess compares dotted numeric versions (1.2.10 > 1.2.9).
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			fmt.Sscan(as[i], &x)
		}
		if i < len(bs) {
			fmt.Sscan(bs[i], &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// toolMatcher is an anchored regex of the harness's tool names of the kinds.
func toolMatcher(h *model.Harness, kinds map[string]bool) string {
	var alts []string
	for _, t := range h.Tools {
		if kinds[t.Kind] {
			alts = append(alts, regexp.QuoteMeta(t.Name))
		}
	}
	for _, t := range h.Prefixes {
		if kinds[t.Kind] {
			alts = append(alts, regexp.QuoteMeta(t.Name)+".*")
		}
	}
	if len(alts) == 0 {
		return ""
	}
	sort.Strings(alts)
	return "^(" + strings.Join(alts, "|") + ")$"
}

func (r registration) timeoutIn(unit string) int {
	if unit == "ms" {
		return int(r.timeout / time.Millisecond)
	}
	return int(r.timeout / time.Second)
}

// command is the hook command a shell-hook registration runs.
func (b *bundle) command(event string) string {
	return fmt.Sprintf(`"%s/%s" %s %s`, b.h.Packaging.RootVar, Launcher, b.h.ID, event)
}

// common writes what every bundle carries: the handler table, the
// launcher, the marker, the README, and the plugin's extra files.
func (b *bundle) common(registered []string) {
	type row struct {
		Phase   string   `json:"phase"`
		Command string   `json:"command"`
		Kinds   []string `json:"kinds,omitempty"`
		Timeout string   `json:"timeout,omitempty"`
		OnError string   `json:"onError,omitempty"`
		Redact  bool     `json:"redact,omitempty"`
		Watch   []string `json:"watch,omitempty"`
	}
	rows := []row{}
	for _, h := range b.handlers() {
		rows = append(rows, row{Phase: h.Phase, Command: h.Command, Kinds: h.Kinds, Timeout: h.Timeout, OnError: h.OnError, Redact: h.Redact, Watch: h.Watch})
	}
	b.json(HandlerTable, map[string]any{"handlers": rows})
	b.add(Launcher, []byte(launcherScript(b.h.ID)), 0o755)
	b.json(BundleMarker, map[string]any{
		"generatedBy": "sitter-gen",
		"note":        Marker(b.p.Dir + " and " + b.h.File),
		"plugin":      b.p.Name,
		"version":     b.p.Version,
		"harness":     b.h.ID,
		"format":      b.h.Packaging.Format.Name,
		"hooks":       registered,
	})
	b.add("README.md", []byte(b.readme(registered)), 0o644)
	for _, f := range b.p.Files {
		b.add(f.Path, f.Data, uint32(f.Mode))
	}
}

func (b *bundle) readme(registered []string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "<!-- %s -->\n\n", Marker(b.p.Dir+" and "+b.h.File))
	fmt.Fprintf(&s, "# %s %s for %s\n\n%s\n\n", b.p.Name, b.p.Version, b.h.DisplayName, b.p.Description)
	fmt.Fprintf(&s, "## Install\n\n```text\n%s\n```\n\n", strings.ReplaceAll(b.h.Packaging.Install, "{bundle}", b.dir))
	s.WriteString("Every hook runs `bin/sitter-hook`, which finds the sitter binary through `$SITTER_BIN`, this bundle's `bin/sitter`, or `sitter` on PATH. Without one, hooks answer the harness's no-op and say on stderr how to get sitter: `make build` in a sitter checkout, then put its `bin/` on PATH or set `SITTER_BIN` (`sitter` is the hook path, `sitter-host` the other verbs a handler may call; keep them side by side).\n\n")
	if b.h.NotRunHere != "" {
		fmt.Fprintf(&s, "## Not proved on a running %s\n\nsitter's test suite runs the real CLI of each harness it can, but not %s's: %s These hooks follow what the atlas read in its code and documentation (`sitter atlas show %s`); no session of it has run them.\n\n", b.h.DisplayName, b.h.DisplayName, b.h.NotRunHere, b.h.ID)
	}
	if len(registered) > 0 {
		s.WriteString("## Hooks\n\n")
		for _, r := range registered {
			fmt.Fprintf(&s, "- `%s`\n", r)
		}
		s.WriteString("\n")
	}
	if notes := b.leftOut(); len(notes) > 0 {
		s.WriteString("## Not registered\n\n")
		for _, n := range notes {
			fmt.Fprintf(&s, "- %s\n", n)
		}
		s.WriteString("\n")
	}
	var skills, commands []string
	for _, sk := range b.p.Skills {
		if b.shipped["skill:"+sk.Name] {
			skills = append(skills, fmt.Sprintf("- `%s`: %s\n", sk.Name, sk.Description))
		}
	}
	form := "/{command}"
	if b.lay != nil && b.lay.CommandForm != "" {
		form = b.lay.CommandForm
	}
	for _, c := range b.p.Commands {
		if b.shipped["command:"+c.Name] {
			typed := strings.NewReplacer("{plugin}", b.p.Name, "{command}", c.Name).Replace(form)
			commands = append(commands, fmt.Sprintf("- `%s`: %s\n", typed, c.Description))
		}
	}
	if len(skills) > 0 {
		s.WriteString("## Skills\n\n" + strings.Join(skills, "") + "\n")
	}
	if len(commands) > 0 {
		s.WriteString("## Commands\n\n" + strings.Join(commands, "") + "\n")
	}
	return s.String()
}

// leftOut says, for the README, which handlers of the plugin this bundle
// does not register on an event whose hook would replace the harness's own
// work, and why.
func (b *bundle) leftOut() []string {
	hs, _ := handlersFor(b.p, b.h)
	var out []string
	for _, hd := range hs {
		for _, e := range replacing(b.h, hd.Phase) {
			r := e.Replaces
			out = append(out, fmt.Sprintf("The `%s` handler (`%s`) is not registered on `%s`: a %s hook replaces %s and must give back %s, which a canonical result cannot say. Instead: %s.",
				hd.Phase, hd.Command, e.Name, e.Name, r.What, r.Output, r.Instead))
		}
	}
	return out
}

// launcherScript finds sitter and runs the hook; without sitter it answers
// the no-op (empty stdout, exit 0) and says how to install it.
func launcherScript(harness string) string {
	return `#!/bin/sh
# ` + Marker("the atlas") + `
# Runs "sitter hook <harness> <event> --plugin <this bundle>". sitter is
# $SITTER_BIN, else this bundle's bin/sitter, else sitter on PATH. Without
# it the hook answers the harness's no-op and never fails the turn.
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd -P) || exit 0
if [ -n "${SITTER_BIN:-}" ] && [ -x "$SITTER_BIN" ]; then
	bin=$SITTER_BIN
elif [ -x "$root/bin/sitter" ]; then
	bin=$root/bin/sitter
elif bin=$(command -v sitter 2>/dev/null) && [ -n "$bin" ]; then
	:
else
	cat >/dev/null 2>&1
	echo "sitter: not installed, ` + harness + ` hook skipped; build it with 'make build' in a sitter checkout, then put its bin/ on PATH or set SITTER_BIN" >&2
	exit 0
fi
exec "$bin" hook "$@" --plugin "$root"
`
}

// mcpServers renders the plugin's MCP servers in the common
// {name: {command, args, env}} shape, with the harness's MCP root variable
// (layout mcpRoot) for $SITTER_PLUGIN_DIR; a server naming a plugin file
// where the harness expands none is left out (MCPUnrooted warns).
func (b *bundle) mcpServers() map[string]any {
	m := map[string]any{}
	for _, s := range b.p.MCPServers {
		root := ""
		if namesPluginDir(s) {
			if b.lay.MCPRoot == nil {
				continue
			}
			root = b.lay.MCPRoot.Var
		}
		rw := func(v string) string {
			if root == "" {
				return v
			}
			return model.RewritePluginDir(v, root)
		}
		e := map[string]any{"command": rw(s.Command)}
		if len(s.Args) > 0 {
			args := make([]string, len(s.Args))
			for i, a := range s.Args {
				args[i] = rw(a)
			}
			e["args"] = args
		}
		if len(s.Env) > 0 {
			env := map[string]string{}
			for k, v := range s.Env {
				env[k] = rw(v)
			}
			e["env"] = env
		}
		m[s.Name] = e
	}
	return m
}

// namesPluginDir reports whether an MCP server's command, args or env
// name the plugin's folder through $SITTER_PLUGIN_DIR.
func namesPluginDir(s model.MCPServer) bool {
	if model.NamesPluginDir(s.Command) || slices.ContainsFunc(s.Args, model.NamesPluginDir) {
		return true
	}
	for _, v := range s.Env {
		if model.NamesPluginDir(v) {
			return true
		}
	}
	return false
}

// MCPUnrooted warns of each MCP server of p that names a plugin file
// through $SITTER_PLUGIN_DIR, once, naming the harnesses p builds for
// whose bundles carry MCP servers but whose harness expands no bundle-root
// variable in them (no layout mcpRoot): those bundles leave it out.
func MCPUnrooted(a *model.Atlas, p *model.Plugin) (warns model.Errors) {
	for _, s := range p.MCPServers {
		if !namesPluginDir(s) {
			continue
		}
		var ids []string
		for _, h := range a.Harnesses {
			lay := a.Layout(h.Packaging.Format.Name)
			if !builds(p, h) || lay == nil || lay.MCPRoot != nil {
				continue
			}
			if file, _ := lay.MCPServers(); file != "" {
				ids = append(ids, h.ID)
			}
		}
		switch len(ids) {
		case 0:
		case 1:
			warns.Addf(s.Pos, "warning: mcpServers.%s: %s expands no plugin-root variable in MCP server definitions, so its bundle leaves out this server, which names a plugin file through $SITTER_PLUGIN_DIR", s.Name, ids[0])
		default:
			warns.Addf(s.Pos, "warning: mcpServers.%s: %s expand no plugin-root variable in MCP server definitions, so their bundles leave out this server, which names a plugin file through $SITTER_PLUGIN_DIR", s.Name, strings.Join(ids, ", "))
		}
	}
	return warns
}

// copySkills writes skills/<name>/… unchanged into dir ("" = not carried).
func (b *bundle) copySkills(dir string) {
	if dir == "" {
		return
	}
	for _, s := range b.p.Skills {
		for _, f := range s.Files {
			b.add(dir+"/"+strings.TrimPrefix(f.Path, "skills/"), f.Data, uint32(f.Mode))
		}
		b.ship("skills", map[string]any{"skill.name": s.Name})
	}
}

// copyCommands writes commands/<name>.md into dir ("" = not carried),
// with the layout's argument placeholder for $ARGUMENTS.
func (b *bundle) copyCommands(dir string) {
	if dir == "" {
		return
	}
	for _, c := range b.p.Commands {
		b.add(dir+"/"+c.Name+".md", []byte(b.commandText(string(c.Source))), 0o644)
		b.ship("commands", map[string]any{"command.name": c.Name})
	}
}

// argumentsRE finds the $ARGUMENTS of a command, with the [N] of Claude's
// indexed form, which is not the placeholder and is left alone.
var argumentsRE = regexp.MustCompile(`\$ARGUMENTS(\[[0-9]+\])?`)

// commandText is a command's text as the harness reads it: each
// $ARGUMENTS (model.ArgumentsToken) becomes the layout's placeholder;
// where the harness has none (it appends the text typed after the
// command itself), the token goes, with the blanks before it when it
// ended its line.
func (b *bundle) commandText(s string) string {
	args := b.lay.CommandArgs
	if args == nil || args.Placeholder == model.ArgumentsToken {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, line := range lines {
		changed := false
		line = argumentsRE.ReplaceAllStringFunc(line, func(m string) string {
			if m != model.ArgumentsToken {
				return m
			}
			changed = true
			return args.Placeholder
		})
		if changed && args.Placeholder == "" {
			body, nl := strings.CutSuffix(line, "\n")
			line = strings.TrimRight(body, " \t")
			if nl {
				line += "\n"
			}
		}
		lines[i] = line
	}
	return strings.Join(lines, "")
}

func names(regs []registration) []string {
	out := make([]string, len(regs))
	for i, r := range regs {
		out[i] = r.event.Name
	}
	return out
}

// Unreached warns of every handler restricted to tool kinds that, in a
// harness the plugin builds for, no tool of that harness is of: neither a
// tool or tool prefix of its atlas file nor an event with a fixed tool
// kind. Its bundle registers it and that harness never runs it (a handler
// for MCP tools, in a harness whose atlas file does not classify them).
// A harness with no shell tool at all is an atlas error (check.Atlas).
func Unreached(a *model.Atlas, p *model.Plugin) (warns model.Errors) {
	for _, h := range a.Harnesses {
		if !builds(p, h) {
			continue
		}
		hs, _ := handlersFor(p, h)
		for _, hd := range hs {
			if len(hd.Kinds) == 0 || slices.Contains(hd.Kinds, "other") || !serves(h, hd.Phase) || hasKind(h, hd.Phase, hd.Kinds) {
				continue
			}
			warns.Addf(hd.Pos, "warning: %s.kinds: no tool of %s is of kind %s in the atlas, so %s never runs this handler of its bundle (its tools: %s)",
				hd.Field, h.DisplayName, strings.Join(hd.Kinds, " or "), h.DisplayName, h.File)
		}
	}
	return warns
}

// Dropped warns of what a plugin loses without an error: a handler whose
// phase no event of a harness it builds for registers (that bundle
// leaves it out; a phase whose events replace the harness's work is
// Refusals'), and requires that no harness it targets meets (no bundle
// at all). Each names the handler, or requires, and the harnesses.
func Dropped(a *model.Atlas, p *model.Plugin) (warns model.Errors) {
	type key struct {
		field string
		pos   model.Pos
		phase string
	}
	var order []key
	lost := map[key][]string{} // handler → ids of the harnesses that leave it out
	var targeted []string
	built := false
	for _, h := range a.Harnesses {
		if targets(p, h) {
			targeted = append(targeted, h.ID)
		}
		if !builds(p, h) {
			continue
		}
		built = true
		hs, _ := handlersFor(p, h)
		for _, hd := range hs {
			if serves(h, hd.Phase) || len(replacing(h, hd.Phase)) > 0 {
				continue
			}
			k := key{hd.Field, hd.Pos, hd.Phase}
			if lost[k] == nil {
				order = append(order, k)
			}
			lost[k] = append(lost[k], h.ID)
		}
	}
	for _, k := range order {
		ids := strings.Join(lost[k], ", ")
		if len(lost[k]) == 1 {
			warns.Addf(k.pos, "warning: %s.phase: no event of %s registers a %s handler, so its bundle never runs this one (sitter atlas show %s)", k.field, ids, k.phase, ids)
		} else {
			warns.Addf(k.pos, "warning: %s.phase: no event of %s registers a %s handler, so their bundles never run this one (sitter atlas show <harness>)", k.field, ids, k.phase)
		}
	}
	if !built && len(targeted) > 0 && len(p.Requires) > 0 {
		warns.Addf(p.RequiresPos, "warning: requires: no harness this plugin builds for (%s) has an event that registers and can act on %s, so the plugin gets no bundle at all", strings.Join(targeted, ", "), strings.Join(p.Requires, " and "))
	}
	return warns
}

// hasKind says whether a tool of h can be of one of kinds on phase: an
// event of the phase with such a fixed tool kind, or such a tool or tool
// prefix in h's tables.
func hasKind(h *model.Harness, phase string, kinds []string) bool {
	for _, e := range h.EventsOf(phase) {
		if slices.Contains(kinds, e.ToolKind) {
			return true
		}
	}
	return h.HasToolKind(kinds...)
}

// Bundles emits every plugin × harness bundle, plus marketplaces. warns
// are the handlers left out of a bundle (Refusals, Dropped), those a
// harness never runs (Unreached) and a plugin no harness builds
// (Dropped); a handler no bundle can register is an error.
func Bundles(a *model.Atlas, plugins []*model.Plugin) (files []File, warns model.Errors, err error) {
	var errs model.Errors
	for _, p := range plugins {
		e, w := Refusals(a, p)
		errs, warns = append(errs, e...), append(warns, w...)
		warns = append(warns, Unreached(a, p)...)
		warns = append(warns, Dropped(a, p)...)
		warns = append(warns, MCPUnrooted(a, p)...)
	}
	if len(errs) > 0 {
		return nil, warns.Sort(), errs.Sort()
	}
	for _, p := range plugins {
		for _, h := range a.Harnesses {
			if !builds(p, h) {
				continue
			}
			lay := a.Layout(h.Packaging.Format.Name)
			if lay == nil {
				errs.Addf(h.Packaging.Format.Pos, "no layout %q", h.Packaging.Format.Name)
				return nil, warns.Sort(), errs
			}
			b := &bundle{p: p, h: h, lay: lay, dir: "artifacts/" + p.Name + "/" + h.ID}
			b.write()
			files = append(files, b.files...)
		}
	}
	return files, warns.Sort(), nil
}

// builds says whether plugin p gets a bundle for harness h: p targets h
// and h can serve every phase p requires.
func builds(p *model.Plugin, h *model.Harness) bool {
	return targets(p, h) && len(lacking(p, h)) == 0
}

// targets says whether p would build for h, requires aside: h has
// packaging and p builds for it (harnesses, overrides.<h>.skip).
func targets(p *model.Plugin, h *model.Harness) bool {
	if h.Packaging.Format.Name == "" {
		return false
	}
	if o, ok := p.Overrides[h.ID]; ok && o.Skip {
		return false
	}
	return len(p.Harnesses) == 0 || slices.Contains(p.Harnesses, h.ID)
}

// lacking lists the phases p requires that no event of h registers on
// and can act on.
func lacking(p *model.Plugin, h *model.Harness) []string {
	var out []string
	for _, phase := range p.Requires {
		if !registers(h, phase, true) {
			out = append(out, phase)
		}
	}
	return out
}

// mustJSON is for values built here, which always marshal.
func mustJSON(v any) []byte {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(out, '\n')
}
