package natsstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sitter.dev/sitter/runtime/audit"
)

// appendEntries appends n entries numbered from first to the log.
func appendEntries(t *testing.T, c audit.Config, first, n int) {
	t.Helper()
	for i := first; i < first+n; i++ {
		d := "allow"
		if i%3 == 0 {
			d = "deny"
		}
		e := audit.Entry{Harness: "claude-code", NativeEvent: "PreToolUse", Phase: "preToolUse", Session: fmt.Sprintf("s%d", i%2),
			Decision: d, Command: fmt.Sprintf("cmd %d", i), Handlers: []audit.Handler{}}
		e.Finish(false)
		if err := audit.Append(c, e); err != nil {
			t.Fatal(err)
		}
	}
}

func dialT(t *testing.T, url string) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// shipped reads back every entry of a source and checks each command
// came once, in order: "cmd 0" … "cmd n-1".
func checkShipped(t *testing.T, c *Conn, source string, n int) {
	t.Helper()
	es, bad, err := c.AuditQuery(context.Background(), audit.Filter{}, source, 0)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d shipped messages are not entries", bad)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Command)
		if e.Source != source {
			t.Errorf("entry %q from source %q, want %q", e.Command, e.Source, source)
		}
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("cmd %d", i))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the team audit has %d entries:\n%q\nwant %d:\n%q", len(got), got, len(want), want)
	}
}

// Ship, append, ship again: each line once, in order; a second ship with
// nothing new ships nothing.
func TestAuditShipResumes(t *testing.T) {
	srv := startServer(t)
	c := dialT(t, srv.ClientURL())
	ctx := context.Background()
	log := audit.Config{Dir: t.TempDir()}
	appendEntries(t, log, 0, 5)
	o := ShipOptions{Log: log, Source: "machine-a"}
	r, err := c.ShipAudit(ctx, o)
	if err != nil || r.Shipped != 5 {
		t.Fatalf("first ship: %+v, %v", r, err)
	}
	appendEntries(t, log, 5, 3)
	if r, err = c.ShipAudit(ctx, o); err != nil || r.Shipped != 3 {
		t.Fatalf("second ship: %+v, %v", r, err)
	}
	if r, err = c.ShipAudit(ctx, o); err != nil || r.Shipped != 0 {
		t.Fatalf("third ship, nothing new: %+v, %v", r, err)
	}
	// Another machine's log is its own subject; a fresh connection (a
	// restarted shipper) resumes from the store alone.
	logB := audit.Config{Dir: t.TempDir()}
	appendEntries(t, logB, 0, 2)
	if r, err = dialT(t, srv.ClientURL()).ShipAudit(ctx, ShipOptions{Log: logB, Source: "machine-b"}); err != nil || r.Shipped != 2 {
		t.Fatalf("machine b: %+v, %v", r, err)
	}
	checkShipped(t, c, "machine-a", 8)
	checkShipped(t, c, "machine-b", 2)
	all, _, err := c.AuditQuery(ctx, audit.Filter{Decision: "deny"}, "", 0)
	if err != nil || len(all) != 3+1 { // cmd 0, 3, 6 of a; cmd 0 of b
		t.Fatalf("deny across sources: %d entries, %v", len(all), err)
	}
	last, _, err := c.AuditQuery(ctx, audit.Filter{}, "machine-a", 2)
	if err != nil || len(last) != 2 || last[1].Command != "cmd 7" {
		t.Fatalf("the last 2 of machine-a: %+v, %v", last, err)
	}
}

