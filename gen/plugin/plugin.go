// Package plugin reads the unified plugin sources under plugins-src/: the
// plugin.yaml manifest (validated against generated/schema/plugin.json, with
// errors naming file, line and field), skills and commands.
package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"sitter.dev/sitter/gen/model"
	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
	rplugin "sitter.dev/sitter/runtime/plugin"
)

// The plugin types live in gen/model (plugin.go), so that the emitters
// read plugins without importing this loader.
type (
	Plugin    = model.Plugin
	Author    = model.Author
	Handler   = model.Handler
	MCPServer = model.MCPServer
	Skill     = model.Skill
	Command   = model.Command
	File      = model.PluginFile
	Override  = model.Override
)

var slug = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// Load reads every plugin under root/plugins-src, validating each manifest
// against schema (the JSON Schema of plugin.yaml). All errors come back at
// once, positioned.
func Load(root string, schema []byte, a *model.Atlas) ([]*Plugin, error) {
	base := filepath.Join(root, "plugins-src")
	entries, err := os.ReadDir(base)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sch, err := compile(schema)
	if err != nil {
		return nil, fmt.Errorf("plugin schema: %w", err)
	}
	var plugins []*Plugin
	var errs model.Errors
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := "plugins-src/" + e.Name()
		if _, err := os.Stat(filepath.Join(root, dir, "plugin.yaml")); err != nil {
			errs.Addf(model.Pos{File: dir}, "no plugin.yaml")
			continue
		}
		p, perrs := loadOne(root, dir, sch, a)
		errs = append(errs, perrs...)
		if p != nil {
			plugins = append(plugins, p)
		}
	}
	seen := map[string]string{}
	for _, p := range plugins {
		if d, ok := seen[p.Name]; ok {
			errs.Addf(model.Pos{File: p.Dir + "/plugin.yaml", Line: 1, Col: 1}, "duplicate plugin name %q (also %s)", p.Name, d)
		}
		seen[p.Name] = p.Dir
	}
	if len(errs) > 0 {
		return nil, errs.Sort()
	}
	return plugins, nil
}

