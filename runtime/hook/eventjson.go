package hook

import (
	"bytes"
	"encoding/json"

	"sitter.dev/sitter/runtime/internal/jsonr"
	"sitter.dev/sitter/runtime/internal/jsonw"
)

// DecodeEvent reads a canonical event as json.Unmarshal does, without
// encoding/json's first-use cost when the event is in its common form
// (see runtime/internal/jsonr): the hook commands that read one from
// stdin (the babysitter stop check, sitter guard) run at every turn or
// tool call of an agent.
func DecodeEvent(b []byte) (Event, error) {
	var ev Event
	err := jsonr.Decode(b, &ev, scanEvent)
	return ev, err
}

var (
	eventFields   = []string{"version", "harness", "nativeEvent", "phase", "support", "session", "tool", "prompt", "source", "reason", "stopHookActive", "lastAssistantMessage", "file", "raw"}
	sessionFields = []string{"id", "cwd", "projectDir", "transcriptPath", "turnId", "model", "permissionMode"}
	toolFields    = []string{"name", "kind", "input", "response", "callId"}
)

func scanEvent(s *jsonr.Scanner, ev *Event) error {
	return s.Document(s.Fields(eventFields, func(key string) (err error) {
		switch key {
		case "version":
			ev.Version, err = s.String(key)
		case "harness":
			ev.Harness, err = s.String(key)
		case "nativeEvent":
			ev.NativeEvent, err = s.String(key)
		case "phase":
			ev.Phase, err = s.String(key)
		case "support":
			ev.Support, err = s.String(key)
		case "session":
			err = scanSession(s, &ev.Session)
		case "tool":
			if s.Null() {
				return nil
			}
			ev.Tool = new(Tool)
			err = scanTool(s, ev.Tool)
		case "prompt":
			ev.Prompt, err = s.String(key)
		case "source":
			ev.Source, err = s.String(key)
		case "reason":
			ev.Reason, err = s.String(key)
		case "stopHookActive":
			ev.StopHookActive, err = s.Bool(key)
		case "lastAssistantMessage":
			ev.LastAssistantMessage, err = s.String(key)
		case "file":
			ev.File, err = s.String(key)
		case "raw":
			ev.Raw, err = s.Raw()
		}
		return err
	}))
}

func scanSession(s *jsonr.Scanner, v *Session) error {
	return s.Object(s.Fields(sessionFields, func(key string) (err error) {
		switch key {
		case "id":
			v.ID, err = s.String(key)
		case "cwd":
			v.Cwd, err = s.String(key)
		case "projectDir":
			v.ProjectDir, err = s.String(key)
		case "transcriptPath":
			v.TranscriptPath, err = s.String(key)
		case "turnId":
			v.TurnID, err = s.String(key)
		case "model":
			v.Model, err = s.String(key)
		case "permissionMode":
			v.PermissionMode, err = s.String(key)
		}
		return err
	}))
}

func scanTool(s *jsonr.Scanner, v *Tool) error {
	return s.Object(s.Fields(toolFields, func(key string) (err error) {
		switch key {
		case "name":
			v.Name, err = s.String(key)
		case "kind":
			v.Kind, err = s.String(key)
		case "input":
			v.Input, err = s.Raw()
		case "response":
			v.Response, err = s.Raw()
		case "callId":
			v.CallID, err = s.String(key)
		}
		return err
	}))
}

// MarshalResult writes r as json.Marshal does (html true) or as a
// json.Encoder with SetEscapeHTML(false) does (html false, without the
// Encoder's newline), without encoding/json's first-use cost unless r
// carries an updated input (a raw value, written by encoding/json).
func MarshalResult(r Result, html bool) ([]byte, error) {
	if len(r.UpdatedInput) > 0 {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	e := jsonw.Enc{HTML: html, B: make([]byte, 0, 96+len(r.Reason)+len(r.UserMessage)+len(r.AdditionalContext))}
	e.Open()
	e.OmitStr("decision", string(r.Decision))
	e.OmitStr("reason", r.Reason)
	e.OmitStr("userMessage", r.UserMessage)
	e.OmitStr("additionalContext", r.AdditionalContext)
	if r.Halt {
		e.KeyBool("halt", true)
	}
	if len(r.WatchPaths) > 0 {
		e.Key("watchPaths")
		e.Strs(r.WatchPaths)
	}
	e.Close()
	return e.B, nil
}