// A shipper that dies right after a publish the store acknowledged, and
// before it goes on, is restarted: nothing shipped twice, nothing lost.
// Its position is the store's last message, so there is no separate
// position save to miss.
func TestAuditShipCrashAfterPublish(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	log := audit.Config{Dir: t.TempDir()}
	appendEntries(t, log, 0, 10)
	crash := errors.New("killed")
	for _, at := range []int{1, 4} {
		o := ShipOptions{Log: log, Source: "m", afterPublish: func(n int) error {
			if n == at {
				return crash
			}
			return nil
		}}
		if _, err := dialT(t, srv.ClientURL()).ShipAudit(ctx, o); !errors.Is(err, crash) {
			t.Fatalf("crash after publish %d: %v", at, err)
		}
	}
	c := dialT(t, srv.ClientURL())
	r, err := c.ShipAudit(ctx, ShipOptions{Log: log, Source: "m"})
	if err != nil || r.Shipped != 10-1-4 {
		t.Fatalf("after two crashes: %+v, %v; want the %d lines not yet shipped", r, err, 10-1-4)
	}
	checkShipped(t, c, "m", 10)
}

// A publish stored whose acknowledgement the shipper never saw is sent
// again with the same expectation and message id: refused, and the
// shipper goes on after it. Two shippers of one log at once, the same.
func TestAuditShipRetriedAndRacing(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	log := audit.Config{Dir: t.TempDir()}
	appendEntries(t, log, 0, 4)
	c := dialT(t, srv.ClientURL())
	st, err := c.auditStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A shipper publishes line 0, loses the ack, and is restarted with
	// its position from before the publish.
	sh := &shipper{c: c, st: st, o: ShipOptions{Log: log, Source: "m"}, subject: AuditPrefix + "m." + LogID(log.Dir)}
	var first audit.Line
	audit.After(log, audit.Mark{}, func(l audit.Line) error {
		if first.Data == nil {
			first = l
		}
		return nil
	})
	if err := sh.publish(ctx, first); err != nil {
		t.Fatal(err)
	}
	sh.mark, sh.seq = audit.Mark{}, 0 // the ack was lost
	if err := sh.publish(ctx, first); !errors.Is(err, errLost) {
		t.Fatalf("the same line again: %v, want it refused", err)
	}
	if r, err := sh.pass(ctx); err != nil || r.Shipped != 3 {
		t.Fatalf("the pass after it: %+v, %v", r, err)
	}
	checkShipped(t, c, "m", 4)

	appendEntries(t, log, 4, 60)
	var wg sync.WaitGroup
	results := make([]ShipResult, 3)
	errs := make([]error, 3)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = dialT(t, srv.ClientURL()).ShipAudit(ctx, ShipOptions{Log: log, Source: "m"})
		}()
	}
	wg.Wait()
	sum := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("shipper %d: %v", i, errs[i])
		}
		sum += results[i].Shipped
	}
	if sum != 60 {
		t.Errorf("three racing shippers shipped %d lines between them, want 60", sum)
	}
	checkShipped(t, c, "m", 64)
}

// Lines shipped before and after the log rotates (more than once) are
// each shipped once; when the last shipped line's file rotated out, what
// is left is shipped and the loss is said.
func TestAuditShipAcrossRotation(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := dialT(t, srv.ClientURL())
	log := audit.Config{Dir: t.TempDir(), MaxBytes: 1500, Keep: 20}
	appendEntries(t, log, 0, 3)
	o := ShipOptions{Log: log, Source: "m"}
	if r, err := c.ShipAudit(ctx, o); err != nil || r.Shipped != 3 {
		t.Fatalf("before rotation: %+v, %v", r, err)
	}
	appendEntries(t, log, 3, 30)
	if n := len(audit.Files(log)); n < 3 {
		t.Fatalf("the log rotated into %d files, want several", n)
	}
	r, err := c.ShipAudit(ctx, o)
	if err != nil || r.Shipped != 30 || r.Lost {
		t.Fatalf("after rotation: %+v, %v", r, err)
	}
	checkShipped(t, c, "m", 33)

	// Keep 1: the file of the last shipped line rotates out.
	small := audit.Config{Dir: t.TempDir(), MaxBytes: 1500, Keep: 1}
	appendEntries(t, small, 0, 2)
	o = ShipOptions{Log: small, Source: "k"}
	if _, err := c.ShipAudit(ctx, o); err != nil {
		t.Fatal(err)
	}
	appendEntries(t, small, 2, 30)
	kept, _, _ := audit.Query(small, audit.Filter{}, 0)
	r, err = c.ShipAudit(ctx, o)
	if err != nil || !r.Lost || r.Shipped != len(kept) {
		t.Fatalf("after the position rotated out: %+v, %v; want Lost and the %d kept lines", r, err, len(kept))
	}
}

