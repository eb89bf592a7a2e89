package proxy

// Fault cases (issue 13, item 5): an upstream stream cut short must reach
// the client as its protocol's error, then end; never as a complete answer.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// cutUpstream is a fake upstream on 127.0.0.1 that answers 200 with body
// and then either ends the response cleanly ("end": a chunked body with its
// terminator, EOF without the protocol's terminal event) or drops the
// connection ("drop": the client's read fails). With hold it instead stays
// open, silent, until the test ends.
func cutUpstream(t *testing.T, body, how string) string {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, body)
		w.(http.Flusher).Flush()
		switch how {
		case "drop":
			panic(http.ErrAbortHandler)
		case "hold":
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL
}

// chaosRig is a proxy in front of base speaking up, with fast pings so that
// a stream left open would show them.
func chaosRig(t *testing.T, up, base string) *rig {
	t.Helper()
	g := newRig(t, up, func(c *Config) {
		c.PingInterval = 2 * time.Millisecond
		c.Provider.BaseURL = base
		if up == OpenAIChat || up == OpenAIResponses {
			c.Provider.BaseURL += "/v1"
		}
	})
	g.srv.endGrace = 50 * time.Millisecond
	return g
}

// partialEvents is an answer cut before its end: text, a tool call, more
// text (which also makes a Gemini encoder send the call).
func partialEvents() []Event {
	return []Event{
		{Kind: EvStart, ID: "x", Model: "m-1", Usage: Usage{Input: 10}},
		{Kind: EvText, Text: "the first half of an ans"},
		{Kind: EvToolStart, Index: 0, ToolID: "call_a", ToolName: "Bash"},
		{Kind: EvToolArgs, Index: 0, Text: `{"command":"ls /tmp/x"}`},
		{Kind: EvText, Text: "and then the second half"},
	}
}

// readAllBounded reads a client body to its end within 5 s.
func readAllBounded(t *testing.T, body io.ReadCloser) ([]byte, error) {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, err := io.ReadAll(body)
		ch <- res{b, err}
	}()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-time.After(5 * time.Second):
		body.Close()
		t.Fatalf("the client stream did not end within 5 s")
		return nil, nil
	}
}

// successMarks are what a client would read as a complete answer.
var successMarks = map[string][]string{
	Anthropic:       {"event: message_stop", "event: message_delta", `"stop_reason":"end_turn"`},
	OpenAIChat:      {"[DONE]", `"finish_reason":"stop"`, `"finish_reason":"tool_calls"`, `"finish_reason":"length"`},
	OpenAIResponses: {"response.completed", "response.incomplete"},
	Gemini:          {"finishReason"},
}

