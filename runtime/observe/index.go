package observe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/journal"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// RunView is what the board knows of one run: read from its journal when
// the journal changes, classified again at every sweep (time moves runs to
// stale).
type RunView struct {
	Dir       string // absolute run directory: the run's key
	RunsDir   string // the watched runs directory holding it
	Project   string // the project folder (the parent of .a5c/runs)
	RunID     string
	ProcessID string
	Status    string // run status, "unreadable" when the journal does not load
	Err       string // why the run cannot be read
	Events    int
	Created   time.Time
	Last      time.Time // the journal head's time (else run.json's creation)
	Pending   []PendingEffect
	// Harness and Session drove the run last (SESSION_BOUND, else the
	// stop checks, else run.json); Drivers is every session that did.
	Harness, Session string
	Drivers          []Driver
	// LastStop is the row of the last STOP_HOOK_INVOKED ("" for none);
	// LastStopAfter says nothing but stop checks and bindings followed it.
	LastStop      string
	LastStopAfter bool
	RuntimeError  string
	// Failure is the first line of a failed run's error (of a halted
	// run's reason), cut for the card (failureLine).
	Failure string
	// Launched: run.json's folder holds a launch mark (run.LaunchFile):
	// a sitter launch may drive the run between its sessions.
	Launched bool
	// Bucket is the triage column, Why one line saying why.
	Bucket, Why string
	sig         signature
	fp          uint64 // fingerprint, as read (see fingerprint)
}

// PendingEffect is a pending effect as the board shows it.
type PendingEffect struct {
	ID, Kind, Label string
}

// Driver is one session that drove a run.
type Driver struct {
	Harness, Session string
}

// Age is how long ago the run last moved.
func (r *RunView) Age(now time.Time) time.Duration { return now.Sub(r.Last) }

// signature is what every sweep compares: a run is read again when its
// journal directory changed (an event file is added by rename, which
// changes the directory's mtime) or its run.json did. Two stats per run
// and sweep. A journal file written in place changes neither: the file
// system's report of the write has the run's fingerprint checked
// (Index.suspect), and at the next start every cached run's is.
type signature struct {
	journalMod  int64
	journalSize int64
	metaMod     int64
	metaSize    int64
}

func statSig(dir string) (signature, bool) {
	j, err := os.Stat(filepath.Join(dir, runs.JournalDir))
	if err != nil {
		return signature{}, false
	}
	sig := signature{journalMod: j.ModTime().UnixNano(), journalSize: j.Size()}
	if m, err := os.Stat(filepath.Join(dir, runs.MetadataFile)); err == nil {
		sig.metaMod, sig.metaSize = m.ModTime().UnixNano(), m.Size()
	}
	return sig, true
}

// fingerprint sums the name, size and modification time of run.json and
// of every file in journal/: one directory read and a stat per event
// file, no file read. It is what a run read from the index cache is
// checked against at start (an edit in place while no observe ran), and
// after the watcher lost events.
func fingerprint(dir string) uint64 {
	h := fnv.New64a()
	add := func(name string, fi os.FileInfo) {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", name, fi.Size(), fi.ModTime().UnixNano())
	}
	if fi, err := os.Stat(filepath.Join(dir, runs.MetadataFile)); err == nil {
		add(runs.MetadataFile, fi)
	}
	es, _ := os.ReadDir(filepath.Join(dir, runs.JournalDir)) // sorted by name
	for _, e := range es {
		if fi, err := e.Info(); err == nil {
			add(e.Name(), fi)
		}
	}
	return h.Sum64()
}