// --follow ships lines as they are appended, across a rotation.
func TestAuditShipFollow(t *testing.T) {
	srv := startServer(t)
	c := dialT(t, srv.ClientURL())
	log := audit.Config{Dir: t.TempDir(), MaxBytes: 3000, Keep: 10}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var mu sync.Mutex
	var passes []ShipResult
	pass := func(r ShipResult) {
		mu.Lock()
		passes = append(passes, r)
		mu.Unlock()
	}
	go func() {
		_, err := c.ShipAudit(ctx, ShipOptions{Log: log, Source: "f", Follow: true, Interval: 10 * time.Millisecond, Pass: pass})
		done <- err
	}()
	wait := func(n int) {
		t.Helper()
		for i := 0; ; i++ {
			es, _, err := c.AuditQuery(context.Background(), audit.Filter{}, "f", 0)
			if err == nil && len(es) >= n {
				return
			}
			if i == 1000 {
				t.Fatalf("the follower shipped %d of %d lines", len(es), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	appendEntries(t, log, 0, 2)
	wait(2)
	appendEntries(t, log, 2, 20)
	wait(22)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkShipped(t, c, "f", 22)
	// Each pass says where it shipped, as a one-off ship does.
	want := AuditPrefix + "f." + LogID(log.Dir)
	n := 0
	for _, r := range passes {
		n += r.Shipped
		if r.Source != "f" || r.Subject != want {
			t.Errorf("pass %+v: want source f, subject %s", r, want)
		}
	}
	if n != 22 {
		t.Errorf("the passes shipped %d lines, want 22", n)
	}
}

// A line that is not an entry stays in the log and is counted; a symbolic
// link in place of the log is not read.
func TestAuditShipSkips(t *testing.T) {
	srv := startServer(t)
	c := dialT(t, srv.ClientURL())
	dir := t.TempDir()
	log := audit.Config{Dir: dir}
	appendEntries(t, log, 0, 1)
	f, _ := os.OpenFile(filepath.Join(dir, audit.FileName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json\n{\"torn\":")
	f.Close()
	r, err := c.ShipAudit(context.Background(), ShipOptions{Log: log, Source: "s"})
	if err != nil || r.Shipped != 1 || r.Skipped != 1 {
		t.Fatalf("%+v, %v; want 1 shipped, 1 skipped (the torn last line is not a line yet)", r, err)
	}
	if _, err := c.ShipAudit(context.Background(), ShipOptions{Log: log, Source: "bad.name"}); err == nil {
		t.Error("a source with a dot was accepted")
	}
}

// A source that shipped nothing, in a stream that holds another's lines,
// has no entries: said at once, not after waiting for messages that are
// not there.
func TestAuditQueryUnknownSource(t *testing.T) {
	srv := startServer(t)
	c := dialT(t, srv.ClientURL())
	ctx := context.Background()
	log := audit.Config{Dir: t.TempDir()}
	appendEntries(t, log, 0, 3)
	if _, err := c.ShipAudit(ctx, ShipOptions{Log: log, Source: "machine-a"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	es, bad, err := c.AuditQuery(ctx, audit.Filter{}, "nobody", 0)
	if err != nil || len(es) != 0 || bad != 0 {
		t.Fatalf("source nobody: %d entries, %d bad, %v; want none", len(es), bad, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("source nobody took %s", d)
	}
	// A prefix of a source is not the source.
	if es, _, err := c.AuditQuery(ctx, audit.Filter{}, "machine", 0); err != nil || len(es) != 0 {
		t.Fatalf("source machine: %d entries, %v; want none", len(es), err)
	}
	checkShipped(t, c, "machine-a", 3)
}
