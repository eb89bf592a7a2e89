package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A renamed synthetic harness shares no id, profile, layout, path or
// alias with the original: several can be added to one atlas.
func TestRenamed(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "gen", "testdata", "synth", "synth.cue"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(renamed(src, "synth07"))
	if regexp.MustCompile(`\bsynth\b`).MatchString(got) || strings.Contains(got, `"syn"`) {
		t.Errorf("the original id or alias is left:\n%s", got)
	}
	if !strings.Contains(got, "harnesses: synth07:") || !strings.Contains(got, `"syn07"`) {
		t.Errorf("the new id or alias is missing:\n%s", got)
	}
}
