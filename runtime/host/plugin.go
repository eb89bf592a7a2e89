package host

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/plugin"
)

const pluginUsage = `Usage:
  sitter plugin install <bundle-or-plugin> --harness H [--scope project|user] [--dir DIR] [--force] [--json]
  sitter plugin uninstall <plugin> --harness H [--scope project|user] [--dir DIR] [--json]
  sitter plugin verify <bundle-or-dir>... [--json]
`

// pluginArgs are the parsed arguments of `sitter plugin <verb>`.
type pluginArgs struct {
	pos                  []string
	harness, scope, dir  string
	force, json, helpArg bool
}

func parsePluginArgs(args []string, allowed map[string]bool) (pluginArgs, error) {
	var a pluginArgs
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			a.pos = append(a.pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			a.pos = append(a.pos, arg)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if name == "h" || name == "help" {
			a.helpArg = true
			continue
		}
		if !allowed[name] {
			return a, fmt.Errorf("unknown flag %s", arg)
		}
		switch name {
		case "force", "json":
			if hasVal {
				return a, fmt.Errorf("flag --%s takes no value", name)
			}
			if name == "force" {
				a.force = true
			} else {
				a.json = true
			}
			continue
		}
		if !hasVal {
			if i+1 == len(args) {
				return a, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch name {
		case "harness":
			a.harness = val
		case "scope":
			a.scope = val
		case "dir":
			a.dir = val
		}
	}
	return a, nil
}

// runPlugin is `sitter plugin install|uninstall|verify`.
func runPlugin(args []string, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, pluginUsage)
		return 2
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "sitter: plugin %s: %v\n%s", args[0], err, pluginUsage)
		return 2
	}
	switch args[0] {
	case "install", "uninstall":
		allowed := map[string]bool{"harness": true, "scope": true, "dir": true, "json": true, "force": args[0] == "install"}
		a, err := parsePluginArgs(args[1:], allowed)
		if a.helpArg {
			fmt.Fprint(stdout, pluginUsage)
			return 0
		}
		if err != nil {
			return usageErr(err)
		}
		if len(a.pos) != 1 {
			return usageErr(fmt.Errorf("want one %s, have %d arguments", map[bool]string{true: "bundle or plugin", false: "plugin name"}[args[0] == "install"], len(a.pos)))
		}
		if a.harness == "" {
			return usageErr(fmt.Errorf("--harness is required (see 'sitter atlas list')"))
		}
		r := reg()
		d, _, err := r.Resolve(a.harness)
		if err != nil {
			fmt.Fprintf(stderr, "sitter: plugin %s: %v\n", args[0], err)
			return 1
		}
		o := plugin.Options{Scope: a.scope, Dir: a.dir, Force: a.force}
		var rep *plugin.Report
		if args[0] == "install" {
			var b *plugin.Bundle
			if b, err = plugin.FindBundle(a.pos[0], d, r); err == nil {
				rep, err = plugin.Install(b, d, o)
			}
		} else {
			name := a.pos[0]
			if b, berr := plugin.OpenBundle(name); berr == nil {
				name = b.Marker.Plugin // a bundle path names its plugin
			}
			rep, err = plugin.Uninstall(name, d, o)
		}
		if err != nil {
			// Only what a failed install or uninstall left changed is
			// reported, never as done.
			if rep != nil && (a.json || len(rep.Files)+len(rep.Entries)+len(rep.Notes) > 0) {
				rep.Error = err.Error()
				printReport(stdout, rep, a.json)
			}
			fmt.Fprintf(stderr, "sitter: plugin %s: %v\n", args[0], err)
			return 1
		}
		if perr := printReport(stdout, rep, a.json); perr != nil {
			fmt.Fprintf(stderr, "sitter: plugin %s: done, but the report could not be written: %v\n", args[0], perr)
			return 1
		}
		return 0
	case "verify":
		a, err := parsePluginArgs(args[1:], map[string]bool{"json": true})
		if a.helpArg {
			fmt.Fprint(stdout, pluginUsage)
			return 0
		}
		if err != nil {
			return usageErr(err)
		}
		if len(a.pos) == 0 {
			return usageErr(fmt.Errorf("name at least one bundle, plugin dir or artifacts dir"))
		}
		bundles, probs, err := plugin.VerifyPaths(a.pos, reg())
		if err != nil {
			fmt.Fprintf(stderr, "sitter: plugin verify: %v\n", err)
			return 1
		}
		if a.json {
			lines := make([]string, len(probs))
			for i, p := range probs {
				lines[i] = p.String()
			}
			out := map[string]any{"ok": len(probs) == 0, "bundles": bundles, "problems": probs, "lines": lines}
			if probs == nil {
				out["problems"] = []plugin.Problem{}
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			enc.Encode(out)
		} else {
			for _, p := range probs {
				fmt.Fprintln(stdout, p.String())
			}
		}
		if len(probs) > 0 {
			fmt.Fprintf(stderr, "sitter: plugin verify: %d problem(s) in %d bundle(s)\n", len(probs), len(bundles))
			return 1
		}
		if !a.json {
			fmt.Fprintf(stdout, "ok: %d bundle(s) verified\n", len(bundles))
		}
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, pluginUsage)
		return 0
	}
	fmt.Fprintf(stderr, "sitter: plugin: unknown verb %q\n%s", args[0], pluginUsage)
	return 2
}

// printReport prints what an install or uninstall did; a report with an
// Error is of one that failed, and says so.
func printReport(w io.Writer, r *plugin.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	}
	var b strings.Builder
	if r.Error != "" {
		fmt.Fprintf(&b, "%s of %s for %s (%s scope) failed; changed before the failure:\n", r.Action, r.Plugin, r.Harness, r.Scope)
	} else {
		verb := map[string]string{"install": "installed", "uninstall": "uninstalled"}[r.Action]
		fmt.Fprintf(&b, "%s %s for %s (%s scope)\n", verb, r.Plugin, r.Harness, r.Scope)
	}
	for _, f := range r.Files {
		line := fmt.Sprintf("  %-9s %s", f.Action, f.Path)
		if f.Backup != "" {
			line += " (backup " + f.Backup + ")"
		}
		fmt.Fprintln(&b, line)
	}
	for _, e := range r.Entries {
		fmt.Fprintf(&b, "  %-9s %s: %s\n", e.Action, e.Event, e.Command)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
