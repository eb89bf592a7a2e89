package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/jsonpos"
)

// Problem is one thing wrong with a bundle.
type Problem struct {
	Bundle string `json:"bundle"`
	File   string `json:"file"`           // slash path inside the bundle
	Line   int    `json:"line,omitempty"` // where in File, when known
	Col    int    `json:"col,omitempty"`
	Msg    string `json:"problem"`
}

func (p Problem) String() string {
	at := filepath.ToSlash(p.Bundle) + "/" + p.File
	if p.Line > 0 {
		at += fmt.Sprintf(":%d:%d", p.Line, p.Col)
	}
	return at + ": " + p.Msg
}

// verifier collects the problems of one bundle.
type verifier struct {
	dir      string
	probs    []Problem
	d        *adapter.Descriptor
	f        format
	marker   Marker
	jsonDocs map[string]any // parsed JSON files by slash path
}

func (v *verifier) add(file, format string, args ...any) {
	v.probs = append(v.probs, Problem{Bundle: v.dir, File: file, Msg: fmt.Sprintf(format, args...)})
}

func (v *verifier) abs(rel string) string {
	return filepath.Join(v.dir, filepath.FromSlash(rel))
}

// Verify checks one bundle: its marker, its format's files and their
// schemas, every path its manifest names, its hook registrations (native
// events of the harness, calling the bundle's launcher), its scripts
// (shebang, run bits) and its handler table (phases the harness has,
// timeouts the hook accepts, and the bundle files its commands name
// through $SITTER_PLUGIN_DIR: there, and executable where the command
// runs them).
func Verify(dir string, reg *adapter.Registry) []Problem {
	v := &verifier{dir: filepath.Clean(dir), jsonDocs: map[string]any{}}
	v.files()
	if !v.checkMarker(reg) {
		return v.sorted()
	}
	v.checkManifest()
	v.checkHooks()
	v.checkHandlers()
	return v.sorted()
}

func (v *verifier) sorted() []Problem {
	sort.SliceStable(v.probs, func(i, j int) bool { return v.probs[i].File < v.probs[j].File })
	return v.probs
}

// files parses every JSON file and checks every script.
func (v *verifier) files() {
	err := filepath.WalkDir(walkRoot(v.dir), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(v.dir, p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			return nil
		}
		if !e.Type().IsRegular() {
			v.add(rel, "not a regular file")
			return nil
		}
		if strings.HasSuffix(rel, ".json") {
			data, err := os.ReadFile(p)
			if err != nil {
				v.add(rel, "%v", err)
				return nil
			}
			doc, err := decodeStd(data)
			if pe := (*jsonpos.Error)(nil); errors.As(err, &pe) {
				v.probs = append(v.probs, Problem{Bundle: v.dir, File: rel, Line: pe.Line, Col: pe.Col, Msg: pe.Msg})
				return nil
			}
			if err != nil {
				v.add(rel, "%v", err)
				return nil
			}
			v.jsonDocs[rel] = doc
		}
		if strings.HasSuffix(rel, ".sh") || strings.HasPrefix(rel, "bin/") {
			v.checkScript(rel)
		}
		return nil
	})
	if err != nil {
		v.add("", "%v", err)
	}
}

func (v *verifier) checkScript(rel string) {
	fi, err := os.Stat(v.abs(rel))
	if err != nil {
		v.add(rel, "%v", err)
		return
	}
	if fi.Mode().Perm()&0o100 == 0 {
		v.add(rel, "not executable (mode %04o; want the run bits, e.g. 0755)", fi.Mode().Perm())
	}
	f, err := os.Open(v.abs(rel))
	if err != nil {
		v.add(rel, "%v", err)
		return
	}
	defer f.Close()
	head := make([]byte, 2)
	if n, _ := f.Read(head); n < 2 || !bytes.Equal(head, []byte("#!")) {
		v.add(rel, `does not start with "#!"`)
	}
}

