// Package audit keeps the audit log of hook decisions: one JSON line per
// hook call in <state dir>/audit.jsonl, rotated by size (audit.jsonl.1 …
// .N), with secrets such as API keys and tokens masked before anything is
// written. Appending is one write with O_APPEND and no fsync: cheap enough
// for every hook call.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/redact"
)

// Policy verdicts of an entry.
const (
	Allow      = "allow"
	Deny       = "deny"       // refused (deny, or block on a stop)
	Restricted = "restricted" // allowed with a rewritten input
	Redacted   = "redacted"   // allowed; secrets were masked in what was logged
)

// FileName is the log in the state dir.
const FileName = "audit.jsonl"

// Handler is one handler's part in a decision.
type Handler struct {
	Command   string  `json:"command"`
	Decision  string  `json:"decision,omitempty"`
	Error     string  `json:"error,omitempty"`
	Skipped   bool    `json:"skipped,omitempty"`
	LatencyMs float64 `json:"latencyMs"`
}

// Entry is one hook call.
type Entry struct {
	Time        string    `json:"time"`
	Harness     string    `json:"harness"`
	NativeEvent string    `json:"nativeEvent"`
	Phase       string    `json:"phase"`
	Session     string    `json:"session,omitempty"`
	Tool        string    `json:"tool,omitempty"`
	ToolKind    string    `json:"toolKind,omitempty"`
	Command     string    `json:"command,omitempty"` // a shell tool's command, redacted, cut
	Handlers    []Handler `json:"handlers"`
	Decision    string    `json:"decision"` // merged
	Verdict     string    `json:"verdict"`
	Reason      string    `json:"reason,omitempty"`
	Error       string    `json:"error,omitempty"`    // why sitter answered without running handlers
	Evidence    []string  `json:"evidence,omitempty"` // the atlas evidence of the event's render rules
	LatencyMs   float64   `json:"latencyMs"`
}

// Config says where the log is and when it rotates.
type Config struct {
	Dir      string
	MaxBytes int64 // rotate when the log would pass this; 0 = 10 MiB
	Keep     int   // rotated files kept; 0 = 3
}

// FromEnv reads SITTER_AUDIT_MAX_BYTES and SITTER_AUDIT_KEEP.
func FromEnv(dir string) Config {
	c := Config{Dir: dir}
	if n, err := strconv.ParseInt(os.Getenv("SITTER_AUDIT_MAX_BYTES"), 10, 64); err == nil && n > 0 {
		c.MaxBytes = n
	}
	if n, err := strconv.Atoi(os.Getenv("SITTER_AUDIT_KEEP")); err == nil && n > 0 {
		c.Keep = n
	}
	return c
}

func (c Config) norm() Config {
	if c.MaxBytes <= 0 {
		c.MaxBytes = 10 << 20
	}
	if c.Keep <= 0 {
		c.Keep = 3
	}
	return c
}

// Enabled reports whether hook calls are audited: on unless SITTER_AUDIT
// is 0 (or off, false, no). Appending is a stat, an open with O_APPEND, one
// write and a close, inside the no-handler hook's latency target (make
// bench: hookbench measures with the log on).
func Enabled() bool {
	switch strings.ToLower(os.Getenv("SITTER_AUDIT")) {
	case "0", "off", "false", "no":
		return false
	}
	return true
}

// Finish redacts an entry's free text, sets its verdict and time.
func (e *Entry) Finish(rewrote bool) {
	red := false
	for _, s := range []*string{&e.Command, &e.Reason, &e.Error} {
		var r bool
		*s, r = Redact(*s)
		red = red || r
	}
	for i := range e.Handlers {
		var r bool
		e.Handlers[i].Command, r = Redact(e.Handlers[i].Command)
		red = red || r
		e.Handlers[i].Error, r = Redact(e.Handlers[i].Error)
		red = red || r
	}
	switch {
	case e.Decision == "deny" || e.Decision == "block":
		e.Verdict = Deny
	case rewrote:
		e.Verdict = Restricted
	case red:
		e.Verdict = Redacted
	default:
		e.Verdict = Allow
	}
	if e.Time == "" {
		e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	if len(e.Command) > 300 {
		e.Command = e.Command[:300] + "…"
	}
}

// Append writes one entry, rotating first when the log is full.
func Append(c Config, e Entry) error {
	c = c.norm()
	b := appendEntry(make([]byte, 0, 1024), &e)
	path := filepath.Join(c.Dir, FileName)
	if st, err := os.Stat(path); err == nil && st.Size()+int64(len(b)) > c.MaxBytes {
		rotate(path, c.Keep)
	}
	err := appendFile(path, b)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(c.Dir, 0o700); err == nil {
			err = appendFile(path, b)
		}
	}
	return err
}

// rotate shifts audit.jsonl.(n-1) → .n …, audit.jsonl → .1. Two hook
// calls racing here may both rotate; an entry is never lost, at worst a
// rotated file is smaller.
func rotate(path string, keep int) {
	os.Remove(fmt.Sprintf("%s.%d", path, keep))
	for i := keep - 1; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", path, i), fmt.Sprintf("%s.%d", path, i+1))
	}
	os.Rename(path, path+".1")
}

// Files lists the log files oldest first.
func Files(c Config) []string {
	c = c.norm()
	path := filepath.Join(c.Dir, FileName)
	var fs []string
	for i := c.Keep; i >= 1; i-- {
		p := fmt.Sprintf("%s.%d", path, i)
		if _, err := os.Stat(p); err == nil {
			fs = append(fs, p)
		}
	}
	if _, err := os.Stat(path); err == nil {
		fs = append(fs, path)
	}
	return fs
}

// Filter selects entries; empty fields match all.
type Filter struct{ Session, Decision, Verdict, Harness, Phase string }

func (f Filter) match(e *Entry) bool {
	return (f.Session == "" || e.Session == f.Session) && (f.Decision == "" || e.Decision == f.Decision) &&
		(f.Verdict == "" || e.Verdict == f.Verdict) && (f.Harness == "" || e.Harness == f.Harness) && (f.Phase == "" || e.Phase == f.Phase)
}

// Query streams the log oldest first and returns the matching entries,
// at most the last limit of them (0 = all).
func Query(c Config, f Filter, limit int) ([]Entry, error) {
	var out []Entry
	for _, p := range Files(c) {
		fh, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var e Entry
			if json.Unmarshal(sc.Bytes(), &e) != nil || !f.match(&e) {
				continue
			}
			out = append(out, e)
			if limit > 0 && len(out) > 2*limit {
				out = append(out[:0], out[len(out)-limit:]...)
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// Redact masks secrets in s; the bool says whether it masked any.
func Redact(s string) (string, bool) { return redact.String(s) }