// Index is the runs of the watched directories and sitter's sessions,
// kept current by Sweep.
type Index struct {
	roots    []root
	stale    time.Duration
	stateDir string
	now      func() time.Time

	sweepMu sync.Mutex // one sweep at a time

	mu        sync.RWMutex
	runs      map[string]*RunView
	sessions  []*session.State
	sessSig   signature
	auditSig  signature
	audit     auditTail
	caps      map[Driver]StopCapped
	version   uint64
	changed   chan struct{} // closed and replaced at every version
	lastSweep time.Time
	dirErrs   []DirError // the runs directories the last sweep could not list
	// indexing holds until the first sweep has read every run; indexed
	// and toIndex count its progress (the board says "indexing…").
	indexing         bool
	indexed, toIndex int
	published        time.Time // the last version bump
	watching         bool      // every directory read is watched (watch.go)
	// What the next sweep does beyond the signatures: dirty runs are read
	// again (a run page read something else than the index holds);
	// suspect runs, or every run when verifyAll is set, are read again
	// when their fingerprint changed (the file system reported a write
	// to run.json or the journal; the runs came from the cache, or the
	// watcher lost events).
	dirty, suspect map[string]bool
	verifyAll      bool
	poke           chan struct{} // wakes Watch for a sweep now
}

// StopCapped is the last time the stop guard let a session's blocked stop
// through at its cap (the audit log's stopCap).
type StopCapped struct {
	At  time.Time
	Cap int
}

// root is one watched directory: the runs directory found in it.
type root struct {
	dir     string // as given, absolute
	runsDir string // where its runs are
	project string
}

// findRoots says where the runs of a watched directory D are, first rule
// that holds:
//
//	D has a .a5c folder                → a project: D/.a5c/runs
//	D holds a run, or is named runs    → a runs directory: D
//	D has a .git folder                → a project: D/.a5c/runs
//	otherwise (an empty folder, say)   → both D and D/.a5c/runs
//
// An empty folder is as likely a new project as a runs directory made for
// --runs-dir: both are watched, so the first run shows up wherever it is
// created. A project's runs are watched before its first run exists.
func findRoots(d string) []root {
	abs, err := filepath.Abs(d)
	if err != nil {
		abs = d
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	isDir := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	}
	asProject := root{abs, filepath.Join(abs, ".a5c", "runs"), abs}
	if isDir(filepath.Join(abs, ".a5c")) {
		return []root{asProject}
	}
	if hasRuns(abs) || filepath.Base(abs) == "runs" {
		project := abs
		if filepath.Base(abs) == "runs" && filepath.Base(filepath.Dir(abs)) == ".a5c" {
			project = filepath.Dir(filepath.Dir(abs))
		}
		return []root{{abs, abs, project}}
	}
	if isDir(filepath.Join(abs, ".git")) {
		return []root{asProject}
	}
	return []root{{abs, abs, abs}, asProject}
}

func hasRuns(dir string) bool {
	es, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range es {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), runs.MetadataFile)); err == nil {
			return true
		}
	}
	return false
}

// NewIndex watches dirs (projects or runs directories). It starts with
// the runs of the index cache, if the state dir has one (cache.go).
func NewIndex(dirs []string, stateDir string, stale time.Duration) *Index {
	ix := &Index{stale: stale, stateDir: stateDir, now: time.Now, runs: map[string]*RunView{}, caps: map[Driver]StopCapped{},
		changed: make(chan struct{}), indexing: true, dirty: map[string]bool{}, suspect: map[string]bool{}, poke: make(chan struct{}, 1)}
	seen := map[string]bool{}
	for _, d := range dirs {
		for _, r := range findRoots(d) {
			if !seen[r.runsDir] {
				seen[r.runsDir] = true
				ix.roots = append(ix.roots, r)
			}
		}
	}
	ix.loadCache()
	return ix
}

// RunsDirs are the watched runs directories.
func (ix *Index) RunsDirs() []string {
	var out []string
	for _, r := range ix.roots {
		out = append(out, r.runsDir)
	}
	return out
}

// Watched says whether dir is a run directory inside a watched runs
// directory (symbolic links resolved), and returns its clean form: it
// has run.json, or it is on the board (a run whose run.json was lost is
// an error card there).
func (ix *Index) Watched(dir string) (string, bool) {
	d, ok := ix.inRunsDir(dir)
	if !ok {
		return "", false
	}
	// A folder that cannot be looked into is shown too (an error card).
	if _, err := os.Stat(filepath.Join(d, runs.MetadataFile)); err == nil || errors.Is(err, fs.ErrPermission) {
		return d, true
	}
	if _, ok := ix.Run(d); ok {
		if _, err := os.Lstat(d); err == nil {
			return d, true
		}
	}
	return "", false
}

