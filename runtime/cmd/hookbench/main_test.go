package main

import (
	"encoding/json"
	"testing"
)

func TestPayloadIsPreToolUse(t *testing.T) {
	var p struct {
		Event string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.Event != "PreToolUse" {
		t.Errorf("embedded payload: event %q, %v", p.Event, err)
	}
}
