package natsstore

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ProxyBucket is the key-value bucket of the state sitter proxy replicas
// share (sitter proxy --state-store): Gemini thought signatures keyed by
// tool call id. The bucket's TTL is the proxy's own (proxy.SignatureTTL).
const ProxyBucket = "sitter-proxy-state"

// ProxyState is the proxy's shared state in a bucket; it implements
// proxy.SharedState.
type ProxyState struct {
	kv  jetstream.KeyValue
	log *slog.Logger
	// Timeout bounds one Put or Get: a request waits at most this long
	// for the store (a slow store must not hang a conversation).
	Timeout time.Duration
}

// ProxyState opens (creating on first use) the proxy's bucket with ttl.
// An existing bucket is updated only when the URL asks for replicas.
func (c *Conn) ProxyState(ctx context.Context, ttl time.Duration, log *slog.Logger) (*ProxyState, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := jetstream.KeyValueConfig{
		Bucket: ProxyBucket, TTL: ttl, Replicas: c.o.Replicas, Storage: jetstream.FileStorage,
		Description: "sitter proxy state shared by replicas: thought signatures by tool call id",
	}
	var kv jetstream.KeyValue
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		kv, err = c.js.KeyValue(ctx, ProxyBucket)
		switch {
		case errors.Is(err, jetstream.ErrBucketNotFound):
			kv, err = c.js.CreateKeyValue(ctx, cfg)
		case err == nil && c.o.explicitReplicas:
			kv, err = c.js.CreateOrUpdateKeyValue(ctx, cfg)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &ProxyState{kv: kv, log: log, Timeout: 2 * time.Second}, nil
}

// key makes any id a valid key: keys are [-/_=.A-Za-z0-9].
func key(id string) string { return "sig." + base64.RawURLEncoding.EncodeToString([]byte(id)) }

// Put stores a value; a failure is logged (the replica that issued it
// still has it in memory).
func (p *ProxyState) Put(id, value string) {
	ctx, cancel := context.WithTimeout(context.Background(), p.Timeout)
	defer cancel()
	if _, err := p.kv.PutString(ctx, key(id), value); err != nil {
		p.log.Warn("proxy state: put", "error", err)
	}
}

// Get reads a value; a failure is a miss, logged.
func (p *ProxyState) Get(id string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), p.Timeout)
	defer cancel()
	e, err := p.kv.Get(ctx, key(id))
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			p.log.Warn("proxy state: get", "error", err)
		}
		return "", false
	}
	return string(e.Value()), true
}
