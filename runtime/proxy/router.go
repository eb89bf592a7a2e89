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
	Model        string   `json:"model"`
	Status       int      `json:"status"`
	LatencyMS    float64  `json:"latency_ms"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	Attempts     int      `json:"attempts"`
	Failed       []string `json:"failed,omitempty"` // provider,model of attempts that fell back
	Harness      string   `json:"harness,omitempty"`
	Client       string   `json:"client"` // the client's protocol
	Stream       bool     `json:"stream,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// Router is the gateway's http.Handler with a routes file: it picks a
// rule for each request, then hands it to that provider's Server, trying
// the rule's fallbacks while an upstream answers 429, 5xx or times out.
type Router struct {
	cfg     RouterConfig
	routes  *Routes
	sig     *compiledSignals
	servers map[string]*Server
	mux     *http.ServeMux
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
	rt := &Router{cfg: rc, routes: rc.Routes, sig: sig, servers: map[string]*Server{}}
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

// request is what a rule is chosen from.
type request struct {
	proto, harness, model string
	tokens                int
	header                http.Header
	view                  *bodyView
}

// pick returns the rule for a request and the targets to try in order.
func (rt *Router) pick(q *request) (string, []Target) {
	if p, m, ok := strings.Cut(q.model, ","); ok {
		if _, known := rt.routes.Providers[p]; known && m != "" {
			return RuleDirect, []Target{{Provider: p, Model: m}}
		}
	}
	for _, r := range rt.routes.Custom {
		if r.Model != nil && !r.Model.MatchString(q.model) {
			continue
		}
		if r.Harness != "" && r.Harness != q.harness {
			continue
		}
		if r.Header != "" {
			v, ok := q.header[http.CanonicalHeaderKey(r.Header)]
			if !ok || r.Value != nil && !slices.ContainsFunc(v, r.Value.MatchString) {
				continue
			}
		}
		return r.Name, r.Chain
	}
	rules := rt.routes.Rules
	if r := rules[RuleLongContext]; r != nil && q.tokens > r.Threshold {
		return r.Name, r.Chain
	}
	if r := rules[RuleBackground]; r != nil {
		for _, g := range rt.sig.background[q.harness] {
			all := true
			for _, m := range g {
				if !m.holds(q.view) {
					all = false
					break
				}
			}
			if all {
				return r.Name, r.Chain
			}
		}
	}
	if r := rules[RuleWebSearch]; r != nil && anyHolds(rt.sig.webSearch[q.proto], q.view) {
		return r.Name, r.Chain
	}
	if r := rules[RuleImage]; r != nil && anyHolds(rt.sig.image[q.proto], q.view) {
		return r.Name, r.Chain
	}
	if r := rules[RuleThink]; r != nil && anyHolds(rt.sig.think[q.proto], q.view) {
		return r.Name, r.Chain
	}
	return RuleDefault, rules[RuleDefault].Chain
}

// Classify reports the rule and targets a request body would get (tests,
// and the routes bench).
func (rt *Router) Classify(proto, harness string, body []byte, header http.Header, pathModel string) (string, []Target) {
	q := &request{proto: proto, harness: harness, tokens: len(body) / 4, header: header, view: &bodyView{body: body, pathModel: pathModel}}
	q.model = requestModel(q.view)
	return rt.pick(q)
}

// requestModel reads the model (Gemini: from the URL) from the body's
// top-level members, split without decoding.
func requestModel(v *bodyView) string {
	if v.pathModel != "" {
		raw, _ := json.Marshal(v.pathModel)
		jr := json.RawMessage(raw)
		v.model = &jr
		return v.pathModel
	}
	raw, ok := v.top()["model"]
	if !ok {
		raw = json.RawMessage(`""`)
	}
	v.model = &raw
	var m string
	json.Unmarshal(raw, &m)
	return m
}

func (rt *Router) handle(proto, kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		fail := func(status int, msg string) {
			st, b := encodeError(proto, &APIError{Status: status, Message: msg})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st)
			w.Write(b)
		}
		// Any provider's Server checks the token the same way.
		probe := Server{cfg: rt.cfg.Base}
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
		q := &request{proto: proto, harness: harness, tokens: len(body) / 4, header: r.Header, view: &bodyView{body: body, pathModel: pathModel}}
		q.model = requestModel(q.view)
		rule, chain := rt.pick(q)
		n := min(len(chain), rt.routes.Attempts)
		rec := RouteRecord{Rule: rule, Harness: harness, Client: proto}
		for i, t := range chain[:n] {
			o := &routed{model: t.Model}
			r2 := r.WithContext(context.WithValue(r.Context(), routedKey{}, o))
			r2.Body = io.NopCloser(bytes.NewReader(body))
			r2.ContentLength = int64(len(body))
			tw := &tryWriter{w: w, last: i == n-1, h: http.Header{}}
			rt.servers[t.Provider].ServeHTTP(tw, r2)
			rec.Attempts = i + 1
			rec.Provider, rec.Model, rec.Status, rec.Error, rec.Stream = t.Provider, t.Model, o.status, o.err, o.stream
			rec.InputTokens, rec.OutputTokens = o.usage.Input, o.usage.Output
			if !tw.failed {
				break
			}
			rec.Failed = append(rec.Failed, t.String())
			rt.cfg.Base.Log.Info("fallback", "rule", rule, "provider", t.Provider, "model", t.Model, "status", tw.status)
		}
		if rt.cfg.Record != nil {
			rec.Time = start.UTC().Format(time.RFC3339Nano)
			rec.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
			rt.cfg.Record(rec)
		}
	}
}

// retryable: an upstream answer that sends a request to the next fallback.
func retryable(status int) bool { return status == 429 || status >= 500 && status != 501 }

// tryWriter holds back an attempt's answer when it is a failure another
// fallback may still mend; the last attempt's answer always goes out.
type tryWriter struct {
	w      http.ResponseWriter
	h      http.Header
	last   bool
	wrote  bool
	failed bool
	status int
}

func (t *tryWriter) Header() http.Header { return t.h }

func (t *tryWriter) WriteHeader(status int) {
	if t.wrote {
		return
	}
	t.wrote, t.status = true, status
	if !t.last && retryable(status) {
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
// goroutine, so that a request never waits for the disk.
type RecordFile struct {
	ch   chan RouteRecord
	done chan struct{}
	once sync.Once
}

// NewRecordFile writes records to w until Close.
func NewRecordFile(w io.Writer) *RecordFile {
	f := &RecordFile{ch: make(chan RouteRecord, 1024), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		enc := json.NewEncoder(w)
		for r := range f.ch {
			enc.Encode(r)
		}
	}()
	return f
}

// Record queues one record.
func (f *RecordFile) Record(r RouteRecord) { f.ch <- r }

// Close writes what is queued and stops.
func (f *RecordFile) Close() {
	f.once.Do(func() { close(f.ch) })
	<-f.done
}
