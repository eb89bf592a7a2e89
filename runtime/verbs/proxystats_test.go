package verbs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// TestProxyStats sums a route record per rule, provider and model.
func TestProxyStats(t *testing.T) {
	p := filepath.Join(t.TempDir(), "routes.jsonl")
	os.WriteFile(p, []byte(`{"rule":"background","provider":"a","model":"m1","status":200,"latency_ms":2,"input_tokens":10,"output_tokens":1,"attempts":1,"client":"anthropic"}
{"rule":"background","provider":"b","model":"m2","status":200,"latency_ms":4,"input_tokens":20,"output_tokens":2,"attempts":2,"failed":["a,m1"],"client":"anthropic"}
{"rule":"default","provider":"b","model":"m2","status":529,"latency_ms":6,"attempts":2,"client":"anthropic"}
not a record
`), 0o600)
	var out, errb bytes.Buffer
	if code := Run([]string{"proxy", "stats", "--json", "--file", p}, nil, &out, &errb, registry.Registry); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var st routeStats
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Requests != 3 || st.Skipped != 1 || st.FirstSkipped != 4 {
		t.Errorf("requests %d skipped %d (first at line %d)", st.Requests, st.Skipped, st.FirstSkipped)
	}
	// A line that is not summed is said on stderr, with its file:line.
	if want := "sitter: proxy stats: " + p + ":4: 1 line(s) skipped"; !strings.HasPrefix(errb.String(), want) {
		t.Errorf("stderr %q, want it to start %q", errb.String(), want)
	}
	errb.Reset()
	bg := st.ByRule[0]
	if bg.Name != "background" || bg.Requests != 2 || bg.Fallbacks != 1 || bg.InputTokens != 30 || bg.OutputTokens != 3 || bg.LatencyMS != 3 || bg.Errors != 0 {
		t.Errorf("background: %+v", bg)
	}
	// Per provider and model, the attempt that fell back from a counts too.
	if a, b := st.ByProvider[0], st.ByProvider[1]; a.Name != "a" || a.Requests != 2 || a.Errors != 1 || b.Name != "b" || b.Requests != 2 || b.Errors != 1 {
		t.Errorf("providers: %+v", st.ByProvider)
	}
	if m := st.ByModel[1]; m.Name != "b,m2" || m.Requests != 2 {
		t.Errorf("model: %+v", m)
	}
	out.Reset()
	if code := Run([]string{"proxy", "stats", "--file", p}, nil, &out, &errb, registry.Registry); code != 0 || !strings.Contains(out.String(), "3 routed requests") || !strings.Contains(out.String(), "b,m2") ||
		!strings.Contains(errb.String(), p+":4: 1 line(s) skipped") {
		t.Errorf("text: %d %s\nstderr %s", code, out.String(), errb.String())
	}
}

// One routed request is "1 routed request".
func TestProxyStatsOneRequest(t *testing.T) {
	p := filepath.Join(t.TempDir(), "routes.jsonl")
	os.WriteFile(p, []byte(`{"rule":"default","provider":"a","model":"m","status":200,"latency_ms":2,"attempts":1,"client":"anthropic"}`+"\n"), 0o600)
	var out, errb bytes.Buffer
	if code := Run([]string{"proxy", "stats", "--file", p}, nil, &out, &errb, registry.Registry); code != 0 || !strings.HasPrefix(out.String(), "1 routed request in ") {
		t.Errorf("exit %d, %q, %q; want it to begin with 1 routed request in", code, out.String(), errb.String())
	}
}

// TestProxyStatsCutStreamIsError: a stream the upstream cut has status
// 200 and an error: it counts as an error.
func TestProxyStatsCutStreamIsError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "routes.jsonl")
	os.WriteFile(p, []byte(`{"rule":"default","provider":"a","model":"m","status":200,"latency_ms":2,"attempts":1,"client":"anthropic","stream":true,"error":"stream cut before its terminal event"}
{"rule":"default","provider":"a","model":"m","status":200,"latency_ms":2,"attempts":1,"client":"anthropic","stream":true}
`), 0o600)
	st, err := sumRoutes(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range [][]routeSum{st.ByRule, st.ByProvider, st.ByModel} {
		if len(rows) != 1 || rows[0].Requests != 2 || rows[0].Errors != 1 {
			t.Errorf("%+v, want 2 requests, 1 error", rows)
		}
	}
}

// TestProxyStatsCountsEveryAttempt: a request that failed on boom and
// down before rl answered is one request of its rule, and one request
// (an error) of each provider and model it tried.
func TestProxyStatsCountsEveryAttempt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "routes.jsonl")
	os.WriteFile(p, []byte(`{"rule":"default","provider":"rl","model":"m3","status":200,"latency_ms":30,"input_tokens":5,"attempts":3,"failed":["boom,m1","down,m2"],"client":"anthropic"}
{"rule":"default","provider":"rl","model":"m3","status":429,"latency_ms":10,"attempts":3,"failed":["boom,m1","down,m2"],"client":"anthropic"}
`), 0o600)
	st, err := sumRoutes(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 2 || len(st.ByRule) != 1 || st.ByRule[0].Requests != 2 || st.ByRule[0].Errors != 1 || st.ByRule[0].Fallbacks != 2 {
		t.Errorf("by rule: %+v", st.ByRule)
	}
	want := map[string][2]int{"boom": {2, 2}, "down": {2, 2}, "rl": {2, 1}, "boom,m1": {2, 2}, "down,m2": {2, 2}, "rl,m3": {2, 1}}
	for _, rows := range [][]routeSum{st.ByProvider, st.ByModel} {
		if len(rows) != 3 {
			t.Errorf("%+v, want 3 rows", rows)
		}
		for _, r := range rows {
			if w := want[r.Name]; r.Requests != w[0] || r.Errors != w[1] {
				t.Errorf("%s: %d requests, %d errors; want %d, %d", r.Name, r.Requests, r.Errors, w[0], w[1])
			}
			// Latency and tokens are those of the attempts that answered.
			if r.Name == "rl" && (r.LatencyMS != 20 || r.InputTokens != 5) || r.Name == "boom" && (r.LatencyMS != 0 || r.InputTokens != 0) {
				t.Errorf("%s: %+v", r.Name, r)
			}
		}
	}
}

