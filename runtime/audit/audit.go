// Package audit keeps the audit log of hook decisions: one JSON line per
// hook call in <state dir>/audit.jsonl, rotated by size (audit.jsonl.1 …
// .N), with secrets such as API keys and tokens masked before anything is
// written. Appending is one write with O_APPEND and no fsync: cheap enough
// for every hook call.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	Command string `json:"command"`
	// Plugin names the plugin bundle of a handler whose error or warning
	// the entry carries; not written for one that answered cleanly.
	Plugin   string `json:"plugin,omitempty"`
	Decision string `json:"decision,omitempty"`
	Error    string `json:"error,omitempty"`
	// Warning is what was wrong with an answer that was accepted all the
	// same (unknown result keys).
	Warning   string  `json:"warning,omitempty"`
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
	// Halted: the answer halts the session (it rendered a rule whose atlas
	// effect is haltsSession, such as a canonical halt); HaltReason is why.
	// HaltDropped: a handler asked for a halt the event cannot express.
	Halted      bool   `json:"halted,omitempty"`
	HaltReason  string `json:"haltReason,omitempty"`
	HaltDropped bool   `json:"haltDropped,omitempty"`
	// StopCap: a handler blocked this stop, but the session's chain of
	// blocked stops passed the stop guard's cap (this many blocks), so
	// sitter let it stop: the loop gave up and waits for its user.
	StopCap   int     `json:"stopCap,omitempty"`
	LatencyMs float64 `json:"latencyMs"`
}

// Config says where the log is and when it rotates.
type Config struct {
	Dir      string
	MaxBytes int64 // rotate when the log would pass this; 0 = 10 MiB
	Keep     int   // rotated files kept; 0 = 3
}

// FromEnv reads SITTER_AUDIT_MAX_BYTES (bytes, default 10 MiB) and
// SITTER_AUDIT_KEEP (rotated files kept, default 3). A value that is not
// a whole number above 0 ("10MB", "0", "-1") leaves the default in place
// and is named in one error of the list, so that a hook can say so: a
// setting that silently did nothing would look like one that worked.
func FromEnv(dir string) (Config, []error) {
	c := Config{Dir: dir}
	var errs []error
	if v := os.Getenv("SITTER_AUDIT_MAX_BYTES"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			c.MaxBytes = n
		} else {
			errs = append(errs, fmt.Errorf("SITTER_AUDIT_MAX_BYTES=%q: want a number of bytes above 0; the default, 10 MiB, holds", v))
		}
	}
	if v := os.Getenv("SITTER_AUDIT_KEEP"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			c.Keep = n
		} else {
			errs = append(errs, fmt.Errorf("SITTER_AUDIT_KEEP=%q: want a number of rotated files above 0 (SITTER_AUDIT=0 turns the log off); the default, 3, holds", v))
		}
	}
	return c, errs
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
	for _, s := range []*string{&e.Command, &e.Reason, &e.HaltReason, &e.Error} {
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
		e.Handlers[i].Warning, r = Redact(e.Handlers[i].Warning)
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

// Append writes one entry, rotating first when the log is full. When the
// rotation lock cannot be had, or the log is a symbolic link, the error
// says so; the entry is still appended when it can be.
//
// Only rotation takes the lock, not every append; that is enough:
//   - An append is one write(2) on an O_APPEND descriptor: the kernel puts
//     each at the end of the file whole, so appends need no lock among
//     themselves, and the hook path stays a stat, an open, a write.
//   - Lines were lost when two calls that both saw a full log both shifted
//     the files: rename replaces its target, so the second shift dropped a
//     rotated file with lines in it. Under the lock, with the size checked
//     again once it is held, rotations run one at a time and only on a
//     full log.
//   - An append racing a rotation needs no lock: its descriptor names the
//     file, not the path, so a line written just after the rename lands in
//     audit.jsonl.1, which Query still reads. It could only be lost if its
//     file were shifted past Keep between the open and the write: Keep
//     rotations of full logs in that instant, the same fate as a line
//     rotated out by age.
func Append(c Config, e Entry) error {
	c = c.norm()
	b := appendEntry(make([]byte, 0, 1024), &e)
	path := filepath.Join(c.Dir, FileName)
	var rerr error
	// Lstat: a link at path is not rotated but refused by appendFile.
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size()+int64(len(b)) > c.MaxBytes {
		rerr = rotateLocked(path, c, int64(len(b)))
	}
	err := appendFile(path, b)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(c.Dir, 0o700); err == nil {
			err = appendFile(path, b)
		}
	}
	return errors.Join(err, rerr)
}

// LockName is the rotation lock's file in the state dir.
const LockName = FileName + ".lock"

// rotateLocked rotates under the rotation lock, if the log is still too
// full for n more bytes once the lock is held (another call may have
// rotated while this one waited).
func rotateLocked(path string, c Config, n int64) error {
	l, err := LockState(filepath.Join(c.Dir, LockName), RotateLockWait)
	if err != nil {
		return fmt.Errorf("appended without rotating: %w", err)
	}
	defer l.Close()
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() || st.Size()+n <= c.MaxBytes {
		return nil
	}
	rotate(path, c.Keep)
	return nil
}

