package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sitter.dev/sitter/generated/providers"
	"sitter.dev/sitter/runtime/proxy"
)

type routesOptions struct {
	file, harness, record, listen, token, tokenFile string
	jsonLogs                                        bool
	// provider, model and upstream do not go with --routes.
	provider, model, upstream string
	state                     proxy.SharedState
}

// serveRoutes is sitter proxy --routes: the routes file is read and
// checked once, at start (unknown providers, unset keys, cyclic
// fallbacks fail here with file:line:col); requests are then routed in
// memory.
func serveRoutes(ctx context.Context, o routesOptions, getenv func(string) string, stdout, stderr io.Writer) int {
	if o.harness != "" {
		o.harness, _ = providers.HarnessID(o.harness) // CheckServeFlags knows it
	}
	data, err := os.ReadFile(o.file)
	if err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 2
	}
	rt, err := proxy.LoadRoutes(o.file, data, routesAtlas(), getenv)
	if err != nil {
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 2
	}
	path := o.record
	// A --record FILE the user names is theirs to link; the default in
	// sitter's state dir is opened without following a link (a link
	// planted there must not have the proxy append to its target).
	flag := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if path == "" {
		dir, err := stateDir(getenv)
		if err != nil {
			fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
			return 1
		}
		path = filepath.Join(dir, "proxy", "routes.jsonl")
		flag |= oNoFollow
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		fmt.Fprintf(stderr, "sitter proxy: record: %v\n", err)
		return 1
	}
	if oNoFollow == 0 && flag != os.O_WRONLY|os.O_APPEND|os.O_CREATE {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			fmt.Fprintf(stderr, "sitter proxy: record: %s is a symbolic link; not following it\n", path)
			return 1
		}
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "sitter proxy: record: %v\n", err)
		return 1
	}
	defer f.Close()
	log := logger(stderr, o.jsonLogs)
	rec := proxy.NewRecordFile(f, log)
	token := o.token
	if token == "" {
		token = newToken()
	}
	router, err := proxy.NewRouter(proxy.RouterConfig{Routes: rt, Signals: Signals(), Harness: o.harness,
		Base: proxy.Config{Token: token, Log: log, State: o.state}, Record: rec.Record})
	if err != nil {
		rec.Close()
		fmt.Fprintf(stderr, "sitter proxy: %v\n", err)
		return 2
	}
	code := serve(ctx, router, o.listen, token, o.token != "", o.tokenFile, stdout, stderr)
	if err := rec.Close(); err != nil {
		// Written to the log as they happened; the exit says so too.
		fmt.Fprintf(stderr, "sitter proxy: %s: %v\n", path, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// routesAtlas is what a routes file is checked against: the atlas's
// providers and harnesses.
func routesAtlas() proxy.RoutesAtlas {
	a := proxy.RoutesAtlas{Providers: map[string]proxy.ProviderSpec{}}
	for _, p := range providers.All {
		models := map[string]string{}
		for _, m := range p.Models {
			models[strings.ToLower(m.Alias)] = m.Model
		}
		spec := proxy.ProviderSpec{KeyEnv: p.KeyEnv, Provider: proxy.Provider{
			ID: p.ID, Protocol: p.Protocol, BaseURL: p.BaseURL, Auth: p.Auth, APIVersion: p.APIVersion,
			DefaultModel: p.DefaultModel, Models: models, MaxOutputTokens: p.MaxOutputTokens, MaxToolName: p.MaxToolName,
		}}
		for _, pr := range p.Params {
			spec.Params = append(spec.Params, [2]string{pr.Name, pr.Env})
		}
		a.Providers[p.ID] = spec
	}
	a.Harnesses = providers.HarnessIDs()
	return a
}

// Signals converts the generated request signals (atlas/routing.cue).
func Signals() proxy.Signals {
	conv := func(ms []providers.Match) []proxy.SignalMatch {
		var out []proxy.SignalMatch
		for _, m := range ms {
			out = append(out, proxy.SignalMatch{Path: m.Path, Values: m.Values, Prefix: m.Prefix, Pattern: m.Pattern, Present: m.Present})
		}
		return out
	}
	s := proxy.Signals{Think: map[string][]proxy.SignalMatch{}, WebSearch: map[string][]proxy.SignalMatch{}, Image: map[string][]proxy.SignalMatch{}, Background: map[string][][]proxy.SignalMatch{}}
	for _, p := range providers.Signals {
		s.Think[p.Protocol], s.WebSearch[p.Protocol], s.Image[p.Protocol] = conv(p.Think), conv(p.WebSearch), conv(p.Image)
	}
	for _, h := range providers.Background {
		for _, g := range h.Background {
			s.Background[h.Harness] = append(s.Background[h.Harness], conv(g))
		}
	}
	return s
}

// stateDir is sitter's state directory: $SITTER_STATE_DIR, else
// $XDG_STATE_HOME/sitter, else ~/.local/state/sitter.
func stateDir(getenv func(string) string) (string, error) {
	if d := getenv("SITTER_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sitter"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", fmt.Errorf("no state dir: set SITTER_STATE_DIR")
	}
	return filepath.Join(home, ".local", "state", "sitter"), nil
}
