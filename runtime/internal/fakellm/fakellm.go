// Package fakellm is a scriptable fake LLM server on 127.0.0.1 for tests:
// it answers any route (Anthropic /v1/messages, OpenAI /v1/chat/completions
// and /v1/responses, Gemini /v1beta/models/…) with the next scripted reply,
// streamed chunk by chunk when the reply has chunks, and records every
// request it received.
package fakellm

import (
	"io"
	"net"
	"net/http"
	"sync"
)

// Reply is one scripted answer.
type Reply struct {
	Status int // default 200
	Header map[string]string
	// Body is written whole; Chunks are written and flushed one by one
	// (a stream), after Body.
	Body   string
	Chunks []string
	// Gate, when set, is waited on before each chunk after the first
	// (receive one value per chunk): tests control upstream timing
	// without sleeping.
	Gate chan struct{}
}

// Request is what the server received.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// Server is a running fake.
type Server struct {
	URL string

	mu       sync.Mutex
	replies  []Reply
	fallback *Reply
	requests []Request
	ln       net.Listener
	srv      *http.Server
	// Done receives once per finished reply (or client disconnect).
	Done chan struct{}
}

// Start listens on a random loopback port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, Done: make(chan struct{}, 1024)}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Script queues replies, answered in order.
func (s *Server) Script(rs ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, rs...)
}

// Always sets the reply used when the script is empty.
func (s *Server) Always(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &r
}

// Requests returns what was received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	var rep Reply
	switch {
	case len(s.replies) > 0:
		rep = s.replies[0]
		s.replies = s.replies[1:]
	case s.fallback != nil:
		rep = *s.fallback
	default:
		rep = Reply{Status: 500, Body: `{"error":{"message":"fakellm: no scripted reply"}}`}
	}
	s.mu.Unlock()
	defer func() {
		select {
		case s.Done <- struct{}{}:
		default:
		}
	}()
	if r.Method == http.MethodHead {
		return
	}
	ct := "application/json"
	if len(rep.Chunks) > 0 {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status == 0 {
		rep.Status = 200
	}
	w.WriteHeader(rep.Status)
	io.WriteString(w, rep.Body)
	f, _ := w.(http.Flusher)
	for i, c := range rep.Chunks {
		if i > 0 && rep.Gate != nil {
			select {
			case <-rep.Gate:
			case <-r.Context().Done():
				return
			}
		}
		if _, err := io.WriteString(w, c); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}
