package proxy

import (
	"io"
	"net/url"
)

// adapter is one wire protocol: how its requests, responses, streams and
// errors map to the canonical ones, in both directions.
type adapter interface {
	// Ingress: a client speaking this protocol.
	decodeRequest(body []byte) (*Request, error)
	encodeResponse(r *Response) []byte
	newStreamEncoder(w *sseWriter, req *Request) streamEncoder

	// Egress: a provider speaking this protocol. encodeRequest returns the
	// path (below the provider's base URL), query and body.
	encodeRequest(r *Request, p *Provider) (path string, q url.Values, body []byte, err error)
	decodeResponse(body []byte, st *sigStore) (*Response, error)
	newStreamDecoder(st *sigStore) streamDecoder
}

// streamDecoder turns upstream stream events into canonical events.
type streamDecoder interface {
	decode(ev SSE, emit func(Event)) error
	// finish is called at EOF. After the protocol's terminal event it
	// closes what the upstream left open; without it the stream was cut
	// (connection closed, body ended early) and finish emits an EvError
	// (cutStream), never an EvEnd: a truncated answer is not a complete one.
	finish(emit func(Event))
}

// streamEncoder writes canonical events in the client's protocol.
type streamEncoder interface {
	encode(e Event)
	ping()
	// close ends the stream after the last event.
	close()
}

// cutStream is the error of an upstream stream that ended before its
// protocol's terminal event (what names it).
func cutStream(what string) Event {
	return Event{Kind: EvError, Err: &APIError{Status: 502, Message: "upstream stream ended before " + what + ": the answer is incomplete"}}
}

// adapterFor returns the adapter of a protocol, nil for an unknown one.
// A switch, not a map: no package-level state to initialise.
func adapterFor(proto string) adapter {
	switch proto {
	case Anthropic:
		return anthropicAdapter{}
	case OpenAIChat:
		return chatAdapter{}
	case OpenAIResponses:
		return responsesAdapter{}
	case Gemini:
		return geminiAdapter{}
	}
	return nil
}

// readAll is io.ReadAll with a bound.
func readAll(r io.Reader, max int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, max))
}
