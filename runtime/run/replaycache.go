package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"sitter.dev/sitter/runtime/journal"
)

// The replay cache keeps what replaying a run's journal computed, so that
// the stop hook, which runs at every turn of an agent, does not read and
// verify every journal file each time. It is sitter's own (state/state.json
// is the SDK's snapshot, StateCache) and lives in two files of state/:
//
//   - replay-cache.json: the key (cache version, sha256 of run.json, how
//     many event files were replayed, the sha256 of their names in order,
//     the last of them) and the replay state a stop decision needs
//     (lifecycle, process hash, failure, halt reason, stop checks, the
//     pending effects), with the name of
//   - replay-effects.<sha256 prefix of its content>.json: every effect in
//     request order (id, invocation key, status: what replaying more
//     effect events checks), read only to replay such events; it is
//     rewritten only when the effects change, so a stop check rewrites
//     only the small first file.
//
// A reader reads run.json and the cache, and looks at journal/:
//
//   - same run.json, and journal/ has the stamp the cache recorded (see
//     dirStamp): the cache is the state, journal/ is not even listed;
//
// otherwise it lists journal/ (names only):
//
//   - same run.json and the same event names: the cache is the state (no
//     journal file is read);
//   - the names replayed are a prefix of today's: the newer files are
//     read and verified as journal.Load would (journal.LoadAfter), and
//     replayed onto the stored state;
//   - anything else (a removed or renamed event, a misnamed .json file,
//     another run.json, an unreadable, corrupt or mismatched cache): a
//     full Load, which rewrites the cache.
//
// Event files are written once, by rename, and named by sequence number
// and ULID, so a name that is still there is the event that was verified;
// a file rewritten in place under the same name (two files' contents
// swapped, say) would go unnoticed here, as it does by the SDK's own state
// cache (keyed by the journal head), until the next full Load, whose
// links between events report it. The cache is derived data: it is
// written without fsync (temp file and rename), and a lost, torn or stale
// one only costs a replay. Append keeps it current for the events it
// journals, and Post (sitter task post) reads and appends through it: in
// a babysitter loop, the stop check that follows a posted result finds
// the cache current.
//
// replayCacheVersion changes whenever replay (State.replayEvent) or the
// cache's content changes meaning, so that no sitter reads another's.
const (
	ReplayCacheFile    = "replay-cache.json" // in StateDir
	replayEffectsGlob  = "replay-effects.*.json"
	replayCacheVersion = "sitter.replay-cache.v5"
)

// replayHeader is replay-cache.json.
type replayHeader struct {
	Version     string          `json:"version"`
	MetaHash    string          `json:"metaHash"`
	Files       int             `json:"files"`
	NamesHash   string          `json:"namesHash"` // namesSum of the Files names, in hex
	Head        *replayHead     `json:"head,omitempty"`
	Journal     *dirStamp       `json:"journal,omitempty"`
	Fine        *fineProbe      `json:"fine,omitempty"`
	Lifecycle   string          `json:"lifecycle,omitempty"`
	ProcessHash string          `json:"processHash"`
	Failure     json.RawMessage `json:"failure,omitempty"`
	HaltReason  string          `json:"haltReason,omitempty"`
	StopChecks  int             `json:"stopChecks"`
	RuntimeErr  string          `json:"runtimeError,omitempty"`
	DriverH     string          `json:"driverHarness,omitempty"`
	DriverS     string          `json:"driverSession,omitempty"`
	Pending     []*Effect       `json:"pending"`
	Effects     int             `json:"effects"`
	EffectsFile string          `json:"effectsFile"`
}

// dirStamp is a directory's device, inode and modification time (in
// nanoseconds) as a stat saw them, under a kernel. Where a change that
// follows a stat always gives the directory a later modification time
// (fineProbe), an equal stamp says that nothing was added, removed or
// renamed in it since the stamp was taken: the cache records journal/'s,
// taken before it listed journal/ (or, by Append, right after its own
// event, with nothing else changed since the read), and a reader that
// finds the same stamp need not list journal/ again. Writers hold the
// run lock (the SDK's too), so nothing else writes between.
type dirStamp struct {
	Kernel string `json:"kernel"`
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Mtime  int64  `json:"mtime"`
}