func compile(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("plugin.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("plugin.json")
}

// manifest mirrors plugin.yaml.
type manifest struct {
	Name        string   `yaml:"name"`
	Version     string   `yaml:"version"`
	Description string   `yaml:"description"`
	License     string   `yaml:"license"`
	Homepage    string   `yaml:"homepage"`
	Keywords    []string `yaml:"keywords"`
	Author      struct {
		Name  string `yaml:"name"`
		Email string `yaml:"email"`
		URL   string `yaml:"url"`
	} `yaml:"author"`
	Handlers   []Handler `yaml:"handlers"`
	MCPServers map[string]struct {
		Command string            `yaml:"command"`
		Args    []string          `yaml:"args"`
		Env     map[string]string `yaml:"env"`
	} `yaml:"mcpServers"`
	Files     []string `yaml:"files"`
	Harnesses []string `yaml:"harnesses"`
	Requires  []string `yaml:"requires"`
	Overrides map[string]struct {
		Skip       bool           `yaml:"skip"`
		SkipReason string         `yaml:"skipReason"`
		Handlers   []Handler      `yaml:"handlers"`
		Manifest   map[string]any `yaml:"manifest"`
	} `yaml:"overrides"`
}

func loadOne(root, dir string, sch *jsonschema.Schema, a *model.Atlas) (*Plugin, model.Errors) {
	file := dir + "/plugin.yaml"
	var errs model.Errors
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		errs.Addf(model.Pos{File: file}, "%v", err)
		return nil, errs
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		pos, hint := yamlErrPos(file, src, err)
		errs.Addf(pos, "not YAML: %v%s", err, hint)
		return nil, errs
	}
	if len(doc.Content) == 0 {
		errs.Addf(model.Pos{File: file, Line: 1, Col: 1}, "empty manifest: want name, version, description")
		return nil, errs
	}
	at := map[string]model.Pos{}
	positions(file, doc.Content[0], "", at)
	var inst any
	if err := doc.Decode(&inst); err != nil {
		errs.Addf(model.Pos{File: file, Line: 1, Col: 1}, "%v", err)
		return nil, errs
	}
	inst = jsonable(inst)
	if err := sch.Validate(inst); err != nil {
		errs = append(errs, schemaErrors(file, err, at)...)
		return nil, errs
	}
	var m manifest
	if err := doc.Decode(&m); err != nil {
		errs.Addf(model.Pos{File: file, Line: 1, Col: 1}, "%v", err)
		return nil, errs
	}
	if want := path.Base(dir); m.Name != want {
		errs.Addf(at["/name"], "name: %q must equal its folder name %q", m.Name, want)
	}
	for i := range m.Handlers {
		m.Handlers[i].Field = fmt.Sprintf("handlers[%d]", i)
		m.Handlers[i].Pos = at[fmt.Sprintf("/handlers/%d/phase", i)]
		errs = append(errs, checkWatch(m.Handlers[i], fmt.Sprintf("/handlers/%d", i), at)...)
		errs = append(errs, checkTimeout(&m.Handlers[i], fmt.Sprintf("/handlers/%d", i), at)...)
	}
	p := &Plugin{
		Dir: dir, Name: m.Name, Version: m.Version, Description: m.Description,
		License: m.License, Homepage: m.Homepage, Keywords: m.Keywords,
		Author:      Author{Name: m.Author.Name, Email: m.Author.Email, URL: m.Author.URL},
		Handlers:    m.Handlers,
		Harnesses:   m.Harnesses,
		Requires:    m.Requires,
		RequiresPos: at["/requires"],
		Overrides:   map[string]Override{},
	}
	for _, h := range m.Harnesses {
		if a.Harness(h) == nil {
			errs.Addf(at["/harnesses"], "harnesses: unknown harness %q", h)
		}
	}
	for id, o := range m.Overrides {
		if a.Harness(id) == nil {
			errs.Addf(at["/overrides/"+id], "overrides: unknown harness %q", id)
		}
		for i := range o.Handlers {
			o.Handlers[i].Field = fmt.Sprintf("overrides.%s.handlers[%d]", id, i)
			o.Handlers[i].Pos = at[fmt.Sprintf("/overrides/%s/handlers/%d/phase", id, i)]
			errs = append(errs, checkWatch(o.Handlers[i], fmt.Sprintf("/overrides/%s/handlers/%d", id, i), at)...)
			errs = append(errs, checkTimeout(&o.Handlers[i], fmt.Sprintf("/overrides/%s/handlers/%d", id, i), at)...)
		}
		if h := a.Harness(id); h != nil && o.Manifest != nil {
			errs = append(errs, checkManifest(a, h, o.Manifest, "/overrides/"+id+"/manifest", at)...)
		}
		if o.SkipReason != "" && !o.Skip {
			errs.Addf(at["/overrides/"+id+"/skipReason"], "overrides.%s.skipReason: says why a harness is skipped, but skip: true is not set", id)
		}
		p.Overrides[id] = Override{Skip: o.Skip, SkipReason: o.SkipReason, Handlers: o.Handlers, Manifest: o.Manifest}
	}
	for name, s := range m.MCPServers {
		p.MCPServers = append(p.MCPServers, MCPServer{Name: name, Command: s.Command, Args: s.Args, Env: s.Env, Pos: at["/mcpServers/"+pointerToken(name)]})
	}
	sort.Slice(p.MCPServers, func(i, j int) bool { return p.MCPServers[i].Name < p.MCPServers[j].Name })
	for i, f := range m.Files {
		ptr := fmt.Sprintf("/files/%d", i)
		if msg := badPath(f); msg != "" {
			errs.Addf(at[ptr], "files[%d]: %s", i, msg)
			continue
		}
		fs, err := readTree(root, dir, f)
		if err != nil {
			if os.IsNotExist(errors.Unwrap(errors.Unwrap(err))) || os.IsNotExist(err) {
				errs.Addf(at[ptr], "files[%d]: %q does not exist in %s", i, f, dir)
			} else {
				errs.Addf(at[ptr], "files[%d]: %v", i, err)
			}
			continue
		}
		p.Files = append(p.Files, fs...)
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
	p.Skills, errs = loadSkills(root, dir, p, errs)
	p.Commands, errs = loadCommands(root, dir, errs)
	for i, h := range m.Handlers {
		errs = append(errs, checkRefs(root, p, h, fmt.Sprintf("/handlers/%d/command", i), at)...)
	}
	for id, o := range m.Overrides {
		for i, h := range o.Handlers {
			errs = append(errs, checkRefs(root, p, h, fmt.Sprintf("/overrides/%s/handlers/%d/command", id, i), at)...)
		}
	}
	errs = append(errs, checkMCPFiles(root, p, a, at)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// checkWatch holds a handler's watch list to what it can mean: files of
// the project, on phase fileChanged. ptr is the handler's JSON pointer.
func checkWatch(h Handler, ptr string, at map[string]model.Pos) model.Errors {
	var errs model.Errors
	if len(h.Watch) == 0 {
		return nil
	}
	if h.Phase != "fileChanged" {
		errs.Addf(at[ptr+"/watch"], "%s.watch: only a handler of phase fileChanged watches files, not %s", h.Field, h.Phase)
		return errs
	}
	for i, w := range h.Watch {
		at, field := at[fmt.Sprintf("%s/watch/%d", ptr, i)], fmt.Sprintf("%s.watch[%d]", h.Field, i)
		switch {
		case strings.HasPrefix(w, "/") || filepath.IsAbs(w) || w == "~" || strings.HasPrefix(w, "~/"):
			errs.Addf(at, "%s: %q: name a file relative to the project's root, not an absolute path", field, w)
		case strings.Contains(w, `\`):
			errs.Addf(at, "%s: %q: separate folders with /", field, w)
		case slices.Contains(strings.Split(w, "/"), "..") || path.Clean(w) == ".":
			errs.Addf(at, "%s: %q: name a file inside the project", field, w)
		case strings.ContainsAny(w, "*?["):
			errs.Addf(at, "%s: %q: patterns are not supported; name each file", field, w)
		}
	}
	return errs
}

// checkTimeout holds a handler's timeout to the rule the hook reads it by
// (hook.ParseTimeout): one it would refuse at run time would make every
// handler of that phase in the bundle fail open. It sets h.Limit.
func checkTimeout(h *Handler, ptr string, at map[string]model.Pos) model.Errors {
	var errs model.Errors
	if h.Timeout == "" {
		return nil
	}
	d, err := hook.ParseTimeout(h.Timeout)
	if err != nil {
		errs.Addf(at[ptr+"/timeout"], "%s.timeout: %v", h.Field, err)
		return errs
	}
	h.Limit = d
	return nil
}

// checkRefs holds the bundle files a handler's command names through
// $SITTER_PLUGIN_DIR (rplugin.HandlerRefs, as sitter plugin verify reads
// them) to what every bundle of p ships (shippedFiles). A layout that puts
// skills elsewhere is left to verify.
func checkRefs(root string, p *Plugin, h Handler, ptr string, at map[string]model.Pos) model.Errors {
	var errs model.Errors
	pos, field := at[ptr], h.Field+".command"
	shipped := shippedFiles(p)
	own := map[string]bool{}
	for _, f := range p.Files {
		own[f.Path] = true
	}
	for _, sk := range p.Skills {
		for _, f := range sk.Files {
			own[f.Path] = true
		}
	}
	for _, w := range strings.FieldsFunc(h.Command, func(r rune) bool { return strings.ContainsRune(" \t\n;&|()<>`", r) }) {
		w = strings.Trim(w, `"'`)
		if w == "" || strings.ContainsAny(w, "$*?[") || path.IsAbs(w) {
			continue
		}
		if rel := path.Clean(w); own[rel] {
			errs.Addf(pos, "%s: %s is looked up from the session's folder (the project), not the bundle: write \"$SITTER_PLUGIN_DIR/%s\"", field, w, rel)
		}
	}
	errs = append(errs, refProblems(root, p, shipped, h.Command, pos, field, func(r rplugin.HandlerRef) bool { return r.Runs })...)
	return errs
}

// refProblems reports each bundle file s names through $SITTER_PLUGIN_DIR
// that leaves the bundle or that the bundles do not ship as needed
// (fileProblem); runs says whether a file is run, not only read.
func refProblems(root string, p *Plugin, shipped map[string]os.FileMode, s string, pos model.Pos, field string, runs func(rplugin.HandlerRef) bool) model.Errors {
	var errs model.Errors
	for _, r := range rplugin.HandlerRefs(s) {
		if r.Path == "" {
			errs.Addf(pos, "%s: %q leaves the bundle", field, r.Ref)
		} else if msg := fileProblem(root, p, shipped, r.Path, runs(r)); msg != "" {
			errs.Addf(pos, "%s: %s", field, msg)
		}
	}
	return errs
}

// shippedFiles are the paths (files and their folders) every bundle of p
// has: its files (or a folder of them), its skills and commands as written
// in its source, and what the generator writes (launcher, handler table,
// marker, README).
func shippedFiles(p *Plugin) map[string]os.FileMode {
	shipped := map[string]os.FileMode{}
	add := func(rel string, mode os.FileMode) {
		shipped[rel] = mode
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			shipped[d] = os.ModeDir
		}
	}
	for _, f := range model.BundleFiles {
		add(f, 0o644)
	}
	add(rplugin.Launcher, 0o755)
	for _, f := range p.Files {
		add(f.Path, f.Mode)
	}
	for _, sk := range p.Skills {
		for _, f := range sk.Files {
			add(f.Path, f.Mode)
		}
	}
	for _, c := range p.Commands {
		add("commands/"+c.Name+".md", 0o644)
	}
	return shipped
}

// fileProblem says what is wrong with rel, a bundle path something of p
// names (runs: it is run, not read), given what the bundles ship; "" when
// nothing is.
func fileProblem(root string, p *Plugin, shipped map[string]os.FileMode, rel string, runs bool) string {
	mode, ok := shipped[rel]
	switch {
	case !ok:
		if _, err := os.Stat(filepath.Join(root, p.Dir, filepath.FromSlash(rel))); err == nil {
			return fmt.Sprintf("%s is in %s but not in files:, so no bundle ships it: add it to files", rel, p.Dir)
		}
		return fmt.Sprintf("%s is not a file of %s: add it there and to files", rel, p.Dir)
	case !runs:
		// A file read: being there is enough.
	case mode.IsDir():
		return fmt.Sprintf("%s is a folder, which the command cannot run", rel)
	case mode&0o100 == 0:
		return fmt.Sprintf("%s is not executable, and the command runs it: chmod +x %s/%s", rel, p.Dir, rel)
	}
	return ""
}

// checkMCPFiles holds what an MCP server's command, args and env name of
// its plugin to what the generator rewrites (emit: the layout's mcpRoot
// for $SITTER_PLUGIN_DIR): a file named through $SITTER_PLUGIN_DIR/… must
// be one every bundle of p ships, as for a handler's command (checkRefs);
// a file of the plugin named by a relative path (./server.js), which the
// harness looks up from its own working folder, or through one harness's
// plugin-root variable (${CLAUDE_PLUGIN_ROOT}/…), which the others do not
// expand, is an error that says to write $SITTER_PLUGIN_DIR/… instead.
// Anything else (npx, /usr/bin/python3, a package name, a project path)
// is left alone.
func checkMCPFiles(root string, p *Plugin, a *model.Atlas, at map[string]model.Pos) model.Errors {
	var errs model.Errors
	roots := map[string]string{} // a layout's root variable + "/" → its layout
	for _, l := range a.Layouts {
		if l.Hooks != nil && strings.HasPrefix(l.Hooks.RootVar, "$") {
			roots[l.Hooks.RootVar+"/"] = l.ID
		}
		if l.MCPRoot != nil {
			roots[l.MCPRoot.Var+"/"] = l.ID
		}
	}
	shipped := shippedFiles(p)
	check := func(w, ptr, field string, runs bool) {
		if model.NamesPluginDir(w) {
			errs = append(errs, refProblems(root, p, shipped, w, at[ptr], field, func(rplugin.HandlerRef) bool { return runs })...)
			return
		}
		for pre, lay := range roots {
			if rest, ok := strings.CutPrefix(w, pre); ok {
				errs.Addf(at[ptr], "%s: %s is the plugin-root variable of %s bundles only: write \"$SITTER_PLUGIN_DIR/%s\", which each bundle gets as its harness's own", field, strings.TrimSuffix(pre, "/"), lay, rest)
				return
			}
		}
		if w == "" || strings.ContainsAny(w, "$*?[") || path.IsAbs(w) {
			return
		}
		rel := path.Clean(w)
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return
		}
		if _, err := os.Stat(filepath.Join(root, p.Dir, filepath.FromSlash(rel))); err == nil {
			errs.Addf(at[ptr], "%s: %s is looked up from the harness's working folder, not the bundle: write \"$SITTER_PLUGIN_DIR/%s\"", field, w, rel)
		}
	}
	for _, s := range p.MCPServers {
		base := "/mcpServers/" + pointerToken(s.Name)
		check(s.Command, base+"/command", "mcpServers."+s.Name+".command", true)
		for i, arg := range s.Args {
			check(arg, fmt.Sprintf("%s/args/%d", base, i), fmt.Sprintf("mcpServers.%s.args[%d]", s.Name, i), false)
		}
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			check(s.Env[k], base+"/env/"+pointerToken(k), "mcpServers."+s.Name+".env."+k, false)
		}
	}
	return errs
}

// checkManifest holds an override's manifest keys (ptr is its JSON
// pointer) to what the generator can merge them into for harness h: the
// manifest of its layout, a JSON file that takes overrides, and, where
// the layout names the manifest's schema (runtime/plugin/schemas), each
// key's value by that schema (its type; a closed manifest's unknown
// keys), and a value the layout requires kept. Not checked here: a key
// naming bundle files pointing at one that exists (sitter plugin verify
// does), and keys an open schema does not describe.
func checkManifest(a *model.Atlas, h *model.Harness, keys map[string]any, ptr string, at map[string]model.Pos) model.Errors {
	var errs model.Errors
	field := strings.ReplaceAll(strings.TrimPrefix(ptr, "/"), "/", ".")
	var lay *model.Layout
	if h.Packaging.Format.Name != "" {
		lay = a.Layout(h.Packaging.Format.Name)
	}
	var file *model.LayoutFile
	if lay != nil {
		for _, f := range lay.Files {
			if f.Path.Name == lay.Manifest.Path.Name && f.Each.Name == "" {
				file = f
			}
		}
	}
	switch {
	case lay == nil:
		errs.Addf(at[ptr], "%s: the atlas has no plugin packaging for %s (%s), so no bundle has a manifest to merge these keys into", field, h.DisplayName, h.File)
		return errs
	case lay.Manifest.Path.Name == "":
		errs.Addf(at[ptr], "%s: a %s bundle (layout %s) has no manifest to merge these keys into", field, h.DisplayName, lay.ID)
		return errs
	case !lay.Manifest.Overrides:
		errs.Addf(at[ptr], "%s: the %s layout writes %s itself and takes no manifest overrides (overrides: false in the atlas)", field, lay.ID, lay.Manifest.Path.Name)
		return errs
	case file == nil || file.JSON == nil:
		errs.Addf(at[ptr], "%s: %s of the %s layout is not a JSON file the generator merges keys into", field, lay.Manifest.Path.Name, lay.ID)
		return errs
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var sch *rplugin.Schema
	if lay.Manifest.Schema != "" {
		var err error
		if sch, err = rplugin.BundleSchema(lay.Manifest.Schema); err != nil {
			errs.Addf(at[ptr], "%s: %v", field, err)
			return errs
		}
	}
	for _, k := range names {
		kptr := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
		pos, kfield := at[kptr], field+"."+k
		data, err := json.Marshal(map[string]any{k: keys[k]})
		if err != nil {
			errs.Addf(pos, "%s: %v", kfield, err)
			continue
		}
		if sch != nil {
			probs, err := sch.ValidateJSON(data)
			if err != nil {
				errs.Addf(pos, "%s: %v", kfield, err)
				continue
			}
			own := kptr[len(ptr):]
			for _, pr := range probs {
				if strings.HasPrefix(pr, own+":") || strings.HasPrefix(pr, own+"/") || pr == fmt.Sprintf("/: unknown field %q", k) {
					errs.Addf(pos, "%s: %s (schema %s of %s)", kfield, strings.TrimPrefix(pr, "/: "), lay.Manifest.Schema, lay.Manifest.Path.Name)
				}
			}
		}
		var doc map[string]any
		json.Unmarshal(data, &doc)
		for _, r := range lay.Manifest.Requires {
			if strings.SplitN(r.Key, ".", 2)[0] != k {
				continue
			}
			if !slices.Contains(rplugin.ManifestRefs(doc, r.Key), r.Value) {
				errs.Addf(pos, "%s: drops %s %q, which the manifest must carry (%s)", kfield, r.Key, r.Value, r.Why)
			}
		}
	}
	return errs
}

// badPath rejects absolute paths and paths that leave the plugin folder.
func badPath(p string) string {
	if p == "" {
		return "empty path"
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || strings.Contains(p, `\`) {
		return fmt.Sprintf("%q: absolute paths are not allowed; name a file inside the plugin folder", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Sprintf("%q: path traversal (..) is not allowed", p)
		}
	}
	return ""
}

// readTree reads a file or a folder (recursively) of the plugin source.
func readTree(root, dir, rel string) ([]File, error) {
	base := filepath.Join(root, dir)
	var out []File
	err := filepath.WalkDir(filepath.Join(base, rel), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s: symlinks are not allowed", p)
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(base, p)
		mode := os.FileMode(0o644)
		if fi.Mode()&0o111 != 0 {
			mode = 0o755
		}
		out = append(out, File{Path: filepath.ToSlash(r), Data: data, Mode: mode})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	return out, nil
}

func loadSkills(root, dir string, p *Plugin, errs model.Errors) ([]Skill, model.Errors) {
	entries, err := os.ReadDir(filepath.Join(root, dir, "skills"))
	if err != nil {
		return nil, errs
	}
	var skills []Skill
	for _, e := range entries {
		file := dir + "/skills/" + e.Name() + "/SKILL.md"
		pos := model.Pos{File: file, Line: 1, Col: 1}
		if !e.IsDir() {
			errs.Addf(model.Pos{File: dir + "/skills/" + e.Name()}, "want a folder skills/<name>/ holding SKILL.md")
			continue
		}
		if !slug.MatchString(e.Name()) {
			errs.Addf(pos, "skill name %q is not a slug (lowercase letters, digits, dashes)", e.Name())
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			errs.Addf(pos, "missing SKILL.md")
			continue
		}
		fm, _, ferr := frontMatter(src)
		if ferr != nil {
			errs.Addf(pos, "%v", ferr)
			continue
		}
		if fm["name"] != e.Name() {
			errs.Addf(model.Pos{File: file, Line: 2, Col: 1}, "front matter name: %q must equal the folder name %q", fm["name"], e.Name())
		}
		if fm["description"] == "" {
			errs.Addf(model.Pos{File: file, Line: 2, Col: 1}, "front matter description: required (harnesses use it to decide when to load the skill)")
		}
		files, err := readTree(root, dir, "skills/"+e.Name())
		if err != nil {
			errs.Addf(pos, "%v", err)
			continue
		}
		skills = append(skills, Skill{Name: e.Name(), Description: fm["description"], Files: files})
	}
	return skills, errs
}

func loadCommands(root, dir string, errs model.Errors) ([]Command, model.Errors) {
	entries, err := os.ReadDir(filepath.Join(root, dir, "commands"))
	if err != nil {
		return nil, errs
	}
	var cmds []Command
	for _, e := range entries {
		file := dir + "/commands/" + e.Name()
		pos := model.Pos{File: file, Line: 1, Col: 1}
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if e.IsDir() || !ok {
			errs.Addf(pos, "want commands/<name>.md")
			continue
		}
		if !slug.MatchString(name) {
			errs.Addf(pos, "command name %q is not a slug (lowercase letters, digits, dashes)", name)
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			errs.Addf(pos, "%v", err)
			continue
		}
		fm, body, ferr := frontMatter(src)
		if ferr != nil {
			errs.Addf(pos, "%v", ferr)
			continue
		}
		if strings.TrimSpace(body) == "" {
			// Gemini CLI refuses a TOML command without its prompt.
			errs.Addf(pos, "no prompt: a command is the text after its front matter, and this one has none")
			continue
		}
		cmds = append(cmds, Command{Name: name, Description: fm["description"], Prompt: body, Source: src})
	}
	return cmds, errs
}

// frontMatter splits `---\nkey: value\n---\nbody`. A file without front
// matter has an empty map.
func frontMatter(src []byte) (map[string]string, string, error) {
	s := strings.ReplaceAll(string(src), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return map[string]string{}, s, nil
	}
	end := strings.Index(s[4:], "\n---")
	if end < 0 {
		return nil, "", fmt.Errorf("front matter: no closing ---")
	}
	head := s[4 : 4+end]
	body := strings.TrimPrefix(s[4+end+4:], "\n")
	fm := map[string]string{}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(head), &raw); err != nil {
		return nil, "", fmt.Errorf("front matter: %v", err)
	}
	for k, v := range raw {
		if s, ok := v.(string); ok {
			fm[k] = s
		}
	}
	return fm, body, nil
}

// positions records the position of every node by JSON pointer.
func positions(file string, n *yaml.Node, ptr string, at map[string]model.Pos) {
	at[ptr] = model.Pos{File: file, Line: n.Line, Col: n.Column}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := ptr + "/" + pointerToken(k.Value)
			positions(file, v, p, at)
			at[p] = model.Pos{File: file, Line: k.Line, Col: k.Column}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			positions(file, c, fmt.Sprintf("%s/%d", ptr, i), at)
		}
	}
}

// jsonable turns YAML's decoded values into JSON Schema instances.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}

var printer = message.NewPrinter(language.English)

// schemaErrors flattens a validation error into positioned leaf messages.
func schemaErrors(file string, err error, at map[string]model.Pos) model.Errors {
	ve, ok := err.(*jsonschema.ValidationError)
	var out model.Errors
	if !ok {
		out.Addf(model.Pos{File: file, Line: 1, Col: 1}, "%v", err)
		return out
	}
	used := map[string]bool{}
	var walk func(e *jsonschema.ValidationError, up []string)
	walk = func(e *jsonschema.ValidationError, up []string) {
		// A key's own error points at the key, not at its object:
		// members' pointers hold their key's position (see positions).
		switch k := e.ErrorKind.(type) {
		case *kind.AdditionalProperties:
			for _, name := range k.Properties {
				loc := append(slices.Clip(e.InstanceLocation), name)
				out.Addf(posOf(file, at, loc), "%s: unknown key %s (not allowed here)", fieldName(loc), quote(name))
			}
			return
		case *kind.PropertyNames:
			loc := keyLoc(at, up, len(e.InstanceLocation), k.Property, used)
			var why []string
			for _, c := range leaves(e) {
				msg := c.ErrorKind.LocalizedString(printer)
				if len(loc) == 2 && loc[0] == "overrides" && strings.HasPrefix(msg, "value must be one of") {
					// The harness list is long and grows; say where it lives.
					msg = "not a harness of the atlas (see atlas/harnesses/ or generated/schema/plugin.json)"
				}
				why = append(why, msg)
			}
			out.Addf(posOf(file, at, loc), "%s: key %s is not allowed here: %s", fieldName(loc), quote(k.Property), strings.Join(why, "; "))
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c, e.InstanceLocation)
			}
			return
		}
		field := "(top level)"
		if len(e.InstanceLocation) > 0 {
			field = fieldName(e.InstanceLocation)
		}
		pos := posOf(file, at, e.InstanceLocation)
		msg := e.ErrorKind.LocalizedString(printer)
		if en, ok := e.ErrorKind.(*kind.Enum); ok && strings.HasSuffix(field, ".phase") {
			// The phase list is long; say the likely one and where the
			// list lives instead.
			got, _ := en.Got.(string)
			phases := make([]string, 0, len(en.Want))
			for _, w := range en.Want {
				if p, ok := w.(string); ok {
					phases = append(phases, p)
				}
			}
			msg = fmt.Sprintf("%q is not a canonical phase", got)
			if p := adapter.Closest(got, phases); p != "" {
				msg += "; did you mean " + p + "?"
			}
			msg += " (see atlas/phases.cue or generated/schema/plugin.json)"
		}
		if _, ok := e.ErrorKind.(*kind.Type); ok && strings.HasSuffix(field, ".timeout") {
			// timeout: 5 is a number; the unit is part of the value.
			msg += `; write it with its unit, as a string such as "10s" or "1500ms"`
		}
		if t, ok := e.ErrorKind.(*kind.Pattern); ok && strings.HasSuffix(field, ".timeout") {
			// Say why, in the hook's words where it would refuse it too.
			if _, err := hook.ParseTimeout(t.Got); err != nil {
				msg = err.Error()
			} else {
				msg = fmt.Sprintf("%q: want a number above zero and ms, s or m (like 10s or 1500ms)", t.Got)
			}
		}
		out.Addf(pos, "%s", field+": "+msg)
	}
	walk(ve, nil)
	return out
}

// posOf is where the instance at loc is: a member's key, an item, or the
// document's start when it is not known.
func posOf(file string, at map[string]model.Pos, loc []string) model.Pos {
	ptr := ""
	for _, s := range loc {
		ptr += "/" + pointerToken(s)
	}
	if pos, ok := at[ptr]; ok {
		return pos
	}
	return model.Pos{File: file, Line: 1, Col: 1}
}

// keyLoc is the location of the key name that a propertyNames error
// names. jsonschema/v6 gives such an error an InstanceLocation whose
// backing array later validations overwrite: only its length (depth) can
// be trusted. So take the members named name at that depth under up (the
// nearest enclosing error's location, which is a copy), and the first not
// yet claimed by an earlier error.
func keyLoc(at map[string]model.Pos, up []string, depth int, name string, used map[string]bool) []string {
	prefix := ""
	for _, s := range up {
		prefix += "/" + pointerToken(s)
	}
	var best string
	for ptr, pos := range at {
		toks := strings.Split(ptr, "/")[1:]
		if ptr == "" || len(toks) != depth+1 || toks[depth] != pointerToken(name) || used[ptr] || !strings.HasPrefix(ptr, prefix+"/") {
			continue
		}
		if b, ok := at[best]; best == "" || !ok || pos.Line < b.Line || pos.Line == b.Line && pos.Col < b.Col {
			best = ptr
		}
	}
	if best == "" {
		return append(slices.Clip(up), name)
	}
	used[best] = true
	var loc []string
	for _, t := range strings.Split(best, "/")[1:] {
		loc = append(loc, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	return loc
}

// pointerToken escapes a key as one JSON pointer token (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// leaves are an error's innermost causes (itself when it has none).
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func quote(s string) string { return "'" + s + "'" }

// fieldName renders an instance location as handlers[0].phase.
func fieldName(loc []string) string {
	var b strings.Builder
	for i, s := range loc {
		if s != "" && s[0] >= '0' && s[0] <= '9' {
			fmt.Fprintf(&b, "[%s]", s)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlErrPos places a YAML syntax error of src at its line and, with a
// hint, says what to do about the one a plugin author meets most: a
// plain value holding ": " (echo of JSON with a space after a colon),
// which YAML reads as a second key. The column is then that colon's.
func yamlErrPos(file string, src []byte, err error) (model.Pos, string) {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return model.Pos{File: file, Line: 1, Col: 1}, ""
	}
	var line int
	fmt.Sscan(m[1], &line)
	pos := model.Pos{File: file, Line: line, Col: 1}
	if !strings.Contains(err.Error(), "mapping values are not allowed") {
		return pos, ""
	}
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return pos, ""
	}
	text := lines[line-1]
	key := strings.Index(text, ": ")
	if key < 0 {
		return pos, ""
	}
	if i := strings.Index(text[key+2:], ": "); i >= 0 {
		pos.Col = key + 2 + i + 1
	}
	return pos, ` (a plain value cannot hold ": "; quote the whole value in single quotes, doubling each ' inside, or write "|" and the value indented on the next line)`
}
