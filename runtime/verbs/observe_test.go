package verbs

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// TestObserveListen: a --listen value that is no HOST:PORT is a usage
// error naming the flag; an address that cannot be bound (the port is
// taken) fails with exit 1 and names --listen too.
func TestObserveListen(t *testing.T) {
	t.Setenv("SITTER_STATE_DIR", t.TempDir())
	run := func(listen string) (int, string) {
		var out, errb bytes.Buffer
		code := Run([]string{"observe", "--dir", t.TempDir(), "--listen", listen}, strings.NewReader(""), &out, &errb, registry.Registry)
		return code, errb.String()
	}
	for _, bad := range []string{"bogus", "127.0.0.1:70000", "127.0.0.1:-1"} {
		code, errs := run(bad)
		first, _, _ := strings.Cut(errs, "\n")
		if code != 2 || !strings.HasPrefix(first, `sitter: observe: --listen "`+bad+`": `) || !strings.Contains(errs, "Usage:\n  sitter observe") {
			t.Errorf("--listen %s: exit %d, stderr:\n%s", bad, code, errs)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	code, errs := run(addr)
	if code != 1 || !strings.HasPrefix(errs, "sitter: observe: --listen "+addr+": ") || strings.Contains(errs, "Usage:") {
		t.Errorf("--listen %s (taken): exit %d, stderr:\n%s", addr, code, errs)
	}
}
