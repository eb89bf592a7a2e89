// Package natsstore keeps runs in NATS JetStream, so that a run outlives
// the machine it was created on and several machines can drive it.
//
// One stream (SITTER_RUNS) holds every run, one subject per run
// (sitter.run.<runId>). The subject is the run's ordered log: each message
// is one file of the run directory put (or deleted), its run-relative path
// in the Sitter-Path header, its bytes the file's bytes. Journal events are
// messages like the others, their bytes exactly the event files the local
// store writes (checksums and links as today). A run directory is the
// replay of its subject, so a run is addressed by its id alone from any
// machine: the process source and inputs are messages of the run too.
//
// A writer publishes its files and events one by one, each expecting the
// subject's last sequence to be the one before it
// (Nats-Expected-Last-Subject-Sequence). Only one writer's chain can
// follow a given sequence: the other is refused at its first message and
// gets store.ErrConflict, re-reads the run and replays its step (store.Do).
// A writer's lease (KV bucket sitter-leases, one key per run, renewed
// while held, expiring with its holder) keeps writers from doing the same
// work twice; the expected sequence, not the lease, is what keeps the
// journal from forking.
package natsstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store"
)

// Names in the NATS account.
const (
	StreamName    = "SITTER_RUNS"
	SubjectPrefix = "sitter.run."
	LeaseBucket   = "sitter-leases"
)

// Message headers.
const (
	hdrPath = "Sitter-Path"
	hdrOp   = "Sitter-Op" // "put" (default) or "delete"
)

// DefaultLeaseTTL is how long a writer's lease outlives its last renewal.
const DefaultLeaseTTL = 30 * time.Second

// DefaultRetryFor is how long the store may go without answering before
// an operation fails: a cluster electing a new leader answers nothing for
// a few seconds.
const DefaultRetryFor = time.Minute

// attemptTimeout bounds one attempt of an operation.
const attemptTimeout = 5 * time.Second

// Options tune Open; the URL's query can set the same (see ParseURL).
type Options struct {
	// CacheDir holds the local copies of runs ($SITTER_STORE_CACHE, else
	// the user cache dir): one run directory per run id.
	CacheDir string
	// Replicas of the stream and lease bucket (default 1).
	Replicas int
	// LeaseTTL is the writer lease's lifetime without renewal.
	LeaseTTL time.Duration
	// NoLease skips the writer lease: tests use it to make two writers
	// race on the expected sequence alone.
	NoLease bool
	// Owner names the holder in the lease (default host:pid).
	Owner string
	// RetryFor is how long the store may go without answering before
	// an operation fails (default DefaultRetryFor): one clock for all
	// the connection's operations, from the first request that went
	// unanswered until the next answer.
	RetryFor time.Duration

	explicitReplicas, explicitLease bool // set by the URL
}

// Conn is a connection to a NATS server with JetStream: what the run
// store, audit shipping and the proxy's state share.
type Conn struct {
	url    string
	nc     *nats.Conn
	js     jetstream.JetStream
	o      Options
	outage outage
}

// outage is since when the store has not answered the connection's
// requests (zero while it answers). Every operation's retries count from
// it, so that a verb whose store went away fails RetryFor after, however
// many operations it goes through: each retrying for RetryFor of its own,
// they added up to minutes.
type outage struct {
	mu       sync.Mutex
	since    time.Time // when the first request not answered was sent
	answered time.Time // the last answer
}

// left is how much of the RetryFor budget is left, and whether the store
// is in an outage at all (else the whole budget is).
func (c *Conn) left() (time.Duration, bool) {
	c.outage.mu.Lock()
	defer c.outage.mu.Unlock()
	if c.outage.since.IsZero() {
		return c.o.RetryFor, false
	}
	return c.o.RetryFor - time.Since(c.outage.since), true
}

// spent says whether the store has gone RetryFor without answering.
func (c *Conn) spent() bool {
	left, out := c.left()
	return out && left <= 0
}

// unanswered records a request sent at sent that got no answer. (A
// request sent before the last answer, the lease's renewal running beside
// a verb's requests, starts no outage: the store answered since.)
func (c *Conn) unanswered(sent time.Time) {
	c.outage.mu.Lock()
	o := &c.outage
	if sent.After(o.answered) && (o.since.IsZero() || sent.Before(o.since)) {
		o.since = sent
	}
	c.outage.mu.Unlock()
}

