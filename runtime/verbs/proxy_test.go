package verbs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// TestProxyExecs: `sitter proxy` hands its arguments, output and exit code
// to the sitter-proxy binary, and says how to get it when it is missing.
func TestProxyExecs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	var out, errb strings.Builder
	if code := runProxy([]string{"--provider", "openai"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "make build") {
		t.Errorf("missing binary: %d %q", code, errb.String())
	}
	script := "#!/bin/sh\necho \"SITTER_PROXY_URL=http://127.0.0.1:1 $*\"\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "sitter-proxy"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runProxy([]string{"--provider", "openai", "--json"}, &out, &errb); code != 3 || out.String() != "SITTER_PROXY_URL=http://127.0.0.1:1 --provider openai --json\n" {
		t.Errorf("exec: %d %q", code, out.String())
	}
}

// TestProxyAlone: `sitter proxy` serves with --provider or --routes, and
// says so when given neither (a usage error, before the gateway runs);
// its usage shows both of its forms: serving, and a subcommand.
func TestProxyAlone(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errb bytes.Buffer
	if code := Run([]string{"proxy", "--json"}, nil, &out, &errb, registry.Registry); code != 2 || out.Len() > 0 ||
		!strings.HasPrefix(errb.String(), "sitter: proxy: --provider or --routes is required\n") || !strings.Contains(errb.String(), "Usage:\n  sitter proxy") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and the error with the usage on stderr", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Run([]string{"proxy", "--help"}, nil, &out, &errb, registry.Registry); code != 0 ||
		!strings.Contains(out.String(), "\nUsage:\n  sitter proxy --provider P | --routes FILE [flags]\n  sitter proxy <command> [flags]\n") {
		t.Errorf("--help: exit %d, stdout %q", code, out.String())
	}
}

// TestProxyServeFlagsUsage: a --listen no listener could take (a bad
// port, a host that does not resolve) and a --token-file that could not
// be written (its directory missing, a directory, a symlink) are usage errors of
// sitter proxy itself (exit 2, naming the flag), found before the
// gateway is even looked for.
func TestProxyServeFlagsUsage(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no sitter-proxy: a check it left to the gateway says "make build"
	missing := filepath.Join(t.TempDir(), "no-such-dir", "token")
	aDir := t.TempDir()
	link := filepath.Join(t.TempDir(), "token")
	os.Symlink(filepath.Join(aDir, "elsewhere"), link)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "127.0.0.1:99999"}, "sitter: proxy: --listen 127.0.0.1:99999: "},
		{[]string{"--listen", "nonsense"}, "sitter: proxy: --listen nonsense: "},
		{[]string{"--token-file", missing}, "sitter: proxy: --token-file " + missing + ": its directory"},
		{[]string{"--token-file", aDir}, "sitter: proxy: --token-file " + aDir + ": is a directory"},
		{[]string{"--token-file", link}, "sitter: proxy: --token-file " + link + ": is a symlink"},
		{[]string{"--listen", "no-such-host.invalid:8787"}, "sitter: proxy: --listen no-such-host.invalid:8787: host \"no-such-host.invalid\" does not resolve"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"proxy", "--provider", "openai"}, c.args...)
		if code := Run(args, nil, &out, &errb, registry.Registry); code != 2 || out.Len() > 0 || !strings.HasPrefix(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, out.String(), errb.String(), c.want)
		}
	}
}
