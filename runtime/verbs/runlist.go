package verbs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// runListRow is one run of `sitter run list --json`.
type runListRow struct {
	RunID        string         `json:"runId"`
	ProcessID    string         `json:"processId"`
	Status       string         `json:"status"`
	RunDir       string         `json:"runDir"`
	Events       int            `json:"events"`
	LastActivity string         `json:"lastActivity,omitempty"`
	Session      *boundSession  `json:"session,omitempty"`
	Pending      map[string]int `json:"pendingByKind,omitempty"`
	Error        string         `json:"error,omitempty"`
	// ProcessError: the process file could not run at the last iterate
	// (PROCESS_RUNTIME_ERROR, with nothing journaled since).
	ProcessError string `json:"processError,omitempty"`
}

type boundSession struct {
	Harness   string `json:"harness"`
	SessionID string `json:"sessionId"`
	Iteration int    `json:"iteration"`
}

// runList is `sitter run list`: the runs of this project (--runs-dir),
// most recent activity first, with the session that drives each.
func runList(f *cmdFlags, stdout, stderr io.Writer) int {
	dir := f.runsDir()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return fail(stderr, "run list", err)
	}
	sessions, _ := session.List()
	rows := []runListRow{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		rd, _ := filepath.Abs(filepath.Join(dir, e.Name()))
		if _, err := os.Stat(filepath.Join(rd, runs.MetadataFile)); err != nil {
			continue
		}
		rows = append(rows, listRow(rd, sessions))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].LastActivity > rows[j].LastActivity })
	// Columns as wide as their widest cell, so that ULIDs and short ids
	// line up; what can be long (a reason) ends the row.
	drivers := make([]string, len(rows))
	wid, wproc, wdrv := len("RUN"), len("PROCESS"), len("SESSION")
	for i, r := range rows {
		drivers[i] = "-"
		if r.Session != nil {
			drivers[i] = r.Session.Harness + "/" + r.Session.SessionID
		}
		wid, wproc, wdrv = max(wid, len(r.RunID)), max(wproc, len(r.ProcessID)), max(wdrv, len(drivers[i]))
	}
	var b strings.Builder
	if len(rows) > 0 {
		fmt.Fprintf(&b, "%-*s  %-10s %-*s  %-24s %-*s  %s\n", wid, "RUN", "STATUS", wproc, "PROCESS", "LAST ACTIVITY", wdrv, "SESSION", "DIRECTORY")
	}
	for i, r := range rows {
		fmt.Fprintf(&b, "%-*s  %-10s %-*s  %-24s %-*s  %s", wid, r.RunID, r.Status, wproc, r.ProcessID, r.LastActivity, wdrv, drivers[i], r.RunDir)
		if r.Error != "" {
			fmt.Fprintf(&b, "  unreadable: %s", r.Error)
		}
		if r.ProcessError != "" {
			fmt.Fprintf(&b, "  process error: %s", oneLine(r.ProcessError, 120))
		}
		b.WriteByte('\n')
	}
	if len(rows) == 0 {
		fmt.Fprintf(&b, "no runs in %s\n", dir)
	}
	return out(stdout, stderr, f.bools["json"], map[string]any{"runsDir": dir, "runs": rows}, b.String())
}

func listRow(rd string, sessions []*session.State) runListRow {
	r := runListRow{RunID: filepath.Base(rd), RunDir: rd}
	if d := session.DriverOf(sessions, rd); d != nil {
		r.Session = &boundSession{d.Harness, d.SessionID, d.Iteration}
	}
	st, err := runs.Load(rd)
	if err != nil {
		r.Status, r.Error = "unreadable", err.Error()
		if m, err := runs.ReadMetadata(rd); err == nil {
			r.ProcessID, r.LastActivity = m.ProcessID, m.CreatedAt
			if m.RunID != "" {
				r.RunID = m.RunID
			}
		}
		return r
	}
	r.RunID, r.ProcessID, r.Status, r.Events = st.Meta.RunID, st.Meta.ProcessID, st.Status, len(st.Journal.Events)
	r.ProcessError = st.RuntimeError
	if h := st.Journal.Head(); h != nil {
		r.LastActivity = h.RecordedAt
	}
	if p := st.PendingByKind(); len(p) > 0 {
		r.Pending = p
	}
	return r
}