// rotate shifts audit.jsonl.(n-1) → .n …, audit.jsonl → .1; the caller
// holds the rotation lock. Rename and remove act on a link itself, never
// on where it points.
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
type Filter struct {
	Session, Decision, Verdict, Harness, Phase string
	Halted                                     bool // only entries whose answer halted the session
}

// Decisions are the merged decisions an entry can record, Verdicts its
// policy verdicts: what a Filter may ask for.
var (
	Decisions = []string{"deny", "block", "ask", "allow", "noop"}
	Verdicts  = []string{Allow, Deny, Restricted, Redacted}
)

// Check is f ready to match, or why it never could: a decision or verdict
// no entry records is a mistake (named as the flag of sitter audit query
// that sets it), not a query with no answer. resolve, when given, maps a
// harness name or alias to its id (the registry's), which is what entries
// record; a name it does not know is kept as given, since a call that
// named an unknown harness is recorded with it.
func (f Filter) Check(resolve func(name string) (string, error)) (Filter, error) {
	if f.Decision != "" && !slices.Contains(Decisions, f.Decision) {
		return f, fmt.Errorf("--decision %q: want %s", f.Decision, oneOf(Decisions))
	}
	if f.Verdict != "" && !slices.Contains(Verdicts, f.Verdict) {
		return f, fmt.Errorf("--verdict %q: want %s", f.Verdict, oneOf(Verdicts))
	}
	if f.Harness != "" && resolve != nil {
		if id, err := resolve(f.Harness); err == nil {
			f.Harness = id
		}
	}
	return f, nil
}

// oneOf lists values as "a, b or c".
func oneOf(values []string) string {
	n := len(values)
	if n < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:n-1], ", ") + " or " + values[n-1]
}

// Match says whether f keeps e.
func (f Filter) Match(e *Entry) bool { return f.match(e) }

func (f Filter) match(e *Entry) bool {
	return (f.Session == "" || e.Session == f.Session) && (f.Decision == "" || e.Decision == f.Decision) &&
		(f.Verdict == "" || e.Verdict == f.Verdict) && (f.Harness == "" || e.Harness == f.Harness) && (f.Phase == "" || e.Phase == f.Phase) &&
		(!f.Halted || e.Halted)
}

// MaxLine is the longest line Query reads; a longer one is skipped and
// counted, never an error that would hide every other entry until it
// rotates out.
const MaxLine = 4 << 20

// Skipped says what Query passed over.
type Skipped struct {
	TooLong int      // lines over MaxLine
	Bad     int      // lines that are not an entry (a torn last line, garbage)
	Refused []string // log files not read: "path: why" (a symbolic link)
}

// String is one line for a diagnostic; "" when nothing was skipped.
func (s Skipped) String() string {
	var parts []string
	if s.TooLong > 0 {
		parts = append(parts, fmt.Sprintf("skipped %d %s longer than %d MiB", s.TooLong, plural(s.TooLong, "line"), MaxLine>>20))
	}
	if s.Bad > 0 {
		parts = append(parts, fmt.Sprintf("skipped %d %s that %s not an entry", s.Bad, plural(s.Bad, "line"), map[bool]string{true: "is", false: "are"}[s.Bad == 1]))
	}
	for _, r := range s.Refused {
		parts = append(parts, "did not read "+r)
	}
	return strings.Join(parts, "; ")
}

func plural(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// Query streams the log oldest first and returns the matching entries,
// at most the last limit of them (0 = all), and what it skipped. A filter
// that Check refuses is an error, not an empty answer.
func Query(c Config, f Filter, limit int) ([]Entry, Skipped, error) {
	var out []Entry
	var sk Skipped
	if _, err := f.Check(nil); err != nil {
		return nil, sk, err
	}
	for _, p := range Files(c) {
		fh, err := openRead(p)
		if errors.Is(err, ErrSymlink) {
			sk.Refused = append(sk.Refused, p+": "+ErrSymlink.Error())
			continue
		}
		if err != nil {
			return nil, sk, err
		}
		err = eachLine(fh, MaxLine, func(line []byte) {
			var e Entry
			if json.Unmarshal(line, &e) != nil {
				sk.Bad++
				return
			}
			if !f.match(&e) {
				return
			}
			out = append(out, e)
			if limit > 0 && len(out) > 2*limit {
				out = append(out[:0], out[len(out)-limit:]...)
			}
		}, func() { sk.TooLong++ })
		fh.Close()
		if err != nil {
			return nil, sk, fmt.Errorf("%s: %w", p, err)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, sk, nil
}

// eachLine calls line for every non-empty line of r up to max bytes, and
// tooLong for every longer one, which it reads past without keeping.
func eachLine(r io.Reader, max int, line func([]byte), tooLong func()) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var cur []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(cur)+len(chunk) > max+1 { // +1: the newline
				over, cur = true, cur[:0]
			} else {
				cur = append(cur, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			tooLong()
		} else if l := bytes.TrimRight(cur, "\r\n"); len(bytes.TrimSpace(l)) > 0 {
			line(l)
		}
		cur, over = cur[:0], false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Redact masks secrets in s; the bool says whether it masked any.
func Redact(s string) (string, bool) { return redact.String(s) }