// checkErrorEnd asserts a client body carries its protocol's error as the
// last thing sent, no success terminal event, and no ping after the error.
func checkErrorEnd(t *testing.T, in string, array bool, b []byte, wantMsg string) {
	t.Helper()
	s := string(b)
	for _, m := range successMarks[in] {
		if strings.Contains(s, m) {
			t.Errorf("a cut stream presented as complete (%q):\n%s", m, s)
		}
	}
	var last string
	switch {
	case array:
		if !strings.HasSuffix(s, "]") {
			t.Errorf("the JSON array is not closed:\n%s", s)
		}
		i := strings.LastIndex(s, ",\r\n")
		last = strings.TrimSuffix(s[i+1:], "]")
	default:
		evs := strings.Split(strings.TrimSpace(s), "\n\n")
		last = evs[len(evs)-1]
	}
	var want string
	switch in {
	case Anthropic:
		want = `event: error` + "\n" + `data: {"error":{"message":"`
	case OpenAIChat:
		want = `data: {"error":{"code":`
	case OpenAIResponses:
		want = "event: response.failed\n"
	case Gemini:
		// Last: the bare JSON error Google's SDK checks reads for; before
		// it, the same error as a data: event for SSE parsers.
		want = `{"error":{"code":502,"message":"`
		if !array && !strings.Contains(s, "data: "+want) {
			t.Errorf("gemini: no data: error event:\n%s", s)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(last), want) {
		t.Errorf("last event %q, want the %s error event (%q)\nbody:\n%s", last, in, want, s)
	}
	if !strings.Contains(s, wantMsg) {
		t.Errorf("no %q in:\n%s", wantMsg, s)
	}
	if in == OpenAIResponses && !strings.Contains(s, "event: error\n") {
		t.Errorf("responses: no error event:\n%s", s)
	}
}

// TestChaosCutStream: for every client × upstream pair that translates, an
// upstream stream that ends (cleanly or by a dropped connection) before
// its protocol's terminal event reaches the client as text so far, then
// the client protocol's error event, then EOF; never end_turn,
// message_stop, [DONE], STOP or response.completed.
func TestChaosCutStream(t *testing.T) {
	for _, up := range protocols {
		full := encodeStream(t, up, baseRequest(true), partialEvents())
		for _, cut := range []string{"boundary", "mid-event"} {
			body := full
			if cut == "mid-event" {
				body = full[:len(full)-9]
			}
			for _, how := range []string{"end", "drop"} {
				for _, in := range protocols {
					if in == up {
						continue // passthrough: TestChaosCutPassthrough
					}
					for _, array := range []bool{false, true} {
						if array && in != Gemini {
							continue
						}
						name := in + "←" + up + "/" + cut + "/" + how
						if array {
							name += "/array"
						}
						t.Run(name, func(t *testing.T) {
							g := chaosRig(t, up, cutUpstream(t, body, how))
							req := baseRequest(true)
							var resp *http.Response
							if array {
								resp = g.callGeminiArray(t, req)
							} else {
								resp = g.call(t, in, req)
							}
							b, err := readAllBounded(t, resp.Body)
							if err != nil {
								t.Fatalf("the client's read failed (%v): the proxy must end the stream itself:\n%s", err, b)
							}
							if resp.StatusCode != 200 {
								t.Fatalf("status %d: %s", resp.StatusCode, b)
							}
							if !strings.Contains(string(b), "the first half") {
								t.Errorf("the text before the cut is missing:\n%s", b)
							}
							msg := "upstream stream ended before"
							if cut == "mid-event" {
								msg = "" // the cut event fails to decode: any error message
							}
							checkErrorEnd(t, in, array, b, msg)
						})
					}
				}
			}
		}
	}
}

// callGeminiArray posts a Gemini streamGenerateContent without alt=sse:
// the answer is a streamed JSON array.
func (g *rig) callGeminiArray(t *testing.T, req *Request) *http.Response {
	t.Helper()
	_, _, body, err := adapterFor(Gemini).encodeRequest(req, &Provider{BaseURL: "http://client"})
	if err != nil {
		t.Fatal(err)
	}
	hr, _ := http.NewRequest("POST", g.proxy.URL+"/v1beta/models/m-1:streamGenerateContent", bytes.NewReader(body))
	hr.Header.Set("X-Goog-Api-Key", token)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestChaosCutBeforeFirstEvent: an upstream that answers 200 and closes
// before any event gets the client a real error status in its own shape,
// not an empty answer.
func TestChaosCutBeforeFirstEvent(t *testing.T) {
	for _, up := range protocols {
		for _, how := range []string{"end", "drop"} {
			for _, in := range protocols {
				if in == up {
					continue
				}
				t.Run(in+"←"+up+"/"+how, func(t *testing.T) {
					g := newRig(t, up, func(c *Config) {
						c.Provider.BaseURL = cutUpstream(t, "", how)
						if up == OpenAIChat || up == OpenAIResponses {
							c.Provider.BaseURL += "/v1"
						}
					})
					resp := g.call(t, in, baseRequest(true))
					b, err := readAllBounded(t, resp.Body)
					if err != nil {
						t.Fatal(err)
					}
					wantSt, _ := encodeError(in, &APIError{Status: 502})
					if resp.StatusCode != wantSt || !strings.Contains(string(b), `"error":{`) {
						t.Errorf("got %d %s, want %d and an error body", resp.StatusCode, b, wantSt)
					}
				})
			}
		}
	}
}

// TestChaosErrorThenSilence: an upstream that sends its protocol's error
// event and then stays open: the client gets the error and EOF at once,
// not a stream kept open with pings.
func TestChaosErrorThenSilence(t *testing.T) {
	for _, up := range protocols {
		evs := append(partialEvents()[:2], Event{Kind: EvError, Err: &APIError{Status: 500, Message: "model crashed"}})
		body := encodeStream(t, up, baseRequest(true), evs)
		for _, in := range protocols {
			if in == up {
				continue
			}
			t.Run(in+"←"+up, func(t *testing.T) {
				g := chaosRig(t, up, cutUpstream(t, body, "hold"))
				resp := g.call(t, in, baseRequest(true))
				b, err := readAllBounded(t, resp.Body)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("%d %v", resp.StatusCode, err)
				}
				s := string(b)
				if i := strings.Index(s, "model crashed"); i < 0 || strings.Contains(s[i:], "ping") {
					t.Errorf("want the error and then nothing but the end:\n%s", s)
				}
				for _, m := range successMarks[in] {
					if strings.Contains(s, m) {
						t.Errorf("an errored stream presented as complete (%q):\n%s", m, s)
					}
				}
			})
		}
	}
}

// TestChaosCompleteThenDrop: an upstream that sends its whole answer,
// terminal event included, and then drops the connection still gives the
// client a complete answer; and one that keeps the connection open after
// its terminal event does not keep the client waiting.
func TestChaosCompleteThenDrop(t *testing.T) {
	for _, up := range protocols {
		body := encodeStream(t, up, baseRequest(true), answerEvents())
		for _, how := range []string{"drop", "hold"} {
			for _, in := range protocols {
				if in == up || (how == "hold" && up == Gemini) {
					// Gemini has no end event: its end is the body's end.
					continue
				}
				t.Run(in+"←"+up+"/"+how, func(t *testing.T) {
					g := chaosRig(t, up, cutUpstream(t, body, how))
					resp := g.call(t, in, baseRequest(true))
					b, err := readAllBounded(t, resp.Body)
					if err != nil || resp.StatusCode != 200 {
						t.Fatalf("%d %v\n%s", resp.StatusCode, err, b)
					}
					got, _ := collect(t, in, bytes.NewReader(b))
					if e := essenceOf(got); e.Text != answerText || e.Stop != StopTool || len(e.Tools) != 2 {
						t.Errorf("%+v\n%s", e, b)
					}
				})
			}
		}
	}
}

// TestChaosCutPassthrough: on a same-protocol route the bytes are the
// upstream's; a stream cut before its terminal event gets the protocol's
// error event appended, then ends; a cut JSON body breaks the client's
// connection, so its read fails instead of ending cleanly.
func TestChaosCutPassthrough(t *testing.T) {
	for _, p := range protocols {
		for _, how := range []string{"end", "drop"} {
			t.Run(p+"/stream/"+how, func(t *testing.T) {
				body := encodeStream(t, p, baseRequest(true), partialEvents())
				g := chaosRig(t, p, cutUpstream(t, body, how))
				resp := g.call(t, p, baseRequest(true))
				b, err := readAllBounded(t, resp.Body)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("%d %v:\n%s", resp.StatusCode, err, b)
				}
				if !strings.HasPrefix(string(b), body) {
					t.Errorf("the upstream's bytes were not passed through untouched:\n%s", b)
				}
				e := &APIError{Status: 502, Message: "upstream stream ended before its terminal event: the answer is incomplete"}
				if how == "drop" {
					e.Message += " (unexpected EOF)"
				}
				if want := string(cutTail(p, e)); !strings.HasSuffix(string(b), want) {
					t.Errorf("want the error tail %q, got:\n%s", want, b)
				}
				for _, m := range successMarks[p] {
					if strings.Contains(string(b), m) {
						t.Errorf("a cut stream presented as complete (%q):\n%s", m, b)
					}
				}
			})
		}
		t.Run(p+"/complete", func(t *testing.T) {
			body := encodeStream(t, p, baseRequest(true), answerEvents())
			g := chaosRig(t, p, cutUpstream(t, body, "drop"))
			resp := g.call(t, p, baseRequest(true))
			b, err := readAllBounded(t, resp.Body)
			if err != nil || string(b) != body {
				t.Errorf("a complete stream changed (%v):\n%s", err, b)
			}
		})
		t.Run(p+"/json/drop", func(t *testing.T) {
			body := string(adapterFor(p).encodeResponse(answer()))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				io.WriteString(w, body[:len(body)/2])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}))
			defer srv.Close()
			g := chaosRig(t, p, srv.URL)
			resp := g.call(t, p, baseRequest(false))
			b, err := readAllBounded(t, resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read ended with %v, want unexpected EOF:\n%s", err, b)
			}
		})
	}
}
