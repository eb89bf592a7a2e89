package proxy

import (
	"encoding/json"
	"strings"
)

// toolSerializer makes tool calls in a canonical stream sequential: no
// client protocol can interleave the argument streams of two calls
// (Anthropic blocks are strictly nested), but OpenAI-compatible upstreams
// may. A call that starts while another is open is buffered; it takes
// over once the open call's arguments are complete JSON, or is sent whole
// before the next event of another kind.
type toolSerializer struct {
	next   func(Event)
	open   int
	isOpen bool
	args   strings.Builder
	queue  []*queuedTool
}

type queuedTool struct {
	start Event
	args  strings.Builder
}

func newToolSerializer(next func(Event)) *toolSerializer { return &toolSerializer{next: next} }

func (s *toolSerializer) emit(e Event) {
	switch e.Kind {
	case EvToolStart:
		if !s.isOpen {
			s.openTool(e, "")
			return
		}
		s.queue = append(s.queue, &queuedTool{start: e})
	case EvToolArgs:
		if s.isOpen && e.Index == s.open {
			s.args.WriteString(e.Text)
			s.next(e)
			return
		}
		for i, q := range s.queue {
			if q.start.Index != e.Index {
				continue
			}
			q.args.WriteString(e.Text)
			if i == 0 && json.Valid([]byte(s.args.String())) {
				s.queue = s.queue[1:]
				s.openTool(q.start, q.args.String())
			}
			return
		}
		// Arguments of a call already closed: only possible after its
		// JSON was complete, so nothing meaningful is lost.
	default:
		s.flush()
		s.isOpen = false
		s.next(e)
	}
}

func (s *toolSerializer) openTool(start Event, args string) {
	s.isOpen, s.open = true, start.Index
	s.args.Reset()
	s.next(start)
	if args != "" {
		s.args.WriteString(args)
		s.next(Event{Kind: EvToolArgs, Index: start.Index, Text: args})
	}
}

// flush sends every queued call whole.
func (s *toolSerializer) flush() {
	for _, q := range s.queue {
		s.openTool(q.start, q.args.String())
	}
	s.queue = nil
}
