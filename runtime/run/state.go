package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sitter.dev/sitter/runtime/journal"
)

// Effect statuses, as the SDK's effect index names them.
const (
	Requested     = "requested"
	ResolvedOK    = "resolved_ok"
	ResolvedError = "resolved_error"
)

// Run statuses.
const (
	StatusCreated   = "created"
	StatusWaiting   = "waiting"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusHalted    = "halted"
)

// Effect is one requested effect and what became of it.
type Effect struct {
	EffectID       string          `json:"effectId"`
	InvocationKey  string          `json:"invocationKey"`
	InvocationHash string          `json:"invocationHash,omitempty"`
	StepID         string          `json:"stepId,omitempty"`
	TaskID         string          `json:"taskId"`
	Kind           string          `json:"kind,omitempty"`
	Label          string          `json:"label,omitempty"`
	Labels         []string        `json:"labels,omitempty"`
	TaskDefRef     string          `json:"taskDefRef,omitempty"`
	InputsRef      string          `json:"inputsRef,omitempty"`
	Status         string          `json:"status"`
	ResultRef      string          `json:"resultRef,omitempty"`
	StdoutRef      string          `json:"stdoutRef,omitempty"`
	StderrRef      string          `json:"stderrRef,omitempty"`
	Error          json.RawMessage `json:"error,omitempty"`
	RequestedAt    string          `json:"requestedAt,omitempty"`
	ResolvedAt     string          `json:"resolvedAt,omitempty"`
	// ResultDigest is the result file's digest as sitter's EFFECT_RESOLVED
	// recorded it ("sha256:<hex>"); "" for a result the SDK posted.
	ResultDigest string `json:"resultDigest,omitempty"`
}

// State is a run rebuilt from its journal.
type State struct {
	Dir     string
	Meta    *Metadata
	Journal *journal.Journal
	Effects []*Effect // in request order
	byID    map[string]*Effect
	byKey   map[string]*Effect
	// Status is the run status: created, waiting, completed, failed or halted.
	Status string
	// ProcessHash is the last process code hash the journal knows.
	ProcessHash string
	// Failure is the error of RUN_FAILED, HaltReason the reason of RUN_HALTED.
	Failure    json.RawMessage
	HaltReason string
	// StopChecks counts STOP_HOOK_INVOKED events.
	StopChecks int
	// RuntimeError is the message of the last PROCESS_RUNTIME_ERROR when
	// nothing but stop checks and bindings followed it: the process file
	// cannot run, so iterating again cannot advance the run.
	RuntimeError string
	// Driver is the session the last SESSION_BOUND named ("" before any):
	// the one driving the run, wherever it runs (a run of a shared store
	// is driven from any machine, whose sessions only the journal sees).
	Driver Binding
	// lifecycle is the status the last RUN_COMPLETED, RUN_FAILED or
	// RUN_HALTED set, "" before any.
	lifecycle string
}

// Load reads a run: its metadata and its verified journal, replayed.
func Load(dir string) (*State, error) {
	m, err := ReadMetadata(dir)
	if err != nil {
		return nil, err
	}
	return loadJournal(dir, m)
}

// loadJournal is Load with the metadata already read.
func loadJournal(dir string, m *Metadata) (*State, error) {
	j, err := journal.Load(filepath.Join(dir, JournalDir))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	return replay(dir, m, j)
}

func replay(dir string, m *Metadata, j *journal.Journal) (*State, error) {
	s := newReplay(dir, m)
	s.Journal = j
	for _, ev := range j.Events {
		if err := s.replayEvent(ev); err != nil {
			return nil, err
		}
	}
	s.setStatus()
	return s, nil
}

// newReplay is a run before its first event.
func newReplay(dir string, m *Metadata) *State {
	return &State{Dir: dir, Meta: m, byID: map[string]*Effect{}, byKey: map[string]*Effect{}, ProcessHash: m.ProcessHash}
}

