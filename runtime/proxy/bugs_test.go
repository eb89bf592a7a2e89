package proxy

// One test per class of bug found in the issue trackers of similar
// proxies (claude-code-router, LiteLLM, CLIProxyAPI, 9router,
// claude-relay-service, openclaude, gemini-openai-proxy, zed).

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sitter.dev/sitter/runtime/internal/fakellm"
)

// through streams raw upstream chunks to an ingress client and returns the
// client's body and its decoded response.
func through(t *testing.T, up, in string, chunks []string) (string, *Response) {
	t.Helper()
	g := newRig(t, up, nil)
	g.up.Script(fakellm.Reply{Chunks: chunks})
	resp := g.call(t, in, baseRequest(true))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	r, _ := collect(t, in, strings.NewReader(string(b)))
	return string(b), r
}

func chatChunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"c","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}` + "\n\n"
}

func toolArgs(t *testing.T, r *Response) []string {
	t.Helper()
	var out []string
	for _, p := range r.Parts {
		if p.Kind == PartToolCall {
			out = append(out, p.ToolName+" "+string(p.Args))
		}
	}
	return out
}

// 9router #3416, claude-relay-service #1152: a long tool input with escaped
// quotes, pipes and control characters arrives truncated or corrupted.
func TestBugLongToolInputWithEscapes(t *testing.T) {
	cmd := `ls -la | grep -iE "foo|bar" ; echo "---" && printf 'a\tb\n' > "x y.txt"` + strings.Repeat(` && echo "\"quoted\" \\ back"`, 20)
	args, _ := json.Marshal(map[string]string{"command": cmd})
	var chunks []string
	chunks = append(chunks, chatChunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]}`, ""))
	for _, piece := range split(string(args), 7) {
		frag, _ := json.Marshal(piece)
		chunks = append(chunks, chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(frag)+`}}]}`, ""))
	}
	chunks = append(chunks, chatChunk(`{}`, "tool_calls"), "data: [DONE]\n\n")
	for _, in := range []string{Anthropic, OpenAIResponses, Gemini} {
		_, r := through(t, OpenAIChat, in, chunks)
		var got map[string]string
		if err := json.Unmarshal(r.Parts[0].Args, &got); err != nil || got["command"] != cmd {
			t.Errorf("%s: args %s (%v)", in, r.Parts[0].Args, err)
		}
	}
}

// CLIProxyAPI #3697: "Stream completed without receiving message_start".
// An upstream that sends nothing but [DONE] must still give the client a
// complete, well-formed stream; one that sends nothing at all (not even
// [DONE]) was cut, and the client gets a well-formed error (issue 13).
func TestBugEmptyStreamStillWellFormed(t *testing.T) {
	body, r := through(t, OpenAIChat, Anthropic, []string{"data: [DONE]\n\n"})
	if !strings.HasPrefix(body, "event: message_start") || !strings.Contains(body, "event: message_stop") {
		t.Errorf("done only: %s", body)
	}
	if r.Stop != StopEnd || len(r.Parts) != 0 {
		t.Errorf("done only: %+v", r)
	}
	g := newRig(t, OpenAIChat, nil)
	g.up.Script(fakellm.Reply{Chunks: []string{""}})
	resp := g.call(t, Anthropic, baseRequest(true))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 502 || !strings.Contains(string(b), `"type":"error"`) || strings.Contains(string(b), "message_stop") {
		t.Errorf("nothing: %d %s", resp.StatusCode, b)
	}
}

// openclaude #1259: Responses streams that carry function-call arguments
// only in the done events gave tool_use with empty input.
func TestBugResponsesArgsOnlyInDone(t *testing.T) {
	ev := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
	}
	for name, done := range map[string]string{
		"arguments.done": ev("response.function_call_arguments.done", `,"output_index":0,"arguments":"{\"pattern\":\"*.go\"}"`),
		"item.done":      ev("response.output_item.done", `,"output_index":0,"item":{"type":"function_call","call_id":"call_9","name":"Glob","arguments":"{\"pattern\":\"*.go\"}"}`),
	} {
		chunks := []string{
			ev("response.created", `,"response":{"id":"resp_1","model":"m"}`),
			ev("response.output_item.added", `,"output_index":0,"item":{"type":"function_call","call_id":"call_9","name":"Glob","arguments":""}`),
			done,
			ev("response.completed", `,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":5,"output_tokens":2}}`),
		}
		_, r := through(t, OpenAIResponses, Anthropic, chunks)
		if diff := cmp.Diff([]string{`Glob {"pattern":"*.go"}`}, toolArgs(t, r)); diff != "" || r.Stop != StopTool {
			t.Errorf("%s: %s stop %s", name, diff, r.Stop)
		}
	}
}

