package main

import (
	"encoding/json"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {0, 1}, {1, 10}} {
		if got := quantile(ds, c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if ds[0] != 5 {
		t.Error("quantile sorted its input in place")
	}
}

func TestPayloadIsPreToolUse(t *testing.T) {
	var p struct {
		Event string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.Event != "PreToolUse" {
		t.Errorf("embedded payload: event %q, %v", p.Event, err)
	}
}
