package verbs

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/plugin"
)

// newPluginCmd is `sitter plugin install|uninstall|verify`.
func newPluginCmd(e *env) *cobra.Command {
	return group(&cobra.Command{
		Use:   "plugin",
		Short: "Install, uninstall and verify plugin bundles",
		Long: `A plugin is written once under plugins-src/<name>/; make generate compiles it
into one bundle per harness under artifacts/<name>/<harness>/. These verbs
register a bundle's hooks straight into a project's (or the user's) harness
config, remove only what they added, and check bundles.`,
		Example: `  sitter plugin install guard --harness gemini-cli --dir ~/my-project
  sitter plugin uninstall guard --harness gemini-cli --dir ~/my-project
  sitter plugin verify artifacts/guard`,
	}, pluginInstallCmd(e, true), pluginInstallCmd(e, false), pluginVerifyCmd(e))
}

// pluginInstallCmd is `plugin install` (install true) or `plugin uninstall`.
func pluginInstallCmd(e *env, install bool) *cobra.Command {
	var harness, scope, dir string
	var force, asJSON bool
	verb, use := "uninstall", "uninstall <plugin>"
	c := &cobra.Command{
		Short: "Remove only the entries and files install added",
		Example: `  sitter plugin uninstall guard --harness gemini-cli --dir ~/my-project
  sitter plugin uninstall guard --harness claude --scope user --json`,
	}
	if install {
		verb, use = "install", "install <bundle-or-plugin>"
		c.Short = "Register a plugin bundle's hooks into a harness's config"
		c.Long = `Merges the bundle's hooks into the harness's config (for Gemini CLI,
.gemini/settings.json), keeping everything already there, writing through a
symlinked config to its target and refusing one you made read-only; a failure
exits 1 and lists what it had changed. For a harness that runs a folder of
hook scripts (Cline: .clinerules/hooks) it writes one script per event there,
refusing to replace a file of yours without --force. Installs and uninstalls
into one project (or one home) at the same time wait for each other.
<bundle-or-plugin> is a bundle folder or a plugin name, found in
./artifacts/<name>, then beside the bin/ folder holding sitter: in
share/sitter/artifacts (an install or a release archive), then in artifacts
(a checkout built with make build).`
		c.Example = `  sitter plugin install guard --harness gemini-cli --dir ~/my-project
  sitter plugin install artifacts/guard/codex --harness codex --scope user --force --json`
	}
	c.Use = use
	c.Args = nArgs(1, 1, strings.Fields(use)[1])
	c.RunE = func(_ *cobra.Command, args []string) error {
		if harness == "" {
			return usageErr("--harness is required (see 'sitter atlas list')")
		}
		switch scope {
		case "", "project", "user":
		default:
			return usageErr("--scope %q: want project or user", scope)
		}
		// An unknown harness is a mistake on the command line (as in
		// doctor and launch), said before anything is looked up.
		if _, _, err := e.reg().Resolve(harness); err != nil {
			return usageErr("%v", err)
		}
		return code(pluginInstall(e, verb, args[0], harness, plugin.Options{Scope: scope, Dir: dir, Force: force}, asJSON))
	}
	c.Flags().StringVar(&harness, "harness", "", "the harness `HARNESS` whose config to change (required)")
	c.Flags().StringVar(&scope, "scope", "", "the config's `SCOPE`: project (the default) or user")
	c.Flags().StringVar(&dir, "dir", "", "the project folder `DIR` (default: the current directory)")
	if install {
		c.Flags().BoolVar(&force, "force", false, "replace sitter's own entries that are already there, and a file of yours where sitter writes its own (kept as <file>.sitter-backup, put back by uninstall)")
	}
	jsonFlag(c, &asJSON, "print the report as JSON")
	return c
}

// pluginInstall installs or uninstalls and reports what changed.
func pluginInstall(e *env, verb, name, harness string, o plugin.Options, asJSON bool) int {
	stdout, stderr := e.stdout, e.stderr
	r := e.reg()
	d, _, err := r.Resolve(harness)
	if err != nil {
		fmt.Fprintf(stderr, "sitter: plugin %s: %v\n", verb, err)
		return 1
	}
	var rep *plugin.Report
	if verb == "install" {
		var b *plugin.Bundle
		if b, err = plugin.FindBundle(name, d, r); err == nil {
			rep, err = plugin.Install(b, d, o)
		}
	} else {
		if b, berr := plugin.OpenBundle(name); berr == nil {
			name = b.Marker.Plugin // a bundle path names its plugin
		}
		rep, err = plugin.Uninstall(name, d, o)
	}
	if err != nil {
		// Only what a failed install or uninstall left changed is
		// reported, never as done.
		if rep != nil && (asJSON || len(rep.Files)+len(rep.Entries)+len(rep.Notes) > 0) {
			rep.Error = err.Error()
			printReport(stdout, rep, asJSON)
		}
		fmt.Fprintf(stderr, "sitter: plugin %s: %v\n", verb, err)
		return 1
	}
	if perr := printReport(stdout, rep, asJSON); perr != nil {
		fmt.Fprintf(stderr, "sitter: plugin %s: done, but the report could not be written: %v\n", verb, perr)
		return 1
	}
	return 0
}

// pluginVerifyCmd is `plugin verify`.
func pluginVerifyCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "verify <bundle-or-dir>...",
		Short: "Check bundles: manifests, paths, hooks, scripts",
		Example: `  sitter plugin verify artifacts/guard
  sitter plugin verify artifacts --json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("name at least one bundle, plugin dir or artifacts dir")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return code(pluginVerify(e, args, asJSON))
		},
	}
	jsonFlag(c, &asJSON, "print the bundles and problems as JSON")
	return c
}

// pluginVerify verifies bundles; a problem exits 1.
func pluginVerify(e *env, paths []string, asJSON bool) int {
	stdout, stderr := e.stdout, e.stderr
	bundles, probs, err := plugin.VerifyPaths(paths, e.reg())
	if err != nil {
		fmt.Fprintf(stderr, "sitter: plugin verify: %v\n", err)
		return 1
	}
	if asJSON {
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
	if !asJSON {
		fmt.Fprintf(stdout, "ok: %d bundle(s) verified\n", len(bundles))
	}
	return 0
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