func (v *verifier) validate(rel, schema string) (map[string]any, bool) {
	doc, ok := v.jsonDocs[rel]
	if !ok {
		if _, err := os.Stat(v.abs(rel)); err != nil {
			v.add(rel, "missing")
		}
		return nil, false // unparsable: already reported
	}
	if schema == "" {
		m, ok := doc.(map[string]any)
		if !ok {
			v.add(rel, "not a JSON object")
		}
		return m, ok
	}
	s, err := BundleSchema(schema)
	if err != nil {
		v.add(rel, "%v", err)
		return nil, false
	}
	errs := s.Validate(doc)
	for _, e := range errs {
		v.add(rel, "%s (schema %s)", e, schema)
	}
	m, _ := doc.(map[string]any)
	return m, len(errs) == 0
}

func (v *verifier) checkMarker(reg *adapter.Registry) bool {
	m, ok := v.validate(MarkerFile, "marker")
	if m == nil {
		return false
	}
	data, _ := json.Marshal(m)
	if err := json.Unmarshal(data, &v.marker); err != nil || !ok {
		if err != nil {
			v.add(MarkerFile, "%v", err)
		}
		return false
	}
	d, _, err := reg.Resolve(v.marker.Harness)
	if err != nil {
		v.add(MarkerFile, "harness: %v", err)
		return false
	}
	v.d = d
	if d.Packaging.Format != v.marker.Format {
		v.add(MarkerFile, "format %q, but the atlas packages %s as %q", v.marker.Format, d.ID, d.Packaging.Format)
		return false
	}
	v.f = formatOf(d)
	for _, e := range v.marker.Hooks {
		if _, ok := d.Event(e); !ok {
			v.add(MarkerFile, "hooks: %q is not a native event of %s", e, d.ID)
		} else if v.f.hooksFile == "" {
			v.replacing(MarkerFile, "hooks: ", e)
		}
	}
	if _, err := os.Stat(v.abs(Launcher)); err != nil {
		v.add(Launcher, "missing: every hook runs it")
	}
	return true
}

// refPath checks a path a manifest names, relative to the bundle root.
func (v *verifier) refPath(file, field, ref string, wantDir bool) (string, bool) {
	clean := path.Clean(strings.TrimPrefix(ref, "./"))
	if path.IsAbs(ref) || clean == ".." || strings.HasPrefix(clean, "../") {
		v.add(file, "%s: %q leaves the bundle", field, ref)
		return "", false
	}
	fi, err := os.Stat(v.abs(clean))
	switch {
	case err != nil:
		v.add(file, "%s: %q does not exist: %s", field, ref, v.fixMissing(clean))
		return "", false
	case wantDir && !fi.IsDir():
		v.add(file, "%s: %q is not a folder", field, ref)
		return "", false
	}
	return clean, true
}

// fixMissing says how to put back rel, a missing file a manifest names:
// one the layout writes comes back by regenerating the bundle; any other
// is the plugin's own (a manifest override names it), which a bundle has
// only when the plugin's files: lists it.
func (v *verifier) fixMissing(rel string) string {
	written := []string{v.f.manifest, v.f.hooksFile, v.f.skills, v.f.mcpFile, path.Dir(v.f.commands)}
	for _, r := range v.f.required {
		written = append(written, r, path.Dir(r))
	}
	if slices.Contains(written, rel) {
		return "the generator writes it; regenerate the bundle (make generate)"
	}
	return fmt.Sprintf("add it to files: in plugins-src/%s/plugin.yaml, so that every bundle ships it, and run make generate", v.marker.Plugin)
}

// lookup is the value at a dotted key path of a manifest ("pi.skills"),
// nil when any step is missing or not an object.
func lookup(m map[string]any, key string) any {
	var cur any = m
	for _, k := range strings.Split(key, ".") {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = o[k]
	}
	return cur
}

