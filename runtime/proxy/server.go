package proxy

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Provider is where the proxy forwards: a protocol, a base URL as the
// provider's SDK takes it, and how the key is sent.
type Provider struct {
	ID       string
	Protocol string
	BaseURL  string
	// Auth: x-api-key, bearer, api-key (Azure: deployment path and
	// api-version) or x-goog-api-key.
	Auth            string
	Key             string
	APIVersion      string
	DefaultModel    string
	Models          map[string]string // alias → model id
	MaxOutputTokens int
	// MaxToolName: longer tool names are shortened and mapped back
	// (0: 64 for OpenAI and Gemini, no limit for Anthropic).
	MaxToolName int

	sigs *sigStore
	// routeModels: the models a routes file lets its rules name.
	routeModels []string
}

// Config configures a Server.
type Config struct {
	Provider Provider
	// Model, when set, replaces the model of every request.
	Model string
	// Token is the secret clients must present in their protocol's auth header.
	Token string
	// MaxBody bounds a request body (default 32 MiB).
	MaxBody int64
	// ConnectTimeout, FirstByteTimeout (response headers) and IdleTimeout
	// (silence within a stream); no total cap on streams.
	ConnectTimeout, FirstByteTimeout, IdleTimeout time.Duration
	// PingInterval: keep-alive during upstream silence (default 10s).
	PingInterval time.Duration
	// Retries before the first byte on connection errors and 502/503/504/529.
	Retries int
	// RetryBackoff is the first wait between retries (doubles; retry-after wins, capped at 60s).
	RetryBackoff time.Duration
	Log          *slog.Logger
	// Client overrides the upstream HTTP client (tests).
	Client *http.Client
	// State, when set, also keeps what the gateway remembers between
	// requests (Gemini thought signatures) where other replicas see it.
	State SharedState
}

// CheckBaseURL refuses an upstream base URL that no request could reach:
// one without an http or https scheme and a host ("localhost:8080",
// "api.openai.com/v1"), which would otherwise start a gateway whose every
// request fails with "unsupported protocol scheme".
func CheckBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q: want an http:// or https:// URL with a host (such as https://api.openai.com/v1)", base)
	}
	return nil
}

// Server is the gateway's http.Handler.
type Server struct {
	cfg    Config
	client *http.Client
	mux    *http.ServeMux
	// endGrace bounds the wait for an upstream's EOF after its terminal
	// event (the connection is reused only after EOF).
	endGrace time.Duration
}

// New returns a Server; it validates the provider.
func New(cfg Config) (*Server, error) {
	if adapterFor(cfg.Provider.Protocol) == nil {
		return nil, fmt.Errorf("provider %s: unknown protocol %q", cfg.Provider.ID, cfg.Provider.Protocol)
	}
	if err := CheckBaseURL(cfg.Provider.BaseURL); err != nil {
		return nil, fmt.Errorf("provider %s: %v", cfg.Provider.ID, err)
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 32 << 20
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.FirstByteTimeout == 0 {
		cfg.FirstByteTimeout = 300 * time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 300 * time.Second
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = 10 * time.Second
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 500 * time.Millisecond
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg.Provider.sigs = newSigStore(SignatureTTL)
	cfg.Provider.sigs.shared = cfg.State
	s := &Server{cfg: cfg, client: cfg.Client, endGrace: time.Second}
	if s.client == nil {
		s.client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   cfg.ConnectTimeout,
			ResponseHeaderTimeout: cfg.FirstByteTimeout,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"ok\":true,\"provider\":%q,\"protocol\":%q}\n", cfg.Provider.ID, cfg.Provider.Protocol)
	})
	mux.HandleFunc("HEAD /{$}", func(w http.ResponseWriter, r *http.Request) {})
	handleLLM(mux, s.route)
	s.mux = mux
	return s, nil
}