// replayEvent replays one event onto s. Replay is replayEvent over the
// journal, then setStatus; the replay cache (replaycache.go) resumes it
// with the events written after the ones it stored.
func (s *State) replayEvent(ev journal.Event) error {
	bad := func(why string) error {
		return fmt.Errorf("run %s: journal file %s: %s", s.Dir, ev.File, why)
	}
	switch ev.Type {
	case journal.StopHookInvoked, journal.SessionBound:
	case journal.ProcessRuntimeError:
		var r struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(ev.Data, &r)
		s.RuntimeError = r.Error.Message
		if s.RuntimeError == "" {
			s.RuntimeError = "the process could not be run"
		}
	default:
		s.RuntimeError = ""
	}
	switch ev.Type {
	case journal.EffectRequested:
		var e Effect
		if err := json.Unmarshal(ev.Data, &e); err != nil || e.EffectID == "" || e.InvocationKey == "" {
			return bad("malformed EFFECT_REQUESTED")
		}
		if s.byID[e.EffectID] != nil {
			return bad("duplicate effect id " + e.EffectID)
		}
		if s.byKey[e.InvocationKey] != nil {
			return bad("duplicate invocation key " + e.InvocationKey)
		}
		e.Status = Requested
		e.RequestedAt = ev.RecordedAt
		s.Effects = append(s.Effects, &e)
		s.byID[e.EffectID] = &e
		s.byKey[e.InvocationKey] = &e
	case journal.EffectResolved:
		var r struct {
			EffectID  string          `json:"effectId"`
			Status    string          `json:"status"`
			ResultRef string          `json:"resultRef"`
			StdoutRef string          `json:"stdoutRef"`
			StderrRef string          `json:"stderrRef"`
			Error     json.RawMessage `json:"error"`
			Digest    string          `json:"resultDigest"`
		}
		if err := json.Unmarshal(ev.Data, &r); err != nil {
			return bad("malformed EFFECT_RESOLVED")
		}
		e := s.byID[r.EffectID]
		if e == nil {
			return bad("EFFECT_RESOLVED of unknown effect " + r.EffectID)
		}
		if e.Status != Requested {
			return bad("effect " + r.EffectID + " resolved twice")
		}
		switch r.Status {
		case "ok":
			e.Status = ResolvedOK
		case "error":
			e.Status = ResolvedError
		default:
			return bad("unknown EFFECT_RESOLVED status " + r.Status)
		}
		e.ResultRef, e.StdoutRef, e.StderrRef, e.Error, e.ResolvedAt = r.ResultRef, r.StdoutRef, r.StderrRef, r.Error, ev.RecordedAt
		e.ResultDigest = r.Digest
	case journal.RunCreated:
		var c struct {
			ProcessHash string `json:"processHash"`
		}
		json.Unmarshal(ev.Data, &c)
		if c.ProcessHash != "" {
			s.ProcessHash = c.ProcessHash
		}
	case journal.ProcessCodeHashChanged:
		var c struct {
			Hash string `json:"hash"`
		}
		json.Unmarshal(ev.Data, &c)
		s.ProcessHash = c.Hash
	case journal.RunCompleted:
		s.lifecycle = StatusCompleted
	case journal.RunFailed:
		s.lifecycle = StatusFailed
		var f struct {
			Error json.RawMessage `json:"error"`
		}
		json.Unmarshal(ev.Data, &f)
		s.Failure = f.Error
	case journal.RunHalted:
		s.lifecycle = StatusHalted
		var h struct {
			Reason string `json:"reason"`
		}
		json.Unmarshal(ev.Data, &h)
		s.HaltReason = h.Reason
	case journal.StopHookInvoked:
		s.StopChecks++
	case journal.SessionBound:
		var b Binding
		json.Unmarshal(ev.Data, &b) // a binding without its session names none
		s.Driver = b
	}
	return nil
}

// Binding is a session that drives a run: SESSION_BOUND's harness and
// sessionId.
type Binding struct {
	Harness   string `json:"harness"`
	SessionID string `json:"sessionId"`
}

// setStatus sets the status from the events applied.
func (s *State) setStatus() {
	switch {
	case s.lifecycle != "":
		s.Status = s.lifecycle
	case len(s.Pending()) > 0:
		s.Status = StatusWaiting
	default:
		s.Status = StatusCreated
	}
}

// Terminal says whether the run has ended.
func (s *State) Terminal() bool {
	return s.Status == StatusCompleted || s.Status == StatusFailed || s.Status == StatusHalted
}

// Effect finds an effect by id.
func (s *State) Effect(id string) *Effect { return s.byID[id] }

// Pending lists the effects still waiting for a result.
func (s *State) Pending() []*Effect {
	var p []*Effect
	for _, e := range s.Effects {
		if e.Status == Requested {
			p = append(p, e)
		}
	}
	return p
}

