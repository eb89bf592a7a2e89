package verbs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/internal/hookcli"
)

// commandPaths lists every verb and subcommand of the tree, as the words
// typed after sitter.
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, s := range c.Commands() {
		if s.Hidden {
			continue
		}
		p := append(append([]string{}, prefix...), s.Name())
		out = append(out, p)
		out = append(out, commandPaths(s, p)...)
	}
	return out
}

// TestEveryCommandGrammar walks every verb and subcommand: --help and -h
// print the usage with an example on stdout and exit 0; an unknown flag
// exits 2 with the usage on stderr and nothing on stdout. The exception is
// hook, whose caller is a harness: there exit 2 means "block", so an
// unknown flag exits 1 (docs/contract.md, error policy; the sitter binary's
// own parser is held to the same by TestHookUnknownFlag).
func TestEveryCommandGrammar(t *testing.T) {
	root := NewCommand(nil, &bytes.Buffer{}, &bytes.Buffer{}, registry.Registry)
	paths := commandPaths(root, nil)
	if len(paths) < 40 {
		t.Fatalf("only %d commands in the tree: %q", len(paths), paths)
	}
	for _, p := range append(paths, []string{}) {
		name := strings.Join(append([]string{"sitter"}, p...), " ")
		for _, help := range []string{"--help", "-h"} {
			var out, errb bytes.Buffer
			if code := Run(append(append([]string{}, p...), help), nil, &out, &errb, registry.Registry); code != 0 {
				t.Errorf("%s %s: exit %d, stderr %q", name, help, code, errb.String())
			}
			if !strings.Contains(out.String(), "Usage:\n  "+name) || !strings.Contains(out.String(), "\nExamples:\n  ") {
				t.Errorf("%s %s: no usage with an example on stdout:\n%s", name, help, out.String())
			}
			if errb.Len() > 0 {
				t.Errorf("%s %s: stderr %q", name, help, errb.String())
			}
		}
		var out, errb bytes.Buffer
		code := Run(append(append([]string{}, p...), "--no-such-flag"), nil, &out, &errb, registry.Registry)
		if name == "sitter hook" {
			if code != 1 || !strings.Contains(errb.String(), "sitter: hook: unknown flag: --no-such-flag\nusage: sitter hook <harness>") || out.Len() > 0 {
				t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want exit 1 (never 2: a harness reads it as block), the error and the usage line on stderr", name, code, out.String(), errb.String())
			}
			continue
		}
		if code != 2 {
			t.Errorf("%s --no-such-flag: exit %d, want 2", name, code)
		}
		if !strings.Contains(errb.String(), "unknown flag: --no-such-flag") || !strings.Contains(errb.String(), "Usage:\n  "+name) {
			t.Errorf("%s --no-such-flag: stderr %q, want the error and the usage", name, errb.String())
		}
		if out.Len() > 0 {
			t.Errorf("%s --no-such-flag: stdout %q", name, out.String())
		}
	}
}

// TestFlagValueNames: every flag that takes a value names it in its
// usage (a backticked word, which pflag shows as the value's name:
// "--dir DIR"), so that no help text or docs/cli page shows a Go type
// ("--dir string").
func TestFlagValueNames(t *testing.T) {
	root := NewCommand(nil, &bytes.Buffer{}, &bytes.Buffer{}, registry.Registry)
	n := 0
	for _, p := range append(commandPaths(root, nil), []string{}) {
		c, _, _ := root.Find(p)
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				return
			}
			n++
			if name, _ := pflag.UnquoteUsage(f); !strings.Contains(f.Usage, "`") || name == f.Value.Type() {
				t.Errorf("sitter %s --%s: the usage %q does not name its value (put it in backticks: \"the project `DIR`\"); help shows --%s %s", strings.Join(p, " "), f.Name, f.Usage, f.Name, name)
			}
		})
	}
	if n < 50 {
		t.Errorf("only %d flags with a value in the tree", n)
	}
}

// TestGroupsRefuseUnknownSubcommands: a verb that holds subcommands, alone
// or with one it does not have, is a usage error (exit 2, usage on stderr).
func TestGroupsRefuseUnknownSubcommands(t *testing.T) {
	root := NewCommand(nil, &bytes.Buffer{}, &bytes.Buffer{}, registry.Registry)
	for _, p := range append(commandPaths(root, nil), []string{}) {
		c, _, err := root.Find(p)
		if err != nil || !c.HasAvailableSubCommands() || c.Annotations[runsItself] != "" {
			continue
		}
		name := strings.Join(append([]string{"sitter"}, p...), " ")
		for _, args := range [][]string{p, append(append([]string{}, p...), "no-such-verb")} {
			var out, errb bytes.Buffer
			code := Run(args, nil, &out, &errb, registry.Registry)
			if code != 2 || out.Len() > 0 || !strings.Contains(errb.String(), "Usage:\n  "+name+" <command>") {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr", args, code, out.String(), errb.String())
			}
		}
	}
}