// LiteLLM #5231, bifrost #1961: providers that reuse index 0 for parallel
// calls; the id tells them apart. Also LiteLLM's combined chunk: the last
// arguments and finish_reason in one chunk, and a call without arguments.
func TestBugParallelCallsReusingIndex(t *testing.T) {
	chunks := []string{
		chatChunk(`{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"Read","arguments":"{\"path\":"}}]}`, ""),
		chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]}`, ""),
		chatChunk(`{"tool_calls":[{"index":0,"id":"call_b","function":{"name":"Read","arguments":"{\"path\":\"b\"}"}}]}`, ""),
		chatChunk(`{"tool_calls":[{"index":0,"id":"call_c","function":{"name":"Now"}}]}`, "tool_calls"),
		`data: {"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4}}` + "\n\n",
		"data: [DONE]\n\n",
	}
	for _, in := range []string{Anthropic, OpenAIResponses, Gemini} {
		_, r := through(t, OpenAIChat, in, chunks)
		want := []string{`Read {"path":"a"}`, `Read {"path":"b"}`, `Now {}`}
		if diff := cmp.Diff(want, toolArgs(t, r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
		if r.Usage.Input != 9 || r.Usage.Output != 4 {
			t.Errorf("%s: usage after finish_reason lost: %+v", in, r.Usage)
		}
	}
}

// A tool call whose name arrives after its first argument fragment
// (seen with some OpenAI-compatible servers) must not open a nameless block.
func TestBugNameAfterArguments(t *testing.T) {
	chunks := []string{
		chatChunk(`{"tool_calls":[{"index":0,"id":"call_a","function":{"arguments":"{\"x\":"}}]}`, ""),
		chatChunk(`{"tool_calls":[{"index":0,"function":{"name":"Do","arguments":"1}"}}]}`, ""),
		"data: [DONE]\n\n",
	}
	body, r := through(t, OpenAIChat, Anthropic, chunks)
	if diff := cmp.Diff([]string{`Do {"x":1}`}, toolArgs(t, r)); diff != "" || strings.Contains(body, `"name":""`) {
		t.Errorf("(-want +got):\n%s\n%s", diff, body)
	}
}

// LiteLLM: upstream said "stop" although it emitted tool calls; Claude
// Code then never runs the tool. Force tool_use.
func TestBugStopWithToolCallsBecomesToolUse(t *testing.T) {
	chunks := []string{
		chatChunk(`{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"Do","arguments":"{}"}}]}`, "stop"),
		"data: [DONE]\n\n",
	}
	body, _ := through(t, OpenAIChat, Anthropic, chunks)
	if !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Errorf("%s", body)
	}
}