// fineProbe is probeFine's answer for the file system of the run's
// state/ (device Dev) under a kernel: a stamp is trusted only when it
// is yes for the same kernel and device.
type fineProbe struct {
	Kernel string `json:"kernel"`
	Dev    uint64 `json:"dev"`
	Fine   bool   `json:"fine"`
}

func sameStamp(a, b *dirStamp) bool { return a != nil && b != nil && *a == *b }

// covers says whether the probe's answer is for the kernel and device
// of stamp st.
func (f *fineProbe) covers(st *dirStamp) bool {
	return f != nil && st != nil && f.Kernel == st.Kernel && f.Dev == st.Dev
}

// fineTimestamps is probeFine (a test may say no).
var fineTimestamps = probeFine

type replayHead struct {
	Seq  int    `json:"seq"`
	ULID string `json:"ulid"`
	File string `json:"file"`
	// Checksum: the next event's link names it (journal.Link.Prev).
	Checksum string `json:"checksum,omitempty"`
}

// replayed is a run's replay state and the journal it came from.
type replayed struct {
	s *State
	// light: s.Effects holds only the pending effects (from the cache's
	// first file); effects is then the number of all, effectsFile the
	// table of them, carried over unread.
	light       bool
	effects     int
	effectsFile string
	// The key: run.json's hash, how many event files were replayed and
	// namesSum of their names, the last one.
	metaHash string
	files    int
	sum      uint64
	head     *journal.Event
	// stamp: journal/ when files and sum described it; nil when unknown.
	stamp *dirStamp
	fine  *fineProbe
	// from says how the state was had: "cache", "tail" or "replay";
	// listed, whether journal/ was listed for it.
	from   string
	listed bool
}

func replayCachePath(dir string) string { return filepath.Join(dir, StateDir, ReplayCacheFile) }

// loadReplayed replays a run through its cache. needEffects asks for
// every effect in s.Effects (to replay effect events onto it); without it
// a cache hit reads only the first file.
func loadReplayed(dir string, needEffects bool) (*replayed, error) {
	m, mb, err := readMetadata(dir)
	if err != nil {
		return nil, err
	}
	metaHash := sha256.Sum256(mb)
	mh := hex.EncodeToString(metaHash[:])
	jdir := filepath.Join(dir, JournalDir)
	stamp := statStamp(jdir) // before listing: see dirStamp
	if h := readHeader(dir, mh); h != nil {
		if h.unchanged(stamp) {
			if r := fromCache(dir, m, h, nil, needEffects); r != nil {
				r.stamp = stamp
				return r, nil
			}
		} else if names, clean, err := journal.Names(jdir); err == nil && clean {
			if r := fromCache(dir, m, h, names, needEffects); r != nil {
				r.listed = true
				r.stamp = stamp
				if r.from == "cache" && stamp != nil && !(h.Fine.covers(stamp) && !h.Fine.Fine) {
					// Nothing was replayed, so nothing saved: record the
					// stamp for the next reader (unless its file system
					// is known not to tell).
					r.save()
				}
				return r, nil
			}
		}
	}
	s, err := loadJournal(dir, m)
	if err != nil {
		return nil, err
	}
	r := &replayed{s: s, metaHash: mh, head: s.Journal.Head(), from: "replay", listed: true, stamp: stamp, sum: namesSum0}
	for _, ev := range s.Journal.Events {
		r.files++
		r.sum = namesSum(r.sum, ev.File)
	}
	r.save()
	return r, nil
}

// readHeader reads the cache's first file, nil when it is not a cache of
// this sitter for this run.json.
func readHeader(dir, metaHash string) *replayHeader {
	b, err := journal.ReadFile(replayCachePath(dir))
	if err != nil {
		return nil
	}
	h, err := decodeHeader(b)
	if err != nil || h.Version != replayCacheVersion || h.MetaHash != metaHash ||
		h.Files < 0 || h.Effects < len(h.Pending) || slices.Contains(h.Pending, nil) || !effectsName(h.EffectsFile) {
		return nil
	}
	if _, ok := parseSum(h.NamesHash); !ok {
		return nil
	}
	return h
}

// unchanged says whether journal/ still has the stamp the cache took of
// it, on a file system whose timestamps make that mean something.
func (h *replayHeader) unchanged(now *dirStamp) bool {
	return now != nil && h.Journal != nil && *h.Journal == *now &&
		h.Fine.covers(now) && h.Fine.Fine
}