// answered ends an outage.
func (c *Conn) answered() {
	c.outage.mu.Lock()
	c.outage.since, c.outage.answered = time.Time{}, time.Now()
	c.outage.mu.Unlock()
}

// Store is a connection to a JetStream run store.
type Store struct {
	*Conn
	stream jetstream.Stream
	leases jetstream.KeyValue
	// diesBeforeEnqueue, set by tests, ends a commit with this error
	// after its messages are stored and before its remote effects are
	// enqueued: a writer that died in between.
	diesBeforeEnqueue error
}

// Dial connects to the server(s) of rawURL (see Open) and creates
// nothing; the query's replicas apply to what its user creates.
func Dial(ctx context.Context, rawURL string, o Options) (*Conn, error) {
	servers, nopts, err := ParseURL(rawURL, &o)
	if err != nil {
		return nil, err
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultRetryFor
	}
	if o.Owner == "" {
		h, _ := os.Hostname()
		o.Owner = h + ":" + strconv.Itoa(os.Getpid())
	}
	nopts = append(nopts, nats.Name("sitter"), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	nc, err := nats.Connect(servers, nopts...)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", RedactURL(rawURL), err)
	}
	c := &Conn{url: RedactURL(rawURL), nc: nc, o: o}
	if c.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// Open connects to the store at rawURL: nats://[user:pass@]host:port (a
// comma-separated list of servers for a cluster; tls:// for TLS) with
// optional query parameters creds=FILE (a credentials file), nkey=FILE (an
// nkey seed file), tls_ca, tls_cert, tls_key (PEM files), replicas=N and
// lease=DURATION.
func Open(ctx context.Context, rawURL string, o Options) (*Store, error) {
	if o.CacheDir == "" {
		return nil, errors.New("natsstore: no cache directory")
	}
	c, err := Dial(ctx, rawURL, o)
	if err != nil {
		return nil, err
	}
	s := &Store{Conn: c}
	if err := s.retry(ctx, s.ensure); err != nil {
		c.Close()
		return nil, fmt.Errorf("store %s: %w", s.url, err)
	}
	return s, nil
}

// ensure finds the stream and the lease bucket, creating them on first
// use. An existing one is updated only to the replicas or lease lifetime
// the URL asks for explicitly: a client without ?replicas= must not
// shrink a team's replicated stream.
func (s *Store) ensure(ctx context.Context) error {
	o := s.o
	streamCfg := jetstream.StreamConfig{
		Name: StreamName, Subjects: []string{SubjectPrefix + "*"}, Storage: jetstream.FileStorage,
		Replicas: o.Replicas, AllowDirect: true, Duplicates: 2 * time.Minute,
		Description: "sitter runs: one subject per run, the run directory's files and journal events in order",
	}
	var err error
	s.stream, err = s.js.Stream(ctx, StreamName)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		s.stream, err = s.js.CreateStream(ctx, streamCfg)
	case err == nil && o.explicitReplicas && s.stream.CachedInfo().Config.Replicas != o.Replicas:
		cfg := s.stream.CachedInfo().Config
		cfg.Replicas = o.Replicas
		s.stream, err = s.js.UpdateStream(ctx, cfg)
	}
	if err != nil {
		return err
	}
	kvCfg := jetstream.KeyValueConfig{
		Bucket: LeaseBucket, TTL: o.LeaseTTL, Replicas: o.Replicas, Storage: jetstream.FileStorage,
		Description: "sitter run writer leases",
	}
	s.leases, err = s.js.KeyValue(ctx, LeaseBucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		s.leases, err = s.js.CreateKeyValue(ctx, kvCfg)
	case err == nil && (o.explicitReplicas || o.explicitLease):
		s.leases, err = s.js.CreateOrUpdateKeyValue(ctx, kvCfg)
	}
	if err != nil {
		return err
	}
	if !o.explicitLease {
		// The bucket's lifetime is the team's: renew at a third of it.
		if st, err := s.leases.Status(ctx); err == nil && st.TTL() > 0 {
			s.o.LeaseTTL = st.TTL()
		}
	}
	return nil
}

