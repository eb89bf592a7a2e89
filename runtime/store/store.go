// Package store is where runs live: the local runs directory, the default
// and the babysitter SDK's layout on disk, or a shared store that several
// machines drive one run from (runtime/store/natsstore, NATS JetStream).
//
// The run engine (runtime/run) works on a run directory. A store hands a
// verb one (Checkout), and after a verb that writes, makes what it wrote
// durable where the run lives (Commit). A run in the local runs directory
// goes through no store: its verbs run the engine on the directory itself.
// A shared store materializes the run in a local
// cache directory and publishes the files the verb added or changed, in
// the order it must: a commit that another writer beat is refused with
// ErrConflict, and the verb is run again on a fresh checkout (Do).
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Store is where runs live.
type Store interface {
	// Checkout makes the run ref names readable as a run directory. With
	// write, the checkout also holds the run's writer lease until Release.
	Checkout(ctx context.Context, ref string, write bool) (Checkout, error)
	// Close drops the store's connection.
	Close() error
}

// Checkout is one verb's view of a run.
type Checkout interface {
	// Dir is a run directory in the SDK layout.
	Dir() string
	// Commit makes what was written in Dir since the checkout durable in
	// the store; ErrConflict when another writer committed first.
	Commit(ctx context.Context) error
	// Release ends the checkout (and its lease); what was not committed
	// is dropped.
	Release() error
}

// ErrConflict is a commit that lost: another writer appended to the run
// after this checkout was taken. Nothing of the losing commit counts.
var ErrConflict = errors.New("another writer appended to the run first")

// MaxAttempts bounds how often Do runs a verb that keeps losing.
const MaxAttempts = 8

// Do runs fn on a checkout of ref, commits what it wrote when write is
// set, and runs it again on a fresh checkout when the commit lost to
// another writer: the loser re-reads the run and replays its step on top
// of the winner's, so the journal never forks. fn must only write through
// the run directory (its answer is printed after Do returns).
func Do(ctx context.Context, s Store, ref string, write bool, fn func(dir string) error) error {
	for attempt := 1; ; attempt++ {
		co, err := s.Checkout(ctx, ref, write)
		if err != nil {
			return err
		}
		err = fn(co.Dir())
		if err == nil && write {
			err = co.Commit(ctx)
		}
		if rerr := co.Release(); err == nil && rerr != nil {
			err = rerr
		}
		if !errors.Is(err, ErrConflict) || attempt == MaxAttempts {
			if errors.Is(err, ErrConflict) {
				return fmt.Errorf("run %s: %w (%d attempts)", ref, err, attempt)
			}
			return err
		}
	}
}

// Scheme is the scheme of a store URL ("" for none, the local store).
func Scheme(url string) string {
	s, _, ok := strings.Cut(url, "://")
	if !ok {
		return ""
	}
	return strings.ToLower(s)
}
