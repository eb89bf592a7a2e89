package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/generated/providers"
	"sitter.dev/sitter/runtime/internal/fakellm"
)

// TestServe starts the command against a fake OpenAI upstream, reads the
// URL line, sends an Anthropic request with the token from the 0600 file,
// and stops it.
func TestServe(t *testing.T) {
	up, err := fakellm.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	up.Always(fakellm.Reply{Body: `{"id":"c","model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`})
	tokFile := filepath.Join(t.TempDir(), "token")
	pr, pw := io.Pipe()
	var stderr strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	env := map[string]string{"OPENAI_API_KEY": "sk-upstream"}
	go func() {
		done <- run(ctx, []string{"--provider", "openai", "--upstream", up.URL + "/v1", "--token-file", tokFile, "--json"}, func(k string) string { return env[k] }, pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "SITTER_PROXY_URL=http://127.0.0.1:")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	st, err := os.Stat(tokFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	tok, _ := os.ReadFile(tokFile)
	req, _ := http.NewRequest("POST", "http://127.0.0.1:"+base+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"ping"}]}`))
	req.Header.Set("X-Api-Key", strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"text":"pong"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	got := up.Requests()[0]
	if got.Header.Get("Authorization") != "Bearer sk-upstream" || !strings.Contains(string(got.Body), `"model":"gpt-4.1"`) {
		t.Errorf("upstream saw %v %s", got.Header, got.Body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"route":"/v1/messages"`) || !strings.Contains(logs, `"input_tokens":3`) || strings.Contains(logs, string(tok[:10])) || strings.Contains(logs, "sk-upstream") {
		t.Errorf("log line: %s", logs)
	}
}

func TestProxyConfig(t *testing.T) {
	az, _ := providers.Lookup("azure-foundry")
	if _, err := proxyConfig(az, "", func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "AZURE_OPENAI_RESOURCE") {
		t.Errorf("azure without resource: %v", err)
	}
	cfg, err := proxyConfig(az, "", func(k string) string {
		return map[string]string{"AZURE_OPENAI_RESOURCE": "acme", "AZURE_OPENAI_API_KEY": "k"}[k]
	})
	if err != nil || cfg.Provider.BaseURL != "https://acme.openai.azure.com/openai" || cfg.Provider.APIVersion == "" {
		t.Errorf("azure: %+v %v", cfg.Provider, err)
	}
	an, _ := providers.Lookup("anthropic")
	if _, err := proxyConfig(an, "", func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	// An --upstream no request could reach is refused at start, naming the flag.
	op, _ := providers.Lookup("openai")
	for _, bad := range []string{"localhost:8080", "notaurl", "ftp://127.0.0.1/v1"} {
		if _, err := proxyConfig(op, bad, func(string) string { return "k" }); err == nil || !strings.HasPrefix(err.Error(), "--upstream: ") {
			t.Errorf("--upstream %s: %v", bad, err)
		}
	}
	if _, err := proxyConfig(op, "http://127.0.0.1:11434/v1", func(string) string { return "" }); err != nil {
		t.Errorf("--upstream http://127.0.0.1:11434/v1: %v", err)
	}
}

func TestProxyRequired(t *testing.T) {
	cases := []struct {
		harness, provider string
		want              bool
		err               bool
	}{
		{"claude-code", "anthropic", false, false},
		{"claude", "openai", true, false},
		{"codex", "openai-responses", false, false},
		{"codex", "anthropic", true, false},
		{"gemini-cli", "vertex", false, false},
		{"gemini-cli", "azure-foundry", true, false},
		{"copilot", "anthropic", false, false},
		{"cursor", "anthropic", false, true},
		{"nope", "anthropic", false, true},
		{"codex", "nope", false, true},
	}
	for _, c := range cases {
		got, err := providers.ProxyRequired(c.harness, c.provider)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ProxyRequired(%s, %s) = %v, %v", c.harness, c.provider, got, err)
		}
	}
}