// handleLLM registers the LLM routes of every protocol.
func handleLLM(mux *http.ServeMux, route func(proto, kind string) http.HandlerFunc) {
	mux.HandleFunc("POST /v1/messages", route(Anthropic, "messages"))
	mux.HandleFunc("POST /v1/messages/count_tokens", route(Anthropic, "count"))
	mux.HandleFunc("POST /v1/chat/completions", route(OpenAIChat, "chat"))
	mux.HandleFunc("POST /chat/completions", route(OpenAIChat, "chat"))
	mux.HandleFunc("POST /v1/responses", route(OpenAIResponses, "responses"))
	mux.HandleFunc("POST /responses", route(OpenAIResponses, "responses"))
	mux.HandleFunc("POST /v1beta/models/{call}", route(Gemini, "gemini"))
	mux.HandleFunc("POST /v1/models/{call}", route(Gemini, "gemini"))
	mux.HandleFunc("/", notFound)
}

// notFound answers a path the proxy does not serve (a client's base URL
// with a doubled /v1, say) with the paths it does, in the error shape of
// the protocol the path looks like.
func notFound(w http.ResponseWriter, r *http.Request) {
	proto := OpenAIChat
	switch p := r.URL.Path; {
	case strings.Contains(p, "/messages"):
		proto = Anthropic
	case strings.Contains(p, "/models/"):
		proto = Gemini
	}
	st, b := encodeError(proto, &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf(
		"sitter proxy: no route for %s %s: it serves POST /v1/messages, /v1/chat/completions, /v1/responses, "+
			"/v1beta/models/{model}:generateContent and GET /healthz (is the client's base URL the proxy's URL, with /v1 for OpenAI clients?)",
		r.Method, r.URL.Path)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st)
	w.Write(b)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// routed is what a Router tells the provider's Server about one attempt,
// and what the Server tells back.
type routed struct {
	model string // the model the rule chose
	body  []byte // the request body, read (and the token checked) by the Router
	// Filled by the Server when the request ends.
	sent   string // the model sent upstream (the rule's, aliases resolved)
	status int
	usage  Usage
	err    string
	stream bool
}

// authorized checks the token in the ingress protocol's own header.
func (s *Server) authorized(proto string, r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	var got []string
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		got = append(got, b)
	}
	switch proto {
	case Anthropic:
		got = append(got, r.Header.Get("X-Api-Key"))
	case Gemini:
		got = append(got, r.Header.Get("X-Goog-Api-Key"), r.URL.Query().Get("key"))
	}
	for _, g := range got {
		if g != "" && subtle.ConstantTimeCompare([]byte(g), []byte(s.cfg.Token)) == 1 {
			return true
		}
	}
	return false
}

// logLine is the one structured line per request.
type logLine struct {
	route, model string
	status       int
	start        time.Time
	usage        Usage
	stream       bool
	err          string
}

func (s *Server) log(l *logLine) {
	attrs := []any{"route", l.route, "provider", s.cfg.Provider.ID, "model", l.model, "status", l.status,
		"latency_ms", float64(time.Since(l.start).Microseconds()) / 1000, "stream", l.stream,
		"input_tokens", l.usage.Input, "output_tokens", l.usage.Output, "cache_read_tokens", l.usage.CacheRead}
	if l.err != "" {
		attrs = append(attrs, "error", l.err)
	}
	s.cfg.Log.Info("request", attrs...)
}

func (s *Server) route(proto, kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, proto, kind, nil) }
}

