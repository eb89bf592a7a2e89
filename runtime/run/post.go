package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"sitter.dev/sitter/runtime/journal"
)

// PostOptions is a task result.
type PostOptions struct {
	Status     string          // "ok" or "error"
	Value      json.RawMessage // for ok
	Error      json.RawMessage // for error; a default error when empty
	Stdout     *string
	Stderr     *string
	StartedAt  string
	FinishedAt string
}

// PostResult says where a result went.
type PostResult struct {
	Status    string `json:"status"`
	EffectID  string `json:"effectId"`
	ResultRef string `json:"resultRef"`
	StdoutRef string `json:"stdoutRef,omitempty"`
	StderrRef string `json:"stderrRef,omitempty"`
	// StartedAt and FinishedAt are the times the result records.
	StartedAt  string `json:"startedAt"`
	FinishedAt string `json:"finishedAt"`
	Seq        int    `json:"seq"`
}

// ErrAlreadyResolved is returned when an effect already has a result.
var ErrAlreadyResolved = errors.New("already resolved")

// Post records the result of a pending effect: tasks/<id>/{result.json,
// stdout.log, stderr.log}, then EFFECT_RESOLVED. The result counts once
// the event is in the journal; a crash before that leaves the effect
// pending and the post can be repeated.
func Post(ctx context.Context, dir, effectID string, o PostOptions) (*PostResult, error) {
	if o.Status != "ok" && o.Status != "error" {
		return nil, fmt.Errorf("--status must be ok or error, not %q", o.Status)
	}
	if o.Status == "ok" && len(o.Value) == 0 {
		return nil, errors.New("an ok result needs --value FILE or --value-inline JSON")
	}
	if o.Status == "ok" && !json.Valid(o.Value) {
		return nil, errors.New("the value is not valid JSON")
	}
	if o.Status == "error" {
		if len(o.Error) == 0 || string(o.Error) == "null" {
			o.Error = json.RawMessage(`{"name":"Error","message":"Task reported failure"}`)
		}
		var err error
		if o.Error, err = serializeEffectError(o.Error); err != nil {
			return nil, err
		}
	}
	l, err := Lock(ctx, dir, "sitter:task-post")
	if err != nil {
		return nil, err
	}
	defer l.Release()
	// Through the replay cache: only the events journaled since it are
	// read, and l.Append brings it up to date with the result, so the
	// stop check that follows a post reads no journal file again.
	r, err := l.replayed(true)
	if err != nil {
		return nil, err
	}
	e := r.s.Effect(effectID)
	if e == nil {
		return nil, unknownEffect(effectID, dir)
	}
	if e.Status != Requested {
		return nil, notRequested(effectID, e.Status)
	}
	return post(dir, e, o, l.Append)
}

// post writes a result of the run at dir, and add journals its
// EFFECT_RESOLVED; the caller holds the lock.
func post(dir string, e *Effect, o PostOptions, add func(typ string, data any) (journal.Event, error)) (*PostResult, error) {
	t := now()
	if o.StartedAt == "" {
		o.StartedAt = t
	}
	if o.FinishedAt == "" {
		o.FinishedAt = t
	}
	taskDir := TasksDir + "/" + e.EffectID
	res := &PostResult{Status: o.Status, EffectID: e.EffectID, ResultRef: taskDir + "/result.json", StartedAt: o.StartedAt, FinishedAt: o.FinishedAt}
	if o.Stdout != nil {
		res.StdoutRef = taskDir + "/stdout.log"
		if err := journal.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(res.StdoutRef)), []byte(*o.Stdout)); err != nil {
			return nil, err
		}
	}
	if o.Stderr != nil {
		res.StderrRef = taskDir + "/stderr.log"
		if err := journal.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(res.StderrRef)), []byte(*o.Stderr)); err != nil {
			return nil, err
		}
	}
	var value, errv any
	if o.Status == "ok" {
		value = o.Value
	} else {
		errv = o.Error
	}
	b, err := indent(obj{
		{"schemaVersion", "2026.01.results-v1"}, {"effectId", e.EffectID}, {"taskId", e.TaskID},
		{"invocationKey", e.InvocationKey}, {"status", o.Status}, {"result", value}, {"error", errv},
		{"stdoutRef", res.StdoutRef}, {"stderrRef", res.StderrRef},
		{"startedAt", o.StartedAt}, {"finishedAt", o.FinishedAt}, {"value", value},
	})
	if err != nil {
		return nil, err
	}
	if err := journal.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(res.ResultRef)), b); err != nil {
		return nil, err
	}
	// resultDigest (sitter's; the SDK ignores it) lets a read of the
	// result notice the file was changed after it was posted.
	digest := resultDigest(b)
	ev, err := add(journal.EffectResolved, obj{
		{"effectId", e.EffectID}, {"status", o.Status}, {"resultRef", res.ResultRef}, {"error", errv},
		{"stdoutRef", res.StdoutRef}, {"stderrRef", res.StderrRef},
		{"startedAt", o.StartedAt}, {"finishedAt", o.FinishedAt}, {"resultDigest", digest},
	})
	if err != nil {
		return nil, err
	}
	e.Status = ResolvedOK
	if o.Status == "error" {
		e.Status = ResolvedError
		e.Error = o.Error
	}
	e.ResultRef, e.StdoutRef, e.StderrRef, e.ResolvedAt, e.ResultDigest = res.ResultRef, res.StdoutRef, res.StderrRef, ev.RecordedAt, digest
	res.Seq = ev.Seq
	return res, nil
}

// resultDigest is how EFFECT_RESOLVED records a result file's bytes.
func resultDigest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
