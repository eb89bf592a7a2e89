package natsstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"sitter.dev/sitter/runtime/audit"
)

// Team audit: every machine ships its local audit log (runtime/audit) to
// one stream, SITTER_AUDIT, on subject sitter.audit.<source>.<log>: the
// source names the machine (its host name unless told), the log is a hash
// of the state dir holding the log, so two logs of one machine (two users)
// never share a subject. Each message is one line of the log, its bytes
// exactly the line's.
//
// The position a shipper resumes from is the last message of its subject:
// its Sitter-Audit-Mark header names the line it carries (audit.Mark: the
// offset just past the line in its file and the line's hash, which survive
// rotation). Shipping a line and recording the position are therefore one
// write; there is no window between them in which a crash ships a line
// twice. Every publish expects the subject's last sequence to be the one
// the shipper read, so two shippers of one log (a --follow and a one-off
// ship) cannot interleave: the loser re-reads the position and goes on
// after it. A publish whose acknowledgement was lost is retried with the
// same message id (Nats-Msg-Id, derived from the log and the line's mark)
// and refused as a duplicate or as a stale expectation, never stored twice.
const (
	AuditStream = "SITTER_AUDIT"
	AuditPrefix = "sitter.audit."
	hdrMark     = "Sitter-Audit-Mark"
	hdrSource   = "Sitter-Source"
)

func isToken64(s string) bool { return isToken(s, 64) }

// DefaultSource names this machine in the team audit: its host name, with
// what cannot be a subject token replaced by '-'.
func DefaultSource() string {
	h, _ := os.Hostname()
	h = strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return r
		}
		return '-'
	}, h)
	if len(h) > 64 {
		h = h[:64]
	}
	if h == "" {
		h = "unknown"
	}
	return h
}

// LogID names a local audit log by its state dir.
func LogID(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(h[:8])
}

// ShipOptions say what to ship.
type ShipOptions struct {
	Log    audit.Config // the local log
	Source string       // the machine's name in the team audit (default DefaultSource)
	// Follow keeps shipping what is appended until ctx ends, looking every
	// Interval (default 1s).
	Follow   bool
	Interval time.Duration
	// Pass, when set, is told what each pass that shipped or skipped
	// something did (with Follow, one call per such pass).
	Pass func(ShipResult)

	afterPublish func(n int) error // tests: a crash after the n-th publish
}

// ShipResult is what a ship did.
type ShipResult struct {
	Source  string `json:"source"`
	Subject string `json:"subject"`
	Shipped int    `json:"shipped"`
	// Skipped: lines that are not an entry (garbage, a torn line) or too
	// long for one message; they stay in the local log.
	Skipped int `json:"skipped"`
	// Lost: the last shipped line's file had rotated out, so lines after
	// it may have been lost to rotation before they were shipped.
	Lost    bool     `json:"lost,omitempty"`
	Refused []string `json:"refused,omitempty"`
}

func (c *Conn) auditStream(ctx context.Context) (jetstream.Stream, error) {
	var st jetstream.Stream
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		st, err = c.js.Stream(ctx, AuditStream)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			st, err = c.js.CreateStream(ctx, jetstream.StreamConfig{
				Name: AuditStream, Subjects: []string{AuditPrefix + ">"}, Storage: jetstream.FileStorage,
				Replicas: c.o.Replicas, AllowDirect: true, Duplicates: 2 * time.Minute,
				Description: "sitter team audit: one message per hook decision, a subject per machine and log",
			})
		case err == nil && c.o.explicitReplicas && st.CachedInfo().Config.Replicas != c.o.Replicas:
			cfg := st.CachedInfo().Config
			cfg.Replicas = c.o.Replicas
			st, err = c.js.UpdateStream(ctx, cfg)
		}
		return err
	})
	return st, err
}

