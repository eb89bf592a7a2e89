package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

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
// matches a field case-insensitively. It walks the output's bytes without
// allocating: every accepted result pays one pass over its bytes, and
// only an unknown key costs more.
func UnknownKeys(out []byte) []string {
	var unknown []string
	i := skipWS(out, 0)
	if i >= len(out) || out[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipWS(out, i)
		if i >= len(out) || out[i] != '"' {
			return unknown // the end of the object, or no JSON
		}
		end, plain := endOfString(out, i)
		if end < 0 {
			return unknown
		}
		if key := out[i+1 : end-1]; !plain || !knownKey(key) {
			unknown = addUnknown(unknown, out[i:end])
		}
		i = skipWS(out, end)
		if i >= len(out) || out[i] != ':' {
			return unknown
		}
		if i = skipValue(out, i+1); i < 0 {
			return unknown
		}
		i = skipWS(out, i)
		if i >= len(out) || out[i] != ',' {
			return unknown
		}
		i++
	}
}

// knownKey says whether key, plain ASCII or not, names a result field,
// case-insensitively as encoding/json matches it; only a non-ASCII key
// takes the slow path through Unicode folding.
func knownKey(key []byte) bool {
	for _, k := range resultKeys {
		if len(k) != len(key) {
			continue
		}
		same := true
		for j := range len(k) {
			c := key[j]
			if c >= utf8.RuneSelf {
				return slowKnownKey(key)
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			d := k[j]
			if 'A' <= d && d <= 'Z' {
				d += 'a' - 'A'
			}
			if c != d {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return slowKnownKey(key)
		}
	}
	return false
}

func slowKnownKey(key []byte) bool {
	for _, k := range resultKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// addUnknown adds the key whose JSON string is quoted (escapes and all),
// decoded, unless it is known once decoded or listed already.
func addUnknown(list []string, quoted []byte) []string {
	var key string
	if json.Unmarshal(quoted, &key) != nil {
		key = string(quoted[1 : len(quoted)-1])
	}
	if knownKey([]byte(key)) || slices.Contains(list, key) {
		return list
	}
	return append(list, key)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// endOfString is the index past the string that starts at b[i] (a
// quote), or -1; plain says it has no escape.
func endOfString(b []byte, i int) (end int, plain bool) {
	plain = true
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			plain = false
			j++
		case '"':
			return j + 1, plain
		}
	}
	return -1, false
}

// skipValue is the index past the value at or after b[i], or -1.
func skipValue(b []byte, i int) int {
	i = skipWS(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := endOfString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, _ := endOfString(b, i)
				if end < 0 {
					return -1
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	// A number or a literal.
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
		i++
	}
	return i
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
