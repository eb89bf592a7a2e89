package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"sitter.dev/sitter/runtime/journal"
)

// Action is one effect the process waits for, as `run iterate` lists it
// (the SDK's nextActions shape).
type Action struct {
	EffectID       string          `json:"effectId"`
	InvocationKey  string          `json:"invocationKey"`
	Kind           string          `json:"kind"`
	Label          string          `json:"label,omitempty"`
	Labels         []string        `json:"labels,omitempty"`
	TaskDef        json.RawMessage `json:"taskDef"`
	TaskID         string          `json:"taskId"`
	StepID         string          `json:"stepId,omitempty"`
	TaskDefRef     string          `json:"taskDefRef"`
	RequestedAt    string          `json:"requestedAt,omitempty"`
	SchedulerHints map[string]any  `json:"schedulerHints,omitempty"`
}

// IterateResult is the answer of one iteration.
type IterateResult struct {
	RunID           string          `json:"runId"`
	Status          string          `json:"status"` // waiting, completed, failed, halted
	NextActions     []Action        `json:"nextActions,omitempty"`
	CompletionProof string          `json:"completionProof,omitempty"`
	Output          json.RawMessage `json:"output,omitempty"`
	Error           json.RawMessage `json:"error,omitempty"`
	Reason          string          `json:"reason,omitempty"`
	// RuntimeError is true when the process could not be run at all (the
	// run itself is not failed: fix the cause and iterate again).
	RuntimeError bool     `json:"runtimeError,omitempty"`
	CodeChanged  bool     `json:"processCodeChanged,omitempty"`
	Logs         []string `json:"logs,omitempty"`
}

// IterateOptions tune Iterate.
type IterateOptions struct {
	Timeout time.Duration // per replay; 0 = DefaultProcessTimeout
	Stderr  io.Writer     // the process's console output; nil = discarded
	Now     func() time.Time
}

