package observe

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"sitter.dev/sitter/runtime/audit"
)

// auditTail reads the audit log as it grows, for the stops the stop guard
// let through at its cap: each read starts where the last one ended, and
// from the top when the log was rotated (another file) or cut.
type auditTail struct {
	off int64
	fi  os.FileInfo
}

// capMark is what a capped stop's entry holds, and nothing else does.
var capMark = []byte(`"stopCap":`)

// read returns the capped stops appended since the last read, the latest
// per (harness, session).
func (t *auditTail) read(path string) map[Driver]StopCapped {
	f, err := audit.OpenNoFollow(path)
	if err != nil {
		t.off, t.fi = 0, nil
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	if t.fi == nil || !os.SameFile(t.fi, fi) || fi.Size() < t.off {
		t.off = 0
	}
	t.fi = fi
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return nil
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	// Only whole lines: a hook call may be writing the last one.
	end := bytes.LastIndexByte(b, '\n') + 1
	t.off += int64(end)
	caps := map[Driver]StopCapped{}
	for _, l := range bytes.Split(b[:end], []byte{'\n'}) {
		if !bytes.Contains(l, capMark) {
			continue
		}
		var e struct {
			Time, Harness, Session string
			StopCap                int
		}
		if json.Unmarshal(l, &e) != nil || e.StopCap <= 0 || e.Session == "" {
			continue
		}
		k := Driver{e.Harness, e.Session}
		at := parseTime(e.Time)
		if c, ok := caps[k]; !ok || at.After(c.At) {
			caps[k] = StopCapped{At: at, Cap: e.StopCap}
		}
	}
	return caps
}
