// Package testproc runs many copies of a test binary at once, for the
// fault tests that need real concurrent processes (lock contention across
// processes cannot be shown with goroutines).
package testproc

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"testing"
)

// Child is one finished helper process.
type Child struct {
	Stdout, Stderr bytes.Buffer
	Err            error // from Wait
}

// Together starts n copies of this test binary, each running only the
// test named helper with env(i) added to its environment, releases them
// at once (their stdin closes together: a helper starts its work with
// io.Copy(io.Discard, os.Stdin)) and waits for all.
func Together(t testing.TB, helper string, n int, env func(i int) []string) []*Child {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	stdins := make([]io.WriteCloser, n)
	cs := make([]*Child, n)
	for i := range cmds {
		c := &Child{}
		cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$")
		cmd.Env = append(os.Environ(), env(i)...)
		cmd.Stdout, cmd.Stderr = &c.Stdout, &c.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i], stdins[i], cs[i] = cmd, in, c
	}
	for _, in := range stdins {
		in.Close()
	}
	for i, cmd := range cmds {
		cs[i].Err = cmd.Wait()
	}
	return cs
}
