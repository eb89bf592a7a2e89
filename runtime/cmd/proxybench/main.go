// Command proxybench measures what sitter proxy adds: it starts a fake
// OpenAI Chat upstream and the proxy in-process on 127.0.0.1, then times,
// interleaved in a new random order each round, the same exchange sent
// directly to the upstream and sent through the proxy as an Anthropic
// client (full translation both ways): JSON round trip and streaming
// time to first byte (p50/p99), and the proxy's requests/second under
// concurrent clients. Then, in rounds of their own and in 31 sets of
// fresh proxies, it times the same translated request through a proxy
// with a 20-rule routes file and the atlas's request signals, through a
// proxy without routes and through a second one (the control), and
// compares what each adds over the upstream (issue 19: routing within
// 1.05×, the median of the sets).
//
//	go run ./runtime/cmd/proxybench [-n 2000] [-c 8] [-d 2s]
//
// Targets (issue 6): under 1 ms p50 added; streaming first byte within
// 1 ms of the upstream's. A miss is informational unless -strict.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sitter.dev/sitter/generated/providers"
	"sitter.dev/sitter/runtime/internal/fakellm"
	"sitter.dev/sitter/runtime/proxy"
)

const chatJSON = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how can I help?","tool_calls":[{"id":"call_1","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"ls -la\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":120,"completion_tokens":30}}`

var chatStream = []string{
	`data: {"id":"c","model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}` + "\n\n",
	`data: {"id":"c","model":"gpt-x","choices":[{"index":0,"delta":{"content":" there"}}]}` + "\n\n",
	`data: {"id":"c","model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"Bash","arguments":"{\"command\""}}]}}]}` + "\n\n",
	`data: {"id":"c","model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"ls\"}"}}]}}]}` + "\n\n",
	`data: {"id":"c","model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
	`data: {"id":"c","model":"gpt-x","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30}}` + "\n\n",
	"data: [DONE]\n\n",
}

const chatReq = `{"model":"gpt-x","max_tokens":100,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"list files"}],"tools":[{"type":"function","function":{"name":"Bash","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}]%s}`
const antReq = `{"model":"gpt-x","max_tokens":100,"system":"be brief","messages":[{"role":"user","content":"list files"}],"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]%s}`

func main() {
	n := flag.Int("n", 2000, "timed requests per variant")
	c := flag.Int("c", 8, "concurrent clients for requests/second")
	d := flag.Duration("d", 2*time.Second, "duration of the requests/second run")
	strict := flag.Bool("strict", false, "exit 1 when a target is missed")
	flag.Parse()
	if err := bench(*n, *c, *d, *strict); err != nil {
		fmt.Fprintln(os.Stderr, "proxybench:", err)
		os.Exit(1)
	}
}

type rig struct {
	client           *http.Client
	jsonUp, streamUp string
	jsonPx, streamPx string
}

func start(body string, chunks []string) (*fakellm.Server, *http.Server, string, error) {
	up, err := fakellm.Start()
	if err != nil {
		return nil, nil, "", err
	}
	up.Always(fakellm.Reply{Body: body, Chunks: chunks})
	hs, url, err := startPlain(up.URL)
	return up, hs, url, err
}

// startPlain starts a proxy without routes in front of upstream, with the
// atlas's openai provider as the routed proxy's rules use it: the two
// differ in routing only.
func startPlain(upstream string) (*http.Server, string, error) {
	p := atlasProvider("openai")
	p.BaseURL, p.Key = upstream+"/v1", "k"
	srv, err := proxy.New(proxy.Config{Provider: p, Token: "t"})
	if err != nil {
		return nil, "", err
	}
	return serve(srv)
}

func serve(h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	return hs, "http://" + ln.Addr().String(), nil
}

// atlasProvider is the atlas's provider id as a proxy provider, with
// the fields a routes file's provider gets from the atlas.
func atlasProvider(id string) proxy.Provider {
	for _, p := range providers.All {
		if p.ID == id {
			return proxy.Provider{ID: p.ID, Protocol: p.Protocol, BaseURL: p.BaseURL, Auth: p.Auth, DefaultModel: p.DefaultModel, MaxOutputTokens: p.MaxOutputTokens, MaxToolName: p.MaxToolName}
		}
	}
	panic("no atlas provider " + id)
}

// routes20 is a routes file of 20 rules: the six built-in ones and 14
// custom ones, none of which the bench request matches before default
// (each is tested, as a real request would test them).
func routes20(upstream string) string {
	var custom []string
	for i := 0; i < 12; i++ {
		custom = append(custom, fmt.Sprintf(`{"name": "model-%d", "model": "^claude-opus-%d", "use": "up,gpt-x"}`, i, i))
	}
	custom = append(custom, `{"name": "codex", "harness": "codex", "use": "up,gpt-x"}`, `{"name": "tagged", "header": "X-Route", "value": "^fast$", "use": "up,gpt-x"}`)
	return fmt.Sprintf(`{"providers": {"up": {"provider": "openai", "baseURL": %q, "keyEnv": "BENCH_KEY"}},
  "rules": {"default": "up,gpt-x", "background": "up,gpt-x", "think": "up,gpt-x", "webSearch": "up,gpt-x", "image": "up,gpt-x",
    "longContext": {"use": "up,gpt-x", "threshold": 100000}, "custom": [%s]}}`, upstream, strings.Join(custom, ",\n"))
}

// startRouted starts a proxy with a routes file instead of one provider,
// in front of the upstream the proxy without routes uses: the two differ
// in routing only (a fake upstream of their own made the routed variant
// about 10% slower by itself).
func startRouted(upstream string) (*http.Server, string, error) {
	atlas := proxy.RoutesAtlas{Providers: map[string]proxy.ProviderSpec{}, Harnesses: providers.HarnessIDs()}
	for _, p := range providers.All {
		atlas.Providers[p.ID] = proxy.ProviderSpec{KeyEnv: p.KeyEnv, Provider: atlasProvider(p.ID)}
	}
	rt, err := proxy.LoadRoutes("routes20.json", []byte(routes20(upstream+"/v1")), atlas, func(string) string { return "k" })
	if err != nil {
		return nil, "", err
	}
	if n := len(rt.Rules); n != 20 {
		return nil, "", fmt.Errorf("routes20 has %d rules", n)
	}
	conv := func(ms []providers.Match) []proxy.SignalMatch {
		var out []proxy.SignalMatch
		for _, m := range ms {
			out = append(out, proxy.SignalMatch{Path: m.Path, Values: m.Values, Prefix: m.Prefix, Pattern: m.Pattern, Present: m.Present})
		}
		return out
	}
	sig := proxy.Signals{Think: map[string][]proxy.SignalMatch{}, WebSearch: map[string][]proxy.SignalMatch{}, Image: map[string][]proxy.SignalMatch{}, Background: map[string][][]proxy.SignalMatch{}}
	for _, p := range providers.Signals {
		sig.Think[p.Protocol], sig.WebSearch[p.Protocol], sig.Image[p.Protocol] = conv(p.Think), conv(p.WebSearch), conv(p.Image)
	}
	for _, h := range providers.Background {
		for _, g := range h.Background {
			sig.Background[h.Harness] = append(sig.Background[h.Harness], conv(g))
		}
	}
	rec := proxy.NewRecordFile(io.Discard, nil)
	srv, err := proxy.NewRouter(proxy.RouterConfig{Routes: rt, Signals: sig, Harness: "claude-code", Base: proxy.Config{Token: "t"}, Record: rec.Record})
	if err != nil {
		return nil, "", err
	}
	return serve(srv)
}

// variant is one exchange the bench times.
type variant struct {
	name      string
	url, body string
	anthropic bool
	first     bool // time to first byte, else whole exchange
	lat       []time.Duration
}

// rounds warms the variants' connections up, then times n rounds of
// them. Each round takes the variants in a new random order (seeded: runs
// compare): a variant that always followed the same one would carry that
// one's tail. Rotating a fixed order is not enough: it still puts each
// variant right after the same neighbour (the routed variant, always
// after the streaming one, measured 9% slower at p50 than an identical
// routed proxy placed elsewhere in the list).
func rounds(cl *http.Client, vs []*variant, n int) error {
	for i := 0; i < n/10+10; i++ {
		for _, v := range vs {
			if _, _, err := once(cl, v.url, v.body, v.anthropic); err != nil {
				return err
			}
		}
	}
	order := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		for _, j := range order.Perm(len(vs)) {
			v := vs[j]
			f, all, err := once(cl, v.url, v.body, v.anthropic)
			if err != nil {
				return err
			}
			if v.first {
				v.lat = append(v.lat, f)
			} else {
				v.lat = append(v.lat, all)
			}
		}
	}
	return nil
}