// TestJSONWherePrinted: every leaf verb that prints something has --json
// (hook, guard and proxy print what their protocols say, completion and
// help print text for shells and people).
func TestJSONWherePrinted(t *testing.T) {
	exempt := map[string]bool{
		"hook": true, "guard": true, "checkpoint record": true, "completion bash": true, "completion zsh": true,
		"completion fish": true, "completion powershell": true, "help": true,
		"session start": true, "session bind": true, "session stop-check": true, "session prompt": true, "session end": true,
	}
	root := NewCommand(nil, &bytes.Buffer{}, &bytes.Buffer{}, registry.Registry)
	for _, p := range commandPaths(root, nil) {
		c, _, _ := root.Find(p)
		name := strings.Join(p, " ")
		if c.HasAvailableSubCommands() || exempt[name] {
			continue
		}
		if c.Flags().Lookup("json") == nil {
			t.Errorf("sitter %s has no --json", name)
		}
	}
}

// TestCLIReferenceCurrent: docs/cli is what the command tree says (make
// generate writes it).
func TestCLIReferenceCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "cli")
	want := Reference(registry.Registry)
	for name, text := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != text {
			t.Errorf("docs/cli/%s is not current: run make generate", name)
		}
	}
	have, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, p := range have {
		if _, ok := want[filepath.Base(p)]; !ok {
			t.Errorf("docs/cli/%s documents no verb: run make generate", filepath.Base(p))
		}
	}
	if !strings.Contains(want["README.md"], "[`sitter hook`](hook.md)") || !strings.Contains(want["checkpoint.md"], "## sitter checkpoint restore") {
		t.Errorf("the reference lacks a verb or subcommand:\n%s", want["README.md"])
	}
}

// TestMissingDirIsAnError: every verb with a --dir flag refuses a folder
// that does not exist (exit 1, "--dir D is not a directory", nothing on
// stdout) before doing anything: a mistyped project folder is never
// created (plugin install), reported as an empty project (doctor) or as
// "not a git tree" (checkpoint). The exception is
// checkpoint record, a hook handler that never fails its hook.
func TestMissingDirIsAnError(t *testing.T) {
	args := map[string][]string{
		"agents detect":      nil,
		"doctor":             nil,
		"checkpoint list":    nil,
		"checkpoint show":    {"3f2a9c81d0e4"},
		"checkpoint diff":    {"3f2a9c81d0e4"},
		"checkpoint restore": {"3f2a9c81d0e4"},
		"plugin install":     {filepath.Join("..", "..", "artifacts", "guard", "claude-code"), "--harness", "claude-code"},
		"plugin uninstall":   {"guard", "--harness", "claude-code"},
		"observe":            nil,
	}
	exempt := map[string]bool{"checkpoint record": true}
	root := NewCommand(nil, &bytes.Buffer{}, &bytes.Buffer{}, registry.Registry)
	for _, p := range commandPaths(root, nil) {
		c, _, _ := root.Find(p)
		name := strings.Join(p, " ")
		if c.LocalFlags().Lookup("dir") == nil || exempt[name] {
			continue
		}
		extra, ok := args[name]
		if !ok {
			t.Errorf("sitter %s has --dir: add it to this test", name)
			continue
		}
		missing := filepath.Join(t.TempDir(), "no-such-project")
		var out, errb bytes.Buffer
		code := Run(append(append(append([]string{}, p...), extra...), "--dir", missing), strings.NewReader(""), &out, &errb, registry.Registry)
		if code != 1 || out.Len() > 0 || !strings.Contains(errb.String(), "sitter: "+name+": --dir "+missing+" is not a directory") {
			t.Errorf("sitter %s --dir %s: exit %d, stdout %q, stderr %q; want exit 1 and the missing folder named", name, missing, code, out.String(), errb.String())
		}
		if _, err := os.Stat(missing); err == nil {
			t.Errorf("sitter %s --dir %s created the folder", name, missing)
		}
	}
}

// TestHelpUnknownTopic: sitter help names a verb or subcommand; one the
// tree does not have is a usage error (exit 2), not the root's help.
func TestHelpUnknownTopic(t *testing.T) {
	for _, args := range [][]string{{"help", "nosuch"}, {"help", "checkpoint", "nosuch"}} {
		var out, errb bytes.Buffer
		code := Run(args, nil, &out, &errb, registry.Registry)
		if code != 2 || out.Len() > 0 || !strings.Contains(errb.String(), "unknown help topic") || !strings.Contains(errb.String(), "Usage:\n  sitter help") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and the usage on stderr", args, code, out.String(), errb.String())
		}
	}
	for _, p := range [][]string{{}, {"checkpoint", "restore"}} {
		var out, errb, want bytes.Buffer
		code := Run(append([]string{"help"}, p...), nil, &out, &errb, registry.Registry)
		Run(append(p, "--help"), nil, &want, &bytes.Buffer{}, registry.Registry)
		if code != 0 || out.String() != want.String() {
			t.Errorf("help %q: exit %d, stderr %q, stdout not what --help prints:\n%s", p, code, errb.String(), out.String())
		}
	}
}

