package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"sitter.dev/sitter/runtime/internal/jsonr"
	"sitter.dev/sitter/runtime/redact"
)

// Decision is a handler's verdict.
type Decision string

const (
	Noop  Decision = "noop"
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Block Decision = "block"
	Deny  Decision = "deny"
)

// rank orders decisions from least to most restrictive.
func (d Decision) rank() int {
	switch d {
	case Allow:
		return 1
	case Ask:
		return 2
	case Block:
		return 3
	case Deny:
		return 4
	}
	return 0
}

// Result is what a handler prints on stdout, and what the merge produces.
type Result struct {
	Decision          Decision        `json:"decision,omitempty"`
	Reason            string          `json:"reason,omitempty"`
	UserMessage       string          `json:"userMessage,omitempty"`
	AdditionalContext string          `json:"additionalContext,omitempty"`
	UpdatedInput      json.RawMessage `json:"updatedInput,omitempty"`
	Halt              bool            `json:"halt,omitempty"`
	// WatchPaths asks the harness to watch these files (absolute, or
	// relative to the project) for the rest of the session and to
	// raise its fileChanged event when one changes; on the events whose
	// atlas entry can watchFiles (Claude Code's SessionStart).
	WatchPaths []string `json:"watchPaths,omitempty"`
}

// resultKeys are the keys of a result object, in Result's order: the one
// list of them (TestResultKeysMatchStructAndSchema holds it to Result's
// json tags and to generated/schema/result.json).
var resultKeys = [...]string{"decision", "reason", "userMessage", "additionalContext", "updatedInput", "halt", "watchPaths"}

// UnknownKeys lists the top-level keys of a handler's output that no
// result field reads (each once, as decoded); nil for a result without
// any, or for output that is no JSON object. As encoding/json does, a key
// matches a field case-insensitively.
func UnknownKeys(out []byte) []string {
	var unknown []string
	s := jsonr.NewScanner(out)
	s.Document(func(key string) error {
		known := slices.ContainsFunc(resultKeys[:], func(k string) bool { return strings.EqualFold(k, key) })
		if !known && !slices.Contains(unknown, key) {
			unknown = append(unknown, key)
		}
		return s.Skip()
	})
	return unknown
}

// ParseResult reads a handler's stdout. Empty output is a noop; anything
// else must be a result object (JSON null, which Unmarshal would take as
// an empty one, is not). An error quotes the start of the output.
func ParseResult(out []byte) (Result, error) {
	r, err := parseResult(out)
	if err != nil {
		return Result{}, fmt.Errorf("%w; output: %s", err, quoteOutput(out))
	}
	return r, nil
}

func parseResult(out []byte) (Result, error) {
	var r Result
	t := trimSpace(out)
	if len(t) == 0 {
		return Result{Decision: Noop}, nil
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return Result{}, fmt.Errorf("handler output is not a result object: %w", err)
	}
	if t[0] != '{' {
		// Unmarshal takes null as an empty result; it is no object.
		return Result{}, errors.New("handler output is not a result object: null")
	}
	switch r.Decision {
	case "":
		r.Decision = Noop
	case Noop, Allow, Ask, Block, Deny:
	default:
		return Result{}, fmt.Errorf("handler output has unknown decision %q (want allow, deny, ask, block or noop)", r.Decision)
	}
	if len(r.UpdatedInput) > 0 && string(r.UpdatedInput) == "null" {
		r.UpdatedInput = nil
	}
	// The strings are valid UTF-8 already (Unmarshal replaces invalid
	// bytes); the raw updatedInput is made so too.
	r.UpdatedInput = ValidUTF8(r.UpdatedInput)
	return r, nil
}

// quotedOutput is how much of a handler's output an output error shows.
const quotedOutput = 200

// quoteOutput shows the start of a handler's output in an error, so its
// author sees what sitter read: secrets masked (the line reaches the
// harness, its logs, and as a fail-closed reason the model), cut to
// quotedOutput bytes with the whole size said, and quoted (%q escapes
// control characters and invalid UTF-8).
func quoteOutput(out []byte) string {
	// Mask before cutting: a secret split by the cut would slip through.
	head := out[:min(len(out), 64<<10)]
	s, _ := redact.String(string(head))
	if len(s) <= quotedOutput && len(head) == len(out) {
		return fmt.Sprintf("%q", s)
	}
	n := min(len(s), quotedOutput)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:n], len(out))
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