// TestProxyStatsFailedLatency: an attempt that fell back counts with its
// own latency (failed_ms) in its provider's and model's mean, and the
// provider that answered is not charged the failed attempts' time; per
// rule the latency is the whole request's.
func TestProxyStatsFailedLatency(t *testing.T) {
	p := filepath.Join(t.TempDir(), "routes.jsonl")
	os.WriteFile(p, []byte(`{"rule":"default","provider":"rl","model":"m3","status":200,"latency_ms":100,"attempts":3,"failed":["boom,m1","down,m2"],"failed_ms":[40,50],"client":"anthropic"}
{"rule":"default","provider":"rl","model":"m3","status":200,"latency_ms":30,"attempts":2,"failed":["boom,m1"],"failed_ms":[20],"client":"anthropic"}
`), 0o600)
	st, err := sumRoutes(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.ByRule) != 1 || st.ByRule[0].LatencyMS != 65 {
		t.Errorf("by rule: %+v, want a mean of 65 ms", st.ByRule)
	}
	want := map[string]float64{"boom": 30, "down": 50, "rl": 10, "boom,m1": 30, "down,m2": 50, "rl,m3": 10}
	for _, rows := range [][]routeSum{st.ByProvider, st.ByModel} {
		for _, r := range rows {
			if r.LatencyMS != want[r.Name] {
				t.Errorf("%s: mean %v ms, want %v", r.Name, r.LatencyMS, want[r.Name])
			}
		}
	}
}

// TestProxyStatsNothingRecorded: before the first routed request there
// is no record: the summary is empty (exit 0) and stderr says where the
// record will be. A --file the user named that is not there is an error.
func TestProxyStatsNothingRecorded(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SITTER_STATE_DIR", state)
	var out, errb bytes.Buffer
	if code := Run([]string{"proxy", "stats", "--json"}, nil, &out, &errb, registry.Registry); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var st routeStats
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Requests != 0 || st.ByRule == nil || st.File != filepath.Join(state, "proxy", "routes.jsonl") {
		t.Errorf("stdout %q (%v); want an empty summary of the default record", out.String(), err)
	}
	if !strings.HasPrefix(errb.String(), "sitter: proxy stats: no routed request recorded yet") {
		t.Errorf("stderr %q; want a note that nothing is recorded yet", errb.String())
	}
	out.Reset()
	errb.Reset()
	missing := filepath.Join(t.TempDir(), "nope.jsonl")
	if code := Run([]string{"proxy", "stats", "--file", missing}, nil, &out, &errb, registry.Registry); code != 1 || out.Len() > 0 ||
		!strings.HasPrefix(errb.String(), "sitter: proxy stats: ") || !strings.Contains(errb.String(), missing) {
		t.Errorf("--file missing: exit %d, stdout %q, stderr %q; want exit 1 naming the file", code, out.String(), errb.String())
	}
}

// TestProxyStatsClientClosed: a 499 (the client left before the answer
// ended) is no upstream error: it is counted apart, as clientClosed, in
// the JSON and the text, and its latency is not the provider's.
func TestProxyStatsClientClosed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "routes.jsonl")
	os.WriteFile(p, []byte(`{"rule":"default","provider":"a","model":"m","status":499,"latency_ms":900,"attempts":1,"client":"anthropic","error":"the client closed the request before the upstream answered"}
{"rule":"default","provider":"a","model":"m","status":499,"latency_ms":700,"output_tokens":3,"attempts":1,"client":"anthropic","stream":true,"error":"client disconnected"}
{"rule":"default","provider":"a","model":"m","status":502,"latency_ms":10,"attempts":1,"client":"anthropic","error":"upstream: refused"}
{"rule":"default","provider":"a","model":"m","status":200,"latency_ms":20,"attempts":1,"client":"anthropic"}
`), 0o600)
	st, err := sumRoutes(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range [][]routeSum{st.ByRule, st.ByProvider, st.ByModel} {
		if len(rows) != 1 {
			t.Fatalf("%+v, want one row", rows)
		}
		r := rows[0]
		if r.Requests != 4 || r.Errors != 1 || r.ClientClosed != 2 || r.OutputTokens != 3 || r.LatencyMS != 15 {
			t.Errorf("%s: %+v; want 4 requests, 1 error, 2 clientClosed, 3 output tokens, mean 15 ms", r.Name, r)
		}
	}
	var out, errb bytes.Buffer
	if code := Run([]string{"proxy", "stats", "--json", "--file", p}, nil, &out, &errb, registry.Registry); code != 0 || !strings.Contains(out.String(), `"clientClosed": 2`) {
		t.Errorf("--json: exit %d: %s %s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Run([]string{"proxy", "stats", "--file", p}, nil, &out, &errb, registry.Registry); code != 0 {
		t.Fatalf("text: exit %d: %s", code, errb.String())
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[2], "client closed") {
		t.Errorf("text header %q, want a client closed column", lines[2])
	}
	if f := strings.Fields(lines[3]); len(f) < 4 || f[0] != "default" || f[1] != "4" || f[2] != "1" || f[3] != "2" {
		t.Errorf("text row %q, want default 4 requests, 1 error, 2 client closed", lines[3])
	}
}
