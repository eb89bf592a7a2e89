package gen_test

import (
	"go/build"
	"strings"
	"testing"
)

// The emitters read the model only: never the checks, a loader or cue.
func TestEmittersImportOnlyTheModel(t *testing.T) {
	pkg, err := build.ImportDir("emit", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if (strings.HasPrefix(imp, "sitter.dev/") && imp != "sitter.dev/sitter/gen/model") || strings.HasPrefix(imp, "cuelang.org/") {
			t.Errorf("gen/emit imports %s; emitters take everything from gen/model", imp)
		}
	}
}
