package audit

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A waiter that gives up on a held lock leaves nothing behind: once the
// holder lets go, the lock is free for the next caller, and a waiter
// whose holder lets go in time gets it.
func TestLockStateWaitAndGiveUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "count.json")
	held, err := LockState(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockState(path, 20*time.Millisecond); !errors.Is(err, ErrLockBusy) {
		t.Fatalf("second LockState on a held lock: %v, want ErrLockBusy", err)
	}
	got := make(chan error, 1)
	go func() {
		f, err := LockState(path, 10*time.Second)
		if err == nil {
			f.Close()
		}
		got <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it block (it works either way)
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("a waiter whose holder let go: %v", err)
	}
	// The waiter that gave up closed its descriptor when its blocked
	// call returned: nothing holds the lock now.
	deadline := time.Now().Add(5 * time.Second)
	for {
		f, err := LockState(path, 100*time.Millisecond)
		if err == nil {
			f.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lock stays taken after every holder let go: %v", err)
		}
	}
}
