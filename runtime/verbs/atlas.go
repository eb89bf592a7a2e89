package verbs

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/adapter"
)

// newAtlasCmd is `sitter atlas list|show`: the generated descriptors.
func newAtlasCmd(e *env) *cobra.Command {
	var listJSON, showJSON bool
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the harness descriptors",
		Example: "  sitter atlas list\n  sitter atlas list --json",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			return code(atlasList(e.stdout, e.stderr, e.reg(), listJSON))
		},
	}
	jsonFlag(list, &listJSON, "print the descriptors as JSON")
	show := &cobra.Command{
		Use:   "show <harness>",
		Short: "Show a descriptor and how its name resolved",
		Long: `Show a harness descriptor: events, capabilities, evidence, its plugin
packaging (layout, bundle files, install command and target) and the
resolution trace of the name you typed (aliases such as claude work).`,
		Example:           "  sitter atlas show claude-code\n  sitter atlas show claude --json",
		Args:              nArgs(1, 1, "<harness>"),
		ValidArgsFunction: harnessNames(e),
		RunE: func(_ *cobra.Command, args []string) error {
			if _, _, err := e.reg().Resolve(args[0]); err != nil {
				return usageErr("%v", err) // a mistake on the command line
			}
			return code(atlasShow(e.stdout, e.stderr, e.reg(), args[0], showJSON))
		},
	}
	jsonFlag(show, &showJSON, "print the descriptor as JSON")
	return group(&cobra.Command{
		Use:     "atlas",
		Short:   "Show the harness descriptors the atlas generated",
		Example: "  sitter atlas list\n  sitter atlas show gemini-cli --json",
	}, list, show)
}

// listEntry is one line of `atlas list --json`.
type listEntry struct {
	ID          string   `json:"id"`
	DisplayName string   `json:"displayName"`
	Family      string   `json:"family"`
	Profile     string   `json:"profile"`
	Aliases     []string `json:"aliases"`
	Default     bool     `json:"default"`
	Events      int      `json:"events"`
}

