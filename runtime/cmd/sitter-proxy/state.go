package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"sitter.dev/sitter/runtime/proxy"
	"sitter.dev/sitter/runtime/store"
	"sitter.dev/sitter/runtime/store/natsstore"
)

// openState connects to the store of --state-store, whose bucket then
// holds what the gateway remembers between requests, so several replicas
// behind one address serve one conversation (docs/store.md). Nothing of
// NATS runs without the flag.
func openState(ctx context.Context, url string, log *slog.Logger) (proxy.SharedState, func(), error) {
	switch store.Scheme(url) {
	case "nats", "tls", "ws", "wss":
	default:
		return nil, nil, fmt.Errorf("--state-store %s: a store URL is nats://host:port (or tls://, ws://, wss://)", natsstore.RedactURL(url))
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := natsstore.Dial(ctx, url, natsstore.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("--state-store: %w", err)
	}
	st, err := c.ProxyState(ctx, proxy.SignatureTTL, log)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("--state-store %s: %w", c.URL(), err)
	}
	return st, func() { c.Close() }, nil
}
