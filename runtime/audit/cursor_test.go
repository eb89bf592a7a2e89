package audit

import (
	"os"
	"path/filepath"
	"testing"
)

// A mark names a line by where it ends and its hash: After resumes after
// it in whichever file holds it now, and a mark whose line changed or is
// gone resumes nowhere (every line is newer).
func TestAfterMark(t *testing.T) {
	dir := t.TempDir()
	c := Config{Dir: dir}
	path := filepath.Join(dir, FileName)
	// CRLF line ends, an empty line and a last line still being written.
	if err := os.WriteFile(path, []byte("{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}\n{\"torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	var lines []Line
	collect := func(l Line) error { lines = append(lines, l); return nil }
	sc, err := After(c, Mark{}, collect)
	if err != nil || !sc.Found || len(lines) != 3 || string(lines[0].Data) != `{"a":1}` {
		t.Fatalf("from the start: %+v %v %+v", sc, err, lines)
	}
	m := lines[1].Mark // {"b":2}
	back, err := ParseMark(m.String())
	if err != nil || back != m {
		t.Fatalf("ParseMark(%q) = %+v, %v", m.String(), back, err)
	}
	// The log rotates: the mark is found in audit.jsonl.1.
	os.Rename(path, path+".1")
	os.WriteFile(path, []byte("{\"d\":4}\n"), 0o600)
	lines = nil
	if sc, err = After(c, m, collect); err != nil || !sc.Found || len(lines) != 2 || string(lines[0].Data) != `{"c":3}` || string(lines[1].Data) != `{"d":4}` {
		t.Fatalf("after the mark across rotation: %+v %v %+v", sc, err, lines)
	}
	// The CRLF line's mark is found too.
	lines = nil
	if sc, _ = After(c, Mark{End: 9, Sum: LineSum([]byte(`{"a":1}`))}, collect); !sc.Found || len(lines) != 3 {
		t.Fatalf("after the CRLF line: %+v %+v", sc, lines)
	}
	// A mark no file has: every line is newer.
	lines = nil
	if sc, _ = After(c, Mark{End: m.End, Sum: LineSum([]byte("other"))}, collect); sc.Found || len(lines) != 4 {
		t.Fatalf("an unknown mark: %+v, %d lines", sc, len(lines))
	}
	for _, bad := range []string{"", "12", "x:" + m.Sum, "0:" + m.Sum, "5:abc"} {
		if _, err := ParseMark(bad); err == nil {
			t.Errorf("ParseMark(%q) accepted", bad)
		}
	}
}
