package journal

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Event types written by sitter. The first seven are the SDK's; the SDK
// skips types it does not know, so a run sitter writes stays readable.
const (
	RunCreated             = "RUN_CREATED"
	EffectRequested        = "EFFECT_REQUESTED"
	EffectResolved         = "EFFECT_RESOLVED"
	RunCompleted           = "RUN_COMPLETED"
	RunFailed              = "RUN_FAILED"
	RunHalted              = "RUN_HALTED"
	ProcessRuntimeError    = "PROCESS_RUNTIME_ERROR"
	StopHookInvoked        = "STOP_HOOK_INVOKED"
	SessionBound           = "SESSION_BOUND"
	ProcessCodeHashChanged = "PROCESS_CODE_HASH_CHANGED"
)

// Event is one journal entry as loaded from disk.
type Event struct {
	Seq        int             `json:"seq"`
	ULID       string          `json:"ulid"`
	File       string          `json:"filename"`
	Type       string          `json:"type"`
	RecordedAt string          `json:"recordedAt"`
	Data       json.RawMessage `json:"data"`
	// Link is sitter's binding of the event to its place; nil in events
	// the SDK wrote.
	Link     *Link  `json:"sitter,omitempty"`
	Checksum string `json:"checksum"`
}

// Link is what sitter adds to each event it writes, under the top-level
// key "sitter" (covered by the checksum; the SDK reads only type,
// recordedAt, data and checksum, so its readers ignore it): the event's
// own sequence number and ULID, which must match its file name, and the
// checksum of the event before it. Each file's checksum verifies only
// that file; the link makes the contents of two files swapped, an event
// copied under another name, or the event before it replaced, show.
type Link struct {
	Seq  int    `json:"seq"`
	ULID string `json:"ulid"`
	Prev string `json:"prev,omitempty"`
}

// Journal is a loaded, verified journal.
type Journal struct {
	Dir    string
	Events []Event
	// Partial lists temp files left by writes that never completed: they
	// are not events and do not affect the run; Repair quarantines them.
	Partial []string
}

// Head is the last event, or nil for an empty journal.
func (j *Journal) Head() *Event {
	if len(j.Events) == 0 {
		return nil
	}
	return &j.Events[len(j.Events)-1]
}

// CorruptError says which journal file breaks verification and why.
type CorruptError struct {
	File   string // base name inside the journal dir
	Reason string
	// Tail is true when every file from File on is bad: Repair can
	// quarantine them without touching a good event.
	Tail bool
	// Followed is true when a good event follows File.
	Followed bool
}

func (e *CorruptError) Error() string {
	hint := "; run `sitter run repair` to quarantine the corrupt tail"
	switch {
	case e.Followed:
		hint = "; good events follow it, so it is not a torn tail: restore the file from a backup"
	case !e.Tail:
		hint = "; its name breaks the journal's order, which no torn write does, so `sitter run repair` leaves it: restore the journal's files from a backup"
	}
	return fmt.Sprintf("journal file %s: %s%s", e.File, e.Reason, hint)
}

// Advice is err's text for a person, with the `sitter run repair` that a
// CorruptError in it advises naming the run (ref: its id or directory);
// advised says whether err carries such advice of its own (a repair, or
// a restore from a backup, which a repair would not mend).
func Advice(err error, ref string) (text string, advised bool) {
	var ce *CorruptError
	if !errors.As(err, &ce) {
		return err.Error(), false
	}
	return strings.Replace(err.Error(), "`sitter run repair`", "`sitter run repair "+ref+"`", 1), true
}

// encode renders an event as the SDK does: JSON.stringify(ev, null, 2)
// plus a newline, the checksum its sha256, then the same with the
// checksum as last key.
func encode(typ, recordedAt string, data any, link *Link) (file []byte, sum string, err error) {
	b, ok := encodeFlat(typ, recordedAt, data, link)
	if !ok {
		if b, err = encodeBody(typ, recordedAt, data, link); err != nil {
			return nil, "", err
		}
	}
	h := sha256.Sum256(b)
	sum = hex.EncodeToString(h[:])
	// b ends with "\n}\n": splice the checksum in as the last key (in
	// place: b is not used again).
	file = append(b[:len(b)-3], `,
  "checksum": "`+sum+`"
}
`...)
	return file, sum, nil
}