// Gone says whether dir names a folder directly inside a watched runs
// directory that is not there (a run deleted while its page was open),
// and returns its clean form.
func (ix *Index) Gone(dir string) (string, bool) {
	d, ok := ix.inRunsDir(dir)
	if !ok {
		return "", false
	}
	if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
		return d, true
	}
	return "", false
}

// inRunsDir cleans dir (symbolic links resolved) and says whether it is
// directly inside a watched runs directory.
func (ix *Index) inRunsDir(dir string) (string, bool) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", false
	}
	d := filepath.Clean(dir)
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	} else if p, err := filepath.EvalSymlinks(filepath.Dir(d)); err == nil {
		d = filepath.Join(p, filepath.Base(d)) // gone: its parent resolved
	}
	for _, r := range ix.roots {
		rd := r.runsDir
		if x, err := filepath.EvalSymlinks(rd); err == nil {
			rd = x
		}
		if filepath.Dir(d) == rd {
			return d, true
		}
	}
	return "", false
}

// Version changes whenever what the pages show changes; Changed is closed
// then.
func (ix *Index) Version() (uint64, <-chan struct{}) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.version, ix.changed
}

// Runs is a snapshot of every run, newest activity first.
func (ix *Index) Runs() []RunView {
	ix.mu.RLock()
	out := make([]RunView, 0, len(ix.runs))
	for _, r := range ix.runs {
		out = append(out, *r)
	}
	ix.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return newest(&out[i], &out[j]) < 0 })
	return out
}

// newest is the board's order: newest activity first, then by directory.
func newest(a, b *RunView) int {
	if c := b.Last.Compare(a.Last); c != 0 {
		return c
	}
	return strings.Compare(a.Dir, b.Dir)
}

// ColumnPage is what the board shows of one triage column: at most a
// page of its runs from From on, in the order of Runs, and how many runs
// the column has.
type ColumnPage struct {
	Runs  []RunView
	From  int
	Total int
}

// Page is the board's columns, by bucket: of each, the n runs from
// from[bucket] on (a From past the end is the last page's), and the
// count of every run. Only the views shown are copied.
func (ix *Index) Page(from map[string]int, n int) (map[string]ColumnPage, int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	byBucket := map[string][]*RunView{}
	for _, r := range ix.runs {
		byBucket[r.Bucket] = append(byBucket[r.Bucket], r)
	}
	out := make(map[string]ColumnPage, len(byBucket))
	for b, rs := range byBucket {
		slices.SortFunc(rs, newest)
		start := from[b]
		if start >= len(rs) {
			start = (len(rs) - 1) / n * n
		}
		p := ColumnPage{From: start, Total: len(rs)}
		for _, r := range rs[start:min(start+n, len(rs))] {
			p.Runs = append(p.Runs, *r)
		}
		out[b] = p
	}
	return out, len(ix.runs)
}

// Run is one run's view.
func (ix *Index) Run(dir string) (RunView, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	r, ok := ix.runs[dir]
	if !ok {
		return RunView{}, false
	}
	return *r, true
}

// Indexing says whether the first sweep is still reading the runs, and
// how many it has read of how many.
func (ix *Index) Indexing() (on bool, done, total int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.indexing, ix.indexed, ix.toIndex
}

// bumpLocked publishes a new version; ix.mu is held for writing.
func (ix *Index) bumpLocked() {
	ix.version++
	close(ix.changed)
	ix.changed = make(chan struct{})
	ix.published = time.Now()
}

// Sessions is sitter's session states as of the last sweep.
func (ix *Index) Sessions() []*session.State {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.sessions
}

