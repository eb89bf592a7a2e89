package verbs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitter.dev/sitter/generated/providers"
	"sitter.dev/sitter/runtime/internal/sibling"
	"sitter.dev/sitter/runtime/proxy"
)

// proxyStopGrace is how long the gateway has to shut down after the first
// forwarded signal before it is killed.
const proxyStopGrace = 10 * time.Second

// runsItself marks a verb that holds subcommands and runs by itself too
// (sitter proxy serves; sitter proxy stats reads what it recorded): not a
// group, so alone it is no usage error.
const runsItself = "runsItself"

// newProxyCmd is `sitter proxy`. Its flags are sitter-proxy's, checked
// here (help, completion, usage errors as every verb) and passed on.
func newProxyCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "proxy --provider P | --routes FILE",
		Short: "LLM gateway translating between wire protocols",
		Long: `Serves /v1/messages (+ /count_tokens), /v1/chat/completions, /v1/responses and
/v1beta/models/{m}:generateContent|streamGenerateContent|countTokens, translating
to the provider's protocol, so that a harness can use a provider that speaks
another protocol. Prints SITTER_PROXY_URL=http://… on start. The upstream key
comes from the provider's environment variable; clients authenticate with the
token (printed once as SITTER_PROXY_TOKEN, or written to --token-file with mode
0600). With --routes FILE the provider and model are chosen per request by the
file's rules (background, think, long context, web search, image, custom; with
fallbacks), and each routed request is recorded for sitter proxy stats
(docs/routing.md). The gateway is the sitter-proxy binary, next to sitter.`,
		Example: `  OPENAI_API_KEY=… sitter proxy --provider openai
  sitter proxy --provider anthropic --listen 127.0.0.1:8787 --token-file ~/.sitter-proxy-token --json
  sitter proxy --routes routes.json --harness claude-code
  GEMINI_API_KEY=… sitter proxy --provider gemini --listen 0.0.0.0:8787 --state-store nats://nats.internal:4222
  sitter proxy stats`,
		Args: func(c *cobra.Command, args []string) error {
			// An argument here is a subcommand mistyped (stat for stats).
			if len(args) > 0 && len(subSuggestions(c, args[0])) > 0 {
				return unknownSub(c, args[0])
			}
			return noArgs(c, args)
		},
		Annotations: map[string]string{runsItself: "serves; stats reads its record"},
		RunE: func(c *cobra.Command, _ []string) error {
			if !c.Flags().Changed("provider") && !c.Flags().Changed("routes") {
				return errors.New("--provider or --routes is required")
			}
			// As the gateway checks them, before it is even looked for.
			l, _ := c.Flags().GetString("listen")
			if err := proxy.CheckListen(l); err != nil {
				return fmt.Errorf("--listen %s: %v", l, err)
			}
			if tf, _ := c.Flags().GetString("token-file"); tf != "" {
				if err := proxy.CheckTokenFile(tf); err != nil {
					return fmt.Errorf("--token-file %s: %v", tf, err)
				}
			}
			get := func(n string) string { v, _ := c.Flags().GetString(n); return v }
			if err := proxy.CheckServeFlags(proxy.ServeFlags{Routes: get("routes"), Provider: get("provider"), Model: get("model"),
				Upstream: get("upstream"), Harness: get("harness"), Record: get("record")}, knownToProxy()); err != nil {
				return usageErr("%v", err)
			}
			var args []string
			c.Flags().Visit(func(f *pflag.Flag) { args = append(args, "--"+f.Name+"="+f.Value.String()) })
			return code(runProxy(args, e.stdout, e.stderr))
		},
	}
	fs := c.Flags()
	fs.String("provider", "", "atlas `PROVIDER` (anthropic, openai, openai-responses, gemini, azure-foundry, vertex)")
	fs.String("model", "", "use `MODEL` for every request (default: the request's, via aliases)")
	fs.String("upstream", "", "base `URL` overriding the provider's")
	fs.String("listen", "127.0.0.1:0", "listen address `HOST:PORT` (loopback unless you mean otherwise)")
	fs.String("token", "", "client `TOKEN` (default: random)")
	fs.String("token-file", "", "write the token to `FILE` (0600) instead of printing it")
	fs.Bool("json", false, "JSON logs on stderr")
	fs.String("routes", "", "routes `FILE`: provider and model per request (docs/routing.md); replaces --provider, --model, --upstream")
	fs.String("harness", "", "with --routes: the `HARNESS` the clients are (its background signals, custom harness rules)")
	fs.String("record", "", "with --routes: the JSON-lines `FILE` recording routed requests (default: the state dir's proxy/routes.jsonl)")
	fs.String("state-store", "", "keep what replicas share between requests (Gemini thought signatures) in the NATS JetStream store at `URL` (docs/store.md)")
	c.AddCommand(newProxyStatsCmd(e))
	c.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return providers.IDs(), cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

// knownToProxy is the atlas's providers and harnesses, as the proxy's
// flag check takes them.
func knownToProxy() proxy.Known {
	return proxy.Known{Providers: providers.IDs(), Harnesses: providers.HarnessIDs(), HarnessID: providers.HarnessID}
}

// runProxy hands `sitter proxy …` to the sitter-proxy binary installed
// next to sitter (or on PATH). The gateway needs net/http and crypto/tls,
// whose start-up cost (≈1.2 ms on a 2-core machine, measured with
// hookbench) every hook call would otherwise pay: the hook binary stays
// free of them.
//
// The gateway holds the upstream key and serves a port, so it must not
// outlive `sitter proxy`: SIGINT, SIGTERM and SIGHUP are forwarded to it
// (SIGHUP as SIGTERM: the gateway shuts down gracefully on SIGINT and
// SIGTERM) and sitter proxy exits only once the gateway did; it is killed
// when it has not stopped proxyStopGrace after the first signal. Should
// sitter proxy itself die without a chance to forward (SIGKILL), the
// gateway gets SIGTERM from the kernel on Linux (Pdeathsig, gatewayAttr),
// and on any OS stops by itself within a second once re-parented.
func runProxy(args []string, stdout, stderr io.Writer) int {
	bin := sibling.Find("sitter-proxy")
	if bin == "" {
		fmt.Fprintln(stderr, "sitter proxy: sitter-proxy not found next to sitter or on PATH: build it with `make build` (go build ./runtime/cmd/sitter-proxy)")
		return 2
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.SysProcAttr = gatewayAttr()
	// Elsewhere (and as a second guard), the gateway stops once it finds
	// itself re-parented (runtime/cmd/sitter-proxy/parent.go).
	cmd.Env = append(os.Environ(), "SITTER_PROXY_PARENT="+strconv.Itoa(os.Getpid()))
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// Pdeathsig fires when the thread that started the child ends, not the
	// process: keep this goroutine on its thread until the child is waited
	// for, so that no other goroutine can lock that thread and exit with it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var kill <-chan time.Time
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case s := <-sigs:
			if s == syscall.SIGHUP {
				s = syscall.SIGTERM
			}
			if cmd.Process.Signal(s) != nil {
				cmd.Process.Kill() // no signals to forward on this OS
			}
			if kill == nil {
				kill = time.After(proxyStopGrace)
			}
		case <-kill:
			fmt.Fprintf(stderr, "sitter proxy: the gateway did not stop within %s: killed\n", proxyStopGrace)
			cmd.Process.Kill()
		}
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				return 128 + int(st.Signal())
			}
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 1
	}
	return 0
}
