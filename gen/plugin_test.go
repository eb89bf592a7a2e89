package gen_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/gen"
	"sitter.dev/sitter/internal/golden"
)

// withAtlas copies the real atlas into a fresh root, with no plugins.
func withAtlas(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, filepath.Join(repoRoot(t), "atlas"), filepath.Join(root, "atlas"))
	return root
}

func extract(t *testing.T, ar *txtar.Archive, root string) *txtar.File {
	t.Helper()
	var want *txtar.File
	for i, f := range ar.Files {
		if f.Name == "stderr" || f.Name == "bundles" {
			want = &ar.Files[i]
			continue
		}
		p := filepath.Join(root, f.Name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(f.Name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			t.Fatal(err)
		}
	}
	if want == nil {
		t.Fatal("archive has no expected section")
	}
	return want
}

// TestPluginErrors: bad plugin sources fail with the file, line and field.
func TestPluginErrors(t *testing.T) {
	eachArchive(t, "testdata/plugin-errors/*.txtar", func(t *testing.T, path string, ar *txtar.Archive) {
		root := withAtlas(t)
		want := extract(t, ar, root)
		_, _, err := gen.Generate(root)
		if err == nil {
			t.Fatal("generator accepted a bad plugin")
		}
		golden.Section(t, path, ar, want.Name, []byte(err.Error()+"\n"))
	})
}

// TestBundles compiles each plugin of testdata/bundles/*.txtar for every
// harness and compares every bundle file (path, mode, bytes) with the
// archive's golden "bundles" section: one golden per emitter and feature.
func TestBundles(t *testing.T) {
	eachArchive(t, "testdata/bundles/*.txtar", func(t *testing.T, path string, ar *txtar.Archive) {
		root := withAtlas(t)
		want := extract(t, ar, root)
		_, files, err := gen.Generate(root)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range files {
			if !strings.HasPrefix(f.Path, "artifacts/") || f.Path == "artifacts/README.md" {
				continue
			}
			out = append(out, fmt.Sprintf("== %s %04o\n%s", f.Path, f.Mode, bytes.TrimSuffix(f.Bytes, []byte("\n"))))
		}
		sort.Strings(out)
		golden.Section(t, path, ar, want.Name, []byte(strings.Join(out, "\n")+"\n"))
	})
}