// serve answers one request; rt, when a Router calls, carries the body
// it read and the model its rule chose, and gets the outcome.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, proto, kind string, rt *routed) {
	ll := &logLine{route: r.URL.Path, start: time.Now()}
	fixed := s.cfg.Model
	if rt != nil {
		fixed = rt.model
	}
	defer func() {
		s.log(ll)
		if rt != nil {
			rt.sent, rt.status, rt.usage, rt.err, rt.stream = ll.model, ll.status, ll.usage, ll.err, ll.stream
		}
	}()
	fail := func(status int, msg string) {
		ll.status, ll.err = status, msg
		st, b := encodeError(proto, &APIError{Status: status, Message: msg})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		w.Write(b)
	}
	var body []byte
	if rt != nil {
		body = rt.body
	} else {
		if !s.authorized(proto, r) {
			fail(401, "sitter proxy: missing or wrong token (use the token sitter proxy printed, in this API's key header)")
			return
		}
		var err error
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				fail(413, fmt.Sprintf("request body over %d bytes", s.cfg.MaxBody))
				return
			}
			fail(400, "read request: "+err.Error())
			return
		}
	}
	in := adapterFor(proto)
	stream := false
	pathModel := ""
	if proto == Gemini {
		call := r.PathValue("call")
		m, action, ok := strings.Cut(call, ":")
		if !ok {
			fail(404, "want /v1beta/models/{model}:generateContent|streamGenerateContent|countTokens")
			return
		}
		pathModel = m
		switch action {
		case "generateContent":
		case "streamGenerateContent":
			stream = true
		case "countTokens":
			kind = "count"
		default:
			fail(404, "unknown action "+action)
			return
		}
	}
	// Azure's deployment path is never the client's: always re-encode.
	same := proto == s.cfg.Provider.Protocol && s.cfg.Provider.Auth != "api-key"
	if kind == "count" {
		if fixed != "" {
			ll.model = s.model("", fixed)
		}
		s.countTokens(w, r, proto, body, fixed != "", ll, fail)
		return
	}
	var req *Request
	var err error
	if !same || fixed != "" || proto == Gemini {
		req, err = in.decodeRequest(body)
		if err != nil {
			fail(400, err.Error())
			return
		}
		if proto == Gemini {
			req.Model, req.Stream = pathModel, stream
		}
		req.Model = s.model(req.Model, fixed)
		ll.model, ll.stream = req.Model, req.Stream
	}
	if same && fixed == "" {
		// Passthrough: bytes untouched, only the credentials change.
		if req == nil {
			var peek struct {
				Model  string `json:"model"`
				Stream bool   `json:"stream"`
			}
			json.Unmarshal(body, &peek)
			ll.model, ll.stream = peek.Model, peek.Stream
		}
		path := strings.TrimPrefix(r.URL.Path, "/v1")
		if proto == Anthropic || proto == Gemini {
			path = r.URL.Path
		}
		if proto == Gemini && strings.Contains(s.cfg.Provider.BaseURL, "/publishers/") {
			path = "/models/" + r.PathValue("call")
		}
		q := r.URL.Query()
		q.Del("key")
		s.passthrough(w, r, proto, path, q, body, ll)
		return
	}
	// Other protocols, or --model on a same-protocol route: re-encode.
	s.translate(w, r, in, proto, req, ll)
}

// model resolves aliases and --model (or the model a route chose: fixed).
func (s *Server) model(m, fixed string) string {
	if fixed != "" {
		m = fixed
	}
	if id, ok := s.cfg.Provider.Models[strings.ToLower(m)]; ok {
		return id
	}
	for alias, id := range s.cfg.Provider.Models {
		// claude-sonnet-4-5-20250929 → "sonnet"
		if s.cfg.Provider.Protocol != Anthropic && strings.Contains(strings.ToLower(m), alias) {
			return id
		}
	}
	if m == "" || (s.cfg.Provider.Protocol != Anthropic && strings.HasPrefix(m, "claude")) {
		return s.cfg.Provider.DefaultModel
	}
	return m
}