// once sends one request and returns the time to the first body byte and
// to the end.
func once(cl *http.Client, url, body string, anthropic bool) (time.Duration, time.Duration, error) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if anthropic {
		req.Header.Set("X-Api-Key", "t")
	} else {
		req.Header.Set("Authorization", "Bearer t")
	}
	t0 := time.Now()
	resp, err := cl.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var b [1]byte
	if _, err := io.ReadFull(resp.Body, b[:]); err != nil {
		return 0, 0, err
	}
	first := time.Since(t0)
	rest, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return 0, 0, fmt.Errorf("%s: status %d: %s", url, resp.StatusCode, rest)
	}
	return first, time.Since(t0), err
}

func pct(xs []time.Duration, p float64) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }

func bench(n, conc int, dur time.Duration, strict bool) error {
	ju, jp, jurl, err := start(chatJSON, nil)
	if err != nil {
		return err
	}
	defer ju.Close()
	defer jp.Close()
	su, sp, surl, err := start("", chatStream)
	if err != nil {
		return err
	}
	defer su.Close()
	defer sp.Close()
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	vs := []*variant{
		{name: "json direct (upstream)", url: ju.URL + "/v1/chat/completions", body: fmt.Sprintf(chatReq, "")},
		{name: "json via proxy (anthropic→chat)", url: jurl + "/v1/messages", body: fmt.Sprintf(antReq, ""), anthropic: true},
		{name: "json via proxy (chat passthrough)", url: jurl + "/v1/chat/completions", body: fmt.Sprintf(chatReq, "")},
		{name: "stream first byte direct", url: su.URL + "/v1/chat/completions", body: fmt.Sprintf(chatReq, `,"stream":true`), first: true},
		{name: "stream first byte via proxy (anthropic→chat)", url: surl + "/v1/messages", body: fmt.Sprintf(antReq, `,"stream":true`), anthropic: true, first: true},
	}
	if err := rounds(cl, vs, n); err != nil {
		return err
	}
	routing, err := routingSets(cl, ju.URL, n)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "%-46s %10s %10s\n", "variant", "p50", "p99")
	for _, v := range vs {
		fmt.Fprintf(&out, "%-46s %10s %10s\n", v.name, ms(pct(v.lat, .5)), ms(pct(v.lat, .99)))
	}
	addJSON := pct(vs[1].lat, .5) - pct(vs[0].lat, .5)
	addJSON99 := pct(vs[1].lat, .99) - pct(vs[0].lat, .99)
	addFirst := pct(vs[4].lat, .5) - pct(vs[3].lat, .5)
	addFirst99 := pct(vs[4].lat, .99) - pct(vs[3].lat, .99)
	fmt.Fprintf(&out, "\nadded by the proxy (translated): json p50 %s, p99 %s; stream first byte p50 %s, p99 %s\n", ms(addJSON), ms(addJSON99), ms(addFirst), ms(addFirst99))
	out.WriteString(routing.report)
	addRatio := routing.median

	// Requests/second through the proxy, translated JSON.
	var count atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for i := 0; i < conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, _, err := once(cl, vs[1].url, vs[1].body, true); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return e.(error)
	}
	fmt.Fprintf(&out, "requests/second via proxy (anthropic→chat JSON, %d clients, upstream in the same process): %.0f\n", conc, float64(count.Load())/dur.Seconds())
	ok := addJSON < time.Millisecond && addFirst < time.Millisecond && addRatio <= routeTarget
	verdict := "PASS"
	if !ok {
		verdict = "MISS"
	}
	fmt.Fprintf(&out, "%d interleaved runs each; targets: <1 ms p50 added, first byte within 1 ms, routing within %.2f×: %s\n", n, routeTarget, verdict)
	os.Stdout.Write(out.Bytes())
	if strict && !ok {
		return fmt.Errorf("targets missed")
	}
	return nil
}

