package agents

import (
	"testing"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
)

// doctor's install fix names the newest verified version, whatever the
// order the atlas lists them in, compared as numbers (2.1.332 > 2.1.97).
func TestNewest(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"2.1.197", "2.1.332"}, "2.1.332"},
		{[]string{"2.1.332", "2.1.97"}, "2.1.332"},
		{[]string{"1.0", "1.0.1", "0.9.9"}, "1.0.1"},
	} {
		if got := newest(c.in); got != c.want {
			t.Errorf("newest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Fix commands are pasted into a shell: paths with spaces or quotes are quoted.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"proj":            "proj",
		"/tmp/a b":        "'/tmp/a b'",
		"it's":            `'it'\''s'`,
		"":                "''",
		"@google/x@1.2.3": "@google/x@1.2.3",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// The install fix puts a verified version on PATH as printed: by default
// name@newest verified; where the verified binary is not a version of the
// package (Droid: the @factory/cli 0.225.1 wrapper runs the 0.225.2
// binary of a platform package, and npm has no @factory/cli@0.225.2), the
// atlas's npmInstall specs.
func TestInstallFix(t *testing.T) {
	plain := &adapter.Descriptor{ID: "x", DisplayName: "X", Package: adapter.Package{Name: "@x/cli", Source: "npm"}, Verified: []string{"1.2.3", "1.10.0"}}
	if got, want := InstallFix(plain), "npm install -g @x/cli@1.10.0"; got != want {
		t.Errorf("InstallFix(plain) = %q, want %q", got, want)
	}
	none := &adapter.Descriptor{ID: "y", DisplayName: "Y", Package: adapter.Package{Source: "none"}}
	if got, want := InstallFix(none), "install Y (see y's vendor docs) so its binary is on PATH"; got != want {
		t.Errorf("InstallFix(none) = %q, want %q", got, want)
	}
	d, _, err := registry.Registry().Resolve("droid")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := InstallFix(d), "npm install -g @factory/cli@0.225.1 @factory/cli-linux-x64@0.225.2"; got != want {
		t.Errorf("InstallFix(droid) = %q, want %q", got, want)
	}
}
