package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// RouterConfig configures a Router: a loaded routes file, the atlas's
// request signals and the settings every provider's Server shares.
type RouterConfig struct {
	Routes  *Routes
	Signals Signals
	// Harness is the client harness when known (sitter launch says it):
	// its background signals apply, and custom rules may match it.
	Harness string
	// Base holds what every provider's Server shares (token, timeouts,
	// body limit, log, client); its Provider and Model are ignored.
	Base Config
	// Record, when set, gets one record per routed request.
	Record func(RouteRecord)
}

// RouteRecord is one routed request as the JSON-lines log keeps it.
type RouteRecord struct {
	Time         string   `json:"time"`
	Rule         string   `json:"rule"`
	Provider     string   `json:"provider"`
	Model        string   `json:"model"`           // as sent upstream
	Alias        string   `json:"alias,omitempty"` // the rule's model, when the provider's aliases made it Model
	Status       int      `json:"status"`
	LatencyMS    float64  `json:"latency_ms"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	Attempts     int      `json:"attempts"`
	Failed       []string `json:"failed,omitempty"` // provider,model of attempts that fell back
	// FailedMS is the latency of each of those attempts, in Failed's
	// order: how long its upstream took to fail (LatencyMS is the whole
	// request's, the failed attempts included).
	FailedMS []float64 `json:"failed_ms,omitempty"`
	Harness  string    `json:"harness,omitempty"`
	Client   string    `json:"client"` // the client's protocol
	Stream   bool      `json:"stream,omitempty"`
	Error    string    `json:"error,omitempty"`

	at time.Time // Time, formatted when written
}

// Router is the gateway's http.Handler with a routes file: it picks a
// rule for each request, then hands it to that provider's Server, trying
// the rule's fallbacks while an upstream answers 429, 5xx or times out.
type Router struct {
	cfg     RouterConfig
	routes  *Routes
	sig     *compiledSignals
	servers map[string]*Server
	// headers: each custom rule's header, canonical (http.Header's keys).
	headers []string
	// The built-in rules, looked up once: longContext and background (nil
	// when the file has none), default; and per client protocol the
	// signal rules in the order they are tried.
	longContext, background, def *Rule
	signals                      map[string][]signalRule
	mux                          *http.ServeMux
}

// signalRule is a rule chosen when any of its protocol's signals holds.
type signalRule struct {
	rule *Rule
	any  []*matcher
}

// NewRouter builds one Server per provider of the routes file.
func NewRouter(rc RouterConfig) (*Router, error) {
	if rc.Routes == nil {
		return nil, errors.New("no routes")
	}
	sig, err := compileSignals(rc.Signals)
	if err != nil {
		return nil, err
	}
	rules := rc.Routes.Rules
	rt := &Router{cfg: rc, routes: rc.Routes, sig: sig, servers: map[string]*Server{},
		longContext: rules[RuleLongContext], background: rules[RuleBackground], def: rules[RuleDefault], signals: map[string][]signalRule{}}
	for _, r := range rc.Routes.Custom {
		rt.headers = append(rt.headers, http.CanonicalHeaderKey(r.Header))
	}
	for _, s := range []struct {
		rule string
		ms   map[string][]*matcher
	}{{RuleWebSearch, sig.webSearch}, {RuleImage, sig.image}, {RuleThink, sig.think}} {
		if r := rules[s.rule]; r != nil {
			for proto, ms := range s.ms {
				rt.signals[proto] = append(rt.signals[proto], signalRule{r, ms})
			}
		}
	}
	if rt.cfg.Base.Log == nil {
		rt.cfg.Base.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if rt.cfg.Base.MaxBody == 0 {
		rt.cfg.Base.MaxBody = 32 << 20
	}
	if rt.cfg.Base.FirstByteTimeout == 0 {
		rt.cfg.Base.FirstByteTimeout = rc.Routes.Timeout
	}
	for name, p := range rc.Routes.Providers {
		c := rt.cfg.Base
		c.Provider, c.Model, c.Token = p, "", ""
		c.Log = rt.cfg.Base.Log.With("rule_provider", name)
		s, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("%s: providers.%s: %v", rc.Routes.File, name, err)
		}
		rt.servers[name] = s
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		var names []string
		for n := range rt.servers {
			names = append(names, n)
		}
		slices.Sort(names)
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"ok": true, "routes": rc.Routes.File, "providers": names})
		w.Write(append(b, '\n'))
	})
	mux.HandleFunc("HEAD /{$}", func(w http.ResponseWriter, r *http.Request) {})
	handleLLM(mux, rt.handle)
	rt.mux = mux
	return rt, nil
}

func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.mux.ServeHTTP(w, r) }

// pick returns the rule for a request and the targets to try in order.
// The body is split once (its top-level members); every signal reads
// that split.
func (rt *Router) pick(proto, harness string, body []byte, header http.Header, pathModel string) (string, []Target) {
	var buf [16][]byte // the split, on the stack when that is enough
	var tops [][]byte
	if n := len(rt.sig.tops); n <= len(buf) {
		tops = buf[:n]
	} else {
		tops = make([][]byte, n)
	}
	view := splitBody(body, rt.sig.tops, tops, pathModel)
	model, _ := rawString(view.tops[0])
	if p, m, ok := bytes.Cut(model, []byte(",")); ok && len(m) > 0 {
		if _, known := rt.routes.Providers[string(p)]; known {
			return RuleDirect, []Target{{Provider: string(p), Model: string(m)}}
		}
	}
	for i, r := range rt.routes.Custom {
		if r.Model != nil && !r.Model.Match(model) {
			continue
		}
		if r.Harness != "" && r.Harness != harness {
			continue
		}
		if r.Header != "" {
			v, ok := header[rt.headers[i]]
			if !ok || r.Value != nil && !slices.ContainsFunc(v, r.Value.MatchString) {
				continue
			}
		}
		return r.Name, r.Chain
	}
	if r := rt.longContext; r != nil && len(body)/4 > r.Threshold { // tokens: about 4 bytes each
		return r.Name, r.Chain
	}
	if r := rt.background; r != nil {
		for _, g := range rt.sig.background[harness] {
			all := true
			for _, m := range g {
				if !m.holds(&view) {
					all = false
					break
				}
			}
			if all {
				return r.Name, r.Chain
			}
		}
	}
	for _, s := range rt.signals[proto] {
		if anyHolds(s.any, &view) {
			return s.rule.Name, s.rule.Chain
		}
	}
	return RuleDefault, rt.def.Chain
}

// Classify reports the rule and targets a request body would get (tests,
// and the routes bench).
func (rt *Router) Classify(proto, harness string, body []byte, header http.Header, pathModel string) (string, []Target) {
	return rt.pick(proto, harness, body, header, pathModel)
}

func (rt *Router) handle(proto, kind string) http.HandlerFunc {
	// Any provider's Server checks the token the same way.
	probe := &Server{cfg: rt.cfg.Base}
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// fail refuses a request before any rule is chosen (no token, a
		// body over the limit): no attempt logs it, so its line is
		// written here, as the gateway without routes writes one.
		fail := func(status int, msg string) {
			st, b := encodeError(proto, &APIError{Status: status, Message: msg})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st)
			w.Write(b)
			rt.cfg.Base.Log.Info("request", "route", r.URL.Path, "status", status,
				"latency_ms", float64(time.Since(start).Microseconds())/1000, "error", msg)
		}
		if !probe.authorized(proto, r) {
			fail(401, "sitter proxy: missing or wrong token (use the token sitter proxy printed, in this API's key header)")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rt.cfg.Base.MaxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				fail(413, fmt.Sprintf("request body over %d bytes", rt.cfg.Base.MaxBody))
				return
			}
			fail(400, "read request: "+err.Error())
			return
		}
		pathModel := ""
		if proto == Gemini {
			pathModel, _, _ = strings.Cut(r.PathValue("call"), ":")
		}
		harness := rt.cfg.Harness
		rule, chain := rt.pick(proto, harness, body, r.Header, pathModel)
		n := min(len(chain), rt.routes.Attempts)
		rec := RouteRecord{Rule: rule, Harness: harness, Client: proto}
		for i, t := range chain[:n] {
			// The provider's Server is called directly with the body read
			// here: no second dispatch, token check or read.
			o := &routed{model: t.Model, body: body}
			if i == n-1 {
				rt.servers[t.Provider].serve(w, r, proto, kind, o)
			} else {
				tw := &tryWriter{w: w, ctx: r.Context()}
				began := time.Now()
				rt.servers[t.Provider].serve(tw, r, proto, kind, o)
				if tw.failed {
					ms := float64(time.Since(began).Microseconds()) / 1000
					rec.Failed = append(rec.Failed, t.Provider+","+o.sentModel())
					rec.FailedMS = append(rec.FailedMS, ms)
					rt.cfg.Base.Log.Info("fallback", "rule", rule, "provider", t.Provider, "model", o.sentModel(), "status", tw.status, "latency_ms", ms)
					continue
				}
			}
			rec.Attempts = i + 1
			rec.Provider, rec.Model, rec.Status, rec.Error, rec.Stream = t.Provider, o.sentModel(), o.status, o.err, o.stream
			if rec.Model != t.Model {
				rec.Alias = t.Model
			}
			rec.InputTokens, rec.OutputTokens = o.usage.Input, o.usage.Output
			break
		}
		if rt.cfg.Record != nil {
			rec.at = start
			rec.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
			rt.cfg.Record(rec)
		}
	}
}

// sentModel is the model the attempt sent upstream; the rule's, when it
// failed before it chose one (a body it could not decode).
func (o *routed) sentModel() string {
	if o.sent == "" {
		return o.model
	}
	return o.sent
}

// retryable: an upstream answer that sends a request to the next fallback.
func retryable(status int) bool { return status == 429 || status >= 500 && status != 501 }

// tryWriter holds back an attempt's answer when it is a failure another
// fallback may still mend (the last attempt writes to the client
// directly).
type tryWriter struct {
	w http.ResponseWriter
	// ctx is the request's: once it is done (the client left, the
	// gateway stops) no fallback follows, and the failure is the answer.
	ctx    context.Context
	h      http.Header
	wrote  bool
	failed bool
	status int
}

func (t *tryWriter) Header() http.Header {
	if t.h == nil {
		t.h = http.Header{}
	}
	return t.h
}

func (t *tryWriter) WriteHeader(status int) {
	if t.wrote {
		return
	}
	t.wrote, t.status = true, status
	if retryable(status) && t.ctx.Err() == nil {
		t.failed = true
		return
	}
	for k, v := range t.h {
		t.w.Header()[k] = v
	}
	t.w.WriteHeader(status)
}

func (t *tryWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.WriteHeader(200)
	}
	if t.failed {
		return len(b), nil
	}
	return t.w.Write(b)
}

func (t *tryWriter) Flush() {
	if t.failed {
		return
	}
	if !t.wrote {
		t.WriteHeader(200)
	}
	if f, ok := t.w.(http.Flusher); ok {
		f.Flush()
	}
}

// RecordFile appends route records to a JSON-lines file from one
// goroutine: a request only appends its record to a queue (never waits
// for the disk, nor for a full queue), and the writer writes what queued
// up in one write, at most about ten times a second (recordDelay). A record that cannot be written is never dropped
// silently: the error is logged with the number of records lost, and
// Close returns it.
type RecordFile struct {
	w    io.Writer
	log  *slog.Logger
	mu   sync.Mutex
	q    []RouteRecord
	err  error
	lost int
	shut bool
	wake chan struct{} // a record is queued
	stop chan struct{} // closed by Close
	done chan struct{}
}

// NewRecordFile writes records to w until Close; log (nil: none) hears
// of records that could not be written.
func NewRecordFile(w io.Writer, log *slog.Logger) *RecordFile {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f := &RecordFile{w: w, log: log, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go f.run()
	return f
}

// Record queues one record.
func (f *RecordFile) Record(r RouteRecord) {
	f.mu.Lock()
	if f.shut {
		f.lost++
		f.mu.Unlock()
		f.log.Error("routes record: a record after close is lost", "rule", r.Rule, "provider", r.Provider, "model", r.Model)
		return
	}
	f.q = append(f.q, r)
	select {
	case f.wake <- struct{}{}:
	default:
	}
	f.mu.Unlock()
}

// recordDelay: after a record arrives, the writer waits this long for
// more before it writes, so that a busy proxy wakes it (and writes) about
// ten times a second rather than once per request.
const recordDelay = 100 * time.Millisecond

func (f *RecordFile) run() {
	defer close(f.done)
	var batch []RouteRecord
	var buf []byte
	for {
		select {
		case <-f.wake:
			t := time.NewTimer(recordDelay)
			select {
			case <-t.C:
			case <-f.stop:
				t.Stop()
			}
		case <-f.stop:
		}
		f.mu.Lock()
		batch, f.q = f.q, batch[:0]
		shut := f.shut
		f.mu.Unlock()
		if len(batch) > 0 {
			buf = buf[:0]
			for i := range batch {
				buf = appendRecord(buf, &batch[i])
			}
			if _, err := f.w.Write(buf); err != nil {
				f.mu.Lock()
				f.lost += len(batch)
				if f.err == nil {
					f.err = err
				}
				f.mu.Unlock()
				f.log.Error("routes record: records not written", "lost", len(batch), "error", err)
			}
			clear(batch)
		}
		if shut {
			// Record refuses new records once shut: the queue is empty.
			return
		}
	}
}

// Close writes what is queued and stops; it returns the first write
// error, with how many records were lost.
func (f *RecordFile) Close() error {
	f.mu.Lock()
	if !f.shut {
		f.shut = true
		close(f.stop)
	}
	f.mu.Unlock()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lost > 0 {
		if f.err == nil {
			return fmt.Errorf("routes record: %d records lost", f.lost)
		}
		return fmt.Errorf("routes record: %d records lost: %w", f.lost, f.err)
	}
	return nil
}