// TestMissingArgumentsNamed: every verb whose usage line names arguments,
// called without them, fails with a `sitter: …` line saying what is wrong
// before any usage (the run and task verbs print the SDK's usage too, exit
// 1; the others exit 2). hook and guard are the sitter binary's own.
func TestMissingArgumentsNamed(t *testing.T) {
	root := NewCommand(nil, &bytes.Buffer{}, &bytes.Buffer{}, registry.Registry)
	for _, p := range commandPaths(root, nil) {
		c, _, err := root.Find(p)
		if err != nil || c.HasAvailableSubCommands() || c.Annotations[runsItself] != "" {
			continue
		}
		use, _, _ := strings.Cut(c.Use, " ")
		if !strings.Contains(c.Use, " <") || use == "help" || use == "hook" || use == "guard" {
			continue
		}
		var out, errb bytes.Buffer
		code := Run(p, nil, &out, &errb, registry.Registry)
		first, _, _ := strings.Cut(errb.String(), "\n")
		if code == 0 || !strings.HasPrefix(first, "sitter: ") {
			t.Errorf("%q: exit %d, first stderr line %q; want a failure saying what is missing", p, code, first)
		}
	}
}

// TestOwnVerbsHelpAsTheTree: the verbs the sitter binary answers itself
// print, for --help, exactly what sitter-host's tree prints for `sitter
// help <verb>` (and docs/cli shows): one text, whichever binary answers.
func TestOwnVerbsHelpAsTheTree(t *testing.T) {
	for _, v := range []struct {
		name string
		own  string
	}{
		{"hook", hookcli.HookUsage()},
		{"guard", hookcli.GuardUsage()},
		{"version", hookcli.VersionUsage()},
	} {
		var out, errb bytes.Buffer
		if code := Run([]string{"help", v.name}, nil, &out, &errb, registry.Registry); code != 0 {
			t.Fatalf("sitter help %s: exit %d: %s", v.name, code, errb.String())
		}
		if diff := cmp.Diff(out.String(), v.own); diff != "" {
			t.Errorf("sitter %s --help differs from sitter help %s (-tree +own):\n%s", v.name, v.name, diff)
		}
	}
}

// TestHarnessFlagsComplete: every --harness flag of the tree completes
// the atlas's harness ids (README: completion for harness names).
func TestHarnessFlagsComplete(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Flags().Lookup("harness") == nil {
			return
		}
		n++
		path := strings.Fields(c.CommandPath())[1:]
		var out, errb bytes.Buffer
		Run(append(append([]string{"__complete"}, path...), "--harness", ""), nil, &out, &errb, registry.Registry)
		if !strings.Contains(out.String(), "\nclaude-code\n") && !strings.HasPrefix(out.String(), "claude-code\n") {
			t.Errorf("sitter %s --harness <TAB>: %q, want the harness ids", strings.Join(path, " "), out.String())
		}
	}
	walk(NewCommand(nil, io.Discard, io.Discard, registry.Registry))
	if n < 8 {
		t.Errorf("%d commands with --harness; the walk missed the tree", n)
	}
}

// TestExtraArgumentsRefused: every verb given one argument more than its
// usage line names fails, before it does anything, with a `sitter: VERB:
// unexpected arguments` line (the run and task verbs exit 1 with the
// SDK's usage, as for a missing one; the others exit 2). hook and guard
// are the sitter binary's own, whose callers are harnesses.
func TestExtraArgumentsRefused(t *testing.T) {
	root := NewCommand(nil, &bytes.Buffer{}, &bytes.Buffer{}, registry.Registry)
	n := 0
	for _, p := range commandPaths(root, nil) {
		c, _, err := root.Find(p)
		if err != nil || c.HasAvailableSubCommands() || strings.Contains(c.Use, "...") {
			continue
		}
		if use, _, _ := strings.Cut(c.Use, " "); use == "help" || use == "hook" || use == "guard" || use == "__complete" || use == "__completeNoDesc" {
			continue
		}
		args := append([]string{}, p...)
		for _, w := range strings.Fields(c.Use)[1:] {
			switch {
			case w == "<harness>":
				args = append(args, "claude-code")
			case strings.HasPrefix(w, "<") || strings.HasPrefix(w, "[<") || strings.HasPrefix(w, "(<"):
				args = append(args, "placeholder")
			}
		}
		args = append(args, "extra-arg")
		var out, errb bytes.Buffer
		code := Run(args, nil, &out, &errb, registry.Registry)
		first, _, _ := strings.Cut(errb.String(), "\n")
		want, wantCode := "sitter: "+strings.Join(p, " ")+`: unexpected arguments ["extra-arg"]`, 2
		if slices.Contains(sdkVerbs, strings.Join(p, " ")) {
			wantCode = 1
		}
		if code != wantCode || first != want || out.Len() > 0 {
			t.Errorf("%q: exit %d, first stderr line %q, stdout %q; want exit %d and %q", args, code, first, out.String(), wantCode, want)
		}
		n++
	}
	if n < 30 {
		t.Errorf("only %d verbs tried: the walk missed the tree", n)
	}
}
