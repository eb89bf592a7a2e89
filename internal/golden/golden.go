// Package golden is the one switch of sitter's golden tests: every test
// that compares output with a file of the repository (gen/ and runtime/,
// txtar sections, whole files, testscript scripts) compares through it, and
// `go test ./... -update` rewrites them all. Test code only.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite golden files (and testscript scripts) instead of comparing with them")

// Update reports whether the test run rewrites goldens (-update).
func Update() bool { return *update }

// File compares got with the file at path; under -update it writes got
// there instead.
func File(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("update %s: %v", path, err)
			return
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

// Section compares got with the section name of ar, the archive read from
// path; under -update it replaces (or appends) the section and writes the
// archive back.
func Section(t testing.TB, path string, ar *txtar.Archive, name string, got []byte) {
	t.Helper()
	var sec *txtar.File
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			sec = &ar.Files[i]
		}
	}
	if *update {
		if sec == nil {
			ar.Files = append(ar.Files, txtar.File{Name: name})
			sec = &ar.Files[len(ar.Files)-1]
		}
		sec.Data = got
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatalf("update %s: %v", path, err)
			return
		}
		return
	}
	if sec == nil {
		t.Fatalf("%s has no %s section (go test -update adds it)", path, name)
		return
	}
	if diff := cmp.Diff(string(sec.Data), string(got)); diff != "" {
		t.Errorf("%s, section %s, differs (-want +got; go test -update rewrites it):\n%s", path, name, diff)
	}
}
