package proxy

import "encoding/json"

// geminiDrop are JSON Schema keys Gemini's function parameters reject.
var geminiDrop = []string{"$schema", "$id", "$comment", "additionalProperties", "propertyNames", "patternProperties",
	"exclusiveMinimum", "exclusiveMaximum", "if", "then", "else", "not", "unevaluatedProperties", "unevaluatedItems",
	"default", "examples", "$defs", "definitions", "$ref", "const", "dependentSchemas", "dependentRequired", "contains",
	"minContains", "maxContains", "prefixItems", "cache_control", "defer_loading", "readOnly", "writeOnly", "deprecated", "title"}

// SanitizeGeminiSchema rewrites a JSON Schema into the subset Gemini's
// `parameters` accepts: $ref inlined from $defs/definitions, const → enum,
// a ["T","null"] type → T + nullable, anyOf with a null branch → nullable,
// allOf merged, format kept only for enum/date-time, enum only on strings,
// unsupported keys removed.
func SanitizeGeminiSchema(s json.RawMessage) json.RawMessage {
	var v any
	if len(s) == 0 || json.Unmarshal(s, &v) != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	root, _ := v.(map[string]any)
	defs := map[string]any{}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := root[k].(map[string]any); ok {
			for n, x := range d {
				defs["#/"+k+"/"+n] = x
			}
		}
	}
	out := sanitize(v, defs, 0)
	if m, ok := out.(map[string]any); ok {
		if _, ok := m["type"]; !ok {
			m["type"] = "object"
		}
	}
	b, _ := json.Marshal(out)
	return b
}

func sanitize(v any, defs map[string]any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok || depth > 32 {
		if l, ok := v.([]any); ok && depth <= 32 {
			for i := range l {
				l[i] = sanitize(l[i], defs, depth+1)
			}
		}
		return v
	}
	if ref, ok := m["$ref"].(string); ok {
		if d, ok := defs[ref]; ok {
			cp := clone(d)
			if dm, ok := cp.(map[string]any); ok {
				for k, x := range m {
					if k != "$ref" {
						dm[k] = x
					}
				}
				m = dm
			}
		} else {
			delete(m, "$ref")
			if _, ok := m["type"]; !ok {
				m["type"] = "object"
			}
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		delete(m, "allOf")
		for _, x := range all {
			if xm, ok := sanitize(x, defs, depth+1).(map[string]any); ok {
				for k, y := range xm {
					if k == "properties" {
						if pm, ok := m["properties"].(map[string]any); ok {
							if ym, ok := y.(map[string]any); ok {
								for pk, pv := range ym {
									pm[pk] = pv
								}
								continue
							}
						}
					}
					if k == "required" {
						r, _ := m["required"].([]any)
						ry, _ := y.([]any)
						m["required"] = append(r, ry...)
						continue
					}
					if _, ok := m[k]; !ok {
						m[k] = y
					}
				}
			}
		}
	}
	if c, ok := m["const"]; ok {
		m["enum"] = []any{c}
	}
	if t, ok := m["type"].([]any); ok {
		var types []any
		for _, x := range t {
			if x == "null" {
				m["nullable"] = true
			} else {
				types = append(types, x)
			}
		}
		if len(types) > 0 {
			m["type"] = types[0]
		} else {
			m["type"] = "string"
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, ok := m[key].([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, a := range alts {
			if am, ok := a.(map[string]any); ok && am["type"] == "null" {
				m["nullable"] = true
				continue
			}
			keep = append(keep, sanitize(a, defs, depth+1))
		}
		delete(m, key)
		if len(keep) == 1 {
			if km, ok := keep[0].(map[string]any); ok {
				for k, x := range km {
					if _, ok := m[k]; !ok {
						m[k] = x
					}
				}
			}
		} else if len(keep) > 1 {
			m["anyOf"] = keep
		}
	}
	if f, ok := m["format"].(string); ok && f != "enum" && f != "date-time" {
		delete(m, "format")
	}
	if _, ok := m["enum"]; ok && m["type"] != nil && m["type"] != "string" {
		delete(m, "enum")
	}
	if e, ok := m["enum"].([]any); ok {
		for i, x := range e {
			if _, ok := x.(string); !ok {
				b, _ := json.Marshal(x)
				e[i] = string(b)
			}
		}
		if m["type"] == nil {
			m["type"] = "string"
		}
	}
	for _, k := range geminiDrop {
		delete(m, k)
	}
	if p, ok := m["properties"].(map[string]any); ok {
		for k, x := range p {
			p[k] = sanitize(x, defs, depth+1)
		}
	}
	if it, ok := m["items"]; ok {
		m["items"] = sanitize(it, defs, depth+1)
	}
	return m
}

func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}
