package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/run"
)

// BenchmarkStopCheck is one stop decision of a session bound to a run of
// about 1,000 journal events with one effect pending (the check blocks
// and journals STOP_HOOK_INVOKED), in process: what the stop hook costs
// besides starting sitter (make bench: stopbench times the whole call).
// With TMPDIR on a tmpfs it measures the work without the disk's fsyncs.
func BenchmarkStopCheck(b *testing.B) {
	b.Setenv("SITTER_STATE_DIR", b.TempDir())
	dir := benchRun(b, 1000)
	if _, _, err := Bind("claude-code", "s1", "bench", dir, 1<<30); err != nil {
		b.Fatal(err)
	}
	ev := stopEvent("still working", "")
	ctx := context.Background()
	for b.Loop() {
		d, err := StopCheck(ctx, ev)
		if err != nil || d.Row != RowPending {
			b.Fatalf("%+v, %v", d, err)
		}
	}
}

// benchRun is a run whose journal holds events events: RUN_CREATED,
// effects requested and resolved, one pending.
func benchRun(b *testing.B, events int) string {
	ctx := context.Background()
	ws := b.TempDir()
	entry := filepath.Join(ws, "p.mjs")
	if err := os.WriteFile(entry, []byte("export async function process() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	dir, _, err := run.Create(ctx, run.CreateOptions{RunsDir: filepath.Join(ws, "runs"), ProcessID: "p", Entry: entry})
	if err != nil {
		b.Fatal(err)
	}
	requested := events / 2
	effs := make([]run.NewEffect, requested)
	for i := range effs {
		effs[i] = run.NewEffect{Key: fmt.Sprintf("k%04d", i), TaskID: "t", Kind: "shell", Label: "step"}
	}
	es, err := run.RequestEffects(ctx, dir, effs)
	if err != nil {
		b.Fatal(err)
	}
	l, err := run.Lock(ctx, dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Release()
	for _, e := range es[:requested-1] {
		if _, err := l.Append(journal.EffectResolved, map[string]any{"effectId": e.EffectID, "status": "ok", "resultRef": "tasks/" + e.EffectID + "/result.json"}); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}
