// Package redact masks secrets (API keys, tokens, private keys,
// key=value credentials) in text and in JSON documents. It is sitter's
// one rule set: the audit log uses it for everything it writes, the hook
// engine for the events of handlers that ask for redaction and for what
// it passes on of a handler's stderr.
package redact

import (
	"bytes"
	"encoding/json"
)

// String masks secrets in s, keeping the text around them; the bool says
// whether it masked any. The rules (rules.go) find tokens by their shape
// (sk-…, ghp_…, AKIA…, JWTs, PEM private keys and some forty more) and
// secrets by their context (DB_PASSWORD=…, "client_secret": "…",
// postgres://user:pw@host, curl -u user:pw, --token X, Authorization:
// Bearer …). Each rule's regexp is compiled on its first use.
func String(s string) (string, bool) {
	if s == "" {
		return s, false
	}
	hs := scan(s)
	red := false
	for len(hs) > 0 {
		k := hs[0].r
		j := 1
		for j < len(hs) && hs[j].r == k {
			j++
		}
		out, ok := table[k].apply(s, hs[:j])
		hs = hs[j:]
		if ok {
			// rescan what is left: the hits of the rules after k
			s, red = out, true
			hs = hs[:0]
			for _, h := range scan(s) {
				if h.r > k {
					hs = append(hs, h)
				}
			}
		}
	}
	return s, red
}

// JSON masks secrets in every string value of a JSON document (object
// keys are kept) as String does, and the whole string value of a key that
// names a secret ("password", "client_secret", "api_key", "token",
// "authorization", …) or of an object {"name": "DB_PASSWORD", "value":
// "…"}; the bool says whether it masked any. A document that
// does not parse is returned unchanged with an error.
func JSON(doc []byte) ([]byte, bool, error) {
	// A document none of whose bytes hold a trigger has no secret, nor a
	// key naming one (every such name holds a trigger), unless an escape
	// (\u0070assword, :\/\/) hides one: leave it alone undecoded.
	if !bytes.Contains(doc, []byte(`\u`)) && !bytes.Contains(doc, []byte(`\/`)) &&
		len(scan(string(doc))) == 0 && json.Valid(doc) {
		return doc, false, nil
	}
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
		for k, e := range x {
			if s, ok := e.(string); ok && secretName(k) && maskable(s) {
				x[k], red = mask, true
				continue
			}
			var r bool
			x[k], r = walk(e)
			red = red || r
		}
		// a name/value pair: Kubernetes env entries, CI variables
		for _, nk := range []string{"name", "key", "Name", "Key"} {
			n, ok := x[nk].(string)
			if !ok || !secretName(n) {
				continue
			}
			for _, vk := range []string{"value", "Value"} {
				if v, ok := x[vk].(string); ok && maskable(v) {
					x[vk], red = mask, true
				}
			}
		}
		return x, red
	}
	return v, false
}
