package natsstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
	err := s.retry(ctx, func(ctx context.Context) error {
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
		err := s.retry(ctx, func(ctx context.Context) error {
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

// ReconcileAtStart as WorkOptions.Reconcile reconciles once, at start.
const ReconcileAtStart time.Duration = -1

// WorkOptions tune Work.
type WorkOptions struct {
	Kinds []string // the kinds this worker carries out (default shell)
	Max   int      // stop after this many effects; 0 = until ctx ends
	// AckWait is how long an effect may go without a sign of life before
	// the queue gives it to another worker (default 30s; a worker signals
	// every third of it while an effect runs).
	AckWait time.Duration
	// Reconcile is how often the worker looks for pending remote effects
	// of its kinds that are not on the queue (a writer died between its
	// commit and its enqueue) and enqueues them: at start and then every
	// Reconcile (default 1m; ReconcileAtStart: at start only; other
	// negative values: never).
	Reconcile time.Duration
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
	// Sorted and without repeats, so that workers of the same kinds name
	// the same consumer whatever order --kinds gives them in.
	o.Kinds = slices.Compact(slices.Sorted(slices.Values(o.Kinds)))
	var filters []string
	for _, k := range o.Kinds {
		if err := CheckKind(k); err != nil {
			return 0, err
		}
		filters = append(filters, WorkPrefix+k)
	}
	ws, err := s.workStream(ctx)
	if err != nil {
		return 0, err
	}
	// Workers of the same kinds share one durable consumer: the queue
	// gives each effect to one of them.
	sets, err := kindSets(ctx, ws)
	if err != nil {
		return 0, fmt.Errorf("work queue consumer: %w", err)
	}
	cons, err := ws.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: consumerFor(o.Kinds, sets), FilterSubjects: filters,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: o.AckWait, MaxDeliver: -1,
		InactiveThreshold: consumerIdle,
	})
	if err != nil {
		return 0, fmt.Errorf("work queue consumer: %w", overlapErr(o.Kinds, sets, err))
	}
	if o.Reconcile == 0 {
		o.Reconcile = time.Minute
	}
	rec := newReconciler()
	var reconciled time.Time
	done := 0
	for o.Max == 0 || done < o.Max {
		if ctx.Err() != nil {
			return done, nil
		}
		if reconciled.IsZero() && o.Reconcile == ReconcileAtStart || o.Reconcile > 0 && (reconciled.IsZero() || time.Since(reconciled) >= o.Reconcile) {
			reconciled = time.Now()
			if _, err := rec.pass(ctx, s, o.Kinds, o.Log); err != nil && ctx.Err() == nil {
				// The next pass goes on from where this one stopped.
				fmt.Fprintf(o.Log, "sitter worker: reconcile: %v\n", err)
			}
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

// consumerIdle is how long the queue keeps a set of kinds' consumer once
// no worker of it pulls: the server then removes it, and its kinds are
// free for another set (the items stay on the queue, for the next
// consumer of their kind).
var consumerIdle = 10 * time.Minute

// kindSets lists the work queue's consumers: the kinds of each (sorted),
// by consumer name.
func kindSets(ctx context.Context, ws jetstream.Stream) (map[string][]string, error) {
	sets := map[string][]string{}
	list := ws.ListConsumers(ctx)
	for c := range list.Info() {
		var kinds []string
		for _, f := range append([]string{c.Config.FilterSubject}, c.Config.FilterSubjects...) {
			if k, ok := strings.CutPrefix(f, WorkPrefix); ok {
				kinds = append(kinds, k)
			}
		}
		sets[c.Name] = slices.Sorted(slices.Values(kinds))
	}
	return sets, list.Err()
}

// consumerFor names the durable consumer of the workers of kinds (sorted,
// without repeats): the store's consumer of that same set, whatever it
// was named (releases before this one joined the kinds typed with "-", in
// the order typed), else sitter-worker-<kinds joined with ",">, with a
// hash of the set after it when another set holds that name.
func consumerFor(kinds []string, sets map[string][]string) string {
	for _, n := range slices.Sorted(maps.Keys(sets)) {
		if slices.Equal(sets[n], kinds) {
			return n
		}
	}
	name := "sitter-worker-" + strings.Join(kinds, ",")
	if _, taken := sets[name]; taken {
		sum := sha256.Sum256([]byte(WorkPrefix + strings.Join(kinds, "\n"+WorkPrefix)))
		name += "-" + hex.EncodeToString(sum[:4])
	}
	return name
}

// CheckKind refuses what cannot be an effect kind of the work queue (a
// subject token).
func CheckKind(k string) error {
	if !isToken64(k) {
		return fmt.Errorf("--kinds: %q is not a kind: a kind is letters, digits, - and _ (at most 64)", k)
	}
	return nil
}

// overlapErr explains the queue's refusal of a consumer whose subjects
// overlap another's (a work queue gives each subject to one consumer):
// it names the kinds of the consumers in the way (sets, as listed before
// the refusal), which outlive their workers.
func overlapErr(kinds []string, sets map[string][]string, err error) error {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10100 /* filtered consumer not unique on workqueue stream */ {
		return err
	}
	var others []string
	for _, n := range slices.Sorted(maps.Keys(sets)) {
		if slices.ContainsFunc(sets[n], func(k string) bool { return slices.Contains(kinds, k) }) {
			others = append(others, "--kinds "+strings.Join(sets[n], ","))
		}
	}
	if len(others) == 0 {
		return err
	}
	return fmt.Errorf("--kinds %s overlaps the kinds of this store's workers (%s): a kind is taken by one set of kinds on a store, so run this worker with the same --kinds, or with kinds no worker takes; a set's kinds are free %v after its last worker stops (%w)", strings.Join(kinds, ","), strings.Join(others, "; "), consumerIdle, err)
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

// reconciler puts back on the queue the remote effects a writer committed
// but never enqueued (it died between its commit and its enqueue). It
// reads the run stream's headers from where its last pass stopped: every
// tasks/<id>/task.json put makes the effect a candidate until its
// result.json is put (a post is under way or done) or a read of its run
// shows it resolved, not remote, or of another kind. A pass loads the
// runs of the candidates, lists the items on the queue, and enqueues the
// pending effects of its kinds that have none.
type reconciler struct {
	next    uint64                     // the first run stream sequence not read yet
	pending map[string]map[string]bool // run id: effect ids
}

func newReconciler() *reconciler {
	return &reconciler{next: 1, pending: map[string]map[string]bool{}}
}

// taskFile splits tasks/<id>/<name> into id and name.
func taskFile(rel string) (id, name string, ok bool) {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || parts[0] != run.TasksDir {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// scan reads the run stream's headers after r.next.
func (r *reconciler) scan(ctx context.Context, s *Store) error {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return err
	}
	last := info.State.LastSeq
	if last < r.next {
		return nil
	}
	cons, err := s.js.OrderedConsumer(ctx, StreamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{SubjectPrefix + "*"}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq: r.next, HeadersOnly: true,
		// One consumer a pass: the server drops it soon after.
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return err
	}
	// A fetch returns when its batch is full or its wait is over: ask for
	// what is left (the consumer's pending count), at most 512 at a time.
	left := last - r.next + 1
	for r.next <= last && left > 0 {
		batch, err := cons.Fetch(int(min(left, 512)), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return err
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			md, err := msg.Metadata()
			if err != nil {
				return err
			}
			r.next = md.Sequence.Stream + 1
			left = md.NumPending
			id, name, ok := taskFile(msg.Headers().Get(hdrPath))
			if !ok {
				continue
			}
			runID := strings.TrimPrefix(msg.Subject(), SubjectPrefix)
			switch {
			case name == "task.json" && msg.Headers().Get(hdrOp) != "delete":
				if r.pending[runID] == nil {
					r.pending[runID] = map[string]bool{}
				}
				r.pending[runID][id] = true
			case name == "task.json" || name == "result.json":
				delete(r.pending[runID], id)
				if len(r.pending[runID]) == 0 {
					delete(r.pending, runID)
				}
			}
		}
		if err := batch.Error(); err != nil {
			return err
		}
		if got == 0 {
			break // the rest on the next pass
		}
	}
	return nil
}

// queued lists the items on the queue's subjects of kinds, as
// "<runId>.<effectId>".
func (s *Store) queued(ctx context.Context, kinds []string) (map[string]bool, error) {
	ws, err := s.workStream(ctx)
	if err != nil {
		return nil, err
	}
	items := map[string]bool{}
	for _, k := range kinds {
		for seq := uint64(1); ; {
			m, err := ws.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(WorkPrefix+k))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				break
			}
			if err != nil {
				return nil, err
			}
			var it WorkItem
			if json.Unmarshal(m.Data, &it) == nil {
				items[it.RunID+"."+it.EffectID] = true
			}
			seq = m.Sequence + 1
		}
	}
	return items, nil
}

// pass runs one reconciliation for kinds and returns how many effects
// it enqueued.
func (r *reconciler) pass(ctx context.Context, s *Store, kinds []string, log io.Writer) (int, error) {
	if err := r.scan(ctx, s); err != nil {
		return 0, fmt.Errorf("read the run stream: %w", err)
	}
	// The runs first, then the queue: an item acknowledged in between
	// belongs to an effect that is resolved by then, and its re-enqueue
	// is dropped (by the duplicate window, or by the worker that finds
	// the effect resolved).
	acts := map[string][]run.Action{}
	for _, runID := range slices.Sorted(maps.Keys(r.pending)) {
		ids := r.pending[runID]
		err := store.Do(ctx, s, runID, false, func(dir string) error {
			st, err := run.Load(dir)
			if err != nil {
				return err
			}
			for id := range ids {
				e := st.Effect(id)
				if e == nil {
					continue // its EFFECT_REQUESTED is not in yet
				}
				if e.Status != run.Requested || !slices.Contains(kinds, e.Kind) {
					delete(ids, id)
					continue
				}
				def, err := st.TaskDef(e)
				if err != nil {
					return err
				}
				if !Remote(def) {
					delete(ids, id)
					continue
				}
				acts[runID] = append(acts[runID], run.Action{EffectID: id, Kind: e.Kind, TaskDef: def})
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("read run %s: %w", runID, err)
		}
		if len(ids) == 0 {
			delete(r.pending, runID)
		}
	}
	if len(acts) == 0 {
		return 0, nil
	}
	onQueue, err := s.queued(ctx, kinds)
	if err != nil {
		return 0, fmt.Errorf("list the work queue: %w", err)
	}
	n := 0
	for _, runID := range slices.Sorted(maps.Keys(acts)) {
		var missing []run.Action
		for _, a := range acts[runID] {
			if !onQueue[runID+"."+a.EffectID] {
				missing = append(missing, a)
			}
		}
		k, err := s.Enqueue(ctx, runID, missing)
		n += k
		if err != nil {
			return n, err
		}
		for _, a := range missing {
			fmt.Fprintf(log, "sitter worker: effect %s of run %s was pending and not on the queue: enqueued\n", a.EffectID, runID)
		}
	}
	return n, nil
}
