package natsstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"sitter.dev/sitter/runtime/journal"
)

// lease is a held writer lease: a key of the lease bucket, renewed at a
// third of its lifetime until released. A holder that dies stops
// renewing and the bucket's TTL frees the key.
type lease struct {
	c    *Conn
	kv   jetstream.KeyValue
	key  string
	stop chan struct{}
	// ctx ends a renewal under way: release calls it off when the retry
	// budget is spent.
	ctx    context.Context
	cancel context.CancelFunc
	done   sync.WaitGroup
	mu     sync.Mutex
	rev    uint64
}

// acquireLease waits for run id's lease, as journal.Acquire waits for a
// run lock: until the context ends, else journal.DefaultLockWait.
func (s *Store) acquireLease(ctx context.Context, id string) (*lease, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, journal.DefaultLockWait)
		defer cancel()
	}
	val := []byte(s.o.Owner + " " + time.Now().UTC().Format(time.RFC3339Nano))
	wait := 10 * time.Millisecond
	for {
		var rev uint64
		err := s.retry(ctx, func(ctx context.Context) error {
			var err error
			rev, err = s.leases.Create(ctx, id, val)
			return err
		})
		if err == nil {
			l := &lease{c: s.Conn, kv: s.leases, key: id, stop: make(chan struct{}), rev: rev}
			l.ctx, l.cancel = context.WithCancel(context.Background())
			l.done.Add(1)
			go l.renew(s.o.LeaseTTL/3, val)
			return l, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, fmt.Errorf("run %s: lease: %w", id, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			holder := ""
			if e, err := s.leases.Get(context.Background(), id); err == nil {
				holder = " (held by " + string(e.Value()) + ")"
			}
			return nil, fmt.Errorf("run %s: lease%s: %w", id, holder, journal.ErrLockTimeout)
		case <-t.C:
		}
		wait = min(wait*2, 250*time.Millisecond)
	}
}

func (l *lease) renew(every time.Duration, val []byte) {
	defer l.done.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.c.spent() {
			continue // the verb is failing: let the lease expire
		}
		// One attempt, within the retry budget. A renewal that fails
		// leaves the lease to expire: a commit after that is still
		// checked by the expected sequence.
		l.mu.Lock()
		l.c.attempt(l.ctx, min(every, attemptTimeout), func(ctx context.Context) error {
			rev, err := l.kv.Update(ctx, l.key, val, l.rev)
			if err == nil {
				l.rev = rev
			}
			return err
		})
		l.mu.Unlock()
	}
}

// release deletes the key if this holder still has it: one attempt,
// within the connection's retry budget. When the store has not answered
// for RetryFor the verb is failing already: the key is left to expire
// with the bucket's TTL, not waited on.
func (l *lease) release() error {
	close(l.stop)
	defer l.cancel()
	// A renewal under way is waited for (the delete needs the revision it
	// gets), but not past the budget: then it is called off.
	left, _ := l.c.left()
	t := time.AfterFunc(max(left, 0), l.cancel)
	l.done.Wait()
	t.Stop()
	if l.c.spent() {
		return nil
	}
	err := l.c.attempt(context.Background(), attemptTimeout, func(ctx context.Context) error {
		return l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
	})
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !wrongLastSeq(err) && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("release lease of run %s: %w", l.key, err)
	}
	return nil
}