// PendingByKind counts pending effects per kind.
func (s *State) PendingByKind() map[string]int {
	m := map[string]int{}
	for _, e := range s.Pending() {
		k := e.Kind
		if k == "" {
			k = "unknown"
		}
		m[k]++
	}
	return m
}

// TaskDef reads an effect's task.json.
func (s *State) TaskDef(e *Effect) (json.RawMessage, error) {
	ref := e.TaskDefRef
	if ref == "" {
		ref = TasksDir + "/" + e.EffectID + "/task.json"
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(ref)))
	if err != nil {
		return nil, fmt.Errorf("task definition of effect %s: %w", e.EffectID, err)
	}
	return json.RawMessage(b), nil
}

// storedResult is the part of result.json replay needs.
type storedResult struct {
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Value  json.RawMessage `json:"value"`
	Error  json.RawMessage `json:"error"`
}

// Result reads a resolved effect's result as the process sees it:
// {status:"ok", value} or {status:"error", error}.
func (s *State) Result(e *Effect) (map[string]json.RawMessage, error) {
	ref := e.ResultRef
	if ref == "" {
		ref = TasksDir + "/" + e.EffectID + "/result.json"
	}
	path := filepath.Join(s.Dir, filepath.FromSlash(ref))
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("result of effect %s: %w", e.EffectID, err)
	}
	// A result sitter posted is the one its EFFECT_RESOLVED recorded; one
	// the SDK posted has no digest and is taken as it is.
	if e.ResultDigest != "" && resultDigest(b) != e.ResultDigest {
		return nil, fmt.Errorf("result of effect %s: %s was changed after it was posted (its digest is %s, the journal recorded %s); put the posted result back, or post the task again in a new run", e.EffectID, path, resultDigest(b), e.ResultDigest)
	}
	var r storedResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("result of effect %s: %w", e.EffectID, err)
	}
	if e.Status == ResolvedError || r.Status == "error" {
		errv := r.Error
		if len(errv) == 0 {
			errv = e.Error
		}
		if len(errv) == 0 {
			errv = json.RawMessage(`{"name":"Error","message":"task failed"}`)
		}
		return map[string]json.RawMessage{"status": json.RawMessage(`"error"`), "error": errv}, nil
	}
	v := r.Result
	if len(v) == 0 {
		v = r.Value
	}
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	return map[string]json.RawMessage{"status": json.RawMessage(`"ok"`), "value": v}, nil
}

// Snapshot writes state/state.json in the SDK's state-cache format.
func (s *State) Snapshot(reason string) error {
	type summary struct {
		EffectID      string `json:"effectId"`
		InvocationKey string `json:"invocationKey"`
		Status        string `json:"status"`
		Kind          string `json:"kind,omitempty"`
		Label         string `json:"label,omitempty"`
		TaskID        string `json:"taskId,omitempty"`
		StepID        string `json:"stepId,omitempty"`
		RequestedAt   string `json:"requestedAt,omitempty"`
		ResolvedAt    string `json:"resolvedAt,omitempty"`
	}
	byInv := map[string]summary{}
	for _, e := range s.Effects {
		byInv[e.InvocationKey] = summary{e.EffectID, e.InvocationKey, e.Status, e.Kind, e.Label, e.TaskID, e.StepID, e.RequestedAt, e.ResolvedAt}
	}
	var head any
	version := 0
	if h := s.Journal.Head(); h != nil {
		head = obj{{"seq", h.Seq}, {"ulid", h.ULID}}
		version = h.Seq
	}
	var r any
	if reason != "" {
		r = reason
	}
	b, err := indent(obj{
		{"schemaVersion", "2026.01.state-cache"}, {"savedAt", now()}, {"journalHead", orNull(head)},
		{"stateVersion", version}, {"effectsByInvocation", byInv}, {"pendingEffectsByKind", s.PendingByKind()},
		{"rebuildReason", orNull(r)},
	})
	if err != nil {
		return err
	}
	return journal.WriteFileAtomic(filepath.Join(s.Dir, StateDir, "state.json"), b)
}

// null is a JSON null that obj does not drop.
type null struct{}

func (null) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

func orNull(v any) any {
	if v == nil {
		return null{}
	}
	return v
}

func sortedRaw(m map[string]json.RawMessage) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