// CCR lowercased Gemini's MAX_TOKENS and reported end_turn; Gemini's
// tool calls come with finishReason STOP.
func TestBugGeminiFinishReasons(t *testing.T) {
	data := func(s string) string { return "data: " + s + "\n\n" }
	_, r := through(t, Gemini, Anthropic, []string{data(`{"candidates":[{"content":{"role":"model","parts":[{"text":"abc"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}}`)})
	if r.Stop != StopMax {
		t.Errorf("MAX_TOKENS became %q", r.Stop)
	}
	_, r = through(t, Gemini, OpenAIChat, []string{data(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}}]},"finishReason":"STOP"}]}`)})
	if r.Stop != StopTool {
		t.Errorf("functionCall with STOP became %q", r.Stop)
	}
}

// CLIProxyAPI: missing cache fields are ambiguous; always send them, and
// input_tokens excludes cache reads (input = prompt − cache).
func TestBugAnthropicUsageCacheFields(t *testing.T) {
	chunks := []string{
		chatChunk(`{"content":"hi"}`, "stop"),
		`data: {"id":"c","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":60}}}` + "\n\n",
		"data: [DONE]\n\n",
	}
	body, _ := through(t, OpenAIChat, Anthropic, chunks)
	if !strings.Contains(body, `"usage":{"input_tokens":40,"output_tokens":4,"cache_read_input_tokens":60,"cache_creation_input_tokens":0}`) {
		t.Errorf("message_delta usage: %s", body)
	}
}

// LiteLLM cleans foreign tool ids such as "functions.Bash:0": Anthropic
// accepts only [A-Za-z0-9_-].
func TestBugForeignToolIDs(t *testing.T) {
	chunks := []string{chatChunk(`{"tool_calls":[{"index":0,"id":"functions.Bash:0","function":{"name":"Bash","arguments":"{}"}}]}`, "tool_calls"), "data: [DONE]\n\n"}
	body, _ := through(t, OpenAIChat, Anthropic, chunks)
	if !strings.Contains(body, `"id":"functions_Bash_0"`) {
		t.Errorf("%s", body)
	}
}

// Gemini keys function responses by name and often sends calls without
// ids; a Gemini 3 call must come back with its thoughtSignature, which
// clients drop: the proxy keeps it by tool id, else sends the sentinel.
func TestBugGeminiIDsNamesAndSignatures(t *testing.T) {
	g := newRig(t, Gemini, nil)
	g.up.Script(fakellm.Reply{Body: `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"Bash","args":{"command":"ls"}},"thoughtSignature":"SIG-1"}]},"finishReason":"STOP"}]}`})
	resp := g.call(t, Anthropic, baseRequest(false))
	b, _ := io.ReadAll(resp.Body)
	r, err := anthropicAdapter{}.decodeResponse(b, nil)
	if err != nil || len(r.Parts) != 1 || r.Stop != StopTool {
		t.Fatalf("%s %v", b, err)
	}
	id := r.Parts[0].ToolID
	if strings.Contains(string(b), "SIG-1") {
		t.Errorf("signature leaked to the client: %s", b)
	}
	// Next turn: the client sends the call back (without signature) and its result.
	req := baseRequest(false)
	req.Messages = append(req.Messages,
		Message{Role: "assistant", Parts: []Part{{Kind: PartToolCall, ToolID: id, ToolName: "Bash", Args: json.RawMessage(`{"command":"ls"}`)}}},
		Message{Role: "user", Parts: []Part{{Kind: PartToolResult, ToolID: id, Text: "boom", IsError: true}}})
	g.up.Script(fakellm.Reply{Body: `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`})
	resp = g.call(t, Anthropic, req)
	io.ReadAll(resp.Body)
	sent := string(g.up.Requests()[1].Body)
	for _, want := range []string{`"thoughtSignature":"SIG-1"`, `"thoughtSignature":"skip_thought_signature_validator"`,
		`"functionResponse":{"name":"Bash","response":{"error":"boom"}}`, `"functionResponse":{"name":"Bash","response":{"output":"a.txt"}}`} {
		if !strings.Contains(sent, want) {
			t.Errorf("upstream request lacks %s:\n%s", want, sent)
		}
	}
}

// gemini-openai-proxy #67, CCR #187, zed #44875 and #53919, 5ire #42:
// Gemini rejects $schema, additionalProperties (also nested in items and
// anyOf), propertyNames, const, and type arrays.
func TestBugGeminiSchema(t *testing.T) {
	in := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,
	"$defs":{"Mode":{"type":"string","enum":["a","b"]}},
	"properties":{
		"list":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"x":{"type":["string","null"],"format":"uri"}}}},
		"kind":{"anyOf":[{"const":"one"},{"type":"null"}]},
		"map":{"type":"object","propertyNames":{"pattern":"^a"},"additionalProperties":{"type":"string"}},
		"mode":{"$ref":"#/$defs/Mode","default":"a"},
		"n":{"type":"integer","exclusiveMinimum":0,"enum":[1,2]},
		"when":{"type":"string","format":"date-time"}
	},"required":["list"]}`
	got := string(SanitizeGeminiSchema(json.RawMessage(in)))
	want := `{"properties":{"kind":{"enum":["one"],"nullable":true,"type":"string"},"list":{"items":{"properties":{"x":{"nullable":true,"type":"string"}},"type":"object"},"type":"array"},"map":{"type":"object"},"mode":{"enum":["a","b"],"type":"string"},"n":{"type":"integer"},"when":{"format":"date-time","type":"string"}},"required":["list"],"type":"object"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// LiteLLM and others: parallel calls whose argument deltas interleave
// (index 0, 1, 0, 1, …) lost or mixed arguments.
func TestBugInterleavedParallelArguments(t *testing.T) {
	chunks := []string{
		chatChunk(`{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"Read","arguments":"{\"pa"}},{"index":1,"id":"call_b","function":{"name":"Grep","arguments":"{\"pat"}}]}`, ""),
		chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}},{"index":1,"function":{"arguments":"tern\":\"x\"}"}}]}`, ""),
		chatChunk(`{"tool_calls":[{"index":2,"id":"call_c","function":{"name":"Ls","arguments":"{}"}}]}`, "tool_calls"),
		"data: [DONE]\n\n",
	}
	for _, in := range []string{Anthropic, OpenAIResponses, Gemini} {
		_, r := through(t, OpenAIChat, in, chunks)
		want := []string{`Read {"path":"a"}`, `Grep {"pattern":"x"}`, `Ls {}`}
		if diff := cmp.Diff(want, toolArgs(t, r)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
	}
}