// Sweep stats every watched run (and the session states and audit log),
// reads again the runs whose signature changed or that are marked dirty,
// checks the fingerprint of the others when verifyAll is set (after a
// start from the cache, or lost events), classifies every run, and
// bumps the version when anything shown changed. It reports whether it
// did.
//
// The first sweep (indexing) publishes the runs as they are read, a new
// version at most every publishEvery, so a board opened meanwhile shows
// what is read so far.
func (ix *Index) Sweep() bool {
	ix.sweepMu.Lock()
	defer ix.sweepMu.Unlock()

	// Sessions and the audit log first: the first sweep classifies each
	// run as it reads it.
	ssig, asig := signature{}, signature{}
	if fi, err := os.Stat(filepath.Join(ix.stateDir, "sessions")); err == nil {
		ssig = signature{journalMod: fi.ModTime().UnixNano(), journalSize: fi.Size()}
	}
	if fi, err := os.Stat(filepath.Join(ix.stateDir, audit.FileName)); err == nil {
		asig = signature{journalMod: fi.ModTime().UnixNano(), journalSize: fi.Size()}
	}
	ix.mu.RLock()
	sessChanged := ssig != ix.sessSig || ix.version == 0
	auditChanged := asig != ix.auditSig
	tail := ix.audit
	ix.mu.RUnlock()
	changed := sessChanged || auditChanged
	var sessions []*session.State
	if sessChanged {
		sessions = listSessions(ix.stateDir)
	}
	var newCaps map[Driver]StopCapped
	if auditChanged {
		newCaps = tail.read(filepath.Join(ix.stateDir, audit.FileName))
	}
	ix.mu.Lock()
	if sessChanged {
		ix.sessions, ix.sessSig = sessions, ssig
	}
	if auditChanged {
		ix.auditSig, ix.audit = asig, tail
		for k, c := range newCaps {
			ix.caps[k] = c
		}
	}
	ix.mu.Unlock()

	// A job reads a run, or (verify) reads it only when its fingerprint
	// is not the one of the view held.
	type job struct {
		dir    string
		r      root
		sig    signature
		verify bool
		oldFP  uint64
	}
	var jobs []job
	present := map[string]bool{}
	ix.mu.Lock()
	dirty, suspect, verifyAll := ix.dirty, ix.suspect, ix.verifyAll
	ix.dirty, ix.suspect, ix.verifyAll = map[string]bool{}, map[string]bool{}, false
	ix.mu.Unlock()
	ix.mu.RLock()
	dirErrs := ix.eachRunDir(func(r root, d string) {
		sig, ok := statSig(d)
		old := ix.runs[d]
		if !ok && old == nil {
			// Not a run (yet): a run has run.json and journal/. A
			// folder that cannot be looked into (its permissions) is
			// shown: an error card naming it, not a run left out.
			if _, err := os.Stat(filepath.Join(d, runs.MetadataFile)); err != nil && !errors.Is(err, fs.ErrPermission) {
				return
			}
		}
		present[d] = true
		switch {
		case old == nil || old.sig != sig || dirty[d]:
			jobs = append(jobs, job{dir: d, r: r, sig: sig})
		case verifyAll || suspect[d]:
			jobs = append(jobs, job{dir: d, r: r, sig: sig, verify: true, oldFP: old.fp})
		}
	})
	first := ix.indexing
	ix.mu.RUnlock()
	if first {
		ix.mu.Lock()
		ix.toIndex = len(jobs)
		ix.mu.Unlock()
	}

	loaded := make([]*RunView, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	workers := min(runtime.GOMAXPROCS(0)*2, len(jobs))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				// The fingerprint before the read: a write after it
				// shows at the next check.
				fp := fingerprint(j.dir)
				var v *RunView // nil: the view held stands
				if !j.verify || fp != j.oldFP {
					v = readRun(j.dir)
					v.RunsDir, v.Project, v.sig, v.fp = j.r.runsDir, j.r.project, j.sig, fp
				}
				loaded[i] = v
				if first {
					ix.publishIndexed(v)
				}
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()

	ix.mu.Lock()
	defer ix.mu.Unlock()
	for d := range ix.runs {
		if !present[d] {
			delete(ix.runs, d)
			changed = true
		}
	}
	for _, v := range loaded {
		if v != nil {
			ix.runs[v.Dir] = v
			changed = true
		}
	}
	now := ix.now()
	for _, v := range ix.runs {
		b, why := Classify(v, ix.sessions, ix.caps, now, ix.stale)
		if b != v.Bucket || why != v.Why {
			v.Bucket, v.Why = b, why
			changed = true
		}
	}
	if !slices.Equal(dirErrs, ix.dirErrs) {
		ix.dirErrs = dirErrs
		changed = true
	}
	ix.lastSweep = now
	if ix.indexing {
		ix.indexing = false
		changed = true
	}
	if changed || ix.version == 0 {
		ix.bumpLocked()
	}
	return changed
}

// publishEvery is how often the first sweep shows its progress.
const publishEvery = 100 * time.Millisecond

// publishIndexed adds a run read by the first sweep to the index at once
// (nil: a cached run found unchanged), and publishes a version when the
// last one is publishEvery old.
func (ix *Index) publishIndexed(v *RunView) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if v != nil {
		v.Bucket, v.Why = Classify(v, ix.sessions, ix.caps, ix.now(), ix.stale)
		ix.runs[v.Dir] = v
	}
	ix.indexed++
	if time.Since(ix.published) >= publishEvery {
		ix.bumpLocked()
	}
}

