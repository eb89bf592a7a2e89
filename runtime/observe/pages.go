package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/checkpoint"
	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/transcript"
)

var funcs = map[string]any{
	"age": func(t time.Time) string {
		if t.IsZero() {
			return "?"
		}
		return roundAge(time.Since(t))
	},
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"runURL": func(dir string) string { return "/run?path=" + url.QueryEscape(dir) },
	"hooksURL": func(harness, sess string) string {
		return "/hooks?" + url.Values{"harness": {harness}, "session": {sess}}.Encode()
	},
	"lower": strings.ToLower,
	"line":  cutLine,
	"base":  filepath.Base,
}

// page is what every template gets.
type page struct {
	Title string
	Nav   string
	CSRF  string
	Data  any
}

func (s *Server) render(w http.ResponseWriter, status int, name, title, nav string, data any) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, page{Title: title, Nav: nav, CSRF: s.csrf, Data: data}); err != nil {
		http.Error(w, "sitter observe: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// boardPage is how many cards a board column shows at a time.
const boardPage = 50

// column is one triage bucket of the board: a page of its runs.
type column struct {
	ID, Title string
	ColumnPage
	// More runs follow the page: Older shows the next Next of them.
	// Newer is the page before this one, Newest the first.
	More, Next           int
	Older, Newer, Newest string
}

// First and Last number the page's cards in the column, from 1.
func (c column) First() int { return c.From + 1 }
func (c column) Last() int  { return c.From + len(c.Runs) }

type boardData struct {
	Columns  []column
	RunsDirs []string
	Total    int
	// Indexing: the first sweep is still reading the runs (Indexed of
	// ToIndex so far); the board shows those read.
	Indexing         bool
	Indexed, ToIndex int
	DirErrors        []DirError // runs directories that cannot be listed
}

func (s *Server) board(w http.ResponseWriter, r *http.Request) {
	d := boardData{RunsDirs: s.ix.RunsDirs()}
	d.Indexing, d.Indexed, d.ToIndex = s.ix.Indexing()
	d.DirErrors = s.ix.DirErrors()
	// ?<column>=K: that column's page starts at its card K (from 0).
	q := r.URL.Query()
	from := map[string]int{}
	for _, b := range Buckets {
		if v := q.Get(b.ID); v != "" {
			k, err := strconv.Atoi(v)
			if err != nil || k < 0 {
				s.fail(w, http.StatusBadRequest, fmt.Sprintf("?%s=%s: a column's page starts at a card count (0, %d, %d, …)", b.ID, v, boardPage, 2*boardPage))
				return
			}
			from[b.ID] = k
		}
	}
	pages, total := s.ix.Page(from, boardPage)
	d.Total = total
	for _, b := range Buckets {
		c := column{ID: b.ID, Title: b.Title, ColumnPage: pages[b.ID]}
		if c.More = c.Total - c.Last(); c.More > 0 {
			c.Older, c.Next = columnURL(q, b.ID, c.Last()), min(c.More, boardPage)
		}
		if c.From > 0 {
			c.Newer = columnURL(q, b.ID, max(c.From-boardPage, 0))
		}
		if c.From > boardPage {
			c.Newest = columnURL(q, b.ID, 0)
		}
		d.Columns = append(d.Columns, c)
	}
	s.render(w, http.StatusOK, "board.html", "sitter observe", "board", d)
}

// columnURL is the board with column col's page starting at card k, the
// other columns' pages as in q.
func columnURL(q url.Values, col string, k int) string {
	v := maps.Clone(q) // Set and Del replace q's slices, never write them
	if v == nil {
		v = url.Values{}
	}
	if k > 0 {
		v.Set(col, strconv.Itoa(k))
	} else {
		v.Del(col)
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// fail answers an error with the dashboard's error page. Only behind the
// token: the page carries the csrf value (a refusal before it, 401 or a
// foreign Host, stays plain text).
func (s *Server) fail(w http.ResponseWriter, status int, msg string) {
	s.render(w, status, "error.html", http.StatusText(status), "", "sitter observe: "+msg)
}

// tlItem is one row of a run's timeline: an event, or effects requested
// together (a parallel group, shown side by side).
type tlItem struct {
	Event   *tlEvent
	Group   []*effectRow
	Seq     int
	Time    string
	Classes string
	// Iteration numbers the iterations that moved the run: each `run
	// iterate` that requested effects (a group) or ended the run.
	Iteration int
}

type tlEvent struct {
	Seq     int
	Type    string
	Time    string
	Summary string
	Bad     bool
}

type effectRow struct {
	ID, Kind, Label, Status, Requested, Resolved, Duration, Error string
	Breakpoint, Pending                                           bool
	Task                                                          string
}

type stopRow struct {
	Time, Harness, Session, Decision, Row, Reason string
	Iteration                                     int
}

type cpRow struct {
	Session, ID, Kind, Time string
	Changes                 []string
}

type runData struct {
	View        RunView
	Err         string
	Timeline    []tlItem
	Effects     []effectRow
	Breakpoints []effectRow
	Inputs      string
	Output      string
	Failure     string
	Stops       []stopRow
	Drivers     []driverRow
	Checkpoints []cpRow
	CPError     string
	Flash       *flash
}

type driverRow struct {
	Harness, Session, State string
}

func (s *Server) watchedDir(w http.ResponseWriter, r *http.Request, path string) (string, bool) {
	dir, ok := s.ix.Watched(path)
	if gone, isGone := s.ix.Gone(path); !ok && isGone {
		// Deleted while its page was open: a page (with <main>) the
		// live refresh swaps in, not the refusal below.
		s.render(w, http.StatusNotFound, "gone.html", "run gone", "run", gone)
		return "", false
	}
	if !ok {
		s.fail(w, http.StatusForbidden, path+" is not a run directory under a watched directory ("+strings.Join(s.ix.RunsDirs(), ", ")+")")
		return "", false
	}
	return dir, true
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.watchedDir(w, r, r.URL.Query().Get("path"))
	if !ok {
		return
	}
	v, ok := s.ix.Run(dir)
	if !ok {
		v = *readRun(dir)
	}
	d := runData{View: v}
	if f := r.URL.Query().Get("flash"); f != "" {
		d.Flash = s.getFlash(f)
	}
	st, err := runs.Load(dir)
	if (err != nil) != (v.Err != "") {
		// The run changed since the index read it (an edit no sweep has
		// seen yet): the header says what the body shows, and the board
		// reads the run again.
		v = s.ix.reread(dir, v)
		d.View = v
	}
	if err != nil {
		d.Err = err.Error()
		s.render(w, http.StatusOK, "run.html", "run "+v.RunID, "run", d)
		return
	}
	fillRun(&d, st)
	for _, dr := range v.Drivers {
		state := "ended"
		for _, ss := range s.ix.Sessions() {
			if ss.Harness == dr.Harness && ss.SessionID == dr.Session {
				switch {
				case ss.Active && ss.RunDir == dir:
					state = fmt.Sprintf("driving (stop-hook iteration %d of %d)", ss.Iteration, ss.MaxIterations)
				case ss.EndedBecause != "":
					state = "stopped driving: " + ss.EndedBecause
				case ss.RunDir != dir:
					state = "moved on to run " + ss.RunID
				}
			}
		}
		d.Drivers = append(d.Drivers, driverRow{dr.Harness, dr.Session, state})
	}
	d.Checkpoints, d.CPError = checkpoints(v)
	s.render(w, http.StatusOK, "run.html", "run "+v.RunID, "run", d)
}

// readSmall reads a run file for display, cut at 64 KiB.
func readSmall(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10+1))
	if len(b) > 64<<10 {
		return string(b[:64<<10]) + "\n… (cut at 64 KiB)"
	}
	return string(b)
}

func pretty(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

func clock(s string) string {
	if t := parseTime(s); !t.IsZero() {
		return t.UTC().Format("15:04:05.000")
	}
	return s
}

func duration(from, to string) string {
	a, b := parseTime(from), parseTime(to)
	if a.IsZero() || b.IsZero() {
		return ""
	}
	d := b.Sub(a)
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(100 * time.Millisecond).String()
}

func fillRun(d *runData, st *runs.State) {
	d.Inputs = readSmall(filepath.Join(st.Dir, runs.InputsFile))
	d.Output = readSmall(filepath.Join(st.Dir, filepath.FromSlash(runs.OutputRef)))
	if len(st.Failure) > 0 {
		d.Failure = pretty(st.Failure)
	} else if st.HaltReason != "" {
		d.Failure = "halted: " + st.HaltReason
	}
	rows := map[string]*effectRow{}
	for _, e := range st.Effects {
		row := &effectRow{ID: e.EffectID, Kind: e.Kind, Label: e.Label, Status: e.Status,
			Requested: clock(e.RequestedAt), Resolved: clock(e.ResolvedAt), Duration: duration(e.RequestedAt, e.ResolvedAt),
			Breakpoint: e.Kind == "breakpoint", Pending: e.Status == runs.Requested}
		if len(e.Error) > 0 && string(e.Error) != "null" {
			row.Error = pretty(e.Error)
		}
		if row.Pending && row.Breakpoint {
			if def, err := st.TaskDef(e); err == nil {
				row.Task = pretty(def)
			}
			d.Breakpoints = append(d.Breakpoints, *row)
		}
		rows[e.EffectID] = row
		d.Effects = append(d.Effects, *row)
	}
	var group *tlItem
	iteration := 0
	for i := range st.Journal.Events {
		ev := &st.Journal.Events[i]
		if ev.Type == journal.EffectRequested {
			var e struct {
				EffectID string `json:"effectId"`
			}
			json.Unmarshal(ev.Data, &e)
			if row := rows[e.EffectID]; row != nil {
				if group == nil {
					iteration++
					d.Timeline = append(d.Timeline, tlItem{Seq: ev.Seq, Time: clock(ev.RecordedAt), Iteration: iteration})
					group = &d.Timeline[len(d.Timeline)-1]
				}
				group.Group = append(group.Group, row)
				continue
			}
		}
		group = nil
		t := &tlEvent{Seq: ev.Seq, Type: ev.Type, Time: clock(ev.RecordedAt)}
		var m map[string]any
		json.Unmarshal(ev.Data, &m)
		str := func(k string) string { s, _ := m[k].(string); return s }
		switch ev.Type {
		case journal.RunCreated:
			t.Summary = "process " + str("processId")
		case journal.EffectResolved:
			id := str("effectId")
			t.Summary = id + " → " + str("status")
			if row := rows[id]; row != nil {
				t.Summary = fmt.Sprintf("%s %s → %s after %s", orID(row.Label, row.Kind), id, str("status"), row.Duration)
			}
			t.Bad = str("status") == "error"
		case journal.StopHookInvoked:
			t.Summary = fmt.Sprintf("%s %s: %s (%s) %s", str("harness"), str("sessionId"), str("decision"), str("row"), str("reason"))
			it, _ := m["iteration"].(float64)
			d.Stops = append(d.Stops, stopRow{clock(ev.RecordedAt), str("harness"), str("sessionId"), str("decision"), str("row"), str("reason"), int(it)})
		case journal.SessionBound:
			t.Summary = fmt.Sprintf("%s session %s (via %s)", str("harness"), str("sessionId"), str("via"))
		case journal.RunFailed, journal.ProcessRuntimeError:
			t.Summary, t.Bad = compactJSON(m["error"]), true
		case journal.RunHalted:
			t.Summary, t.Bad = str("reason"), true
		case journal.RunCompleted:
			t.Summary = "completed"
		default:
			t.Summary = compactJSON(m)
		}
		it := 0
		switch ev.Type {
		case journal.RunCompleted, journal.RunFailed, journal.ProcessRuntimeError:
			iteration++
			it = iteration
		}
		d.Timeline = append(d.Timeline, tlItem{Event: t, Seq: ev.Seq, Time: t.Time, Iteration: it})
	}
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// checkpoints lists the checkpoints of the sessions that drove a run, in
// its project's git repository.
func checkpoints(v RunView) ([]cpRow, string) {
	if len(v.Drivers) == 0 || v.Project == "" {
		return nil, ""
	}
	repo, err := checkpoint.Open(v.Project)
	if err != nil {
		return nil, ""
	}
	have, err := repo.Sessions()
	if err != nil {
		return nil, err.Error()
	}
	var out []cpRow
	for _, dr := range v.Drivers {
		found := false
		for _, h := range have {
			found = found || h == dr.Session
		}
		if !found {
			continue
		}
		cps, err := repo.List(dr.Session)
		if err != nil {
			return out, err.Error()
		}
		for _, cp := range cps {
			if cp.Kind == "base" {
				continue
			}
			ch, _ := repo.Changes(cp)
			out = append(out, cpRow{dr.Session, cp.ID, cp.Kind, clock(cp.Time), ch})
		}
	}
	return out, ""
}

type diffData struct {
	Run  RunView
	ID   string
	Diff string
	Err  string
}

func (s *Server) checkpointDiff(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.watchedDir(w, r, r.URL.Query().Get("path"))
	if !ok {
		return
	}
	v, _ := s.ix.Run(dir)
	d := diffData{Run: v, ID: r.URL.Query().Get("id")}
	repo, err := checkpoint.Open(v.Project)
	if err == nil {
		var cp *checkpoint.Checkpoint
		if cp, err = repo.Get(d.ID); err == nil {
			d.Diff, err = repo.Diff(cp)
		}
	}
	status := http.StatusOK
	if err != nil {
		d.Err, status = err.Error(), http.StatusNotFound
	}
	s.render(w, status, "diff.html", "checkpoint "+d.ID, "run", d)
}

type hookSession struct {
	Harness, Session string
	Entries          []audit.Entry
	Denies           int
}

type hooksData struct {
	Filter    audit.Filter
	Harnesses []string
	Sessions  []hookSession
	Total     int
	Skipped   string
	Err       string
}

// hooks is the audit log as a timeline per session, newest session first.
func (s *Server) hooks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := audit.Filter{Harness: q.Get("harness"), Session: q.Get("session"), Decision: q.Get("decision")}
	d := hooksData{Filter: f}
	cfg, _ := audit.FromEnv(s.stateDir) // a bad setting leaves the default: the files it names are the ones read
	all, sk, err := audit.Query(cfg, audit.Filter{}, 0)
	if err != nil {
		d.Err = err.Error()
	}
	d.Skipped = sk.String()
	seenH := map[string]bool{}
	idx := map[string]int{}
	for _, e := range all {
		if !seenH[e.Harness] {
			seenH[e.Harness] = true
			d.Harnesses = append(d.Harnesses, e.Harness)
		}
		if !matches(f, &e) {
			continue
		}
		k := e.Harness + "\x00" + e.Session
		i, ok := idx[k]
		if !ok {
			i = len(d.Sessions)
			idx[k] = i
			d.Sessions = append(d.Sessions, hookSession{Harness: e.Harness, Session: e.Session})
		}
		d.Sessions[i].Entries = append(d.Sessions[i].Entries, e)
		if e.Decision == "deny" || e.Decision == "block" {
			d.Sessions[i].Denies++
		}
		d.Total++
	}
	sort.Strings(d.Harnesses)
	// Newest session first (by its last entry); entries oldest first.
	sort.SliceStable(d.Sessions, func(i, j int) bool {
		a, b := d.Sessions[i].Entries, d.Sessions[j].Entries
		return a[len(a)-1].Time > b[len(b)-1].Time
	})
	s.render(w, http.StatusOK, "hooks.html", "hook decisions", "hooks", d)
}

func matches(f audit.Filter, e *audit.Entry) bool {
	dec := f.Decision
	ok := dec == "" || e.Decision == dec || dec == "deny-or-block" && (e.Decision == "deny" || e.Decision == "block")
	return ok && (f.Harness == "" || e.Harness == f.Harness) && (f.Session == "" || e.Session == f.Session)
}

// approve answers a breakpoint through run.Post, the code path of `sitter
// task post`: under the run lock, an effect that already has a result is
// refused (exactly once, whoever answered first).
func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := s.checkForm(r); err != nil {
		s.fail(w, http.StatusForbidden, err.Error())
		return
	}
	dir, ok := s.watchedDir(w, r, r.PostFormValue("path"))
	if !ok {
		return
	}
	f := s.answer(r.Context(), dir, r.PostFormValue("effect"), r.PostFormValue("answer"), r.PostFormValue("response"))
	s.ix.Sweep() // the board moves now, not at the next tick
	if v, ok := s.ix.Run(dir); f.OK && ok {
		f.Text += goOn(v)
	}
	http.Redirect(w, r, "/run?"+url.Values{"path": {dir}, "flash": {s.putFlash(f)}}.Encode(), http.StatusSeeOther)
}

// Answer posts a breakpoint's answer ("approve" or "reject", with an
// optional response) as `sitter task post <dir> <effect> --status ok
// --value-inline {"approved":…,"response":…}` would.
func Answer(ctx context.Context, dir, effect, answer, response string) (*runs.PostResult, error) {
	if answer != "approve" && answer != "reject" {
		return nil, fmt.Errorf("the answer must be approve or reject, not %q", answer)
	}
	st, err := runs.Load(dir)
	if err != nil {
		return nil, err
	}
	e := st.Effect(effect)
	if e == nil {
		return nil, fmt.Errorf("run %s has no effect %s", st.Meta.RunID, effect)
	}
	if e.Kind != "breakpoint" {
		return nil, fmt.Errorf("effect %s is a %s, not a breakpoint: the page answers breakpoints only", effect, e.Kind)
	}
	if response == "" {
		response = map[string]string{"approve": "yes", "reject": "no"}[answer]
	}
	v, _ := json.Marshal(map[string]any{"approved": answer == "approve", "response": response})
	return runs.Post(ctx, dir, effect, runs.PostOptions{Status: "ok", Value: v})
}

func (s *Server) answer(ctx context.Context, dir, effect, answer, response string) flash {
	res, err := Answer(ctx, dir, effect, answer, response)
	if err != nil {
		return flash{false, "refused: " + err.Error()}
	}
	done := map[string]string{"approve": "approved", "reject": "rejected"}[answer] // Answer took no other
	return flash{true, fmt.Sprintf("%s breakpoint %s (journal event %d)", done, res.EffectID, res.Seq)}
}

// goOn says how the loop goes on after an answer: answering does not
// iterate, and a harness's stop hook lets its session end while only
// breakpoints wait, so the user resumes the session that drove the run
// (its harness's resume command, from the atlas), or lets sitter launch
// drive it.
func goOn(v RunView) string {
	for _, p := range v.Pending {
		if p.Kind == "breakpoint" {
			return "" // more to answer first
		}
	}
	if v.Harness == "" || v.Session == "" {
		return " The run goes on when whoever drives it iterates it."
	}
	var resume string
	if spec, ok := transcript.Lookup(v.Harness); ok && spec.Resume != "" {
		resume = "`" + strings.ReplaceAll(spec.Resume, "{sessionId}", v.Session) + "`, "
	}
	return fmt.Sprintf(" To go on, continue the %s session that drives the run (%sthen any message such as \"continue\"; its stop hook resumes the loop), or run `sitter launch %s --run-id %s`.",
		v.Harness, resume, v.Harness, v.RunID)
}

// events streams "changed" whenever the index's version moves.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	ver, ch := s.ix.Version()
	fmt.Fprintf(w, "retry: 1000\nevent: hello\ndata: %d\n\n", ver)
	fl.Flush()
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
			fl.Flush()
		case <-ch:
			ver, ch = s.ix.Version()
			fmt.Fprintf(w, "event: changed\ndata: %d\n\n", ver)
			fl.Flush()
		}
	}
}
