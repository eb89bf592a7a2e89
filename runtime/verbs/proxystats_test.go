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
	if st.Requests != 3 || st.Skipped != 1 {
		t.Errorf("requests %d skipped %d", st.Requests, st.Skipped)
	}
	bg := st.ByRule[0]
	if bg.Name != "background" || bg.Requests != 2 || bg.Fallbacks != 1 || bg.InputTokens != 30 || bg.OutputTokens != 3 || bg.LatencyMS != 3 || bg.Errors != 0 {
		t.Errorf("background: %+v", bg)
	}
	if b := st.ByProvider[0]; b.Name != "b" || b.Requests != 2 || b.Errors != 1 {
		t.Errorf("provider b: %+v", b)
	}
	if m := st.ByModel[0]; m.Name != "b,m2" || m.Requests != 2 {
		t.Errorf("model: %+v", m)
	}
	out.Reset()
	if code := Run([]string{"proxy", "stats", "--file", p}, nil, &out, &errb, registry.Registry); code != 0 || !strings.Contains(out.String(), "3 routed requests") || !strings.Contains(out.String(), "b,m2") {
		t.Errorf("text: %d %s", code, out.String())
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