// fromCache is the run's state from its cache h and the events after it,
// nil when the cache cannot give it. names are journal/'s event files;
// nil when journal/ is known unchanged since the cache (no tail).
func fromCache(dir string, m *Metadata, h *replayHeader, names []string, needEffects bool) *replayed {
	sum, _ := parseSum(h.NamesHash)
	if names != nil && (h.Files > len(names) || namesSum(namesSum0, names[:h.Files]...) != sum) {
		return nil
	}
	var head *journal.Event
	if h.Files > 0 {
		if h.Head == nil || names != nil && h.Head.File != names[h.Files-1] {
			return nil
		}
		head = &journal.Event{Seq: h.Head.Seq, ULID: h.Head.ULID, File: h.Head.File, Checksum: h.Head.Checksum}
	}
	r := &replayed{metaHash: h.MetaHash, files: h.Files, sum: sum, head: head, fine: h.Fine, from: "cache"}
	var evs []journal.Event
	if names != nil {
		if tail := names[h.Files:]; len(tail) > 0 {
			var err error
			if evs, err = journal.LoadAfter(filepath.Join(dir, JournalDir), head, tail); err != nil {
				return nil
			}
			r.head, r.from = &evs[len(evs)-1], "tail"
			r.files, r.sum = len(names), namesSum(sum, tail...)
			needEffects = needEffects || slices.ContainsFunc(evs, touchesEffects)
		}
	}
	var s *State
	if needEffects {
		all, ok := readEffects(dir, h.EffectsFile, h.Pending)
		if !ok || len(all) != h.Effects {
			return nil
		}
		s = h.state(dir, m, all)
	} else {
		// The first file is enough: the effect table is carried over.
		s = h.state(dir, m, h.Pending)
		r.light, r.effects, r.effectsFile = true, h.Effects, h.EffectsFile
	}
	r.s = s
	if len(evs) == 0 {
		return r
	}
	for _, ev := range evs {
		if s.replayEvent(ev) != nil {
			return nil // a full Load reports it
		}
	}
	s.setStatus()
	r.save()
	return r
}

// touchesEffects says whether replaying ev needs every effect (the
// other events change only what the cache's first file holds).
func touchesEffects(ev journal.Event) bool {
	return ev.Type == journal.EffectRequested || ev.Type == journal.EffectResolved
}

// effectsName says whether name is an effect table's, by itself (no
// directory) so that the cache can name no other file.
func effectsName(name string) bool {
	ok, err := filepath.Match(replayEffectsGlob, name)
	return ok && err == nil && filepath.Base(name) == name
}

// readEffects reads an effect table whose name carries its content's
// hash (a table that does not match its name is not read): every effect
// in request order as [effectId, invocationKey, status], what replaying
// more effect events checks. The pending ones are the header's, whole;
// the others keep only those three fields.
func readEffects(dir, name string, pending []*Effect) ([]*Effect, bool) {
	b, err := os.ReadFile(filepath.Join(dir, StateDir, name))
	if err != nil || effectsFileName(b) != name {
		return nil, false
	}
	var rows [][3]string
	if json.Unmarshal(b, &rows) != nil {
		return nil, false
	}
	all := make([]*Effect, 0, len(rows))
	next := 0
	for _, r := range rows {
		if r[2] != Requested {
			all = append(all, &Effect{EffectID: r[0], InvocationKey: r[1], Status: r[2]})
			continue
		}
		if next == len(pending) || pending[next].EffectID != r[0] || pending[next].InvocationKey != r[1] {
			return nil, false
		}
		all = append(all, pending[next])
		next++
	}
	return all, next == len(pending)
}

// effectsTable is the content of an effect table (see readEffects).
func effectsTable(all []*Effect) ([]byte, error) {
	rows := make([][3]string, len(all))
	for i, e := range all {
		rows[i] = [3]string{e.EffectID, e.InvocationKey, e.Status}
	}
	return json.Marshal(rows)
}

func effectsFileName(content []byte) string {
	h := sha256.Sum256(content)
	return "replay-effects." + hex.EncodeToString(h[:8]) + ".json"
}

