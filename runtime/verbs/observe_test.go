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

// TestObserveExposedNote: listening beyond loopback (--listen 0.0.0.0:…,
// or :PORT) is said on stderr, with what it exposes; loopback is not.
func TestObserveExposedNote(t *testing.T) {
	for _, c := range []struct {
		addr    *net.TCPAddr
		exposed bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8790}, false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8790}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8790}, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8790}, true},
		{&net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 8790}, true},
	} {
		note := exposedNote(c.addr)
		if !c.exposed {
			if note != "" {
				t.Errorf("%s: a note on loopback: %q", c.addr, note)
			}
			continue
		}
		for _, want := range []string{"sitter observe: warning:", c.addr.String(), "token", "not encrypted", "--listen 127.0.0.1:"} {
			if !strings.Contains(note, want) {
				t.Errorf("%s: note %q does not say %q", c.addr, note, want)
			}
		}
	}
}
