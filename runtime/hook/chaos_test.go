package hook

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Fault tests of the handler engine: floods, stray children, hostile
// event contents. `make chaos` runs every TestChaos* test.

// allocated returns the bytes f allocates (the whole process's, so the
// tests that use it are not parallel).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A handler that floods stdout or stderr with 512 MiB is stopped at the
// cap: sitter keeps at most maxOutput of each stream, the handler is
// killed, and its outcome is an output error under its policy.
func TestChaosOutputFlood(t *testing.T) {
	const flood = "head -c 536870912 /dev/zero"
	for _, tc := range []struct{ name, cmd, stream string }{
		{"stdout", flood, "stdout"},
		{"stderr", flood + " >&2", "stderr"},
		{"stderr then exit 2", flood + " >&2; exit 2", "stderr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Handler{Command: tc.cmd, Timeout: 20 * time.Second, OnError: FailClosed}
			var outs []Outcome
			start := time.Now()
			n := allocated(func() { outs = RunHandlers(testCtx(t), shellEvent("preToolUse"), []Handler{h}) })
			t.Logf("%s flood: allocated %d MiB in %v", tc.stream, n>>20, time.Since(start).Round(time.Millisecond))
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("took %v: the flooding handler was not stopped at the cap", d)
			}
			if n > 4*maxOutput {
				t.Errorf("allocated %d MiB for a 512 MiB flood, want at most %d MiB (the cap is %d MiB)", n>>20, 4*maxOutput>>20, maxOutput>>20)
			}
			o := outs[0]
			if o.Err == nil || o.Err.Kind != ErrOutput || !strings.Contains(o.Err.Detail, tc.stream+" exceeds") {
				t.Fatalf("outcome = %s (reason %d bytes), err %v; want an output error about %s exceeding the cap", o.Result.Decision, len(o.Result.Reason), o.Err, tc.stream)
			}
			got, diags := Merge("preToolUse", outs)
			if got.Decision != Deny || len(got.Reason) > 1000 || len(diags) != 1 {
				t.Errorf("merged fail-closed = %s (reason %d bytes), diags %q; want a deny with a short reason", got.Decision, len(got.Reason), diags)
			}
		})
	}
}

// Values too long for the environment (or holding a NUL) are not
// exported: exec would fail for every handler (and fail-open allow). The
// full value stays in the event on stdin.
func TestChaosHostileEnvValues(t *testing.T) {
	for name, id := range map[string]string{
		"200 KB session id": strings.Repeat("s", 200<<10),
		"NUL in session id": "a\x00b",
	} {
		t.Run(name, func(t *testing.T) {
			ev := shellEvent("preToolUse")
			ev.Session.ID = id
			h := Handler{Command: `printf '{"decision":"deny","reason":"%s"}' "${SITTER_SESSION_ID-unset}"`, OnError: FailOpen}
			outs := RunHandlers(testCtx(t), ev, []Handler{h})
			if outs[0].Err != nil {
				t.Fatalf("handler error: %v", outs[0].Err)
			}
			if r := outs[0].Result; r.Decision != Deny || r.Reason != "unset" {
				t.Errorf("result = %+v, want a deny with reason \"unset\"", r)
			}
		})
	}
}

// Invalid UTF-8 in the native payload reaches handlers as U+FFFD: the
// event on stdin is valid UTF-8 and valid JSON.
func TestChaosInvalidUTF8Event(t *testing.T) {
	file := filepath.Join(t.TempDir(), "event.json")
	ev := shellEvent("preToolUse")
	ev.Raw = json.RawMessage("{\"prompt\":\"bad \xff\xfe byte\",\"tool_input\":{\"command\":\"echo \xc3\"}}")
	ev.Tool.Input = json.RawMessage("{\"command\":\"echo \xc3\"}")
	ev.Prompt = "p\xffq"
	outs := RunHandlers(testCtx(t), ev, []Handler{{Command: "cat > " + shellQuote(file)}})
	if outs[0].Err != nil {
		t.Fatal(outs[0].Err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(b) || !json.Valid(b) {
		t.Fatalf("event on stdin is not valid UTF-8 JSON: %q", b)
	}
	var got Event
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got.Raw), "bad \uFFFD") || !strings.Contains(string(got.Tool.Input), "echo \uFFFD") || got.Prompt != "p\uFFFDq" {
		t.Errorf("invalid bytes not replaced by U+FFFD: raw %s, input %s, prompt %q", got.Raw, got.Tool.Input, got.Prompt)
	}
}