// state rebuilds the replay state the cache describes, with effects.
func (h *replayHeader) state(dir string, m *Metadata, effects []*Effect) *State {
	s := newReplay(dir, m)
	s.ProcessHash, s.Failure, s.HaltReason, s.StopChecks, s.lifecycle, s.Driver = h.ProcessHash, h.Failure, h.HaltReason, h.StopChecks, h.Lifecycle, Binding{h.DriverH, h.DriverS}
	s.RuntimeError = h.RuntimeErr
	for _, e := range effects {
		s.Effects = append(s.Effects, e)
		s.byID[e.EffectID] = e
		s.byKey[e.InvocationKey] = e
	}
	s.setStatus()
	return s
}

// namesSum extends sum (namesSum0 to start) with names, each ended by a
// newline: 64-bit FNV-1a, which a cache extends with the names appended
// after it without the names before. It tells a list of event names
// from another that a removal or a rename made, not from a forgery.
func namesSum(sum uint64, names ...string) uint64 {
	const prime = 1099511628211
	for _, s := range names {
		for i := 0; i < len(s); i++ {
			sum = (sum ^ uint64(s[i])) * prime
		}
		sum = (sum ^ '\n') * prime
	}
	return sum
}

const namesSum0 uint64 = 14695981039346656037

func formatSum(sum uint64) string {
	h := strconv.FormatUint(sum, 16) // "%016x" without fmt: written at every stop check
	return "0000000000000000"[len(h):] + h
}

func parseSum(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 16, 64)
	return n, err == nil
}

// save writes the cache of r; a failure only costs the next reader a
// replay, so it is not reported.
func (r *replayed) save() {
	s := r.s
	state := filepath.Join(s.Dir, StateDir)
	if os.MkdirAll(state, 0o755) != nil {
		return
	}
	h := replayHeader{
		Version: replayCacheVersion, MetaHash: r.metaHash, Files: r.files, NamesHash: formatSum(r.sum),
		Lifecycle: s.lifecycle, ProcessHash: s.ProcessHash, Failure: s.Failure, HaltReason: s.HaltReason,
		StopChecks: s.StopChecks, RuntimeErr: s.RuntimeError, DriverH: s.Driver.Harness, DriverS: s.Driver.SessionID, Pending: s.Pending(), Effects: r.effects, EffectsFile: r.effectsFile,
	}
	if h.Pending == nil {
		h.Pending = []*Effect{}
	}
	if r.head != nil {
		h.Head = &replayHead{r.head.Seq, r.head.ULID, r.head.File, r.head.Checksum}
	}
	if st := r.stamp; st != nil {
		if !r.fine.covers(st) {
			// Once per run and kernel: the state dir is on journal/'s
			// file system unless a mount says otherwise.
			r.fine = &fineProbe{Kernel: st.Kernel, Dev: st.Dev, Fine: sameDev(state, st.Dev) && fineTimestamps(state)}
		}
		h.Fine = r.fine
		if r.fine.Fine {
			h.Journal = st
		}
	}
	wrote := false
	if !r.light {
		b, err := effectsTable(s.Effects)
		if err != nil {
			return
		}
		h.Effects, h.EffectsFile = len(s.Effects), effectsFileName(b)
		if _, err := os.Stat(filepath.Join(state, h.EffectsFile)); err != nil {
			if writeCacheFile(state, h.EffectsFile, b) != nil {
				return
			}
			wrote = true
		}
	}
	b, err := marshalHeader(&h)
	if err != nil || writeCacheFile(state, ReplayCacheFile, b) != nil {
		return
	}
	if wrote {
		// Older tables: a reader that still follows one replays instead.
		old, _ := filepath.Glob(filepath.Join(state, replayEffectsGlob))
		for _, f := range old {
			if filepath.Base(f) != h.EffectsFile {
				os.Remove(f)
			}
		}
	}
}

// writeCacheFile replaces state/name with b, without fsync (derived
// data).
func writeCacheFile(state, name string, b []byte) error {
	return journal.ReplaceFile(filepath.Join(state, name), b)
}

// Summary is what a stop decision needs of a run: its metadata, status
// and pending effects.
type Summary struct {
	Dir        string
	Meta       *Metadata
	Status     string
	StopChecks int
	// RuntimeError: State.RuntimeError.
	RuntimeError string
	// Driver: State.Driver.
	Driver  Binding
	pending []*Effect
	from    string
}

// Pending lists the effects still waiting for a result, in request order.
func (s *Summary) Pending() []*Effect { return s.pending }

