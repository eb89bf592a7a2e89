package natsstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/store"
)

// The server goes away in the middle of a writing verb, between its
// checkout and its commit: the verb fails RetryFor after, its lease
// release adding no wait of its own (the key expires with its TTL).
func TestServerGoneMidVerb(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	const retryFor = time.Second
	s := machine(t, srv.ClientURL(), Options{RetryFor: retryFor, LeaseTTL: 3 * time.Second})
	entry := filepath.Join(t.TempDir(), "p.mjs")
	os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644)
	_, m, err := s.Create(ctx, run.CreateOptions{ProcessID: "p", Entry: entry + "#process"})
	if err != nil {
		t.Fatal(err)
	}
	var gone time.Time
	done := make(chan error, 1)
	go func() {
		done <- store.Do(ctx, s, m.RunID, true, func(dir string) error {
			srv.Shutdown()
			gone = time.Now()
			return os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
		})
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the commit to a store that is gone succeeded")
		}
		if d := time.Since(gone); d < retryFor || d > retryFor+time.Second {
			t.Errorf("the verb failed %s after the server went away, want about %s: %v", d, retryFor, err)
		}
	case <-time.After(retryFor + 5*time.Second):
		t.Fatalf("the verb had not failed %s after the server went away", retryFor+5*time.Second)
	}
}

// The operations of a connection share one budget of RetryFor while the
// store does not answer: the first fails after it, the next after a single
// attempt; an answer gives the whole budget back.
func TestRetryOneBudget(t *testing.T) {
	const retryFor = 300 * time.Millisecond
	c := &Conn{o: Options{RetryFor: retryFor}}
	attempts := 0
	down := func(ctx context.Context) error {
		attempts++
		return nats.ErrTimeout
	}
	timed := func(op func(context.Context) error) (time.Duration, error) {
		start := time.Now()
		err := c.retry(context.Background(), op)
		return time.Since(start), err
	}
	d, err := timed(down)
	if !errors.Is(err, nats.ErrTimeout) || !strings.Contains(err.Error(), "has not answered for 300ms") || d < retryFor || d > retryFor+200*time.Millisecond {
		t.Fatalf("first operation: %v after %s, want the timeout after about %s", err, d, retryFor)
	}
	attempts = 0
	if d, err = timed(down); err == nil || attempts != 1 || d > 100*time.Millisecond {
		t.Fatalf("second operation: %v after %s and %d attempts, want one attempt at once", err, d, attempts)
	}
	if _, err = timed(func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if d, err = timed(down); err == nil || d < retryFor {
		t.Fatalf("after an answer: %v after %s, want the whole %s again", err, d, retryFor)
	}
}
