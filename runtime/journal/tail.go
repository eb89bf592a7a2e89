package journal

import (
	"fmt"
	"os"
	"path/filepath"
)

// Names lists the event files of dir in sequence order, as Load reads
// them, without reading them. clean is false when dir also holds a .json
// file that is not named as an event, which Load reports as corruption.
// A cache of what a replay of dir computed (runtime/run) compares these
// names with the ones it replayed.
func Names(dir string) (files []string, clean bool, err error) {
	names, _, bad, err := scan(dir)
	if err != nil {
		return nil, false, fmt.Errorf("read journal %s: %w", dir, err)
	}
	files = make([]string, len(names))
	for i, n := range names {
		files[i] = n.file
	}
	return files, len(bad) == 0, nil
}

// LoadAfter reads and verifies the event files that continue a journal
// after prev (nil: from its start), as Load verifies them: each file
// follows the one before it in sequence number and ULID, passes its
// checksum and, when sitter wrote it, its link (to its name, and to
// prev's checksum when prev has one). Any problem is an error without a diagnosis: the caller loads
// the whole journal to get Load's.
func LoadAfter(dir string, prev *Event, files []string) ([]Event, error) {
	seq, ulid := 0, ""
	if prev != nil {
		seq, ulid = prev.Seq, prev.ULID
	}
	events := make([]Event, 0, len(files))
	for _, f := range files {
		n, ok := parseName(f)
		if !ok || n.seq != seq+1 || n.ulid <= ulid {
			return nil, fmt.Errorf("journal file %s does not follow %06d.%s", f, seq, ulid)
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("read journal %s: %w", f, err)
		}
		ev, err := verify(b)
		if err != nil {
			return nil, fmt.Errorf("journal file %s: %w", f, err)
		}
		if reason := checkLink(ev.Link, n, prev, seq == 0); reason != "" {
			return nil, fmt.Errorf("journal file %s %s", f, reason)
		}
		ev.Seq, ev.ULID, ev.File = n.seq, n.ulid, n.file
		events = append(events, ev)
		seq, ulid = n.seq, n.ulid
		prev = &events[len(events)-1]
	}
	return events, nil
}
