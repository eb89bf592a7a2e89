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
	kv   jetstream.KeyValue
	key  string
	stop chan struct{}
	done sync.WaitGroup
	mu   sync.Mutex
	rev  uint64
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
		err := retry(ctx, func(ctx context.Context) error {
			var err error
			rev, err = s.leases.Create(ctx, id, val)
			return err
		})
		if err == nil {
			l := &lease{kv: s.leases, key: id, stop: make(chan struct{}), rev: rev}
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
		l.mu.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), every)
		rev, err := l.kv.Update(ctx, l.key, val, l.rev)
		cancel()
		if err == nil {
			l.rev = rev
		}
		l.mu.Unlock()
		// A renewal that fails leaves the lease to expire: a commit after
		// that is still checked by the expected sequence.
	}
}

// release deletes the key if this holder still has it.
func (l *lease) release() error {
	close(l.stop)
	l.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !wrongLastSeq(err) && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("release lease of run %s: %w", l.key, err)
	}
	return nil
}