// Iterate replays the process once against the journal and journals what
// changed: new effects, completion, failure, a halt, a changed process
// file. Iterating a run that has ended reports its end again.
func Iterate(ctx context.Context, dir string, o IterateOptions) (*IterateResult, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultProcessTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	lock, err := journal.Acquire(ctx, filepath.Join(dir, journal.LockFile), "sitter:run-iterate")
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := Load(dir)
	if err != nil {
		return nil, err
	}
	res := &IterateResult{RunID: s.Meta.RunID}
	if s.Terminal() {
		return s.ended(res), nil
	}
	jdir := filepath.Join(dir, JournalDir)
	appendEv := func(typ string, data any) error {
		ev, err := journal.Append(jdir, s.Journal.Head(), typ, data)
		if err != nil {
			return err
		}
		s.Journal.Events = append(s.Journal.Events, ev)
		return nil
	}

	entry := s.Meta.EntryPath(dir)
	hash, err := HashFile(entry)
	if err != nil {
		return nil, fmt.Errorf("process file of run %s: %w", s.Meta.RunID, err)
	}
	// A run the SDK created has no hash yet: the first one sitter sees is
	// journaled (without a previous hash) so later changes are detected.
	if hash != s.ProcessHash {
		if err := appendEv(journal.ProcessCodeHashChanged, obj{{"path", s.Meta.Entrypoint.ImportPath}, {"previousHash", s.ProcessHash}, {"hash", hash}}); err != nil {
			return nil, err
		}
		res.CodeChanged = s.ProcessHash != ""
		s.ProcessHash = hash
	}

	now := o.Now()
	if err := s.wakeSleeps(now); err != nil {
		return nil, err
	}

	in := replayInput{
		Entry: entry, ExportName: s.Meta.Entrypoint.ExportName, ProcessID: s.Meta.ProcessID,
		RunID: s.Meta.RunID, RunDir: dir, Now: now.UnixMilli(),
		Results: map[string]map[string]json.RawMessage{}, Requested: map[string]string{},
		Shim: shimMode(entry),
	}
	if b, err := os.ReadFile(filepath.Join(dir, InputsFile)); err == nil {
		in.Inputs = b
	}
	for _, e := range s.Effects {
		if e.Status == Requested {
			in.Requested[e.InvocationKey] = e.EffectID
			continue
		}
		r, err := s.Result(e)
		if err != nil {
			return nil, err
		}
		in.Results[e.InvocationKey] = r
	}

	rctx, cancel := context.WithTimeout(ctx, o.Timeout)
	a, err := replayJS(rctx, in, o.Stderr)
	cancel()
	if rerr, ok := err.(*runtimeError); ok {
		errv := obj{{"name", "ProcessRuntimeError"}, {"message", rerr.msg}, {"stderr", rerr.stderr}}
		if err := appendEv(journal.ProcessRuntimeError, obj{{"error", errv}}); err != nil {
			return nil, err
		}
		res.Status, res.RuntimeError = StatusFailed, true
		res.Error, _ = marshal(errv)
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	res.Logs = a.Logs

	switch a.Status {
	case "waiting":
		for _, je := range a.Effects {
			e := s.byKey[je.Key]
			if e == nil {
				if je.Existing {
					return nil, fmt.Errorf("the runner named effect %s pending, but the journal does not know it", je.Key)
				}
				if e, err = s.request(je, appendEv); err != nil {
					return nil, err
				}
			}
			act, err := s.action(e)
			if err != nil {
				return nil, err
			}
			act.SchedulerHints = map[string]any{"pendingCount": len(a.Effects)}
			if e.Kind == "sleep" {
				if t, ok := sleepTarget(act.TaskDef); ok {
					act.SchedulerHints["sleepUntilEpochMs"] = t
				}
			}
			res.NextActions = append(res.NextActions, act)
		}
		res.Status = StatusWaiting
	case "completed":
		out := a.Output
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		b, err := indent(out)
		if err != nil {
			return nil, err
		}
		if err := journal.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(OutputRef)), b); err != nil {
			return nil, err
		}
		if err := appendEv(journal.RunCompleted, obj{{"outputRef", OutputRef}}); err != nil {
			return nil, err
		}
		s.Status = StatusCompleted
		res.Status, res.Output, res.CompletionProof = StatusCompleted, out, s.Meta.CompletionProof
	case "failed":
		if err := appendEv(journal.RunFailed, obj{{"error", a.Error}}); err != nil {
			return nil, err
		}
		s.Status = StatusFailed
		res.Status, res.Error = StatusFailed, a.Error
	case "halted":
		if err := appendEv(journal.RunHalted, obj{{"reason", a.Reason}}); err != nil {
			return nil, err
		}
		s.Status = StatusHalted
		res.Status, res.Reason = StatusHalted, a.Reason
	default:
		return nil, fmt.Errorf("the JS runner answered an unknown status %q", a.Status)
	}
	if err := s.Snapshot("iterate"); err != nil {
		return nil, err
	}
	return res, nil
}

// ended describes a run that has already ended.
func (s *State) ended(res *IterateResult) *IterateResult {
	res.Status = s.Status
	switch s.Status {
	case StatusCompleted:
		res.CompletionProof = s.Meta.CompletionProof
		if b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(OutputRef))); err == nil && json.Valid(b) {
			res.Output = b
		}
	case StatusFailed:
		res.Error = s.Failure
	case StatusHalted:
		res.Reason = s.HaltReason
	}
	return res
}

