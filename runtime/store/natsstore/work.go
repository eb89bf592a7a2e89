package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store"
)

// The work queue of remote effects: one message per effect a process
// marked remote ("remote": true in its task definition), on subject
// sitter.work.<kind>, taken by one worker at a time.
const (
	WorkStream = "SITTER_WORK"
	WorkPrefix = "sitter.work."
)

// WorkItem is one effect to carry out.
type WorkItem struct {
	RunID    string `json:"runId"`
	EffectID string `json:"effectId"`
	Kind     string `json:"kind"`
}

// Remote says whether a task definition asks to be carried out by a
// remote worker.
func Remote(def json.RawMessage) bool {
	var d struct {
		Remote bool `json:"remote"`
	}
	return json.Unmarshal(def, &d) == nil && d.Remote
}

func (s *Store) workStream(ctx context.Context) (jetstream.Stream, error) {
	var st jetstream.Stream
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		st, err = s.js.Stream(ctx, WorkStream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			st, err = s.js.CreateStream(ctx, jetstream.StreamConfig{
				Name: WorkStream, Subjects: []string{WorkPrefix + "*"}, Retention: jetstream.WorkQueuePolicy,
				Storage: jetstream.FileStorage, Replicas: s.o.Replicas, Duplicates: 2 * time.Minute,
				Description: "sitter remote effects: one message per effect, taken by one worker",
			})
		}
		return err
	})
	return st, err
}

// Enqueue puts the pending remote effects among acts on the work queue.
// An effect enqueued again within the duplicate window is stored once; a
// later duplicate reaches a worker, whose post is refused as a second
// post of the effect, and is dropped.
func (s *Store) Enqueue(ctx context.Context, runID string, acts []run.Action) (int, error) {
	n := 0
	for _, a := range acts {
		if !Remote(a.TaskDef) {
			continue
		}
		if !isToken64(a.Kind) {
			return n, fmt.Errorf("effect %s: kind %q cannot name a work queue subject", a.EffectID, a.Kind)
		}
		if _, err := s.workStream(ctx); err != nil {
			return n, err
		}
		b, _ := json.Marshal(WorkItem{runID, a.EffectID, a.Kind})
		err := retry(ctx, func(ctx context.Context) error {
			_, err := s.js.Publish(ctx, WorkPrefix+a.Kind, b, jetstream.WithMsgID(runID+"."+a.EffectID))
			return err
		})
		if err != nil {
			return n, fmt.Errorf("enqueue effect %s: %w", a.EffectID, err)
		}
		n++
	}
	return n, nil
}

// WorkOptions tune Work.
type WorkOptions struct {
	Kinds []string // the kinds this worker carries out (default shell)
	Max   int      // stop after this many effects; 0 = until ctx ends
	// AckWait is how long an effect may go without a sign of life before
	// the queue gives it to another worker (default 30s; a worker signals
	// every third of it while an effect runs).
	AckWait time.Duration
	// Do carries out one effect from its task definition.
	Do  func(ctx context.Context, def json.RawMessage) run.PostOptions
	Log io.Writer
}

// Work takes effects from the queue until ctx ends or o.Max are done:
// each is read from its run, carried out, and its result posted; the
// queue message is acknowledged only after the post counts, so an effect
// whose worker died is given to another (at least once), and a second
// post of an effect is refused (so it is posted once).
func (s *Store) Work(ctx context.Context, o WorkOptions) (int, error) {
	if len(o.Kinds) == 0 {
		o.Kinds = []string{"shell"}
	}
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	var filters []string
	for _, k := range slices.Sorted(slices.Values(o.Kinds)) {
		if !isToken64(k) {
			return 0, fmt.Errorf("--kinds: %q is not a kind", k)
		}
		filters = append(filters, WorkPrefix+k)
	}
	ws, err := s.workStream(ctx)
	if err != nil {
		return 0, err
	}
	// Workers of the same kinds share one durable consumer: the queue
	// gives each effect to one of them.
	cons, err := ws.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "sitter-worker-" + strings.Join(o.Kinds, "-"), FilterSubjects: filters,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: o.AckWait, MaxDeliver: -1,
	})
	if err != nil {
		return 0, fmt.Errorf("work queue consumer: %w", err)
	}
	done := 0
	for o.Max == 0 || done < o.Max {
		if ctx.Err() != nil {
			return done, nil
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if transient(err) {
				continue
			}
			return done, err
		}
		for msg := range batch.Messages() {
			if err := s.carryOut(ctx, msg, o); err != nil {
				if ctx.Err() != nil {
					return done, nil // killed: the queue gives it to another
				}
				fmt.Fprintf(o.Log, "sitter worker: %v\n", err)
				msg.Nak()
				continue
			}
			done++
		}
	}
	return done, nil
}

// carryOut does one effect and acknowledges its message.
func (s *Store) carryOut(ctx context.Context, msg jetstream.Msg, o WorkOptions) error {
	var it WorkItem
	if err := json.Unmarshal(msg.Data(), &it); err != nil || it.RunID == "" || it.EffectID == "" {
		msg.Term() // not a work item: never redeliver
		return fmt.Errorf("work item %q is not one", msg.Data())
	}
	var def json.RawMessage
	pending := false
	err := store.Do(ctx, s, it.RunID, false, func(dir string) error {
		st, err := run.Load(dir)
		if err != nil {
			return err
		}
		e := st.Effect(it.EffectID)
		if e == nil {
			return fmt.Errorf("run %s has no effect %s", it.RunID, it.EffectID)
		}
		if pending = e.Status == run.Requested; pending {
			def, err = st.TaskDef(e)
		}
		return err
	})
	if err != nil {
		return err
	}
	if !pending {
		fmt.Fprintf(o.Log, "sitter worker: effect %s of run %s is already resolved\n", it.EffectID, it.RunID)
		return msg.Ack()
	}
	// Signs of life while the effect runs.
	alive := make(chan struct{})
	go func() {
		t := time.NewTicker(o.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-alive:
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	res := o.Do(ctx, def)
	close(alive)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	err = store.Do(ctx, s, it.RunID, true, func(dir string) error {
		_, err := run.Post(ctx, dir, it.EffectID, res)
		return err
	})
	if err != nil && !alreadyResolved(err) {
		return fmt.Errorf("post effect %s of run %s: %w", it.EffectID, it.RunID, err)
	}
	fmt.Fprintf(o.Log, "sitter worker: effect %s of run %s: %s\n", it.EffectID, it.RunID, res.Status)
	return msg.DoubleAck(ctx)
}

func alreadyResolved(err error) bool {
	return errors.Is(err, run.ErrAlreadyResolved)
}