func atlasList(stdout, stderr io.Writer, r *adapter.Registry, asJSON bool) int {
	if asJSON {
		list := make([]listEntry, 0, len(r.Descriptors))
		for _, d := range r.Descriptors {
			list = append(list, listEntry{d.ID, d.DisplayName, d.Family.ID, d.Profile, nonNil(d.Aliases), d.Default, len(d.Events)})
		}
		return writeJSON(stdout, stderr, list)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if len(r.Descriptors) > 0 {
		fmt.Fprintln(tw, "ID\tNAME\tFAMILY\tPROFILE\tALIASES\tEVENTS")
	}
	for _, d := range r.Descriptors {
		name := d.DisplayName
		if d.Default {
			name += " (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d events\n", d.ID, name, d.Family.ID, d.Profile, orDash(strings.Join(d.Aliases, ",")), len(d.Events))
	}
	tw.Flush()
	if len(r.Descriptors) == 0 {
		fmt.Fprintln(stderr, "sitter: the registry is empty: run make generate")
	}
	return 0
}

// atlasShow is `sitter atlas show`: the descriptor name resolves to, its
// config, readiness checks and tools, its packaging, its events, and the
// resolution trace of name.
func atlasShow(stdout, stderr io.Writer, r *adapter.Registry, name string, asJSON bool) int {
	d, trace, err := r.Resolve(name)
	if err != nil {
		fmt.Fprintf(stderr, "sitter: %v\n", err)
		return 1
	}
	if asJSON {
		return writeJSON(stdout, stderr, struct {
			*adapter.Descriptor
			Trace []string `json:"trace"`
		}{d, trace})
	}
	w := &errWriter{w: stdout}
	showHeader(w, d)
	showTables(w, d)
	showPackaging(w, d.Packaging)
	showEvents(w, d.Events)
	w.printf("resolution of %q:\n", name)
	for _, t := range trace {
		w.printf("  %s\n", t)
	}
	if w.err != nil {
		fmt.Fprintf(stderr, "sitter: %v\n", w.err)
		return 1
	}
	return 0
}

// showHeader prints who the descriptor is: family, profile, aliases,
// package, verified versions and evidence.
func showHeader(w *errWriter, d *adapter.Descriptor) {
	w.printf("%s — %s\n", d.ID, d.DisplayName)
	w.printf("  source:    %s\n", d.Source)
	w.printf("  family:    %s (delivery %s, transcripts %s; profiles %s)\n", d.Family.ID, d.Family.Delivery, d.Family.Transcript, strings.Join(d.Family.Profiles, ", "))
	profile := d.Profile
	if d.Default {
		profile += " (default descriptor)"
	}
	w.printf("  profile:   %s\n", profile)
	w.printf("  aliases:   %s\n", orDash(strings.Join(d.Aliases, ", ")))
	pkg := d.Package.Name
	if pkg == "" {
		pkg = "-"
	}
	w.printf("  package:   %s (source %s, trust %s, lifecycle %s)\n", pkg, d.Package.Source, d.Package.Trust, d.Package.Lifecycle)
	w.printf("  verified:  %s\n", orDash(strings.Join(d.Verified, ", ")))
	w.printf("  evidence:  %s\n", orDash(evidence(d.Evidence)))
}

// showTables prints the config keys, readiness checks and tool kinds.
func showTables(w *errWriter, d *adapter.Descriptor) {
	w.printf("config:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, k := range d.Config {
		fmt.Fprintf(tw, "  %s\t%s\tdefault %s\t%s\n", k.Key, k.Type, orDash(k.Default), k.Description)
	}
	tw.Flush()
	w.printf("readiness:\n")
	for _, c := range d.Readiness {
		w.printf("  %s %s\n", c.Kind, c.Value)
	}
	w.printf("tools:\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range sortedKeys(d.Tools) {
		fmt.Fprintf(tw, "  %s\t%s\n", t, d.Tools[t])
	}
	for _, p := range sortedKeys(d.ToolPrefixes) {
		fmt.Fprintf(tw, "  %s*\t%s\n", p, d.ToolPrefixes[p])
	}
	tw.Flush()
}

// showPackaging prints how a plugin bundle for the harness is laid out
// (its layout, the files `sitter plugin verify` reads, the bundle root
// and timeout unit its hook commands use), how a user installs it and
// where `sitter plugin install` registers it.
func showPackaging(w *errWriter, p adapter.Packaging) {
	if p.Format == "" {
		w.printf("packaging: - (no plugin bundle)\n")
		return
	}
	w.printf("packaging:\n")
	b := p.Bundle
	parts := []string{"manifest " + b.Manifest}
	if b.Hooks != "" {
		hooks := "hooks " + b.Hooks
		if b.Shape != "" {
			hooks += " (" + b.Shape + ")"
		}
		parts = append(parts, hooks)
	}
	if b.Skills != "" {
		parts = append(parts, "skills "+b.Skills+"/")
	}
	t := p.Target
	target := fmt.Sprintf("%s: project %s, user ~/%s", t.Kind, t.Project, t.User)
	for _, kv := range [][2]string{{"shape", t.Shape}, {"command key", t.CommandKey}, {"timeout key", t.TimeoutKey}, {"entry", t.Entry}} {
		if kv[1] != "" && !(kv[0] == "shape" && kv[1] == b.Shape) {
			target += "; " + kv[0] + " " + kv[1]
		}
	}
	for _, x := range []struct {
		what string
		dirs adapter.TargetDirs
	}{{"skills", t.Skills}, {"commands", t.Commands}, {"MCP servers (" + t.MCPKey + ")", t.MCP}} {
		if x.dirs != (adapter.TargetDirs{}) {
			target += fmt.Sprintf("; %s into project %s, user ~/%s", x.what, x.dirs.Project, x.dirs.User)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  layout:\t%s\n", p.Format)
	fmt.Fprintf(tw, "  bundle:\t%s\n", strings.Join(parts, ", "))
	if p.RootVar == "" {
		fmt.Fprintf(tw, "  root:\t- (a bridge module registers the hooks)\n")
	} else {
		fmt.Fprintf(tw, "  root:\t%s (hook timeouts in %s)\n", p.RootVar, p.TimeoutUnit)
	}
	fmt.Fprintf(tw, "  install:\t%s\n", p.Install)
	fmt.Fprintf(tw, "  target:\t%s\n", target)
	tw.Flush()
}

// showEvents prints one line per event (name, phase, support, what a
// handler can do there) and its note, replaced output, effects and
// evidence beneath it.
func showEvents(w *errWriter, events []adapter.EventSpec) {
	w.printf("events (%d):\n", len(events))
	// Padded by hand: a tabwriter cannot align rows split by note lines.
	nw, pw, sw := 0, 0, 0
	for _, e := range events {
		nw, pw, sw = max(nw, len(e.Name)), max(pw, len(e.Phase)), max(sw, len(e.Support))
	}
	indent := strings.Repeat(" ", 2+nw+2+pw+2+sw+2)
	for _, e := range events {
		w.printf("  %-*s  %-*s  %-*s  can: %s\n", nw, e.Name, pw, e.Phase, sw, e.Support, orDash(strings.Join(e.Can, ", ")))
		if e.Note != "" {
			w.printf("%snote: %s\n", indent, e.Note)
		}
		if r := e.Replaces; r != nil {
			w.printf("%sreplaces: %s; the harness wants back %s, which no canonical result says: no plugin bundle registers it. Instead: %s (evidence: %s)\n", indent, r.What, r.Output, r.Instead, evidence(r.Evidence))
		}
		if len(e.Effects) > 0 {
			w.printf("%seffects: %s\n", indent, effects(e.Effects))
		}
		if len(e.Evidence) > 0 {
			w.printf("%sevidence: %s\n", indent, evidence(e.Evidence))
		}
	}
}

func evidence(es []adapter.Evidence) string {
	parts := make([]string, 0, len(es))
	for _, e := range es {
		s := e.Kind + " " + e.Ref
		if e.Note != "" {
			s += " (" + e.Note + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// writeJSON prints v as indented JSON and a newline.
func writeJSON(stdout, stderr io.Writer, v any) int { return printJSON(stdout, stderr, v, "  ") }

// writeJSONLine prints v as one line of JSON.
func writeJSONLine(stdout, stderr io.Writer, v any) int { return printJSON(stdout, stderr, v, "") }

func printJSON(stdout, stderr io.Writer, v any, indent string) int {
	var b []byte
	var err error
	if indent == "" {
		b, err = json.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, "", indent)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sitter: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(append(b, '\n')); err != nil {
		fmt.Fprintf(stderr, "sitter: %v\n", err)
		return 1
	}
	return 0
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// errWriter keeps the first write error, so printing code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// effects says what each render rule does: "deny → deniesCall",
// "halt → haltsSession", "context → addsContext + continuesSession".
func effects(fx []adapter.Effect) string {
	parts := make([]string, 0, len(fx))
	for _, x := range fx {
		var what []string
		for _, v := range []string{x.Call, x.Session} {
			if v != "none" && v != "" {
				what = append(what, v)
			}
		}
		parts = append(parts, x.Aspect+" → "+orDash(strings.Join(what, " + ")))
	}
	return strings.Join(parts, ", ")
}

// code is the exit status of what was printed: 1 when a write failed.
func (e *errWriter) code() int {
	if e.err != nil {
		return 1
	}
	return 0
}