// LoadSummary is Load for a caller that needs only the run's status and
// pending effects: through the replay cache (see ReplayCacheFile), it
// reads and verifies only the journal files written since the cache, none
// when there are none, and falls back to a full Load when the cache
// cannot answer. Its errors are Load's.
func LoadSummary(dir string) (*Summary, error) {
	r, err := loadReplayed(dir, false)
	if err != nil {
		return nil, err
	}
	return r.summary(dir), nil
}

// Locked is a run held under its lock (journal.LockFile): its state read
// once through the replay cache, and events appended after it, which keep
// the cache current.
type Locked struct {
	dir  string
	lock *journal.Lock
	r    *replayed
	err  error // of the replay that gave r
}

// Lock takes the run lock of dir, waiting while another process holds
// it (at most until ctx ends; journal.DefaultLockWait without a
// deadline). Release it when done.
func Lock(ctx context.Context, dir, owner string) (*Locked, error) {
	return LockWithin(ctx, dir, owner, journal.DefaultLockWait)
}

// LockWithin is Lock waiting at most max when ctx has no deadline (see
// journal.AcquireWithin).
func LockWithin(ctx context.Context, dir, owner string, max time.Duration) (*Locked, error) {
	l, err := journal.AcquireWithin(ctx, filepath.Join(dir, journal.LockFile), owner, max)
	if err != nil {
		return nil, err
	}
	return &Locked{dir: dir, lock: l}, nil
}

// Release drops the lock.
func (l *Locked) Release() error { return l.lock.Release() }

// replayed reads the run through its cache, once (again when every
// effect is needed and the first read did without).
func (l *Locked) replayed(needEffects bool) (*replayed, error) {
	if l.r == nil && l.err == nil || l.r != nil && needEffects && l.r.light {
		l.r, l.err = loadReplayed(l.dir, needEffects)
	}
	return l.r, l.err
}

// Summary is LoadSummary under the lock: nothing can change the journal
// until Release, so an Append after it reads nothing again.
func (l *Locked) Summary() (*Summary, error) {
	r, err := l.replayed(false)
	if err != nil {
		return nil, err
	}
	return r.summary(l.dir), nil
}

func (r *replayed) summary(dir string) *Summary {
	return &Summary{Dir: dir, Meta: r.s.Meta, Status: r.s.Status, StopChecks: r.s.StopChecks, RuntimeError: r.s.RuntimeError, Driver: r.s.Driver, pending: r.s.Pending(), from: r.from}
}

// Append journals one event after the journal's head, which it has from
// the replay cache, and brings the cache up to date with the event, so
// that the next reader replays nothing. A journal that loads but does not
// replay still takes the event (and has no cache).
func (l *Locked) Append(typ string, data any) (journal.Event, error) {
	jdir := filepath.Join(l.dir, JournalDir)
	r, err := l.replayed(touchesEffects(journal.Event{Type: typ}))
	if err != nil {
		j, err := journal.Load(jdir)
		if err != nil {
			return journal.Event{}, err
		}
		return journal.Append(jdir, j.Head(), typ, data)
	}
	// The stamp carries over only when journal/ is as it was read: then
	// a stamp taken after this event covers nothing else.
	keep := r.stamp != nil && sameStamp(statStamp(jdir), r.stamp)
	ev, err := journal.Append(jdir, r.head, typ, data)
	if err != nil {
		l.r, l.err = nil, nil // the journal may have the file: read it again
		return ev, err
	}
	r.stamp = nil
	if keep {
		r.stamp = statStamp(jdir)
	}
	// ev.Data is the JSON of data, which is what replay reads.
	if r.s.replayEvent(ev) != nil {
		os.Remove(replayCachePath(l.dir))
		l.r, l.err = nil, nil
		return ev, nil
	}
	r.s.setStatus()
	r.files, r.sum, r.head = r.files+1, namesSum(r.sum, ev.File), &ev
	r.save()
	return ev, nil
}

// Append journals one event under the run lock (used for events that are
// not effects, such as STOP_HOOK_INVOKED), through the replay cache: see
// Locked.Append.
func Append(ctx context.Context, dir, typ string, data any) (journal.Event, error) {
	l, err := Lock(ctx, dir, "sitter:append")
	if err != nil {
		return journal.Event{}, err
	}
	defer l.Release()
	return l.Append(typ, data)
}
