package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	InputsRef      string          `json:"inputsRef,omitempty"`
	RequestedAt    string          `json:"requestedAt,omitempty"`
	SchedulerHints map[string]any  `json:"schedulerHints,omitempty"`
}

// IterateResult is the answer of one iteration: the SDK's `run:iterate
// --json` fields, then sitter's own, which the SDK does not print.
type IterateResult struct {
	Iteration       int             `json:"iteration"`
	IterationCount  int             `json:"iterationCount"`
	Status          string          `json:"status"` // waiting, completed, failed, halted
	Action          string          `json:"action"`
	Reason          string          `json:"reason"`
	CompletionProof string          `json:"completionProof,omitempty"`
	NextActions     []Action        `json:"nextActions,omitempty"`
	Metadata        IterateMetadata `json:"metadata"`

	// Sitter's: the output of a completed run, the error of a failed one,
	// the reason of a halt (ctx.halt, which the SDK lacks).
	Output     json.RawMessage `json:"output,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
	HaltReason string          `json:"haltReason,omitempty"`
	// RuntimeError is true when the process could not be run at all (the
	// run itself is not failed: fix the cause and iterate again).
	RuntimeError bool     `json:"runtimeError,omitempty"`
	CodeChanged  bool     `json:"processCodeChanged,omitempty"`
	Logs         []string `json:"logs,omitempty"`
}

// IterateMetadata is the SDK's iterate metadata.
type IterateMetadata struct {
	RunID     string `json:"runId"`
	ProcessID string `json:"processId"`
	// HookStatus is what the SDK says of its runtime hooks (on-iteration-*
	// scripts). sitter runs none: "no-hooks-configured", except for a run
	// that completes or fails, where the SDK always says "executed".
	HookStatus string `json:"hookStatus"`
}

// The SDK's hook statuses and its action when no hook decided one.
const (
	hooksNone     = "no-hooks-configured"
	hooksExecuted = "executed"
	actionNone    = "none"
)

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
	res, err := s.begin()
	if err != nil {
		return nil, err
	}
	if s.Terminal() {
		return s.ended(res), nil
	}
	if res.CodeChanged, err = s.checkHash(); err != nil {
		return nil, err
	}
	now := o.Now()
	if err := s.wakeSleeps(now); err != nil {
		return nil, err
	}
	in, err := s.replayInput(now)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, o.Timeout)
	a, err := replayJS(rctx, in, o.Stderr)
	cancel()
	if rerr, ok := err.(*runtimeError); ok {
		return s.runtimeFailure(res, rerr)
	}
	if err != nil {
		return nil, err
	}
	res.Logs = a.Logs
	if err := s.settle(a, res); err != nil {
		return nil, err
	}
	return res, nil
}

// begin starts an iteration as the SDK does: the iteration count from the
// state snapshot as it was, then the snapshot brought up to date.
func (s *State) begin() (*IterateResult, error) {
	c, cerr := ReadStateCache(s.Dir)
	if cerr != nil {
		c = nil
	}
	n := s.iterationCount(c)
	res := &IterateResult{
		Iteration: n + 1, IterationCount: n, Action: actionNone,
		Metadata: IterateMetadata{RunID: s.Meta.RunID, ProcessID: s.Meta.ProcessID, HookStatus: hooksNone},
	}
	if why := s.staleReason(c, cerr); why != "" {
		if err := s.Snapshot(why); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// appendEvent journals one event and keeps s.Journal current.
func (s *State) appendEvent(typ string, data any) error {
	_, err := s.add(typ, data)
	return err
}

// add is appendEvent with the event journaled.
func (s *State) add(typ string, data any) (journal.Event, error) {
	ev, err := journal.Append(filepath.Join(s.Dir, JournalDir), s.Journal.Head(), typ, data)
	if err != nil {
		return ev, err
	}
	s.Journal.Events = append(s.Journal.Events, ev)
	return ev, nil
}

// checkHash journals a changed process file and says whether it changed.
// A run the SDK created has no hash yet: the first one sitter sees is
// journaled (without a previous hash) so later changes are detected.
func (s *State) checkHash() (bool, error) {
	hash, err := HashFile(s.Meta.EntryPath(s.Dir))
	if err != nil {
		return false, fmt.Errorf("process file of run %s: %w", s.Meta.RunID, err)
	}
	if hash == s.ProcessHash {
		return false, nil
	}
	err = s.appendEvent(journal.ProcessCodeHashChanged, obj{{"path", s.Meta.Entrypoint.ImportPath}, {"previousHash", s.ProcessHash}, {"hash", hash}})
	changed := s.ProcessHash != ""
	s.ProcessHash = hash
	return changed, err
}

// replayInput is what the runner needs to replay the process once.
func (s *State) replayInput(now time.Time) (replayInput, error) {
	entry := s.Meta.EntryPath(s.Dir)
	in := replayInput{
		Entry: entry, ExportName: s.Meta.Entrypoint.ExportName, ProcessID: s.Meta.ProcessID,
		RunID: s.Meta.RunID, RunDir: s.Dir, Now: now.UnixMilli(),
		Results: map[string]map[string]json.RawMessage{}, Requested: map[string]string{},
		Shim: shimMode(entry),
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, InputsFile)); err == nil {
		in.Inputs = b
	}
	for _, e := range s.Effects {
		if e.Status == Requested {
			in.Requested[e.InvocationKey] = e.EffectID
			continue
		}
		r, err := s.Result(e)
		if err != nil {
			return in, err
		}
		in.Results[e.InvocationKey] = r
	}
	return in, nil
}

// runtimeFailure journals a process that could not be run at all.
func (s *State) runtimeFailure(res *IterateResult, rerr *runtimeError) (*IterateResult, error) {
	errv := obj{{"name", "ProcessRuntimeError"}, {"message", rerr.msg}, {"stderr", rerr.stderr}}
	if err := s.appendEvent(journal.ProcessRuntimeError, obj{{"error", errv}}); err != nil {
		return nil, err
	}
	res.Status, res.Reason, res.RuntimeError = StatusFailed, "runtime-error", true
	res.Error, _ = marshal(errv)
	return res, nil
}

// settle journals what the replay answered and fills res.
func (s *State) settle(a *replayAnswer, res *IterateResult) error {
	switch a.Status {
	case "waiting":
		return s.waiting(a.Effects, res)
	case "completed":
		return s.completed(a.Output, res)
	case "failed":
		if err := s.appendEvent(journal.RunFailed, obj{{"error", a.Error}}); err != nil {
			return err
		}
		s.Status, s.Failure = StatusFailed, a.Error
		s.ended(res)
		return s.Snapshot(RebuildFailure)
	case "halted":
		if err := s.appendEvent(journal.RunHalted, obj{{"reason", a.Reason}}); err != nil {
			return err
		}
		s.Status, s.HaltReason = StatusHalted, a.Reason
		s.ended(res)
		return s.Snapshot(RebuildHalt)
	}
	return fmt.Errorf("the JS runner answered an unknown status %q", a.Status)
}

// waiting journals the new effects and lists every pending one. The SDK
// writes no snapshot here: the next iteration finds it stale.
func (s *State) waiting(effects []jsEffect, res *IterateResult) error {
	for _, je := range effects {
		act, err := s.pendingAction(je)
		if err != nil {
			return err
		}
		act.SchedulerHints["pendingCount"] = len(effects)
		res.NextActions = append(res.NextActions, act)
	}
	res.Status = StatusWaiting
	res.Reason = waitingReason(res.NextActions)
	return nil
}

// pendingAction is the action of an effect the process waits for,
// journaling it first when it is new. Like the SDK, a new effect shows
// the definition the process built, one requested before its task.json.
func (s *State) pendingAction(je jsEffect) (Action, error) {
	e := s.byKey[je.Key]
	var def json.RawMessage
	switch {
	case e == nil && je.Existing:
		return Action{}, fmt.Errorf("the runner named effect %s pending, but the journal does not know it", je.Key)
	case e == nil:
		var err error
		if e, err = s.request(je); err != nil {
			return Action{}, err
		}
		def = je.TaskDef
	}
	act, err := s.action(e, def)
	if err != nil {
		return Action{}, err
	}
	if je.ParallelGroupID != "" {
		act.SchedulerHints["parallelGroupId"] = je.ParallelGroupID
	}
	return act, nil
}

// waitingReason is the SDK's reason for a waiting iteration, from the
// kinds of the pending effects.
func waitingReason(acts []Action) string {
	kinds := map[string]bool{}
	for _, a := range acts {
		kinds[a.Kind] = true
	}
	if len(kinds) == 0 {
		return "no-pending-effects"
	}
	if len(kinds) > 1 {
		return "mixed-pending:" + strings.Join(slices.Sorted(maps.Keys(kinds)), ",")
	}
	switch k := acts[0].Kind; k {
	case "breakpoint":
		return "breakpoint-waiting"
	case "sleep":
		return "sleep-waiting"
	default:
		return k + "-pending"
	}
}

// completed writes the output and journals RUN_COMPLETED.
func (s *State) completed(out json.RawMessage, res *IterateResult) error {
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	b, err := indent(out)
	if err != nil {
		return err
	}
	if err := journal.WriteFileAtomic(filepath.Join(s.Dir, filepath.FromSlash(OutputRef)), b); err != nil {
		return err
	}
	if err := s.appendEvent(journal.RunCompleted, obj{{"outputRef", OutputRef}}); err != nil {
		return err
	}
	s.Status = StatusCompleted
	s.ended(res)
	res.Output = out
	return s.Snapshot(RebuildCompletion)
}

// ended describes a run that has ended: the SDK's reason is its status.
func (s *State) ended(res *IterateResult) *IterateResult {
	res.Status, res.Reason = s.Status, s.Status
	switch s.Status {
	case StatusCompleted:
		res.Metadata.HookStatus = hooksExecuted
		res.CompletionProof = s.Meta.CompletionProof
		if b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(OutputRef))); err == nil && json.Valid(b) {
			res.Output = b
		}
	case StatusFailed:
		res.Metadata.HookStatus = hooksExecuted
		res.Error = s.Failure
	case StatusHalted:
		res.HaltReason = s.HaltReason
	}
	return res
}

// request journals a new effect: task.json, then EFFECT_REQUESTED.
func (s *State) request(je jsEffect) (*Effect, error) {
	if je.EffectID == "" {
		je.EffectID = journal.NewULID("")
	}
	if _, ok := journal.ParseULID(je.EffectID); !ok {
		return nil, fmt.Errorf("effect id %q from the runner is not a ULID", je.EffectID)
	}
	if s.byID[je.EffectID] != nil {
		return nil, fmt.Errorf("effect id %s is already used", je.EffectID)
	}
	if err := writeTaskFile(s.Dir, je); err != nil {
		return nil, err
	}
	e := &Effect{
		EffectID: je.EffectID, InvocationKey: je.Key, InvocationHash: sha256Hex(je.Key), StepID: je.StepID,
		TaskID: je.TaskID, Kind: je.Kind, Label: je.Label, Labels: je.Labels,
		TaskDefRef: TasksDir + "/" + je.EffectID + "/task.json", Status: Requested,
	}
	if err := s.appendEvent(journal.EffectRequested, obj{
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

// writeTaskFile writes tasks/<effectId>/task.json as the SDK does: the
// definition (keys sorted, labels deduplicated and sorted), then the
// SDK's own keys.
func writeTaskFile(dir string, je jsEffect) error {
	var def map[string]json.RawMessage
	if err := json.Unmarshal(je.TaskDef, &def); err != nil || def == nil {
		return fmt.Errorf("task %s: the task definition is not an object", je.TaskID)
	}
	task := obj{}
	for _, k := range sortedRaw(def) {
		switch k {
		case "schemaVersion", "effectId", "taskId", "invocationKey", "stepId", "inputs":
			continue
		case "labels":
			task = append(task, kv{k, sortedLabels(def[k])})
			continue
		}
		task = append(task, kv{k, def[k]})
	}
	task = append(task, kv{"schemaVersion", "2026.01.tasks-v1"}, kv{"effectId", je.EffectID}, kv{"taskId", je.TaskID},
		kv{"invocationKey", je.Key}, kv{"stepId", je.StepID}, kv{"inputs", nonNull(je.Args)})
	b, err := indent(task)
	if err != nil {
		return err
	}
	return journal.WriteFileAtomic(filepath.Join(dir, TasksDir, je.EffectID, "task.json"), b)
}

// sortedLabels is a definition's labels as task.json keeps them: the
// non-empty strings, trimmed, deduplicated and sorted; none is no key.
func sortedLabels(raw json.RawMessage) []string {
	var vals []any
	json.Unmarshal(raw, &vals)
	var out []string
	for _, v := range vals {
		if l, ok := v.(string); ok && strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimSpace(l))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func nonNull(r json.RawMessage) any {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

// action is the nextActions entry of a pending effect. def is the
// definition to show, nil for the stored task.json.
func (s *State) action(e *Effect, def json.RawMessage) (Action, error) {
	if def == nil {
		var err error
		if def, err = s.TaskDef(e); err != nil {
			return Action{}, err
		}
	}
	hints := map[string]any{}
	if t, ok := sleepTarget(def); ok {
		hints["sleepUntilEpochMs"] = t
	}
	return Action{
		EffectID: e.EffectID, InvocationKey: e.InvocationKey, Kind: e.Kind, Label: e.Label, Labels: e.Labels,
		TaskDef: def, TaskID: e.TaskID, StepID: e.StepID, TaskDefRef: e.TaskDefRef, InputsRef: e.InputsRef,
		RequestedAt: e.RequestedAt, SchedulerHints: hints,
	}, nil
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
			if _, err := post(s.Dir, e, PostOptions{Status: "ok", Value: v}, s.add); err != nil {
				return err
			}
		}
	}
	return nil
}
