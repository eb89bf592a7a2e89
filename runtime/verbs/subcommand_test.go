package verbs

import (
	"bytes"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// A misspelled subcommand gets a suggestion, as a misspelled verb does.
func TestUnknownSubcommandSuggests(t *testing.T) {
	for _, c := range []struct {
		args       []string
		line, hint string
	}{
		{[]string{"plugin", "instal"}, `sitter: plugin: unknown command "instal"`, "did you mean install?"},
		{[]string{"run", "lst"}, `sitter: run: unknown command "lst"`, "did you mean list?"},
		{[]string{"atlas", "shwo"}, `sitter: atlas: unknown command "shwo"`, "did you mean show?"},
		{[]string{"proxy", "stat"}, `sitter: proxy: unknown command "stat"`, "did you mean stats?"},
		{[]string{"proxy", "stast"}, `sitter: proxy: unknown command "stast"`, "did you mean stats?"},
	} {
		var out, errb bytes.Buffer
		code := Run(c.args, nil, &out, &errb, registry.Registry)
		first, rest, _ := strings.Cut(errb.String(), "\n")
		if code != 2 || out.Len() > 0 || !strings.HasPrefix(first, c.line) || !strings.Contains(first, c.hint) || !strings.Contains(rest, "Usage:\n  ") {
			t.Errorf("sitter %s: exit %d, stdout %q, stderr %q; want 2, %q … %q and the usage on stderr", strings.Join(c.args, " "), code, out.String(), errb.String(), c.line, c.hint)
		}
	}
}

// sitter help with a misspelled topic suggests the verb or subcommand meant.
func TestHelpTopicSuggests(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"help", "plugn"}, "did you mean plugin?"},
		{[]string{"help", "plugin", "instal"}, "did you mean plugin install?"},
		{[]string{"help", "checkpoint", "restor"}, "did you mean checkpoint restore?"},
	} {
		var out, errb bytes.Buffer
		code := Run(c.args, nil, &out, &errb, registry.Registry)
		first, _, _ := strings.Cut(errb.String(), "\n")
		if code != 2 || out.Len() > 0 || !strings.HasPrefix(first, "sitter: help: unknown help topic") || !strings.Contains(first, c.hint) {
			t.Errorf("sitter %s: exit %d, stdout %q, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, out.String(), errb.String(), c.hint)
		}
	}
	var out, errb bytes.Buffer
	if code := Run([]string{"help", "zzzz"}, nil, &out, &errb, registry.Registry); code != 2 || strings.Contains(errb.String(), "did you mean") {
		t.Errorf("sitter help zzzz: exit %d, stderr %q; want 2 and no suggestion", code, errb.String())
	}
}
