// Command sitter-proxy is the LLM gateway behind `sitter proxy`: it serves
// the Anthropic, OpenAI Chat, OpenAI Responses and Gemini routes on
// loopback and forwards to one provider of the atlas, translating between
// protocols (runtime/proxy). It is its own binary so that the hook binary
// does not pay net/http's start-up cost; `sitter proxy` runs it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"sitter.dev/sitter/generated/providers"
	"sitter.dev/sitter/runtime/proxy"
)

const proxyUsage = `Usage:
  sitter-proxy --provider P [--model M] [--upstream URL] [--listen 127.0.0.1:0]
               [--token T | --token-file F] [--state-store URL] [--json]
  sitter-proxy --routes FILE [--harness H] [--record FILE] [--listen …] [--token …] [--state-store URL] [--json]

The gateway behind sitter proxy (docs/cli/proxy.md), which runs it with the
same flags. Serves /v1/messages (+ /count_tokens), /v1/chat/completions, /v1/responses and
/v1beta/models/{m}:generateContent|streamGenerateContent|countTokens, translating
to the provider's protocol; with --routes, to the provider and model the routes
file's rules pick per request (docs/routing.md), each routed request recorded as a
JSON line in --record (default $SITTER_STATE_DIR/proxy/routes.jsonl). Prints
SITTER_PROXY_URL=http://… on start. The upstream
key comes from the provider's environment variable; clients authenticate with the
token (printed once as SITTER_PROXY_TOKEN, or written to --token-file with mode 0600).
With --state-store nats://host:port, what the gateway keeps between requests (Gemini
thought signatures) lives in the store's bucket sitter-proxy-state, so replicas behind
one address serve one conversation (docs/store.md).

Examples:
  OPENAI_API_KEY=… sitter-proxy --provider openai
  sitter-proxy --provider anthropic --listen 127.0.0.1:8787 --token-file ~/.sitter-proxy-token --json
  sitter-proxy --routes routes.json --harness claude-code
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // its errors are said below, in the words of every verb
	fs.Usage = func() {}     // printed below: on stdout for -h, on stderr for a usage error
	usage := func(w io.Writer) {
		fmt.Fprint(w, proxyUsage+"\nFlags:\n")
		fs.VisitAll(func(f *flag.Flag) {
			name, text := flag.UnquoteUsage(f)
			if name != "" {
				name = " " + name
			}
			if f.DefValue != "" && f.DefValue != "false" {
				text += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(w, "  --%s%s\n        %s\n", f.Name, name, text)
		})
	}
	provider := fs.String("provider", "", "atlas `PROVIDER` (anthropic, openai, openai-responses, gemini, azure-foundry, vertex)")
	model := fs.String("model", "", "use `MODEL` for every request (default: the request's, via aliases)")
	upstream := fs.String("upstream", "", "base `URL` overriding the provider's")
	listen := fs.String("listen", "127.0.0.1:0", "listen address `HOST:PORT` (loopback unless you mean otherwise)")
	token := fs.String("token", "", "client `TOKEN` (default: random)")
	tokenFile := fs.String("token-file", "", "write the token to `FILE` (0600) instead of printing it")
	jsonLogs := fs.Bool("json", false, "JSON logs on stderr")
	routesFile := fs.String("routes", "", "routes `FILE`: pick provider and model per request (docs/routing.md)")
	harness := fs.String("harness", "", "with --routes: the `HARNESS` the clients are (its background signals, custom harness rules)")
	record := fs.String("record", "", "with --routes: the JSON-lines `FILE` of routed requests (default: the state dir's proxy/routes.jsonl)")
	stateStore := fs.String("state-store", "", "keep the state shared by replicas (thought signatures) in the NATS JetStream store at `URL`")
	// The grammar of every verb (docs/cli/README.md): -h/--help is the
	// usage and exit 0; an unknown flag or a stray argument is exit 2.
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		usage(stdout)
		return 0
	} else if err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %s\n\n", flagError(err))
		usage(stderr)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sitter proxy: unexpected arguments %q\n\n", fs.Args())
		usage(stderr)
		return 2
	}
	// Where it listens and writes the token: usage errors when no
	// listener or file could be made, said before anything starts.
	if err := proxy.CheckListen(*listen); err != nil {
		fmt.Fprintf(stderr, "sitter proxy: --listen %s: %v\n", *listen, err)
		return 2
	}
	if *tokenFile != "" {
		if err := proxy.CheckTokenFile(*tokenFile); err != nil {
			fmt.Fprintf(stderr, "sitter proxy: --token-file %s: %v\n", *tokenFile, err)
			return 2
		}
	}
	if err := proxy.CheckServeFlags(proxy.ServeFlags{Routes: *routesFile, Provider: *provider, Model: *model,
		Upstream: *upstream, Harness: *harness, Record: *record},
		proxy.Known{Providers: providers.IDs(), Harnesses: providers.HarnessIDs(), HarnessID: providers.HarnessID}); err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %v\n\n", err)
		usage(stderr)
		return 2
	}
	var state proxy.SharedState
	if *stateStore != "" {
		st, closeState, err := openState(ctx, *stateStore, logger(stderr, *jsonLogs))
		if err != nil {
			fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
			return 1
		}
		defer closeState()
		state = st
	}
	if *routesFile != "" {
		return serveRoutes(ctx, routesOptions{file: *routesFile, harness: *harness, record: *record, listen: *listen, token: *token,
			tokenFile: *tokenFile, jsonLogs: *jsonLogs, provider: *provider, model: *model, upstream: *upstream, state: state}, getenv, stdout, stderr)
	}
	p, _ := providers.Lookup(*provider) // CheckServeFlags knows it
	cfg, err := proxyConfig(p, *upstream, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 2
	}
	cfg.Model = *model
	cfg.Token = *token
	if cfg.Token == "" {
		cfg.Token = newToken()
	}
	cfg.Log = logger(stderr, *jsonLogs)
	cfg.State = state
	srv, err := proxy.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 2
	}
	return serve(ctx, srv, *listen, cfg.Token, *token != "", *tokenFile, stdout, stderr)
}

func newToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "sitter-" + hex.EncodeToString(b)
}

func logger(stderr io.Writer, jsonLogs bool) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if jsonLogs {
		h = slog.NewJSONHandler(stderr, nil)
	}
	return slog.New(h)
}

// shutdownGrace is how long the requests in flight have to end once the
// gateway is told to stop (SIGINT, SIGTERM); those that would not are
// ended with an error before it runs out (serve).
var shutdownGrace = 5 * time.Second

// serve listens, announces the URL (and the token, unless the caller
// chose it or it goes to a file) and serves until ctx ends.
func serve(ctx context.Context, h http.Handler, listen, token string, chosen bool, tokenFile string, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "sitter proxy: listen: %v\n", err)
		return 1
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(stderr, "sitter proxy: warning: listening on %s, not loopback\n", ln.Addr())
	}
	if tokenFile != "" {
		if err := writeTokenFile(tokenFile, token); err != nil {
			fmt.Fprintf(stderr, "sitter proxy: token file: %v\n", err)
			ln.Close()
			return 1
		}
	} else if !chosen {
		fmt.Fprintf(stdout, "SITTER_PROXY_TOKEN=%s\n", token)
	}
	fmt.Fprintf(stdout, "SITTER_PROXY_URL=http://%s\n", ln.Addr())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	// The requests' contexts descend from reqs: ending it with
	// proxy.ErrShutdown ends the requests still in flight.
	reqs, endRequests := context.WithCancelCause(context.Background())
	defer endRequests(nil)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, BaseContext: func(net.Listener) context.Context { return reqs }}
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-ctx.Done()
		// The requests in flight have the grace period to end. Those
		// still waiting on an upstream at four fifths of it are ended:
		// each answers its client with its protocol's error and is
		// logged and recorded, in the fifth left.
		end := time.AfterFunc(shutdownGrace*4/5, func() { endRequests(proxy.ErrShutdown) })
		defer end.Stop()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 1
	}
	// Serve returns at once on Shutdown: wait for the requests in flight
	// (their route records come after their answers).
	<-shut
	return 0
}

// proxyConfig turns an atlas provider into the gateway's: base URL
// placeholders from the environment, the key from its variable.
func proxyConfig(p providers.Provider, upstream string, getenv func(string) string) (proxy.Config, error) {
	base := p.BaseURL
	if upstream != "" {
		if err := proxy.CheckBaseURL(upstream); err != nil {
			return proxy.Config{}, fmt.Errorf("--upstream: %v", err)
		}
		base = upstream
	} else {
		for _, pr := range p.Params {
			v := getenv(pr.Env)
			if v == "" {
				return proxy.Config{}, fmt.Errorf("provider %s: set %s (fills {%s} in %s), or pass --upstream", p.ID, pr.Env, pr.Name, p.BaseURL)
			}
			base = strings.ReplaceAll(base, "{"+pr.Name+"}", v)
		}
	}
	key := getenv(p.KeyEnv)
	if key == "" && upstream == "" {
		return proxy.Config{}, fmt.Errorf("provider %s: set %s to the upstream key", p.ID, p.KeyEnv)
	}
	models := map[string]string{}
	for _, m := range p.Models {
		models[strings.ToLower(m.Alias)] = m.Model
	}
	return proxy.Config{Provider: proxy.Provider{
		ID: p.ID, Protocol: p.Protocol, BaseURL: base, Auth: p.Auth, Key: key, APIVersion: p.APIVersion,
		DefaultModel: p.DefaultModel, Models: models, MaxOutputTokens: p.MaxOutputTokens, MaxToolName: p.MaxToolName,
	}}, nil
}

// flagError is a flag package error in the words of the other verbs
// (cobra's): GNU flags with two dashes, "unknown flag".
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag: --" + strings.TrimPrefix(name, "-")
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag needs an argument: --" + strings.TrimPrefix(name, "-")
	}
	return msg
}