// noteChange has the next sweep check the fingerprint of the run a path
// the file system reported belongs to, when the path is one the board
// reads: a run's run.json, its journal/ or a file in it (an event file
// written in place changes neither the directory nor the signature). A
// fingerprint, not a read: an append's events mostly come with a
// signature change anyway, or after the read that saw it.
func (ix *Index) noteChange(path string) {
	var run string
	switch {
	case filepath.Base(path) == runs.MetadataFile, filepath.Base(path) == runs.JournalDir:
		run = filepath.Dir(path)
	case filepath.Base(filepath.Dir(path)) == runs.JournalDir:
		run = filepath.Dir(filepath.Dir(path))
	default:
		return
	}
	for _, r := range ix.roots {
		if filepath.Dir(run) == r.runsDir {
			ix.mu.Lock()
			ix.suspect[run] = true
			ix.mu.Unlock()
			return
		}
	}
}

// verifyNext has the next sweep check every run's fingerprint.
func (ix *Index) verifyNext() {
	ix.mu.Lock()
	ix.verifyAll = true
	ix.mu.Unlock()
}

// refresh has the run dir read again now: it is marked, and Watch woken
// for a sweep.
func (ix *Index) refresh(dir string) {
	ix.mu.Lock()
	ix.dirty[dir] = true
	ix.mu.Unlock()
	select {
	case ix.poke <- struct{}{}:
	default:
	}
}

// reread is a run's view read now and classified as a sweep would, for a
// page that found the run otherwise than the index holds it; the index
// reads it again too (refresh).
func (ix *Index) reread(dir string, held RunView) RunView {
	v := readRun(dir)
	v.RunsDir, v.Project = held.RunsDir, held.Project
	ix.mu.RLock()
	v.Bucket, v.Why = Classify(v, ix.sessions, ix.caps, ix.now(), ix.stale)
	ix.mu.RUnlock()
	ix.refresh(dir)
	return *v
}