// upstream builds the upstream request URL and headers.
func (s *Server) upstream(ctx context.Context, path string, q url.Values, body []byte, model string) (*http.Request, error) {
	p := &s.cfg.Provider
	u, err := url.Parse(strings.TrimSuffix(p.BaseURL, "/") + path)
	if err != nil {
		return nil, err
	}
	if q == nil {
		q = url.Values{}
	}
	if p.Auth == "api-key" && p.APIVersion != "" {
		q.Set("api-version", p.APIVersion)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, "POST", u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	switch p.Auth {
	case "x-api-key":
		req.Header.Set("X-Api-Key", p.Key)
	case "api-key":
		req.Header.Set("Api-Key", p.Key)
	case "x-goog-api-key":
		req.Header.Set("X-Goog-Api-Key", p.Key)
	default:
		req.Header.Set("Authorization", "Bearer "+p.Key)
	}
	if p.Protocol == Anthropic {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	return req, nil
}

// do sends with retries before the first byte: connection errors and
// 502/503/504/529 are retried; anything else returns at once.
func (s *Server) do(ctx context.Context, build func() (*http.Request, error)) (*http.Response, error) {
	wait := s.cfg.RetryBackoff
	for attempt := 0; ; attempt++ {
		req, err := build()
		if err != nil {
			return nil, err
		}
		resp, err := s.client.Do(req)
		retryable := err != nil && ctx.Err() == nil
		if err == nil {
			switch resp.StatusCode {
			case 502, 503, 504, 529:
				retryable = true
			}
		}
		if !retryable || attempt >= s.cfg.Retries {
			return resp, err
		}
		d := wait
		if resp != nil {
			if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
				d = time.Duration(ra) * time.Second
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		d = min(d, 60*time.Second)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

// ErrShutdown is the cause the requests still in flight end with when the
// gateway stops and its grace period runs out (sitter-proxy cancels their
// base context with it): each answers its client with its protocol's error
// saying so (503: Anthropic's 529 overloaded_error, which Claude Code
// retries), or that error event on a stream already under way, and is
// logged and recorded as such.
var ErrShutdown = errors.New("sitter proxy shut down while the request was in flight")

// shutdownError is the error a request ends with when ctx ended because
// the gateway stops; nil otherwise.
func shutdownError(ctx context.Context) *APIError {
	if !errors.Is(context.Cause(ctx), ErrShutdown) {
		return nil
	}
	return &APIError{Status: 503, Message: ErrShutdown.Error()}
}

// upstreamFailure answers a failed upstream call in the ingress protocol.
func (s *Server) upstreamFailure(ctx context.Context, w http.ResponseWriter, proto string, resp *http.Response, err error, ll *logLine) {
	var e *APIError
	if err != nil {
		// Given up because the gateway stops, or the upstream's failure.
		if e = shutdownError(ctx); e == nil && ctx.Err() != nil {
			// The client left (its request's context ended): no upstream
			// failed, and the log and the routes record must not say one
			// did. 499 is the usual "client closed request".
			e = &APIError{Status: 499, Message: "the client closed the request before the upstream answered"}
		} else if e == nil {
			e = &APIError{Status: 502, Message: "upstream: " + err.Error()}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				e.Status = 504
			}
		}
	} else {
		b, _ := readAll(resp.Body, 1<<20)
		resp.Body.Close()
		e = decodeError(resp.StatusCode, b)
		e.RetryAfter = resp.Header.Get("Retry-After")
	}
	st, b := encodeError(proto, e)
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st)
	w.Write(b)
	ll.status, ll.err = st, e.Message
}

func (s *Server) passthrough(w http.ResponseWriter, r *http.Request, proto, path string, q url.Values, body []byte, ll *logLine) {
	resp, err := s.do(r.Context(), func() (*http.Request, error) {
		req, err := s.upstream(r.Context(), path, q, body, ll.model)
		if err == nil && proto == Anthropic {
			// The body may use beta features it names; credentials never pass.
			for _, h := range []string{"Anthropic-Beta", "Anthropic-Version"} {
				if v := r.Header.Get(h); v != "" {
					req.Header.Set(h, v)
				}
			}
		}
		return req, err
	})
	if err != nil {
		s.upstreamFailure(r.Context(), w, proto, nil, err, ll)
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Retry-After", "Request-Id", "X-Request-Id"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	ll.status = resp.StatusCode
	f, _ := w.(http.Flusher)
	// An event stream is watched for its protocol's terminal event: one
	// that ends without it was cut, and gets the client protocol's error
	// appended rather than end as if complete.
	sse := resp.StatusCode == 200 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	var seen terminalSeen
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if sse {
				seen.scan(proto, buf[:n])
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			if sse && !seen.ok {
				e := shutdownError(r.Context())
				if e == nil {
					e = cutStream("its terminal event").Err
					if err != io.EOF {
						e.Message += " (" + err.Error() + ")"
					}
				}
				w.Write(cutTail(proto, e))
				ll.err = e.Message
				return
			}
			if err != io.EOF && !sse {
				// The upstream broke off: break the client's connection
				// too rather than end its body cleanly, so that a cut
				// body passed through is never a complete-looking one.
				// (A stream broken off after its terminal event is
				// complete.)
				ll.err = "upstream: " + err.Error()
				panic(http.ErrAbortHandler)
			}
			return
		}
	}
}

// terminalSeen watches passed-through stream bytes for the protocol's
// terminal event (or an error event, which ends a stream too). It
// matches text, so a marker quoted in the content also counts: then a
// cut goes unreported, as before, never the reverse.
type terminalSeen struct {
	ok   bool
	tail []byte // the end of the previous read: markers may straddle reads
}

func (t *terminalSeen) scan(proto string, b []byte) {
	if t.ok {
		return
	}
	var marks []string
	switch proto {
	case Anthropic:
		marks = []string{`"message_stop"`, "event: error"}
	case OpenAIChat:
		marks = []string{"[DONE]", `"finish_reason":"`, `"finish_reason": "`, `"error":`, `"error": `}
	case OpenAIResponses:
		marks = []string{"response.completed", "response.incomplete", "response.failed", "event: error"}
	case Gemini:
		marks = []string{`"finishReason"`, `"error":`, `"error" :`}
	}
	// The read itself, and the seam with the previous one (markers are
	// under 32 bytes).
	seam := append(append([]byte(nil), t.tail...), b[:min(len(b), 32)]...)
	for _, m := range marks {
		if bytes.Contains(b, []byte(m)) || bytes.Contains(seam, []byte(m)) {
			t.ok = true
			return
		}
	}
	if len(b) >= 32 {
		t.tail = append(t.tail[:0], b[len(b)-32:]...)
	} else {
		t.tail = append(t.tail, b...)
		if len(t.tail) > 32 {
			t.tail = t.tail[len(t.tail)-32:]
		}
	}
}

// cutTail is the client protocol's error event for a passed-through
// stream that was cut, after blank lines that end any event cut short.
// It stands alone: the upstream's own stream state (ids, sequence
// numbers) is not known here, so Responses gets the error event only.
func cutTail(proto string, e *APIError) []byte {
	_, b := encodeError(proto, e)
	var out bytes.Buffer
	out.WriteString("\n\n")
	switch proto {
	case Anthropic:
		out.WriteString("event: error\ndata: ")
		out.Write(b)
		out.WriteString("\n\n")
	case OpenAIResponses:
		ev, _ := json.Marshal(map[string]any{"type": "error", "code": openAIType(e.Status, e.Code), "message": e.Message, "param": nil})
		out.WriteString("event: error\ndata: ")
		out.Write(ev)
		out.WriteString("\n\n")
	case Gemini:
		out.WriteString("data: ")
		out.Write(b)
		out.WriteString("\n\n")
		out.Write(b) // the bare object Google's SDK checks for (gemStreamEncoder)
		out.WriteString("\n")
	default:
		out.WriteString("data: ")
		out.Write(b)
		out.WriteString("\n\n")
	}
	return out.Bytes()
}

func (s *Server) translate(w http.ResponseWriter, r *http.Request, in adapter, proto string, req *Request, ll *logLine) {
	out := adapterFor(s.cfg.Provider.Protocol)
	if s.cfg.Provider.Protocol == Anthropic && req.MaxTokens == 0 {
		req.MaxTokens = s.cfg.Provider.MaxOutputTokens
	}
	req.estimate = estimateTokens(req)
	back := shortenTools(req, s.cfg.Provider.toolLimit())
	path, q, body, err := out.encodeRequest(req, &s.cfg.Provider)
	if err != nil {
		s.upstreamFailure(r.Context(), w, proto, nil, err, ll)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	resp, err := s.do(ctx, func() (*http.Request, error) { return s.upstream(ctx, path, q, body, req.Model) })
	if err != nil || resp.StatusCode >= 400 {
		s.upstreamFailure(ctx, w, proto, resp, err, ll)
		return
	}
	defer resp.Body.Close()
	if !req.Stream {
		b, err := readAll(resp.Body, 256<<20)
		if err != nil {
			s.upstreamFailure(ctx, w, proto, nil, err, ll)
			return
		}
		res, err := out.decodeResponse(b, s.cfg.Provider.sigs)
		if err != nil {
			s.upstreamFailure(ctx, w, proto, nil, err, ll)
			return
		}
		if res.Model == "" {
			res.Model = req.Model
		}
		for i := range res.Parts {
			if n, ok := back[res.Parts[i].ToolName]; ok {
				res.Parts[i].ToolName = n
			}
		}
		ll.status, ll.usage = 200, res.Usage
		answer := in.encodeResponse(res)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		w.Write(answer)
		// The answer goes now: the request's log line (and a router's
		// route record) are written after it, not while the client waits.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return
	}
	s.stream(ctx, cancel, w, r, in, out, proto, req, resp.Body, ll, back)
}

// stream translates event by event. Headers are committed at the first
// upstream event, so an early failure still gets a real status; after
// that, errors become the ingress protocol's error frame.
func (s *Server) stream(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, r *http.Request, in, out adapter, proto string, req *Request, body io.Reader, ll *logLine, back map[string]string) {
	type item struct {
		ev  SSE
		err error
	}
	ch := make(chan item, 16)
	go func() {
		defer close(ch)
		rd := NewSSEReader(body)
		for {
			ev, err := rd.Next()
			select {
			case ch <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	sw := newSSEWriter(w)
	enc := in.newStreamEncoder(sw, req)
	if ge, ok := enc.(*gemStreamEncoder); ok && r.URL.Query().Get("alt") != "sse" {
		ge.array = true
	}
	dec := out.newStreamDecoder(s.cfg.Provider.sigs)
	committed := false
	// over: the client has been sent its protocol's terminal event (the
	// end, or an error): nothing may follow it, not even a ping.
	over, failed := false, false
	var pending []Event
	var firstErr *APIError
	var emit func(Event)
	send := func(e Event) {
		if over {
			return
		}
		enc.encode(e)
		switch e.Kind {
		case EvEnd:
			over = true
		case EvError:
			over, failed = true, true
			ll.err = e.Err.Message
		}
	}
	emit = newToolSerializer(func(e Event) {
		if n, ok := back[e.ToolName]; ok && e.Kind == EvToolStart {
			e.ToolName = n
		}
		if e.Kind == EvEnd {
			ll.usage = e.Usage
		}
		if !committed {
			if e.Kind == EvError {
				firstErr = e.Err
				return
			}
			pending = append(pending, e)
			return
		}
		send(e)
	}).emit
	commit := func() {
		if committed || firstErr != nil {
			return
		}
		committed = true
		h := w.Header()
		if ge, ok := enc.(*gemStreamEncoder); ok && ge.array {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/event-stream")
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(200)
		ll.status = 200
		for _, e := range pending {
			send(e)
		}
		pending = nil
	}
	// ended: the request's context is done: the client left, or the
	// gateway stops, and then the client hears so in its protocol.
	ended := func() {
		cancel()
		e := shutdownError(r.Context())
		switch {
		case e == nil:
			ll.status, ll.err = 499, "client disconnected"
		case !committed:
			s.writeError(w, proto, e, ll)
		default:
			send(Event{Kind: EvError, Err: e})
			enc.close()
		}
	}
	idle := time.NewTimer(s.cfg.IdleTimeout)
	defer idle.Stop()
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			ended()
			return
		case <-ping.C:
			// The upstream answered 200 but is silent (a reasoning model
			// thinking): commit now rather than let an idle timeout
			// between client and proxy cut the stream; a later failure
			// becomes an error frame.
			commit()
			if committed {
				enc.ping()
			}
		case <-idle.C:
			cancel()
			e := &APIError{Status: 504, Message: fmt.Sprintf("upstream silent for %s", s.cfg.IdleTimeout)}
			if !committed {
				s.writeError(w, proto, e, ll)
				return
			}
			send(Event{Kind: EvError, Err: e})
			enc.close()
			return
		case it, ok := <-ch:
			// The reader stops at the context's end too (its last read
			// failing, or no item at all): that end is what happened.
			if (!ok || it.err != nil) && r.Context().Err() != nil {
				ended()
				return
			}
			if !ok {
				return
			}
			if !idle.Stop() {
				select {
				case <-idle.C:
				default:
				}
			}
			idle.Reset(s.cfg.IdleTimeout)
			if it.err != nil {
				// The body ended, cleanly or not (connection reset, a
				// chunked body cut short). Either way the decoder knows
				// whether its protocol's terminal event came: the end is
				// sent as such only then, and a cut becomes an error.
				fin := emit
				if it.err != io.EOF {
					fin = func(e Event) {
						if e.Kind == EvError {
							e.Err.Message += " (" + it.err.Error() + ")"
						}
						emit(e)
					}
				}
				dec.finish(fin)
				if firstErr != nil && !committed {
					s.writeError(w, proto, firstErr, ll)
					return
				}
				commit()
				enc.close()
				return
			}
			if err := dec.decode(it.ev, emit); err != nil {
				emit(Event{Kind: EvError, Err: &APIError{Status: 502, Message: err.Error()}})
			}
			if firstErr != nil && !committed {
				s.writeError(w, proto, firstErr, ll)
				cancel()
				return
			}
			if len(pending) > 0 {
				commit()
			}
			if over {
				// The end or an error went out: close now rather than
				// keep the client waiting (and pinged). After an end, a
				// short wait for the upstream's EOF keeps its connection
				// reusable; after an error the upstream is dropped.
				if !failed {
					drain(r.Context(), ch, s.endGrace)
				}
				cancel()
				enc.close()
				return
			}
			if sw.err != nil {
				ll.status, ll.err = 499, "client disconnected"
				cancel()
				return
			}
		}
	}
}

// drain waits, at most d, for the upstream reader to reach the end of
// the body (EOF or an error) or give up.
func drain[T any](ctx context.Context, ch <-chan T, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// countTokens passes through to a same-protocol upstream; otherwise it
// estimates locally (about four characters a token, system prompt and
// tools included) rather than turn a count into an inference call.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request, proto string, body []byte, fixed bool, ll *logLine, fail func(int, string)) {
	// A routed count names the client's model, which the upstream may not
	// serve: estimate it.
	if proto == s.cfg.Provider.Protocol && !fixed {
		q := r.URL.Query()
		q.Del("key")
		s.passthrough(w, r, proto, r.URL.Path, q, body, ll)
		return
	}
	req, err := adapterFor(proto).decodeRequest(body)
	if err != nil {
		fail(400, err.Error())
		return
	}
	tokens := estimateTokens(req)
	w.Header().Set("Content-Type", "application/json")
	ll.status = 200
	if proto == Gemini {
		fmt.Fprintf(w, "{\"totalTokens\":%d}\n", tokens)
		return
	}
	fmt.Fprintf(w, "{\"input_tokens\":%d}\n", tokens)
}

func (s *Server) writeError(w http.ResponseWriter, proto string, e *APIError, ll *logLine) {
	st, b := encodeError(proto, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st)
	w.Write(b)
	ll.status, ll.err = st, e.Message
}