// request journals a new effect: task.json, then EFFECT_REQUESTED.
func (s *State) request(je jsEffect, appendEv func(string, any) error) (*Effect, error) {
	if je.EffectID == "" {
		je.EffectID = journal.NewULID("")
	}
	if _, ok := journal.ParseULID(je.EffectID); !ok {
		return nil, fmt.Errorf("effect id %q from the runner is not a ULID", je.EffectID)
	}
	if s.byID[je.EffectID] != nil {
		return nil, fmt.Errorf("effect id %s is already used", je.EffectID)
	}
	ref := TasksDir + "/" + je.EffectID + "/task.json"
	var def map[string]json.RawMessage
	if err := json.Unmarshal(je.TaskDef, &def); err != nil || def == nil {
		return nil, fmt.Errorf("task %s: the task definition is not an object", je.TaskID)
	}
	// The SDK's task.json: the definition (keys sorted), then its own keys.
	task := obj{}
	for _, k := range sortedRaw(def) {
		switch k {
		case "schemaVersion", "effectId", "taskId", "invocationKey", "stepId", "inputs":
			continue
		}
		task = append(task, kv{k, def[k]})
	}
	task = append(task, kv{"schemaVersion", "2026.01.tasks-v1"}, kv{"effectId", je.EffectID}, kv{"taskId", je.TaskID},
		kv{"invocationKey", je.Key}, kv{"stepId", je.StepID}, kv{"inputs", nonNull(je.Args)})
	b, err := indent(task)
	if err != nil {
		return nil, err
	}
	if err := journal.WriteFileAtomic(filepath.Join(s.Dir, TasksDir, je.EffectID, "task.json"), b); err != nil {
		return nil, err
	}
	e := &Effect{
		EffectID: je.EffectID, InvocationKey: je.Key, InvocationHash: sha256Hex(je.Key), StepID: je.StepID,
		TaskID: je.TaskID, Kind: je.Kind, Label: je.Label, Labels: je.Labels, TaskDefRef: ref, Status: Requested,
	}
	if err := appendEv(journal.EffectRequested, obj{
		{"effectId", e.EffectID}, {"invocationKey", e.InvocationKey}, {"invocationHash", e.InvocationHash},
		{"stepId", e.StepID}, {"taskId", e.TaskID}, {"kind", e.Kind}, {"label", e.Label},
		{"taskDefRef", e.TaskDefRef}, {"labels", e.Labels},
	}); err != nil {
		return nil, err
	}
	e.RequestedAt = s.Journal.Head().RecordedAt
	s.Effects = append(s.Effects, e)
	s.byID[e.EffectID] = e
	s.byKey[e.InvocationKey] = e
	return e, nil
}

func nonNull(r json.RawMessage) any {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

// action is the nextActions entry of a pending effect.
func (s *State) action(e *Effect) (Action, error) {
	def, err := s.TaskDef(e)
	if err != nil {
		return Action{}, err
	}
	return Action{
		EffectID: e.EffectID, InvocationKey: e.InvocationKey, Kind: e.Kind, Label: e.Label, Labels: e.Labels,
		TaskDef: def, TaskID: e.TaskID, StepID: e.StepID, TaskDefRef: e.TaskDefRef, RequestedAt: e.RequestedAt,
	}, nil
}

// Actions lists the pending effects as actions.
func (s *State) Actions() ([]Action, error) {
	var acts []Action
	for _, e := range s.Pending() {
		a, err := s.action(e)
		if err != nil {
			return nil, err
		}
		acts = append(acts, a)
	}
	return acts, nil
}

func sleepTarget(def json.RawMessage) (int64, bool) {
	var d struct {
		Sleep struct {
			TargetEpochMs *int64 `json:"targetEpochMs"`
		} `json:"sleep"`
		Metadata struct {
			TargetEpochMs *int64 `json:"targetEpochMs"`
		} `json:"metadata"`
	}
	if json.Unmarshal(def, &d) != nil {
		return 0, false
	}
	if d.Sleep.TargetEpochMs != nil {
		return *d.Sleep.TargetEpochMs, true
	}
	if d.Metadata.TargetEpochMs != nil {
		return *d.Metadata.TargetEpochMs, true
	}
	return 0, false
}

// wakeSleeps resolves the sleep effects whose time has come.
func (s *State) wakeSleeps(now time.Time) error {
	for _, e := range s.Pending() {
		if e.Kind != "sleep" {
			continue
		}
		def, err := s.TaskDef(e)
		if err != nil {
			return err
		}
		if t, ok := sleepTarget(def); ok && t <= now.UnixMilli() {
			v, _ := json.Marshal(map[string]any{"sleptUntilEpochMs": t})
			if _, err := post(s, e, PostOptions{Status: "ok", Value: v}); err != nil {
				return err
			}
		}
	}
	return nil
}