// TestUsageGrammar: the gateway binary keeps the convention of every verb
// (docs/cli/README.md): -h/--help prints the usage with an example on
// stdout and exits 0; an unknown flag or a stray argument is a usage
// error, exit 2 with the usage on stderr and nothing on stdout.
func TestUsageGrammar(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, help := range []string{"--help", "-h"} {
		var out, errb strings.Builder
		if code := run(context.Background(), []string{help}, noEnv, &out, &errb); code != 0 {
			t.Errorf("%s: exit %d, want 0", help, code)
		}
		if !strings.Contains(out.String(), "Usage:") || !strings.Contains(out.String(), "\nExamples:\n  ") || errb.Len() > 0 {
			t.Errorf("%s: stdout %q, stderr %q; want the usage with an example on stdout", help, out.String(), errb.String())
		}
	}
	for _, args := range [][]string{{}, {"--json"}} {
		var out, errb strings.Builder
		code := run(context.Background(), args, noEnv, &out, &errb)
		if code != 2 || out.Len() > 0 || !strings.HasPrefix(errb.String(), "sitter proxy: --provider or --routes is required\n") || !strings.Contains(errb.String(), "Usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, the missing flag named and the usage on stderr", args, code, out.String(), errb.String())
		}
	}
	for _, c := range []struct {
		args  []string
		first string // the first stderr line, in the words of every verb
	}{
		{[]string{"--no-such-flag"}, "sitter proxy: unknown flag: --no-such-flag"},
		{[]string{"-x"}, "sitter proxy: unknown flag: --x"},
		{[]string{"--listen"}, "sitter proxy: flag needs an argument: --listen"},
		{[]string{"serve"}, `sitter proxy: unexpected arguments ["serve"]`},
		{[]string{"--provider", "openai", "extra", "more"}, `sitter proxy: unexpected arguments ["extra" "more"]`},
	} {
		var out, errb strings.Builder
		code := run(context.Background(), c.args, noEnv, &out, &errb)
		first, _, _ := strings.Cut(errb.String(), "\n")
		if code != 2 || out.Len() > 0 || first != c.first || !strings.Contains(errb.String(), "Usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, %q and the usage on stderr", c.args, code, out.String(), errb.String(), c.first)
		}
	}
}

// TestServeFlagsUsage: a --listen no listener could take (a bad port, a
// host that does not resolve) and a --token-file that could not be
// written (its directory missing, a directory, a symlink) are usage
// errors, said
// before anything starts: exit 2, naming the flag, nothing on stdout.
func TestServeFlagsUsage(t *testing.T) {
	env := func(k string) string { return map[string]string{"OPENAI_API_KEY": "k"}[k] }
	routes := filepath.Join(t.TempDir(), "routes.json")
	os.WriteFile(routes, []byte(`{"providers": {"openai": {}}, "rules": {"default": "openai,gpt-x"}}`), 0o600)
	missingDir := filepath.Join(t.TempDir(), "no-such-dir", "token")
	aDir := t.TempDir()
	link := filepath.Join(t.TempDir(), "token")
	os.Symlink(filepath.Join(aDir, "elsewhere"), link)
	for _, serve := range [][]string{{"--provider", "openai"}, {"--routes", routes, "--record", filepath.Join(t.TempDir(), "r.jsonl")}} {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--listen", "127.0.0.1:99999"}, "sitter proxy: --listen 127.0.0.1:99999: "},
			{[]string{"--listen", "nonsense"}, "sitter proxy: --listen nonsense: "},
			{[]string{"--listen", "127.0.0.1:-1"}, "sitter proxy: --listen 127.0.0.1:-1: "},
			{[]string{"--token-file", missingDir}, "sitter proxy: --token-file " + missingDir + ": "},
			{[]string{"--token-file", aDir}, "sitter proxy: --token-file " + aDir + ": is a directory"},
			{[]string{"--token-file", link}, "sitter proxy: --token-file " + link + ": is a symlink"},
			{[]string{"--listen", "no-such-host.invalid:8787"}, "sitter proxy: --listen no-such-host.invalid:8787: host \"no-such-host.invalid\" does not resolve"},
		} {
			args := append(slices.Clip(serve), c.args...)
			var out, errb strings.Builder
			// A gateway that starts anyway is stopped after a while.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			code := run(ctx, args, env, &out, &errb)
			cancel()
			if code != 2 || out.Len() > 0 || !strings.HasPrefix(errb.String(), c.want) {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, out.String(), errb.String(), c.want)
			}
		}
	}
}
