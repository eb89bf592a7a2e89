package model

import "testing"

// A position names file:line:col; one without a line (a folder, a file as
// a whole) names the file alone, never file:0:0.
func TestPosString(t *testing.T) {
	for _, tt := range []struct {
		pos  Pos
		want string
	}{
		{Pos{File: "atlas/harnesses/x.cue", Line: 12, Col: 5}, "atlas/harnesses/x.cue:12:5"},
		{Pos{File: "plugins-src/guard", Line: 0}, "plugins-src/guard"},
		{Pos{File: "plugins-src/guard/plugin.yaml", Line: 3}, "plugins-src/guard/plugin.yaml:3"},
		{Pos{}, "atlas"},
	} {
		if got := tt.pos.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.pos, got, tt.want)
		}
	}
}

func TestAddf(t *testing.T) {
	var errs Errors
	errs.Addf(Pos{File: "a.cue", Line: 2, Col: 1}, "event %s: %d", "X", 3)
	errs.Addf(Pos{File: "a.cue", Line: 1, Col: 1}, "first")
	if got, want := errs.Sort().Error(), "a.cue:1:1: first\na.cue:2:1: event X: 3"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// RewritePluginDir writes the root for both spellings of
// $SITTER_PLUGIN_DIR and leaves a longer variable name alone.
func TestRewritePluginDir(t *testing.T) {
	for in, want := range map[string]string{
		"$SITTER_PLUGIN_DIR/bin/x":                  "${R}/bin/x",
		"${SITTER_PLUGIN_DIR}/a:$SITTER_PLUGIN_DIR": "${R}/a:${R}",
		"$SITTER_PLUGIN_DIRS/x":                     "$SITTER_PLUGIN_DIRS/x",
		"npx":                                       "npx",
	} {
		if got := RewritePluginDir(in, "${R}"); got != want {
			t.Errorf("RewritePluginDir(%q) = %q, want %q", in, got, want)
		}
		if NamesPluginDir(in) != (want != in) {
			t.Errorf("NamesPluginDir(%q) = %v", in, NamesPluginDir(in))
		}
	}
}
