package session

import (
	"sitter.dev/sitter/runtime/internal/jsonr"
	"sitter.dev/sitter/runtime/internal/jsonw"
)

// The session's state file is read and written at every stop check:
// these are json.Unmarshal and json.MarshalIndent(st, "", "  ") without
// encoding/json's first-use cost (see runtime/internal/jsonr). A field
// added to State must be added here too: TestStateJSON fails until it is.

var stateFields = []string{"version", "harness", "sessionId", "active", "runId", "runDir", "iteration", "maxIterations", "cwd", "startedAt", "updatedAt", "endedBecause", "told", "store"}

// decodeState is json.Unmarshal(b, &st).
func decodeState(b []byte) (State, error) {
	var st State
	err := jsonr.Decode(b, &st, scanState)
	return st, err
}

func scanState(s *jsonr.Scanner, st *State) error {
	return s.Document(s.Fields(stateFields, func(key string) (err error) {
		switch key {
		case "version":
			st.Version, err = s.String(key)
		case "harness":
			st.Harness, err = s.String(key)
		case "sessionId":
			st.SessionID, err = s.String(key)
		case "active":
			st.Active, err = s.BoolValue(key)
		case "runId":
			st.RunID, err = s.String(key)
		case "runDir":
			st.RunDir, err = s.String(key)
		case "iteration":
			st.Iteration, err = s.Int(key)
		case "maxIterations":
			st.MaxIterations, err = s.Int(key)
		case "cwd":
			st.Cwd, err = s.String(key)
		case "startedAt":
			st.StartedAt, err = s.String(key)
		case "updatedAt":
			st.UpdatedAt, err = s.String(key)
		case "endedBecause":
			st.EndedBecause, err = s.String(key)
		case "told":
			st.Told, err = s.BoolValue(key)
		case "store":
			st.Store, err = s.String(key)
		}
		return err
	}))
}

// marshalState is json.MarshalIndent(st, "", "  ").
func marshalState(st *State) []byte {
	e := jsonw.Enc{Indent: "  ", HTML: true, B: make([]byte, 0, 512+len(st.RunDir)+len(st.Cwd)+len(st.Store))}
	e.Open()
	e.KeyStr("version", st.Version)
	e.KeyStr("harness", st.Harness)
	e.KeyStr("sessionId", st.SessionID)
	e.KeyBool("active", st.Active)
	e.OmitStr("runId", st.RunID)
	e.OmitStr("runDir", st.RunDir)
	e.KeyInt("iteration", int64(st.Iteration))
	e.KeyInt("maxIterations", int64(st.MaxIterations))
	e.OmitStr("cwd", st.Cwd)
	e.KeyStr("startedAt", st.StartedAt)
	e.KeyStr("updatedAt", st.UpdatedAt)
	e.OmitStr("endedBecause", st.EndedBecause)
	if st.Told {
		e.KeyBool("told", true)
	}
	e.OmitStr("store", st.Store)
	e.Close()
	return e.B
}
