package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"sitter.dev/sitter/runtime/guard"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/internal/hookcli"
)

// runGuard is `sitter guard`, the guard plugin's handler built in: the
// canonical event on stdin, the result on stdout (nothing for a noop).
// Input it cannot read is one stderr line and exit 0: whether that fails
// open or closed is the engine's policy, not the handler's. It never exits
// 2, which a handler protocol reads as a deny: a mistake in the
// registration (an unknown flag, an argument) is one stderr line and exit
// 1, a handler error, which the engine's policy answers too.
func runGuard(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "sitter guard: internal error: %s\n", strings.Join(strings.Fields(fmt.Sprint(p)), " "))
			code = 1
		}
	}()
	for i, a := range args {
		if a == "--" { // ends the flags, as for every verb
			args = append(args[:i:i], args[i+1:]...)
			break
		}
		if a == "-h" || a == "--help" {
			fmt.Fprint(stdout, hookcli.GuardUsage())
			return 0
		}
		if strings.HasPrefix(a, "-") {
			fmt.Fprintf(stderr, "sitter guard: unknown flag %s (usage: sitter guard < event.json)\n", a)
			return 1
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "sitter guard: unexpected arguments %q (usage: sitter guard < event.json)\n", args)
		return 1
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxPayload+1))
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "sitter guard: reading stdin: %v\n", err)
		return 0
	case len(b) > maxPayload:
		fmt.Fprintf(stderr, "sitter guard: stdin exceeds %d MiB\n", maxPayload>>20)
		return 0
	case len(bytes.TrimSpace(b)) == 0:
		fmt.Fprintln(stderr, "sitter guard: empty stdin: want the canonical event (sitter.hook.v1)")
		return 0
	}
	ev, err := hook.DecodeEvent(b)
	if err != nil {
		fmt.Fprintf(stderr, "sitter guard: stdin is not a canonical event: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return 0
	}
	res := guard.Check(ev)
	if res.Decision == hook.Noop {
		return 0
	}
	if out, err := hook.MarshalResult(res, false); err == nil {
		stdout.Write(append(out, '\n'))
	}
	return 0
}