// What a handler answers with invalid UTF-8 (an exit-2 reason on stderr,
// an updatedInput) is made valid before sitter renders or audits it.
func TestChaosInvalidUTF8Result(t *testing.T) {
	ev := shellEvent("preToolUse")
	outs := RunHandlers(testCtx(t), ev, []Handler{
		{Command: `printf 'no \377 way' >&2; exit 2`},
		{Command: `printf '{"decision":"allow","updatedInput":{"command":"ls \377"}}'`},
	})
	for i, o := range outs {
		if o.Err != nil {
			t.Fatalf("handler %d: %v", i, o.Err)
		}
	}
	if r := outs[0].Result.Reason; r != "no \uFFFD way" {
		t.Errorf("exit-2 reason = %q, want the invalid byte replaced", r)
	}
	if u := outs[1].Result.UpdatedInput; !utf8.Valid(u) || !json.Valid(u) {
		t.Errorf("updatedInput = %q, want valid UTF-8 JSON", u)
	}
	res, _ := Merge(ev.Phase, outs)
	res.UpdatedInput = json.RawMessage("{\"command\":\"ls \xff\"}")
	res.Decision, res.Reason = Allow, "r\xfe"
	out := Render(ev, res, preToolUseRules())
	if !utf8.Valid(out.Stdout) || !utf8.Valid(out.Stderr) {
		t.Errorf("rendered answer is not valid UTF-8: %q %q", out.Stdout, out.Stderr)
	}
}

// The stderr of a failing handler that sitter prints in its diagnostic
// is masked like the audit log.
func TestChaosHandlerStderrMasked(t *testing.T) {
	secret := "ghp_" + strings.Repeat("A1b2", 9)
	t.Setenv("CHAOS_SECRET", secret) // not in the command, which diagnostics name
	outs := RunHandlers(testCtx(t), shellEvent("preToolUse"), []Handler{{Command: `echo "failed with $CHAOS_SECRET" >&2; exit 1`}})
	if outs[0].Err == nil || outs[0].Err.Kind != ErrExit {
		t.Fatalf("err = %v, want an exit error", outs[0].Err)
	}
	_, diags := Merge("preToolUse", outs)
	if strings.Contains(strings.Join(diags, "\n"), secret) || !strings.Contains(strings.Join(diags, "\n"), "failed with") {
		t.Errorf("diagnostics = %q, want the handler's stderr with the token masked", diags)
	}
}

// The event is encoded once per call: every handler reads the same bytes,
// so 20 handlers cost no more memory than one, plus a bound per handler
// far below the event's size; raw values already compact are not copied
// at all.
func TestChaosEventSharedAmongHandlers(t *testing.T) {
	ev := shellEvent("preToolUse")
	big := strings.Repeat("x", 4<<20)
	ev.Raw = json.RawMessage(`{"tool_input":{"command":"` + big + `"}}`)
	ev.Tool.Input = json.RawMessage(`{"command":"` + big + `"}`)
	hs := func(n int) []Handler {
		h := make([]Handler, n)
		for i := range h {
			h[i] = Handler{Command: "cat >/dev/null"}
		}
		return h
	}
	var outs []Outcome
	one := allocated(func() { outs = RunHandlers(testCtx(t), ev, hs(1)) })
	if outs[0].Err != nil {
		t.Fatal(outs[0].Err)
	}
	twenty := allocated(func() { outs = RunHandlers(testCtx(t), ev, hs(20)) })
	for _, o := range outs {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
	}
	size := uint64(len(ev.Raw) + len(ev.Tool.Input))
	t.Logf("event %d MiB: 1 handler allocated %d KiB, 20 handlers %d KiB", size>>20, one>>10, twenty>>10)
	// Compact raw values are the handlers' stdin as they are.
	if one > size/4 {
		t.Errorf("1 handler: allocated %d MiB for a %d MiB event: the raw values copied?", one>>20, size>>20)
	}
	// What a handler costs: its process, pipes and goroutines, small
	// output buffers (no 32 KiB copy buffers).
	if per := (int64(twenty) - int64(one)) / 19; per > 64<<10 {
		t.Errorf("each extra handler allocated %d KiB (1 handler: %d MiB, 20: %d MiB): a copy of the %d MiB event per handler?", per>>10, one>>20, twenty>>20, size>>20)
	}
}

// capped keeps exactly maxOutput bytes and reports one byte more, by
// either path io.Copy takes (its ReadFrom, or Write from a WriterTo).
func TestCapped(t *testing.T) {
	zeros := func(n int) io.Reader { return io.LimitReader(zeroReader{}, int64(n)) }
	for _, tc := range []struct {
		name     string
		n        int
		wantOver bool
	}{
		{"empty", 0, false},
		{"at the cap", maxOutput, false},
		{"one byte over", maxOutput + 1, true},
		{"far over", 3 * maxOutput, true},
	} {
		for path, src := range map[string]func() io.Reader{
			"ReadFrom": func() io.Reader { return zeros(tc.n) },
			"Write":    func() io.Reader { return bytes.NewReader(make([]byte, tc.n)) },
		} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				calls := 0
				c := &capped{onOver: func() { calls++ }}
				n, err := io.Copy(c, src())
				if err != nil || n != int64(tc.n) {
					t.Fatalf("io.Copy = %d, %v; want %d consumed", n, err, tc.n)
				}
				if c.over != tc.wantOver || len(c.Bytes()) != min(tc.n, maxOutput) || cap(c.buf) > maxOutput {
					t.Errorf("over %v, kept %d (cap %d); want over %v, kept %d", c.over, len(c.Bytes()), cap(c.buf), tc.wantOver, min(tc.n, maxOutput))
				}
				if want := map[bool]int{true: 1}[tc.wantOver]; calls != want {
					t.Errorf("onOver called %d times, want %d", calls, want)
				}
			})
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}
