package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
)

// SSE is one server-sent event: its name (may be empty) and data, with
// multi-line data fields joined by "\n".
type SSE struct {
	Event string
	Data  []byte
}

// SSEReader decodes a text/event-stream. Events end at a blank line;
// lines may end in "\n", "\r\n" or "\r". It works on bytes and splits only
// at line ends, so a multi-byte character split across network reads is
// never cut.
type SSEReader struct {
	r *bufio.Reader
	// MaxLine bounds one line (and one event's data); 0 means 8 MiB.
	MaxLine int
}

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader { return &SSEReader{r: bufio.NewReaderSize(r, 32<<10)} }

// ErrLineTooLong is returned for a line over MaxLine.
var ErrLineTooLong = errors.New("sse: line too long")

// Next returns the next event, or io.EOF after the last one. An event cut
// short by EOF is still returned.
func (s *SSEReader) Next() (SSE, error) {
	max := s.MaxLine
	if max == 0 {
		max = 8 << 20
	}
	var ev SSE
	var data bytes.Buffer
	seen, hasData := false, false
	done := func() SSE {
		if hasData {
			ev.Data = append([]byte(nil), data.Bytes()...)
		}
		return ev
	}
	for {
		line, err := s.line(max)
		if err != nil {
			if err == io.EOF && seen {
				return done(), nil
			}
			return SSE{}, err
		}
		if len(line) == 0 {
			if seen {
				return done(), nil
			}
			continue
		}
		if line[0] == ':' {
			continue // comment (keep-alive)
		}
		name, val, _ := bytes.Cut(line, []byte(":"))
		if len(val) > 0 && val[0] == ' ' {
			val = val[1:]
		}
		switch string(name) {
		case "event":
			ev.Event = string(val)
			seen = true
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(val)
			if data.Len() > max {
				return SSE{}, ErrLineTooLong
			}
			seen, hasData = true, true
		}
	}
}

// line reads one line without its terminator.
func (s *SSEReader) line(max int) ([]byte, error) {
	var out []byte
	for {
		b, err := s.r.ReadSlice('\n')
		out = append(out, b...)
		if len(out) > max {
			return nil, ErrLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(out) > 0 {
				return trimEOL(out), nil
			}
			return nil, err
		}
		return trimEOL(out), nil
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// sseWriter writes events and flushes each one.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
	// err is the first write error: the client left.
	err error
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	f, _ := w.(http.Flusher)
	return &sseWriter{w: w, f: f}
}

// event writes "event: name\ndata: …\n\n" (no event line when name is "").
func (s *sseWriter) event(name string, data []byte) {
	if s.err != nil {
		return
	}
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	for _, l := range strings.Split(string(data), "\n") {
		b.WriteString("data: ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	s.raw(b.Bytes())
}

func (s *sseWriter) raw(b []byte) {
	if s.err != nil {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return
	}
	if s.f != nil {
		s.f.Flush()
	}
}