// listSessions reads the session states of a state dir.
func listSessions(stateDir string) []*session.State {
	es, err := os.ReadDir(filepath.Join(stateDir, "sessions"))
	if err != nil {
		return nil
	}
	var out []*session.State
	for _, e := range es {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := audit.ReadNoFollow(filepath.Join(stateDir, "sessions", e.Name()))
		if err != nil {
			continue
		}
		var st session.State
		if json.Unmarshal(b, &st) == nil && st.SessionID != "" {
			out = append(out, &st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpdatedAt > out[j].UpdatedAt })
	return out
}

// parseTime reads the journal's and run.json's timestamps.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// readRun reads one run for the board. A run that does not load is a view
// with Err set: the board shows it as an error card.
func readRun(dir string) *RunView {
	v := &RunView{Dir: dir, RunID: filepath.Base(dir)}
	m, err := runs.ReadMetadata(dir)
	if err != nil {
		v.Status, v.Err = "unreadable", err.Error()
		if fi, err := os.Stat(dir); err == nil {
			v.Created, v.Last = fi.ModTime(), fi.ModTime()
		}
		return v
	}
	v.RunID, v.ProcessID, v.Harness, v.Session = m.RunID, m.ProcessID, m.Harness, m.SessionID
	v.Created = parseTime(m.CreatedAt)
	v.Last = v.Created
	if v.Harness != "" && v.Session != "" {
		v.Drivers = append(v.Drivers, Driver{v.Harness, v.Session})
	}
	st, err := runs.Load(dir)
	if err != nil {
		v.Status, v.Err = "unreadable", err.Error()
		return v
	}
	v.Status, v.Events, v.RuntimeError = st.Status, len(st.Journal.Events), st.RuntimeError
	switch {
	case len(st.Failure) > 0:
		v.Failure = failureLine(st.Failure)
	case st.HaltReason != "":
		v.Failure = cutLine(st.HaltReason)
	}
	_, err = os.Stat(filepath.Join(dir, runs.StateDir, runs.LaunchFile))
	v.Launched = err == nil
	if h := st.Journal.Head(); h != nil {
		if t := parseTime(h.RecordedAt); !t.IsZero() {
			v.Last = t
		}
	}
	for _, e := range st.Pending() {
		v.Pending = append(v.Pending, PendingEffect{e.EffectID, e.Kind, e.Label})
	}
	for _, ev := range st.Journal.Events {
		switch ev.Type {
		case journal.SessionBound, journal.StopHookInvoked:
			var d struct {
				Harness   string `json:"harness"`
				SessionID string `json:"sessionId"`
				Row       string `json:"row"`
			}
			json.Unmarshal(ev.Data, &d)
			if d.Harness != "" && d.SessionID != "" {
				v.Harness, v.Session = d.Harness, d.SessionID
				if !slicesContains(v.Drivers, Driver{d.Harness, d.SessionID}) {
					v.Drivers = append(v.Drivers, Driver{d.Harness, d.SessionID})
				}
			}
			if ev.Type == journal.StopHookInvoked {
				v.LastStop, v.LastStopAfter = d.Row, true
			}
		default:
			v.LastStopAfter = false
		}
	}
	return v
}

// DirError is a watched runs directory that cannot be listed (its
// permissions, an I/O error): the board says so, rather than "no runs".
type DirError struct{ Dir, Err string }

// DirErrors is the runs directories the last sweep could not list. One
// that does not exist (yet) is no error: it is watched until it does.
func (ix *Index) DirErrors() []DirError {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Clone(ix.dirErrs)
}

// eachRunDir calls f with every folder of each watched runs directory
// (a run, or one on its way: run.json and journal/ may not be there yet),
// and returns the runs directories it could not list.
func (ix *Index) eachRunDir(f func(r root, dir string)) []DirError {
	var bad []DirError
	for _, r := range ix.roots {
		es, err := os.ReadDir(r.runsDir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				msg := err.Error()
				if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
					msg = pe.Err.Error() // the page names the directory
				}
				bad = append(bad, DirError{r.runsDir, msg})
			}
			continue
		}
		for _, e := range es {
			if e.IsDir() {
				f(r, filepath.Join(r.runsDir, e.Name()))
			}
		}
	}
	return bad
}

func slicesContains(ds []Driver, d Driver) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// cardLineMax is how many characters of a failed run's error its card
// shows.
const cardLineMax = 120

// failureLine is a failed run's error (as RUN_FAILED holds it, what the
// run page shows in full) in one line for its card: "name: message" of
// an error object (its stack, which repeats both, left out), the text
// of a string, else the error's JSON; its first line, cut (cutLine).
func failureLine(raw json.RawMessage) string {
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	}
	var text string
	switch {
	case json.Unmarshal(raw, &text) == nil:
	case json.Unmarshal(raw, &e) == nil && (e.Message != "" || e.Name != ""):
		text = e.Message
		if e.Name != "" && e.Message != "" {
			text = e.Name + ": " + e.Message
		} else if e.Message == "" {
			text = e.Name
		}
	default:
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			text = b.String()
		} else {
			text = string(raw)
		}
	}
	return cutLine(text)
}

// cutLine is the first non-blank line of s, trimmed, cut at cardLineMax
// characters with "…".
func cutLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			s = l
			break
		}
	}
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > cardLineMax {
		s = strings.TrimRight(string(r[:cardLineMax]), " ") + "…"
	}
	return s
}