// routeTarget: what the routed proxy may add over the upstream, in times
// what the proxy without routes adds (issue 19).
const routeTarget = 1.05

// routeSets is how many times routingSets starts its proxies afresh:
// one set's ratio can be 10% off either way (the control's too), so the
// verdict is the median of many (with 15, the control's median still
// strayed to 1.03×; with 31 it stays within 1%).
const routeSets = 31

type routingResult struct {
	median float64 // of the sets' ratios
	report string
}

// routingSets times routing in rounds of its own: the upstream, a proxy
// without routes, a second one (the control: what two identical proxies
// differ by) and a proxy with a 20-rule routes file, each serving one
// request a round (in the rounds above the proxy without routes also
// serves the passthrough variant, and a proxy that serves more of the
// requests answers faster: its connections are warmer). It does so in
// routeSets sets, each with its proxies started afresh: within one set
// a proxy can stay faster than an identical one by a few percent (the
// ports, the connections and the goroutines it happened to get), so the
// verdict takes the median of the sets' ratios.
func routingSets(cl *http.Client, upstream string, n int) (routingResult, error) {
	var ratios, controls []float64
	var lines strings.Builder
	for set := 0; set < routeSets; set++ {
		// The proxy without routes, the control, the routed proxy; each
		// set starts them in another order (the one started first or
		// last gets no lasting edge).
		starts := []func(string) (*http.Server, string, error){startPlain, startPlain, startRouted}
		servers := make([]*http.Server, len(starts))
		urls := make([]string, len(starts))
		for k := range starts {
			i := (k + set) % len(starts)
			hs, url, err := starts[i](upstream)
			if err != nil {
				return routingResult{}, err
			}
			servers[i], urls[i] = hs, url
		}
		vs := []*variant{{url: upstream + "/v1/chat/completions", body: fmt.Sprintf(chatReq, "")}}
		for _, u := range urls {
			vs = append(vs, &variant{url: u + "/v1/messages", body: fmt.Sprintf(antReq, ""), anthropic: true})
		}
		err := rounds(cl, vs, max(n/4, 100))
		for _, hs := range servers {
			hs.Close()
		}
		if err != nil {
			return routingResult{}, err
		}
		direct, plain, control, routed := pct(vs[0].lat, .5), pct(vs[1].lat, .5), pct(vs[2].lat, .5), pct(vs[3].lat, .5)
		ratio, ctl := float64(routed-direct)/float64(plain-direct), float64(control-direct)/float64(plain-direct)
		ratios, controls = append(ratios, ratio), append(controls, ctl)
		fmt.Fprintf(&lines, "  set %d: upstream %s; added without routes %s, by the control %s (%.3f×), with routes %s (%.3f×)\n",
			set+1, ms(direct), ms(plain-direct), ms(control-direct), ctl, ms(routed-direct), ratio)
	}
	med, ctl := median(ratios), median(controls)
	report := fmt.Sprintf("routes (20 rules), %d sets of their own (fresh proxies each):\n%s"+
		"  added over the upstream with routes, median of the sets: %.3f× what the proxy without routes adds (target ≤ %.2f×: %s); an identical proxy without routes: %.3f×\n",
		routeSets, lines.String(), med, routeTarget, map[bool]string{true: "PASS", false: "MISS"}[med <= routeTarget], ctl)
	return routingResult{median: med, report: report}, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
