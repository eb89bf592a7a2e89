// Package observe is `sitter observe`: a local web dashboard of the
// babysitter runs under some directories, the sessions that drive them
// and the hook decisions of the audit log, updated live (server-sent
// events after a stat sweep), with breakpoint approval through the code
// path of `sitter task post`. It serves embedded, server-rendered pages
// (no CDN, no build step) on loopback, behind a token printed once.
package observe

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

//go:embed assets
var assets embed.FS

// Options configure a server.
type Options struct {
	Dirs     []string      // watched projects or runs directories
	StateDir string        // sitter's state dir: sessions/, audit.jsonl
	Stale    time.Duration // no activity for this long: stale (default 30m)
	Token    string        // "" = a random one
	// Changes are swept as the file system reports them (watch.go).
	// Interval is the stat sweep's period while something is not watched
	// (default 200ms): an update is then pushed at most this long after a
	// journal or audit change, plus the time to read the changed runs.
	// Rescan is its period while everything is (default 1s).
	Interval, Rescan time.Duration
}

// Server is the dashboard.
type Server struct {
	ix       *Index
	token    string
	csrf     string
	stateDir string
	tmpl     *template.Template
	static   http.Handler
	interval time.Duration
	rescan   time.Duration
	loopback bool // listening on loopback only: Host must say so too

	flashMu sync.Mutex
	flashes map[string]flash
}

type flash struct {
	OK   bool
	Text string
}

// CookieName holds the token after the first load.
const CookieName = "sitter_observe"

// New makes a server. It reads no run: Serve (or Index().Sweep) does,
// so the URL can be printed at once; the board shows the runs read so
// far, marked "indexing…", until the first sweep has read them all.
func New(o Options) (*Server, error) {
	if o.Stale <= 0 {
		o.Stale = 30 * time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = 200 * time.Millisecond
	}
	if o.Rescan <= 0 {
		o.Rescan = time.Second
	}
	if o.Token == "" {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		o.Token = hex.EncodeToString(b[:])
	}
	m := hmac.New(sha256.New, []byte(o.Token))
	m.Write([]byte("sitter observe csrf"))
	t, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	s := &Server{
		ix: NewIndex(o.Dirs, o.StateDir, o.Stale), token: o.Token, csrf: hex.EncodeToString(m.Sum(nil)),
		stateDir: o.StateDir, tmpl: t, static: http.FileServer(http.FS(sub)), interval: o.Interval, rescan: o.Rescan,
		flashes: map[string]flash{},
	}
	return s, nil
}

// Index is the server's index of runs.
func (s *Server) Index() *Index { return s.ix }

// Token is the token a request must carry.
func (s *Server) Token() string { return s.token }

// Handler is every route behind the token check.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.board)
	mux.HandleFunc("GET /run", s.run)
	mux.HandleFunc("GET /checkpoint", s.checkpointDiff)
	mux.HandleFunc("GET /hooks", s.hooks)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /approve", s.approve)
	mux.Handle("GET /static/", http.StripPrefix("/static/", s.static))
	return s.guard(mux)
}

// guard refuses a request without the token (401), or naming another
// host than a loopback one when the server listens on loopback (a DNS
// rebinding page cannot reach it). The token comes in the URL once; it is
// then a cookie, and the URL is redirected without it.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer Chromium sends
		// "Origin: null" on the page's own forms, which checkForm refuses.
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
		if s.loopback && !loopbackHost(r.Host) {
			http.Error(w, "sitter observe: this server answers only on a loopback address", http.StatusForbidden)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && s.okToken(q) {
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			if r.Method == http.MethodGet {
				u := *r.URL
				v := u.Query()
				v.Del("token")
				u.RawQuery = v.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(CookieName); err == nil && s.okToken(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintln(w, "sitter observe: open the URL `sitter observe` printed (it carries the token)")
	})
}

func (s *Server) okToken(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

func loopbackHost(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = hostport
	}
	h = strings.Trim(h, "[]")
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Listen opens addr (default 127.0.0.1:0) and reports the URL to open.
func (s *Server) Listen(addr string) (net.Listener, string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	a := l.Addr().(*net.TCPAddr)
	s.loopback = a.IP.IsLoopback()
	host := a.String()
	if a.IP.IsUnspecified() {
		host = fmt.Sprintf("127.0.0.1:%d", a.Port)
	}
	return l, "http://" + host + "/?token=" + s.token, nil
}

// Serve serves on l, indexing every run in the background and then
// sweeping the changes the file system reports (polling where it cannot),
// until ctx ends.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	stop := make(chan struct{})
	defer close(stop)
	go s.ix.Watch(s.interval, s.rescan, stop)
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	err := hs.Serve(l)
	s.ix.SaveCache()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// checkForm is the CSRF check of a POST: the form's csrf field (a value
// derived from the token, in every page's forms), and an Origin, when the
// browser sends one, naming this server.
func (s *Server) checkForm(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		return fmt.Errorf("cross-origin form from %s", o)
	}
	if sf := r.Header.Get("Sec-Fetch-Site"); sf != "" && sf != "same-origin" && sf != "none" {
		return fmt.Errorf("cross-site form (%s)", sf)
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrf)) != 1 {
		return errors.New("the form's csrf field is missing or wrong: reload the page")
	}
	return nil
}

func (s *Server) putFlash(f flash) string {
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	s.flashMu.Lock()
	defer s.flashMu.Unlock()
	if len(s.flashes) > 1000 {
		clear(s.flashes)
	}
	s.flashes[id] = f
	return id
}

func (s *Server) getFlash(id string) *flash {
	s.flashMu.Lock()
	defer s.flashMu.Unlock()
	f, ok := s.flashes[id]
	if !ok {
		return nil
	}
	return &f
}
