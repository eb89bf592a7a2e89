package golden

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"
)

// fakeT records failures instead of stopping the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }

func TestFileAndSection(t *testing.T) {
	defer func(was bool) { *update = was }(*update) // also under make golden
	*update = false
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	os.WriteFile(path, []byte("a\n"), 0o644)
	for _, c := range []struct {
		got  string
		fail bool
	}{{"a\n", false}, {"b\n", true}} {
		ft := &fakeT{TB: t}
		File(ft, path, []byte(c.got))
		if ft.failed != c.fail {
			t.Errorf("File(%q) failed = %v, want %v", c.got, ft.failed, c.fail)
		}
	}
	ar := &txtar.Archive{Files: []txtar.File{{Name: "stderr", Data: []byte("x\n")}}}
	ft := &fakeT{TB: t}
	Section(ft, filepath.Join(dir, "a.txtar"), ar, "stderr", []byte("y\n"))
	if !ft.failed {
		t.Error("a differing section passed")
	}
	ft = &fakeT{TB: t}
	Section(ft, filepath.Join(dir, "a.txtar"), ar, "stdout", []byte("y\n"))
	if !ft.failed {
		t.Error("a missing section passed")
	}

	*update = true
	File(t, path, []byte("b\n"))
	if b, _ := os.ReadFile(path); string(b) != "b\n" {
		t.Errorf("-update wrote %q", b)
	}
	Section(t, filepath.Join(dir, "a.txtar"), ar, "stdout", []byte("z\n"))
	back, err := txtar.ParseFile(filepath.Join(dir, "a.txtar"))
	if err != nil || len(back.Files) != 2 || string(back.Files[1].Data) != "z\n" {
		t.Errorf("-update wrote %+v, %v", back, err)
	}
}