// ParseURL splits a store URL into the servers nats.Connect takes and the
// options its query names; replicas and lease go into o.
func ParseURL(raw string, o *Options) (string, []nats.Option, error) {
	servers, query, _ := strings.Cut(raw, "?")
	if servers == "" {
		return "", nil, errors.New("empty store URL")
	}
	for _, s := range strings.Split(servers, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			// Not err itself: a *url.Error quotes the URL, secret and all.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return "", nil, fmt.Errorf("store URL %s: %w", RedactURL(raw), err)
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return "", nil, fmt.Errorf("store URL %s: scheme %q is not nats://, tls://, ws:// or wss://", RedactURL(raw), u.Scheme)
		}
		if u.Host == "" {
			return "", nil, fmt.Errorf("store URL %s: no host", RedactURL(raw))
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", nil, fmt.Errorf("store URL query: %w", err)
	}
	var opts []nats.Option
	var tlsCert, tlsKey string
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "creds":
			opts = append(opts, nats.UserCredentials(v))
		case "nkey":
			opt, err := nats.NkeyOptionFromSeed(v)
			if err != nil {
				return "", nil, fmt.Errorf("store URL nkey=%s: %w", v, err)
			}
			opts = append(opts, opt)
		case "tls_ca":
			opts = append(opts, nats.RootCAs(v))
		case "tls_cert":
			tlsCert = v
		case "tls_key":
			tlsKey = v
		case "replicas":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 5 {
				return "", nil, fmt.Errorf("store URL replicas=%s: want 1 to 5", v)
			}
			o.Replicas, o.explicitReplicas = n, true
		case "lease":
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Second {
				return "", nil, fmt.Errorf("store URL lease=%s: want a Go duration of at least 1s", v)
			}
			o.LeaseTTL, o.explicitLease = d, true
		default:
			return "", nil, fmt.Errorf("store URL: unknown parameter %q (creds, nkey, tls_ca, tls_cert, tls_key, replicas, lease)", k)
		}
	}
	if (tlsCert == "") != (tlsKey == "") {
		return "", nil, errors.New("store URL: tls_cert and tls_key go together")
	}
	if tlsCert != "" {
		opts = append(opts, nats.ClientCert(tlsCert, tlsKey))
	}
	return servers, opts, nil
}

// RedactURL is a store URL as it may be printed: the password of each
// server of the list is xxxxx, and so is a user name without a password,
// which NATS takes as a token (nats://token@host). It works on the text,
// so a URL that does not parse, or of another scheme, is hidden too. The
// query (file names, replicas, lease) is left out.
func RedactURL(raw string) string {
	servers, _, _ := strings.Cut(raw, "?")
	parts := strings.Split(servers, ",")
	for i, s := range parts {
		scheme, rest, ok := strings.Cut(s, "://")
		if !ok {
			scheme, rest = "", s
		} else {
			scheme += "://"
		}
		at := strings.LastIndexByte(rest, '@')
		if at < 0 {
			continue
		}
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
			parts[i] = scheme + user + ":xxxxx" + rest[at:]
		} else {
			parts[i] = scheme + "xxxxx" + rest[at:]
		}
	}
	return strings.Join(parts, ",")
}

// Close drops the connection.
func (c *Conn) Close() error {
	c.nc.Close()
	return nil
}

// URL is the store's URL, any password hidden.
func (c *Conn) URL() string { return c.url }