// LiteLLM: MCP tool names over 64 characters are refused by OpenAI and
// Gemini; shorten them upstream and give the client its own names back.
func TestBugLongToolNames(t *testing.T) {
	long := "mcp__very_long_server_name_for_testing__" + strings.Repeat("do_something_", 4)
	for _, up := range []string{OpenAIChat, Gemini} {
		g := newRig(t, up, nil)
		short := shortenTools(&Request{Tools: []Tool{{Name: long}}}, 64)
		var upName string
		for k := range short {
			upName = k
		}
		g.up.Script(fakellm.Reply{Body: string(adapterFor(up).encodeResponse(&Response{Parts: []Part{{Kind: PartToolCall, ToolID: "call_1", ToolName: upName, Args: json.RawMessage(`{}`)}}}))})
		req := baseRequest(false)
		req.Tools = append(req.Tools, Tool{Name: long, Schema: json.RawMessage(`{"type":"object"}`)})
		resp := g.call(t, Anthropic, req)
		b, _ := io.ReadAll(resp.Body)
		sent := string(g.up.Requests()[0].Body)
		if len(upName) != 64 || strings.Contains(sent, long) || !strings.Contains(sent, upName) {
			t.Errorf("%s: upstream got %s", up, sent)
		}
		if !strings.Contains(string(b), `"name":"`+long+`"`) {
			t.Errorf("%s: client got %s", up, b)
		}
	}
}

// CLIProxyAPI #1700: input_tokens 0 in message_start broke Claude Code's
// context display when the upstream reports usage only at the end.
func TestBugMessageStartInputEstimate(t *testing.T) {
	body, _ := through(t, OpenAIChat, Anthropic, []string{chatChunk(`{"content":"hi"}`, "stop"), "data: [DONE]\n\n"})
	start, _, _ := strings.Cut(body, "\n\n")
	if strings.Contains(start, `"input_tokens":0`) || !strings.Contains(start, `"input_tokens":`) {
		t.Errorf("message_start: %s", start)
	}
}
