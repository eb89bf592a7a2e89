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
	str := func(k, v string, omitEmpty bool) {
		if v != "" || !omitEmpty {
			e.Key(k)
			e.Str(v)
		}
	}
	str("version", st.Version, false)
	str("harness", st.Harness, false)
	str("sessionId", st.SessionID, false)
	e.Key("active")
	e.Bool(st.Active)
	str("runId", st.RunID, true)
	str("runDir", st.RunDir, true)
	e.Key("iteration")
	e.Int(int64(st.Iteration))
	e.Key("maxIterations")
	e.Int(int64(st.MaxIterations))
	str("cwd", st.Cwd, true)
	str("startedAt", st.StartedAt, false)
	str("updatedAt", st.UpdatedAt, false)
	str("endedBecause", st.EndedBecause, true)
	if st.Told {
		e.Key("told")
		e.Bool(true)
	}
	str("store", st.Store, true)
	e.Close()
	return e.B
}
