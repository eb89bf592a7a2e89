package proxy

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// recordCases: records as the router makes them, and strings that
// encoding/json escapes.
func recordCases() []RouteRecord {
	at := time.Date(2026, 12, 2, 8, 30, 1, 123456789, time.FixedZone("x", 3600))
	return []RouteRecord{
		{at: at, Rule: "default", Provider: "a", Model: "gpt-x-2025", Alias: "gpt-x", Status: 200, LatencyMS: 0.123, InputTokens: 120, OutputTokens: 30, Attempts: 1, Harness: "claude-code", Client: "anthropic", Stream: true},
		{Time: "2026-01-01T00:00:00Z", Rule: "think", Provider: "b", Model: "o3", Status: 502, LatencyMS: 1234.5, Attempts: 3, Failed: []string{"a,m1", "b,m2"}, FailedMS: []float64{12.345, 1e-7}, Client: "openai-chat", Error: "upstream: 502 \"bad\" <gateway> & \\ \n\x01"},
		{Rule: "direct", Model: "modèle-é\u2028", LatencyMS: 1e-7, Client: "gemini", Error: "bad utf-8 \xff\xfe"},
		{LatencyMS: 5e21},
		{},
	}
}

// TestAppendRecord: the writer's encoder writes what encoding/json
// writes, byte for byte.
func TestAppendRecord(t *testing.T) {
	for _, r := range recordCases() {
		checkRecord(t, r)
	}
}

func FuzzAppendRecord(f *testing.F) {
	for _, r := range recordCases() {
		f.Add(r.Rule, r.Model, r.Error, r.LatencyMS, r.Status)
	}
	f.Fuzz(func(t *testing.T, rule, model, errText string, latency float64, status int) {
		if latency != latency || latency > 1e308 || latency < -1e308 {
			return // no JSON number; the router's latencies are finite
		}
		checkRecord(t, RouteRecord{Rule: rule, Model: model, Alias: model, Error: errText, LatencyMS: latency, Status: status, Failed: []string{model}, FailedMS: []float64{latency, 0}, Client: "anthropic"})
	})
}

func checkRecord(t *testing.T, r RouteRecord) {
	t.Helper()
	got := appendRecord(nil, &r)
	if r.Time == "" && !r.at.IsZero() {
		r.Time = r.at.UTC().Format(time.RFC3339Nano)
	}
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(&r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("appendRecord:\n%s\nencoding/json:\n%s", got, want.Bytes())
	}
}
