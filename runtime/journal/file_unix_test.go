//go:build unix

package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: os.ReadFile's bytes and errors, for sizes around the
// buffer's first size.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 100_000} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("ab\n"), n)[:n]
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "missing"), dir + "/f/under-a-file", dir} {
		_, err := ReadFile(p)
		_, want := os.ReadFile(p)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("ReadFile(%s): %v, os.ReadFile: %v", p, err, want)
		}
	}
}

// TestCreateTemp: a new file per call, named by the pattern, private,
// and os.CreateTemp's error where the directory is missing.
func TestCreateTemp(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for range 50 {
		f, err := createTemp(dir, ".tmp-x-*.json")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("data")); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f.Name())
		if seen[name] || !strings.HasPrefix(name, ".tmp-x-") || !strings.HasSuffix(name, ".json") || filepath.Dir(f.Name()) != dir {
			t.Fatalf("temp file %s (seen %v)", f.Name(), seen[name])
		}
		seen[name] = true
		fi, err := os.Stat(f.Name())
		if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 4 {
			t.Fatalf("%s: %v %v", f.Name(), fi, err)
		}
	}
	missing := filepath.Join(dir, "missing")
	_, err := createTemp(missing, "x-*")
	_, want := os.CreateTemp(missing, "x-*")
	var pe, wpe *os.PathError
	if !errors.As(err, &pe) || !errors.As(want, &wpe) || pe.Op != wpe.Op || pe.Err != wpe.Err || filepath.Dir(pe.Path) != filepath.Dir(wpe.Path) {
		t.Errorf("createTemp in a missing dir: %v; os.CreateTemp: %v", err, want)
	}
	if err := syncDir(missing); err == nil {
		t.Error("syncDir of a missing dir: no error")
	}
}