// isToken says whether s is 1 to max letters, digits, - and _: one
// subject token. (Not a regexp: a bounded repeat compiles to a large
// program at start-up, which every binary linking this package, the
// gateway included, would pay.)
func isToken(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// checkID refuses a run id that cannot be one subject token.
func checkID(id string) error {
	if !isToken(id, 128) {
		return fmt.Errorf("run id %q: a run in a shared store is named by letters, digits, - and _ only", id)
	}
	return nil
}

func subject(id string) string { return SubjectPrefix + id }

// RunDir is where this machine keeps its copy of run id.
func (s *Store) RunDir(id string) string { return filepath.Join(s.o.CacheDir, id) }

// Checkout brings the local copy of run ref up to the store's and returns
// it; with write, it also takes the run's writer lease.
func (s *Store) Checkout(ctx context.Context, ref string, write bool) (store.Checkout, error) {
	if err := checkID(ref); err != nil {
		return nil, err
	}
	c, err := s.lockLocal(ctx, ref)
	if err != nil {
		return nil, err
	}
	if write && !s.o.NoLease {
		if c.lease, err = s.acquireLease(ctx, ref); err != nil {
			c.Release()
			return nil, err
		}
	}
	last, err := s.lastSeq(ctx, ref)
	if err == nil && last == 0 {
		err = fmt.Errorf("no run %s in the store %s", ref, s.url)
	}
	if err == nil {
		err = c.sync(ctx, last)
	}
	if err == nil && write {
		c.m.Dirty = true
		err = c.saveManifest()
	}
	if err != nil {
		c.Release()
		return nil, err
	}
	c.write = write
	return c, nil
}

// lockLocal takes this machine's lock on its copy of run id (verbs of
// one machine take turns on one copy) and reads the copy's manifest.
func (s *Store) lockLocal(ctx context.Context, id string) (*checkout, error) {
	if err := os.MkdirAll(s.o.CacheDir, 0o755); err != nil {
		return nil, err
	}
	dir := s.RunDir(id)
	lock, err := journal.Acquire(ctx, dir+".lock", "sitter:store")
	if err != nil {
		return nil, err
	}
	c := &checkout{s: s, id: id, dir: dir, lock: lock, nonce: journal.NewULID("")}
	c.m = readManifest(c.manifestPath())
	return c, nil
}

// lastSeq is the stream sequence of run id's last message, 0 for none.
func (s *Store) lastSeq(ctx context.Context, id string) (uint64, error) {
	var seq uint64
	err := s.retry(ctx, func(ctx context.Context) error {
		m, err := s.stream.GetLastMsgForSubject(ctx, subject(id))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			seq = 0
			return nil
		}
		if err != nil {
			return err
		}
		seq = m.Sequence
		return nil
	})
	return seq, err
}

// checkout is one verb's copy of a run.
type checkout struct {
	s     *Store
	id    string
	dir   string
	lock  *journal.Lock
	lease *lease
	m     *manifest
	write bool
	nonce string // names this writer's messages for deduplication
	n     int
}

func (c *checkout) Dir() string          { return c.dir }
func (c *checkout) manifestPath() string { return c.dir + ".sync.json" }

// Release drops the lease and the local lock. A write checkout that did
// not commit stays marked dirty: the next checkout fetches the run anew.
func (c *checkout) Release() error {
	var err error
	if c.lease != nil {
		err = c.lease.release()
		c.lease = nil
	}
	if c.lock != nil {
		if lerr := c.lock.Release(); err == nil {
			err = lerr
		}
		c.lock = nil
	}
	return err
}

// manifest is what this machine's copy of a run holds: the last message
// of the run it applied and the files that came from the store, so a
// commit can tell what a verb wrote.
type manifest struct {
	Seq uint64 `json:"seq"`
	// Dirty is set while a writer works on the copy and cleared when it
	// committed: a copy left dirty (a crash, a lost commit) is fetched anew.
	Dirty bool             `json:"dirty,omitempty"`
	Files map[string]stamp `json:"files"`
}

type stamp struct {
	Sum   string `json:"sum"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"`
}

func readManifest(path string) *manifest {
	m := &manifest{}
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, m) != nil {
		m = &manifest{Dirty: true} // unknown copy: fetch anew
	}
	if m.Files == nil {
		m.Files = map[string]stamp{}
	}
	return m
}

func (c *checkout) saveManifest() error {
	b, err := json.Marshal(c.m)
	if err != nil {
		return err
	}
	return journal.ReplaceFile(c.manifestPath(), b)
}

// layoutDirs are the directories of every run directory.
var layoutDirs = []string{"journal", "tasks", "blobs", "state", "orphaned", "process"}

// sync applies the run's messages after the copy's up to last; a dirty or
// unknown copy (or one ahead of the store) is fetched from the start.
func (c *checkout) sync(ctx context.Context, last uint64) error {
	if c.m.Dirty || c.m.Seq > last {
		if err := os.RemoveAll(c.dir); err != nil {
			return err
		}
		c.m = &manifest{Files: map[string]stamp{}}
	}
	for _, d := range layoutDirs {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o755); err != nil {
			return err
		}
	}
	subj := subject(c.id)
	for seq := c.m.Seq + 1; c.m.Seq < last; {
		var msg *jetstream.RawStreamMsg
		err := c.s.retry(ctx, func(ctx context.Context) error {
			var err error
			msg, err = c.s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
			return err
		})
		if err != nil {
			return fmt.Errorf("run %s: read message %d: %w", c.id, seq, err)
		}
		if err := c.apply(msg); err != nil {
			return err
		}
		c.m.Seq, seq = msg.Sequence, msg.Sequence+1
	}
	return c.saveManifest()
}

