package emit

import "testing"

func TestGoName(t *testing.T) {
	for key, want := range map[string]string{
		"session_id": "SessionID", "sessionID": "SessionID", "toolUseId": "ToolUseID", "result_json": "ResultJSON",
		"tool.execute": "ToolExecute", "hook_event_name": "HookEventName", "teammateIdle": "TeammateIdle",
		"url": "URL", "9lives": "X9lives", "HTTPServer": "HTTPServer",
	} {
		if got := GoName(key); got != want {
			t.Errorf("GoName(%q) = %q, want %q", key, got, want)
		}
	}
	if got := Pascal("my-api"); got != "MyApi" {
		t.Errorf("Pascal(my-api) = %q: {namePascal} is a TypeScript name, without Go's initialisms", got)
	}
}