// ShipAudit ships the lines of the local audit log that the store does
// not have yet; with o.Follow it goes on until ctx ends. The result adds
// up every pass.
func (c *Conn) ShipAudit(ctx context.Context, o ShipOptions) (ShipResult, error) {
	if o.Source == "" {
		o.Source = DefaultSource()
	}
	if !isToken64(o.Source) {
		return ShipResult{}, fmt.Errorf("--source %q: a source is letters, digits, - and _ (at most 64)", o.Source)
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	total := ShipResult{Source: o.Source, Subject: AuditPrefix + o.Source + "." + LogID(o.Log.Dir)}
	st, err := c.auditStream(ctx)
	if err != nil {
		return total, fmt.Errorf("audit stream: %w", err)
	}
	sh := &shipper{c: c, st: st, o: o, subject: total.Subject}
	if err := sh.readPosition(ctx); err != nil {
		return total, err
	}
	var last fileState
	for {
		now := logState(o.Log)
		if now != last || !o.Follow {
			r, err := sh.pass(ctx)
			total.Shipped += r.Shipped
			total.Skipped += r.Skipped
			total.Lost = total.Lost || r.Lost
			total.Refused = r.Refused
			if o.Pass != nil && (r.Shipped > 0 || r.Skipped > 0 || r.Lost) {
				o.Pass(r)
			}
			if err != nil {
				if o.Follow && ctx.Err() != nil {
					return total, nil
				}
				return total, err
			}
			last = now
		}
		if !o.Follow {
			return total, nil
		}
		t := time.NewTimer(o.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return total, nil
		case <-t.C:
		}
	}
}

// fileState is what a follow compares to tell that the log changed.
type fileState struct {
	size  int64
	mtime int64
	n     int
}

func logState(c audit.Config) fileState {
	fs := audit.Files(c)
	var s fileState
	s.n = len(fs)
	if len(fs) > 0 {
		if st, err := os.Stat(fs[len(fs)-1]); err == nil {
			s.size, s.mtime = st.Size(), st.ModTime().UnixNano()
		}
	}
	return s
}

type shipper struct {
	c       *Conn
	st      jetstream.Stream
	o       ShipOptions
	subject string
	mark    audit.Mark // the last shipped line
	seq     uint64     // its stream sequence (0: nothing shipped)
	n       int        // publishes so far (tests)
}

// readPosition reads the last shipped line from the subject's last message.
func (sh *shipper) readPosition(ctx context.Context) error {
	return sh.c.retry(ctx, func(ctx context.Context) error {
		m, err := sh.st.GetLastMsgForSubject(ctx, sh.subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			sh.mark, sh.seq = audit.Mark{}, 0
			return nil
		}
		if err != nil {
			return err
		}
		mk, err := audit.ParseMark(m.Header.Get(hdrMark))
		if err != nil {
			return fmt.Errorf("audit stream message %d: %w", m.Sequence, err)
		}
		sh.mark, sh.seq = mk, m.Sequence
		return nil
	})
}

// errLost is a publish that another shipper beat.
var errLost = errors.New("lost")

// pass ships what follows the position once. A publish that another
// shipper of the log beat re-reads the position and goes on after the
// winner's last line: each loss means the other shipped at least a line,
// so the pass ends when the log is shipped, whoever shipped it.
func (sh *shipper) pass(ctx context.Context) (ShipResult, error) {
	r := ShipResult{Source: sh.o.Source, Subject: sh.subject}
	maxData := int(sh.c.nc.MaxPayload()) - 512 // room for the headers
	for {
		sc, err := audit.After(sh.o.Log, sh.mark, func(l audit.Line) error {
			if l.TooLong || len(l.Data) > maxData || !isEntry(l.Data) {
				r.Skipped++
				return nil
			}
			if err := sh.publish(ctx, l); err != nil {
				return err
			}
			r.Shipped++
			if sh.o.afterPublish != nil {
				return sh.o.afterPublish(sh.n)
			}
			return nil
		})
		r.Lost = r.Lost || !sc.Found
		r.Refused = sc.Refused
		if !errors.Is(err, errLost) {
			return r, err
		}
		before := sh.seq
		r.Skipped = 0
		if err := sh.readPosition(ctx); err != nil {
			return r, err
		}
		if sh.seq == before {
			return r, fmt.Errorf("ship audit line to %s: refused as out of order, yet the subject did not move (sequence %d)", sh.subject, before)
		}
	}
}

// isEntry says whether a line is an audit entry (a JSON object).
func isEntry(b []byte) bool {
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// publish appends one line after the last shipped one.
func (sh *shipper) publish(ctx context.Context, l audit.Line) error {
	msg := nats.NewMsg(sh.subject)
	msg.Data = l.Data
	msg.Header.Set(hdrMark, l.Mark.String())
	msg.Header.Set(hdrSource, sh.o.Source)
	id := sh.subject + "." + l.Mark.String()
	var ack *jetstream.PubAck
	err := sh.c.retry(ctx, func(ctx context.Context) error {
		var err error
		ack, err = sh.c.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(sh.seq), jetstream.WithMsgID(id))
		return err
	})
	if wrongLastSeq(err) {
		return errLost
	}
	if err != nil {
		return fmt.Errorf("ship audit line to %s: %w", sh.subject, err)
	}
	sh.n++
	sh.mark, sh.seq = l.Mark, ack.Sequence
	return nil
}

// ShippedEntry is an entry of the team audit: the machine it came from
// and the entry as its log has it.
type ShippedEntry struct {
	Source string `json:"source"`
	audit.Entry
}

// AuditQuery reads the team audit oldest first and returns the entries
// that f keeps (of one source, when source is set), at most the last limit
// (0: all); bad counts the messages that are not an entry.
func (c *Conn) AuditQuery(ctx context.Context, f audit.Filter, source string, limit int) ([]ShippedEntry, int, error) {
	filter := AuditPrefix + ">"
	if source != "" {
		if !isToken64(source) {
			return nil, 0, fmt.Errorf("--source %q: a source is letters, digits, - and _ (at most 64)", source)
		}
		filter = AuditPrefix + source + ".>"
	}
	var st jetstream.Stream
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		st, err = c.js.Stream(ctx, AuditStream)
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, 0, nil // nothing shipped yet
	}
	if err != nil {
		return nil, 0, fmt.Errorf("audit stream: %w", err)
	}
	// The filter's last message bounds the read: the consumer is never
	// waited on for messages that are not there (a source that shipped
	// nothing has none, though the stream holds others').
	var last uint64
	err = c.retry(ctx, func(ctx context.Context) error {
		m, err := st.GetLastMsgForSubject(ctx, filter)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			last = 0
			return nil
		}
		if err != nil {
			return err
		}
		last = m.Sequence
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("audit stream: %w", err)
	}
	if last == 0 {
		return nil, 0, nil
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, 0, fmt.Errorf("audit stream: %w", err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(512))
	if err != nil {
		return nil, 0, fmt.Errorf("audit stream: %w", err)
	}
	defer it.Stop()
	var out []ShippedEntry
	bad := 0
	for {
		msg, err := it.Next(jetstream.NextMaxWait(10 * time.Second))
		if err != nil {
			return nil, bad, fmt.Errorf("read the audit stream: %w", err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return nil, bad, err
		}
		var e ShippedEntry
		if json.Unmarshal(msg.Data(), &e.Entry) != nil {
			bad++
		} else if e.Source = msg.Headers().Get(hdrSource); f.Match(&e.Entry) {
			out = append(out, e)
			if limit > 0 && len(out) > 2*limit {
				out = append(out[:0], out[len(out)-limit:]...)
			}
		}
		if md.NumPending == 0 || md.Sequence.Stream >= last {
			break
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, bad, nil
}
