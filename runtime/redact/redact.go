// Package redact masks secrets (API keys, tokens, private keys,
// key=value credentials) in text and in JSON documents. The audit log
// uses it for everything it writes, and the hook engine for the events of
// handlers that ask for redaction.
package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// secretRE matches secrets; compiled on first use (the hook path links
// this package, but compiles only when a call has text to redact).
var secretRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(strings.Join([]string{
		`sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}`, // Anthropic, OpenAI
		`gh[pousr]_[A-Za-z0-9]{30,}`,            // GitHub tokens
		`github_pat_[A-Za-z0-9_]{30,}`,
		`AKIA[0-9A-Z]{16}`,              // AWS access key id
		`AIza[0-9A-Za-z_\-]{35}`,        // Google API key
		`xox[abprs]-[A-Za-z0-9\-]{10,}`, // Slack
		`(?i)bearer\s+[A-Za-z0-9._\-~+/]{16,}=*`,
		`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`,
		`(?i)\b(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd)\b\s*[:=]\s*["']?[^\s"']{6,}`,
	}, "|"))
})

// quick holds substrings one of which every secret pattern contains
// (case-folded); text with none is not run through the regexp.
var quick = []string{"sk-", "gh", "github_pat_", "akia", "aiza", "xox", "bearer", "private key", "key", "token", "secret", "passw"}

// String masks secrets in s; the bool says whether it masked any.
func String(s string) (string, bool) {
	if s == "" {
		return s, false
	}
	l := strings.ToLower(s)
	hit := false
	for _, q := range quick {
		if strings.Contains(l, q) {
			hit = true
			break
		}
	}
	if !hit {
		return s, false
	}
	red := false
	out := secretRE().ReplaceAllStringFunc(s, func(m string) string {
		red = true
		// keep a key=value's name, mask the value
		lm := strings.ToLower(m)
		for _, k := range []string{"api", "access", "auth", "secret", "passw"} {
			if strings.HasPrefix(lm, k) {
				if i := strings.IndexAny(m, ":="); i > 0 {
					j := i + 1
					for j < len(m) && (m[j] == ' ' || m[j] == '\t' || m[j] == '"' || m[j] == '\'') {
						j++
					}
					return m[:j] + "[REDACTED]"
				}
			}
		}
		return "[REDACTED]"
	})
	return out, red
}

// JSON masks secrets in every string value of a JSON document (object
// keys are kept); the bool says whether it masked any. A document that
// does not parse is returned unchanged with an error.
func JSON(doc []byte) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return doc, false, err
	}
	v, red := walk(v)
	if !red {
		return doc, false, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return doc, false, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true, nil
}

func walk(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return String(x)
	case []any:
		red := false
		for i := range x {
			var r bool
			x[i], r = walk(x[i])
			red = red || r
		}
		return x, red
	case map[string]any:
		red := false
		for k := range x {
			var r bool
			x[k], r = walk(x[k])
			red = red || r
		}
		return x, red
	}
	return v, false
}