// apply writes one message's file into the copy.
func (c *checkout) apply(msg *jetstream.RawStreamMsg) error {
	rel := msg.Header.Get(hdrPath)
	p, err := c.path(rel)
	if err != nil {
		return fmt.Errorf("run %s message %d: %w", c.id, msg.Sequence, err)
	}
	if msg.Header.Get(hdrOp) == "delete" {
		delete(c.m.Files, rel)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := journal.ReplaceFile(p, msg.Data); err != nil {
		return err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	c.m.Files[rel] = stamp{Sum: sum(msg.Data), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	return nil
}

// path is the file a run-relative path names inside the copy; a path
// that leaves it is refused.
func (c *checkout) path(rel string) (string, error) {
	if rel == "" || !filepath.IsLocal(filepath.FromSlash(rel)) || !tracked(rel) {
		return "", fmt.Errorf("bad file path %q", rel)
	}
	return filepath.Join(c.dir, filepath.FromSlash(rel)), nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// tracked says whether a run-relative path is part of the run in the
// store: caches (state/, but the output), the lock, temp files and
// quarantined files are this machine's.
func tracked(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case rel == journal.LockFile, strings.HasPrefix(base, ".tmp-"), strings.Contains(base, ".json.tmp-"):
		return false
	case strings.HasPrefix(rel, "state/"):
		return rel == "state/output.json"
	case strings.HasPrefix(rel, "orphaned/"):
		return false
	}
	return true
}

// changes lists what was written in the copy since the manifest: files
// to put (other files first, then journal events in order, so an event
// never reaches the store before a file it names) and files deleted.
func (c *checkout) changes() (puts, dels []string, err error) {
	seen := map[string]bool{}
	err = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		r, _ := filepath.Rel(c.dir, p)
		rel := filepath.ToSlash(r)
		if !tracked(rel) {
			return nil
		}
		seen[rel] = true
		old, ok := c.m.Files[rel]
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if ok && old.Size == fi.Size() && old.MTime == fi.ModTime().UnixNano() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if ok && old.Sum == sum(b) {
			return nil
		}
		puts = append(puts, rel)
		return nil
	})
	for rel := range c.m.Files {
		if !seen[rel] {
			dels = append(dels, rel)
		}
	}
	isJournal := func(p string) bool { return strings.HasPrefix(p, "journal/") }
	slices.SortFunc(puts, func(a, b string) int {
		if ja, jb := isJournal(a), isJournal(b); ja != jb {
			if ja {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	slices.Sort(dels)
	return puts, dels, err
}

// Commit publishes what the verb wrote, each message expecting the one
// before it as the run's last: ErrConflict when another writer got there
// first. A journal event already in the store is never rewritten.
func (c *checkout) Commit(ctx context.Context) error {
	puts, dels, err := c.changes()
	if err != nil {
		return err
	}
	for _, p := range append(slices.Clone(dels), puts...) {
		if _, known := c.m.Files[p]; known && strings.HasPrefix(p, "journal/") {
			return fmt.Errorf("run %s: journal file %s was changed or removed after it was committed: a journal is append-only", c.id, p)
		}
	}
	for _, p := range dels {
		if err := c.publish(ctx, p, nil, true); err != nil {
			return err
		}
	}
	for _, p := range puts {
		b, err := os.ReadFile(filepath.Join(c.dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		if err := c.publish(ctx, p, b, false); err != nil {
			return err
		}
		fi, err := os.Stat(filepath.Join(c.dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		c.m.Files[p] = stamp{Sum: sum(b), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	}
	c.m.Dirty = false
	if err := c.saveManifest(); err != nil {
		return err
	}
	if c.s.diesBeforeEnqueue != nil {
		return c.s.diesBeforeEnqueue
	}
	return c.enqueueNew(ctx, puts)
}

// enqueueNew puts the remote effects that the committed events requested
// on the work queue. (A writer that dies between its commit and this
// leaves them off the queue until a worker's reconciliation finds them:
// reconciler in work.go.)
func (c *checkout) enqueueNew(ctx context.Context, puts []string) error {
	var ids []string
	for _, p := range puts {
		if !strings.HasPrefix(p, "journal/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		var ev struct {
			Type string
			Data struct{ EffectID string }
		}
		if json.Unmarshal(b, &ev) == nil && ev.Type == journal.EffectRequested {
			ids = append(ids, ev.Data.EffectID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	st, err := run.Load(c.dir)
	if err != nil {
		return err
	}
	var acts []run.Action
	for _, id := range ids {
		e := st.Effect(id)
		if e == nil || e.Status != run.Requested {
			continue
		}
		def, err := st.TaskDef(e)
		if err != nil {
			return err
		}
		acts = append(acts, run.Action{EffectID: id, Kind: e.Kind, TaskDef: def})
	}
	_, err = c.s.Enqueue(ctx, c.id, acts)
	return err
}

// publish appends one message after the copy's last, and makes it the
// copy's last.
func (c *checkout) publish(ctx context.Context, rel string, data []byte, del bool) error {
	msg := nats.NewMsg(subject(c.id))
	msg.Header.Set(hdrPath, rel)
	if del {
		msg.Header.Set(hdrOp, "delete")
		delete(c.m.Files, rel)
	}
	msg.Data = data
	c.n++
	// The same id on a retry: a message stored whose ack was lost is
	// answered as a duplicate, not stored twice.
	id := c.nonce + "-" + strconv.Itoa(c.n)
	var ack *jetstream.PubAck
	err := c.s.retry(ctx, func(ctx context.Context) error {
		var err error
		ack, err = c.s.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(c.m.Seq), jetstream.WithMsgID(id))
		return err
	})
	if wrongLastSeq(err) {
		// The server checks the expected sequence before the message id:
		// a retry of a publish that was stored but whose ack was lost is
		// refused as out of order, not answered as a duplicate. It is
		// ours when the run's last message carries its id.
		if seq, mine := c.s.lastIs(ctx, c.id, id); mine {
			c.m.Seq = seq
			return nil
		}
		return fmt.Errorf("run %s: %w", c.id, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("run %s: publish %s: %w", c.id, rel, err)
	}
	c.m.Seq = ack.Sequence
	return nil
}

// lastIs says whether run id's last message has message id msgID, and
// its sequence.
func (s *Store) lastIs(ctx context.Context, id, msgID string) (uint64, bool) {
	var m *jetstream.RawStreamMsg
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		m, err = s.stream.GetLastMsgForSubject(ctx, subject(id))
		return err
	})
	if err != nil || m.Header.Get(jetstream.MsgIDHeader) != msgID {
		return 0, false
	}
	return m.Sequence, true
}

func wrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// retry runs op until it succeeds, fails for a reason retrying cannot
// change (an API error), ctx ends, or the store has gone RetryFor without
// answering this connection: a cluster electing a new leader answers
// nothing for a few seconds. An operation begun when the budget is spent
// still gets one attempt (the store may be back: a worker goes on).
func (c *Conn) retry(ctx context.Context, op func(ctx context.Context) error) error {
	wait := 50 * time.Millisecond
	for {
		err := c.attempt(ctx, attemptTimeout, op)
		if err == nil || !transient(err) {
			return err
		}
		left, _ := c.left()
		if left <= 0 {
			return fmt.Errorf("the store has not answered for %s: %w", c.o.RetryFor, err)
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(wait*2, time.Second)
	}
}

// attempt sends op's request once, for at most limit and no longer than
// the retry budget has left (a full limit when it is spent: the store may
// be back), and keeps the outage clock. The end of ctx itself says
// nothing of the store.
func (c *Conn) attempt(ctx context.Context, limit time.Duration, op func(ctx context.Context) error) error {
	sent := time.Now()
	if left, _ := c.left(); left > 0 {
		limit = min(limit, left)
	}
	octx, cancel := context.WithTimeout(ctx, limit)
	err := op(octx)
	cancel()
	switch {
	case ctx.Err() != nil:
	case err != nil && transient(err):
		c.unanswered(sent)
	default:
		c.answered()
	}
	return err
}

// transient says whether an error may go away by itself.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// No leader yet, or a stream catching up.
		return apiErr.Code == 503 || apiErr.ErrorCode == 10008 /* cluster not available */
	}
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound), errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrStreamNotFound):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrConnectionClosed) == false && errors.Is(err, nats.ErrConnectionReconnecting),
		errors.Is(err, nats.ErrDisconnected):
		return true
	}
	return false
}
