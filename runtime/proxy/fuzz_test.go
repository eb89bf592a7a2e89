package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzSSEReader: any byte stream decodes without panicking, and an event
// written by sseWriter reads back unchanged however the bytes are split.
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("event: a\ndata: {\"x\":1}\n\n"), "héllo\nwörld", 3)
	f.Add([]byte("data: 1\r\ndata: 2\r\n\r\n: ping\n\ndata: [DONE]\n\n"), "", 1)
	f.Add([]byte("data"), "日本語", 2)
	f.Fuzz(func(t *testing.T, raw []byte, payload string, step int) {
		rd := NewSSEReader(bytes.NewReader(raw))
		rd.MaxLine = 1 << 16
		for i := 0; i < 1000; i++ {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
		if strings.ContainsRune(payload, '\r') {
			return // a bare CR inside data is a line end by the spec
		}
		rec := httptest.NewRecorder()
		newSSEWriter(rec).event("e", []byte(payload))
		if step < 1 {
			step = 1
		}
		got, err := NewSSEReader(&slowReader{b: rec.Body.Bytes(), step: step%7 + 1}).Next()
		if err != nil || got.Event != "e" || string(got.Data) != payload {
			t.Fatalf("round trip of %q: %q %q %v", payload, got.Event, got.Data, err)
		}
	})
}

type slowReader struct {
	b    []byte
	step int
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := min(s.step, len(s.b), len(p))
	copy(p, s.b[:n])
	s.b = s.b[n:]
	return n, nil
}

// fuzzRequest decodes a request of one protocol and re-encodes it for
// every protocol: no panic, and every upstream body is valid JSON.
func fuzzRequest(f *testing.F, proto string) {
	for _, up := range protocols {
		_, _, b, _ := adapterFor(up).encodeRequest(richRequest(), &Provider{})
		if up == proto {
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":null}],"contents":[{"parts":[{"functionResponse":{"name":"x","response":1}}]}],"input":"hi"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := adapterFor(proto).decodeRequest(body)
		if err != nil {
			return
		}
		for _, up := range protocols {
			_, _, out, err := adapterFor(up).encodeRequest(req, &Provider{MaxOutputTokens: 10})
			if err != nil {
				continue // e.g. a number JSON cannot hold
			}
			if !json.Valid(out) {
				t.Fatalf("%s→%s: invalid JSON %s", proto, up, out)
			}
		}
	})
}

func FuzzAnthropicRequest(f *testing.F) { fuzzRequest(f, Anthropic) }
func FuzzChatRequest(f *testing.F)      { fuzzRequest(f, OpenAIChat) }
func FuzzResponsesRequest(f *testing.F) { fuzzRequest(f, OpenAIResponses) }
func FuzzGeminiRequest(f *testing.F)    { fuzzRequest(f, Gemini) }

// FuzzStreamTranslation feeds arbitrary upstream streams of every protocol
// through every client encoder: no panic.
func FuzzStreamTranslation(f *testing.F) {
	f.Add([]byte("\x00event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"B\"}}\n\n"))
	f.Add([]byte("\x02data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"B\"}}\n\n"))
	f.Add([]byte("\x03data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"h\"},{\"functionCall\":{\"name\":\"B\",\"args\":{}}}]},\"finishReason\":\"STOP\"}]}\n\n"))
	f.Add([]byte("\x01data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":5,\"function\":{\"arguments\":\"{\"}}]}}]}\n\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 || len(raw) > 8<<10 {
			return
		}
		up, body := protocols[int(raw[0])%len(protocols)], string(raw[1:])
		for _, in := range protocols {
			rec := httptest.NewRecorder()
			enc := adapterFor(in).newStreamEncoder(newSSEWriter(rec), baseRequest(true))
			dec := adapterFor(up).newStreamDecoder(newSigStore(1e9))
			rd := NewSSEReader(strings.NewReader(body))
			for i := 0; i < 500; i++ {
				ev, err := rd.Next()
				if err != nil {
					break
				}
				dec.decode(ev, enc.encode)
			}
			dec.finish(enc.encode)
			enc.close()
		}
	})
}

// FuzzGeminiSchema: the sanitizer accepts anything and returns an object.
func FuzzGeminiSchema(f *testing.F) {
	f.Add(`{"type":["string","null"],"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`)
	f.Add(`{"allOf":[{"properties":{"a":{}}},{"required":["a"]}],"anyOf":[{"type":"null"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		out := SanitizeGeminiSchema(json.RawMessage(s))
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil && json.Valid([]byte(s)) && strings.HasPrefix(strings.TrimSpace(s), "{") {
			t.Fatalf("not an object: %s → %s", s, out)
		}
	})
}