// ManifestRefs are the strings at a dotted key path of a manifest: the
// string, or the strings of the list (the generator checks an override
// against a layout's required values with it).
func ManifestRefs(m map[string]any, key string) []string { return refs(lookup(m, key)) }

// refs are the string paths of a manifest field (a string or a list).
func refs(val any) []string {
	switch t := val.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func (v *verifier) checkManifest() {
	for _, req := range v.f.required {
		if _, err := os.Stat(v.abs(req)); err != nil {
			v.add(req, "missing (required by the %s format)", v.marker.Format)
		}
	}
	if v.f.manifest == "" {
		return // the harness reads no manifest (a folder of hook scripts)
	}
	m, _ := v.validate(v.f.manifest, v.f.schema)
	if m == nil {
		return
	}
	mf := v.f.manifest
	skillDirs := map[string]bool{}
	if s := v.f.skills; s != "" {
		if fi, err := os.Stat(v.abs(s)); err == nil && fi.IsDir() {
			skillDirs[s] = true // where the layout puts skills, named or not
		}
	}
	for _, p := range v.f.paths {
		for _, ref := range ManifestRefs(m, p.Key) {
			if strings.ContainsAny(ref, "*?[") || strings.HasPrefix(ref, "!") {
				continue // a glob or an exclusion, not a path
			}
			rel, ok := v.refPath(mf, p.Key, ref, p.Folder)
			if ok && p.Skills {
				skillDirs[rel] = true
			}
		}
	}
	for _, r := range v.f.requires {
		found := false
		for _, s := range ManifestRefs(m, r.Key) {
			found = found || s == r.Value
		}
		if !found {
			v.add(mf, "%s: want %q (%s)", r.Key, r.Value, r.Why)
		}
	}
	dirs := make([]string, 0, len(skillDirs))
	for d := range skillDirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		entries, err := os.ReadDir(v.abs(dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			skill := path.Join(dir, e.Name(), "SKILL.md")
			if fi, err := os.Stat(v.abs(skill)); err != nil || !fi.Mode().IsRegular() {
				v.add(skill, "missing: every skill folder needs its SKILL.md")
			}
		}
	}
}

func (v *verifier) checkHooks() {
	hf := v.f.hooksFile
	if hf == "" {
		return
	}
	if v.f.shape == ShapeScripts {
		v.checkScripts()
		return
	}
	if _, err := os.Stat(v.abs(hf)); errors.Is(err, fs.ErrNotExist) {
		if len(v.marker.Hooks) > 0 {
			v.add(hf, "missing, but %s lists hooks %v", MarkerFile, v.marker.Hooks)
		}
		return
	}
	m, _ := v.validate(hf, v.f.hooksSchema)
	if m == nil {
		return
	}
	hooks, _ := m["hooks"].(map[string]any)
	events := make([]string, 0, len(hooks))
	for e := range hooks {
		events = append(events, e)
	}
	sort.Strings(events)
	listed := map[string]bool{}
	for _, e := range v.marker.Hooks {
		listed[e] = true
	}
	for _, event := range events {
		if _, ok := v.d.Event(event); !ok {
			v.add(hf, "hooks.%s: %q is not a native event of %s (see 'sitter atlas show %s')", event, event, v.d.ID, v.d.ID)
		}
		v.replacing(hf, "hooks."+event+": ", event)
		if !listed[event] {
			v.add(hf, "hooks.%s: not listed in %s hooks", event, MarkerFile)
		}
		delete(listed, event)
		items, _ := hooks[event].([]any)
		for _, cmd := range stdCommands(items, v.f.shape, v.f.commandKey) {
			root, args, ok := launcherCommand(cmd)
			want := fmt.Sprintf(`"%s/%s" %s %s`, v.d.Packaging.RootVar, Launcher, v.d.ID, event)
			if !ok || root != v.d.Packaging.RootVar || len(args) != 2 || args[0] != v.d.ID || args[1] != event {
				v.add(hf, "hooks.%s: command %q does not run the bundle's launcher; want %s", event, cmd, want)
			}
		}
	}
	for _, e := range v.marker.Hooks {
		if listed[e] {
			v.add(hf, "hooks: %s lists %s, which is not registered here", MarkerFile, e)
		}
	}
}

// checkScripts checks a bundle of one hook script per event: each event
// the marker lists has its script, executable with a "#!" line, whose one
// launcher line runs the bundle's launcher for that event; every script
// in the folder is for a listed native event.
func (v *verifier) checkScripts() {
	tmpl := v.f.hooksFile
	listed := map[string]bool{}
	for _, event := range v.marker.Hooks {
		listed[event] = true
		rel := scriptPath(tmpl, event)
		data, err := os.ReadFile(v.abs(rel))
		if err != nil {
			v.add(rel, "missing, but %s lists hooks %v", MarkerFile, v.marker.Hooks)
			continue
		}
		v.checkScript(rel)
		v.replacing(rel, "", event)
		want := fmt.Sprintf(`"%s/%s" %s %s`, v.d.Packaging.RootVar, Launcher, v.d.ID, event)
		_, _, root, args, n := launcherLine(strings.Split(string(data), "\n"))
		switch {
		case n == 0:
			v.add(rel, "no line runs the bundle's launcher; want %s", want)
		case n > 1:
			v.add(rel, "%d lines run the bundle's launcher; want one: %s", n, want)
		case root != v.d.Packaging.RootVar || len(args) != 2 || args[0] != v.d.ID || args[1] != event:
			v.add(rel, "the launcher line does not run %s's %s hook; want %s", v.d.ID, event, want)
		}
	}
	dir := path.Dir(tmpl)
	entries, _ := os.ReadDir(v.abs(dir))
	for _, e := range entries {
		event := eventOf(tmpl, e.Name())
		if e.IsDir() || scriptPath(tmpl, event) != path.Join(dir, e.Name()) || listed[event] {
			continue
		}
		rel := path.Join(dir, e.Name())
		if _, ok := v.d.Event(event); !ok {
			v.add(rel, "%q is not a native event of %s (see 'sitter atlas show %s')", event, v.d.ID, v.d.ID)
			continue
		}
		v.add(rel, "a hook script for %s, which %s hooks does not list", event, MarkerFile)
	}
}

// replacing reports a registered event whose hook stands in for the
// harness's own work (atlas replaces): whatever sitter answers there, the
// harness takes it as that work's result (Claude Code's WorktreeCreate
// wants the new worktree's path), so no bundle may register it.
func (v *verifier) replacing(file, prefix, event string) {
	e, ok := v.d.Event(event)
	if !ok || e.Replaces == nil {
		return
	}
	v.add(file, "%s%s must not be registered: its hook replaces %s and must give back %s, which sitter's answer cannot say (see 'sitter atlas show %s')", prefix, event, e.Replaces.What, e.Replaces.Output, v.d.ID)
}

// stdCommands lists the commands of an event list decoded by encoding/json.
func stdCommands(items []any, shape, key string) []string {
	var out []string
	for _, it := range items {
		o, _ := it.(map[string]any)
		if shape == "versioned-list" {
			if s, ok := o[key].(string); ok {
				out = append(out, s)
			}
			continue
		}
		hs, _ := o["hooks"].([]any)
		for _, h := range hs {
			ho, _ := h.(map[string]any)
			if s, ok := ho[key].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func (v *verifier) checkHandlers() {
	m, _ := v.validate(HandlerTable, "handlers")
	if m == nil {
		return
	}
	phases := map[string]bool{}
	for _, e := range v.d.Events {
		phases[e.Phase] = true
	}
	hs, _ := m["handlers"].([]any)
	for i, h := range hs {
		ho, _ := h.(map[string]any)
		ph, _ := ho["phase"].(string)
		if ph != "" && !phases[ph] {
			v.add(HandlerTable, "/handlers/%d/phase: %s has no %q phase", i, v.d.ID, ph)
		}
		if t, ok := ho["timeout"].(string); ok {
			// The hook refuses the whole table at a bad one (hook.ParseTimeout).
			if _, err := hook.ParseTimeout(t); err != nil {
				v.add(HandlerTable, "/handlers/%d/timeout: %v", i, err)
			}
		}
		cmd, _ := ho["command"].(string)
		v.checkHandlerFiles(i, cmd)
	}
}

// pluginDirVars are how a handler command names its bundle's folder.
var pluginDirVars = []string{"$SITTER_PLUGIN_DIR/", "${SITTER_PLUGIN_DIR}/"}

// A HandlerRef is a file of its bundle that a handler command names
// through $SITTER_PLUGIN_DIR.
type HandlerRef struct {
	Ref  string // as written: "$SITTER_PLUGIN_DIR/scripts/x.sh"
	Path string // the clean slash path inside the bundle; "" when Ref leaves it
	Runs bool   // the command's first word: the file must be executable
}

// HandlerRefs lists the bundle files a handler command names through
// $SITTER_PLUGIN_DIR, in order; the folder itself and patterns are left
// out. sitter plugin verify checks them in a bundle, the generator
// against the plugin's source (gen/plugin): a missing one would be a
// handler that fails at every call, which fail-open ignores.
func HandlerRefs(cmd string) []HandlerRef {
	var out []HandlerRef
	head := strings.TrimPrefix(strings.TrimLeft(cmd, " \t"), `"`)
	for rest := cmd; ; {
		at, varLen := -1, 0
		for _, pv := range pluginDirVars {
			if j := strings.Index(rest, pv); j >= 0 && (at < 0 || j < at) {
				at, varLen = j, len(pv)
			}
		}
		if at < 0 {
			return out
		}
		ref := rest[at:]
		rel := rest[at+varLen:]
		if n := strings.IndexAny(rel, " \t\n\"';&|()<>`$\\"); n >= 0 {
			rel = rel[:n]
		}
		ref = ref[:varLen+len(rel)]
		rest = rest[at+varLen+len(rel):]
		if rel == "" || strings.ContainsAny(rel, "*?[") {
			continue // the folder itself, or a pattern
		}
		r := HandlerRef{Ref: ref, Runs: strings.HasPrefix(head, ref)}
		if clean := path.Clean(rel); clean != ".." && !strings.HasPrefix(clean, "../") {
			r.Path = clean
		}
		out = append(out, r)
	}
}

// checkHandlerFiles checks the bundle files a handler command names
// (HandlerRefs): each must be in the bundle, and the one the command runs
// executable.
func (v *verifier) checkHandlerFiles(i int, cmd string) {
	field := fmt.Sprintf("/handlers/%d/command", i)
	for _, r := range HandlerRefs(cmd) {
		if r.Path == "" {
			v.add(HandlerTable, "%s: %q leaves the bundle", field, r.Ref)
			continue
		}
		fi, err := os.Stat(v.abs(r.Path))
		switch {
		case err != nil:
			v.add(HandlerTable, "%s: missing file %s", field, r.Path)
		case !r.Runs:
			// An argument (a file the handler reads): being there is enough.
		case !fi.Mode().IsRegular():
			v.add(HandlerTable, "%s: %s is not a file the command can run", field, r.Path)
		case fi.Mode().Perm()&0o100 == 0:
			v.add(HandlerTable, "%s: %s is not executable (mode %04o; want the run bits, e.g. 0755)", field, r.Path, fi.Mode().Perm())
		}
	}
}

// VerifyPaths verifies every bundle under the paths (bundle dirs, plugin
// dirs, artifacts/). The error is for paths holding no bundle at all.
func VerifyPaths(paths []string, reg *adapter.Registry) (bundles []string, probs []Problem, err error) {
	bundles, err = FindBundles(paths)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range bundles {
		probs = append(probs, Verify(b, reg)...)
	}
	return bundles, probs, nil
}