// encodeBody is the event without its checksum, as encoding/json writes
// it: the data compact with HTML escaping off, then the whole indented.
func encodeBody(typ, recordedAt string, data any, link *Link) ([]byte, error) {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil {
		return nil, fmt.Errorf("encode %s data: %w", typ, err)
	}
	body := struct {
		Type       string          `json:"type"`
		RecordedAt string          `json:"recordedAt"`
		Data       json.RawMessage `json:"data"`
		Link       *Link           `json:"sitter,omitempty"`
	}{typ, recordedAt, bytes.TrimSpace(raw.Bytes()), link}
	var buf bytes.Buffer
	enc = json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// verify checks a file's checksum the way it was computed: over the bytes
// of the event without its checksum key. Splicing the key out (rather than
// re-encoding) keeps key order, number and escape spelling exactly as the
// writer (sitter or Node) produced them.
func verify(b []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("not valid JSON (%v)", err)
	}
	if ev.Checksum == "" {
		return ev, errors.New("no checksum")
	}
	suffix := ",\n  \"checksum\": \"" + ev.Checksum + "\"\n}\n"
	if !bytes.HasSuffix(b, []byte(suffix)) {
		return ev, errors.New("checksum is not the last key of a 2-space-indented event")
	}
	body := append(append([]byte{}, b[:len(b)-len(suffix)]...), "\n}\n"...)
	h := sha256.Sum256(body)
	if hex.EncodeToString(h[:]) != ev.Checksum {
		return ev, errors.New("checksum mismatch")
	}
	if ev.Type == "" {
		return ev, errors.New("no event type")
	}
	return ev, nil
}

// name is one directory entry that looks like an event file.
type name struct {
	file string
	seq  int
	ulid string
}

// parseName reads NNNNNN.<ULID>.json.
func parseName(file string) (name, bool) {
	base, ok := strings.CutSuffix(file, ".json")
	if !ok {
		return name{}, false
	}
	seqs, ulid, ok := strings.Cut(base, ".")
	if !ok || len(seqs) < 6 {
		return name{}, false
	}
	seq, err := strconv.Atoi(seqs)
	if err != nil || seq <= 0 {
		return name{}, false
	}
	if _, ok := ParseULID(ulid); !ok {
		return name{}, false
	}
	return name{file, seq, ulid}, true
}

// scan lists the event files (sorted by sequence), the temp files and the
// misnamed .json files of dir.
func scan(dir string) (names []name, temps, bad []string, err error) {
	// (*File).ReadDir, not os.ReadDir: names are sorted by sequence
	// below, a sort by name first would be wasted.
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, nil, nil, err
	}
	names = make([]name, 0, len(entries))
	for _, e := range entries {
		f := e.Name()
		switch n, ok := parseName(f); {
		case strings.HasPrefix(f, tempPrefix) || strings.Contains(f, ".json.tmp-"):
			// sitter's temp files, and the SDK's (<target>.tmp-<pid>-<ms>).
			temps = append(temps, f)
		case ok && e.Type().IsRegular():
			names = append(names, n)
		case strings.HasSuffix(f, ".json"):
			bad = append(bad, f)
		}
		// Other files (.DS_Store, editor backups) are not the journal's,
		// as for the SDK, which reads only *.json.
	}
	slices.SortFunc(names, func(a, b name) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return strings.Compare(a.file, b.file)
	})
	return names, temps, bad, nil
}

// Load reads and verifies every event of dir: checksums, sequence numbers
// 1..n without gap or duplicate, increasing ULIDs. The first problem is
// returned as a *CorruptError naming the file, with the good events before
// it in the Journal.
func Load(dir string) (*Journal, error) {
	names, temps, bad, err := scan(dir)
	if err != nil {
		return nil, fmt.Errorf("read journal %s: %w", dir, err)
	}
	j := &Journal{Dir: dir, Partial: temps}
	var cerr *CorruptError
	j.Events, cerr, err = check(dir, names)
	if err != nil {
		return j, err
	}
	if len(bad) > 0 {
		return j, &CorruptError{File: bad[0], Reason: "is not named NNNNNN.<ULID>.json", Tail: cerr == nil || cerr.Tail}
	}
	if cerr != nil {
		return j, cerr
	}
	return j, nil
}

// check verifies the event files in order and returns the good events
// before the first bad one.
func check(dir string, names []name) ([]Event, *CorruptError, error) {
	var events []Event
	var bad *CorruptError
	for i, n := range names {
		reason, damage := "", true
		var ev Event
		want := 1
		if i > 0 {
			want = names[i-1].seq + 1
		}
		switch {
		case i > 0 && n.seq == names[i-1].seq:
			reason = fmt.Sprintf("duplicates sequence number %d", n.seq)
		case n.seq != want:
			reason = fmt.Sprintf("sequence gap: expected %06d, got %06d", want, n.seq)
		case i > 0 && n.ulid <= names[i-1].ulid:
			reason = fmt.Sprintf("ULID %s does not follow %s", n.ulid, names[i-1].ulid)
		default:
			b, err := os.ReadFile(filepath.Join(dir, n.file))
			if err != nil {
				return events, nil, fmt.Errorf("read journal %s: %w", n.file, err)
			}
			if ev, err = verify(b); err != nil {
				// Only a file whose content is bad can be a torn write.
				reason, damage = err.Error(), false
				break
			}
			if bad == nil {
				// (After a bad file, any good one shows that the bad one
				// is no torn tail; the bad one is what is reported.)
				var prev *Event
				if len(events) > 0 {
					prev = &events[len(events)-1]
				}
				reason = checkLink(ev.Link, n, prev, i == 0)
			}
		}
		if reason != "" {
			if bad == nil {
				bad = &CorruptError{File: n.file, Reason: reason, Tail: !damage}
			}
			continue
		}
		if bad != nil {
			// A good event after a bad one: not a torn tail.
			bad.Tail, bad.Followed = false, true
			return events, bad, nil
		}
		ev.Seq, ev.ULID, ev.File = n.seq, n.ulid, n.file
		events = append(events, ev)
	}
	return events, bad, nil
}

