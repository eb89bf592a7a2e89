package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

func randomID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// skipSignature is the sentinel Gemini accepts in place of a
// thoughtSignature it never issued (history from another model).
const skipSignature = "skip_thought_signature_validator"

// SignatureTTL is how long a thought signature is kept (in memory, and in
// a shared store's bucket).
const SignatureTTL = 24 * time.Hour

// SharedState keeps what the gateway remembers between requests where
// several gateways see it (sitter proxy --state-store: a JetStream
// key-value bucket), so that replicas behind one address serve one
// conversation. Put returns once the value is stored; a Get that fails
// is a miss. Without one, the state stays in this process.
type SharedState interface {
	Put(key, value string)
	Get(key string) (string, bool)
}

// sigStore keeps Gemini thoughtSignatures server-side, keyed by the tool
// call id the client sees: harnesses drop unknown fields of tool calls, and
// Gemini 3 answers 400 when the signature does not come back.
type sigStore struct {
	mu     sync.Mutex
	ttl    time.Duration
	m      map[string]sigEntry
	shared SharedState // also there, when set
}

type sigEntry struct {
	sig string
	at  time.Time
}

func newSigStore(ttl time.Duration) *sigStore {
	return &sigStore{ttl: ttl, m: map[string]sigEntry{}}
}

func (s *sigStore) put(id, sig string) {
	if s == nil || id == "" || sig == "" {
		return
	}
	s.mu.Lock()
	now := time.Now()
	if len(s.m) > 4096 {
		for k, e := range s.m {
			if now.Sub(e.at) > s.ttl {
				delete(s.m, k)
			}
		}
	}
	s.m[id] = sigEntry{sig, now}
	s.mu.Unlock()
	// Stored before the client sees the call, so another replica that
	// gets the next turn finds it.
	if s.shared != nil {
		s.shared.Put(id, sig)
	}
}

// get returns the signature of a tool call, or the sentinel.
func (s *sigStore) get(id string) string {
	if s != nil {
		s.mu.Lock()
		e, ok := s.m[id]
		s.mu.Unlock()
		if ok && time.Since(e.at) <= s.ttl {
			return e.sig
		}
		if s.shared != nil && id != "" {
			if sig, ok := s.shared.Get(id); ok {
				return sig
			}
		}
	}
	return skipSignature
}