// checkLink checks an event's link (nil: an event the SDK wrote, which
// has none) against its file name and the event before it: prev, or
// first when it is the journal's first event. A prev whose checksum is
// not known (nil, or no Checksum) is not checked against.
func checkLink(l *Link, n name, prev *Event, first bool) string {
	if l == nil {
		return ""
	}
	if l.Seq != n.seq || l.ULID != n.ulid {
		return fmt.Sprintf("holds the event written as %06d.%s.json: journal contents were swapped, copied or renamed", l.Seq, l.ULID)
	}
	switch {
	case first && l.Prev != "":
		return "is the first event but was written after another one (" + short(l.Prev) + ")"
	case prev != nil && prev.Checksum != "" && l.Prev != prev.Checksum:
		return fmt.Sprintf("was written after an event with checksum %s, but %s has %s: the event before it was replaced or swapped", short(l.Prev), prev.File, short(prev.Checksum))
	}
	return ""
}

func short(sum string) string {
	if sum == "" {
		return "none"
	}
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}

// Append writes the next event after head (nil for the first) and returns
// it. The caller holds the run lock and has loaded the journal, so head is
// the real last event.
func Append(dir string, head *Event, typ string, data any) (Event, error) {
	seq, after := 1, ""
	if head != nil {
		seq, after = head.Seq+1, head.ULID
	}
	prev := ""
	if head != nil {
		if prev = head.Checksum; prev == "" {
			// A head known by name only (a cache's): its file has it.
			var err error
			if prev, err = fileChecksum(filepath.Join(dir, head.File)); err != nil {
				return Event{}, err
			}
		}
	}
	recordedAt := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	id := NewULID(after)
	link := &Link{Seq: seq, ULID: id, Prev: prev}
	file, sum, err := encode(typ, recordedAt, data, link)
	if err != nil {
		return Event{}, err
	}
	fname := fileName(seq, id)
	if err := WriteFileAtomic(filepath.Join(dir, fname), file); err != nil {
		return Event{}, err
	}
	raw, ok := marshalFlat(data)
	if !ok {
		raw, _ = json.Marshal(data)
	}
	return Event{Seq: seq, ULID: id, File: fname, Type: typ, RecordedAt: recordedAt, Data: raw, Link: link, Checksum: sum}, nil
}

// fileName is an event's file name, fmt.Sprintf("%06d.%s.json", seq, id)
// written without fmt (appended at every stop check).
func fileName(seq int, id string) string {
	n := strconv.Itoa(seq)
	if len(n) < 6 {
		n = "000000"[len(n):] + n
	}
	return n + "." + id + ".json"
}

// fileChecksum is the checksum an event file records.
func fileChecksum(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("journal head: %w", err)
	}
	var ev struct {
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(b, &ev); err != nil || ev.Checksum == "" {
		return "", fmt.Errorf("journal head %s: no checksum", filepath.Base(path))
	}
	return ev.Checksum, nil
}

// Repair moves what keeps dir from loading (a corrupt tail, files that are
// no events) and leftover temp files into quarantine, a directory it
// creates, and returns the names it moved. Good events stay where they
// are. A corrupt file followed by good events is not repaired: that is
// damage, not a torn write, and needs a person.
func Repair(dir, quarantine string) ([]string, error) {
	names, temps, bad, err := scan(dir)
	if err != nil {
		return nil, err
	}
	move := append(append([]string{}, temps...), bad...)
	good, cerr, err := check(dir, names)
	if err != nil {
		return nil, err
	}
	if cerr != nil {
		if !cerr.Tail {
			return nil, cerr
		}
		for _, n := range names[len(good):] {
			move = append(move, n.file)
		}
	}
	if len(move) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(quarantine, 0o755); err != nil {
		return nil, err
	}
	for _, f := range move {
		if err := os.Rename(filepath.Join(dir, f), filepath.Join(quarantine, f)); err != nil {
			return nil, fmt.Errorf("quarantine %s: %w", f, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return move, err
	}
	return move, syncDir(quarantine)
}
