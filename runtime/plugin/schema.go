package plugin

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"sitter.dev/sitter/runtime/internal/jsonpos"
)

// A minimal JSON Schema (draft 2020-12) validator for the few keywords the
// bundle schemas under schemas/ use. A schema with any other keyword is
// refused when compiled, so no constraint is ever silently ignored.

//go:embed schemas/*.json
var schemaFS embed.FS

// Schema is a compiled schema node.
type Schema struct {
	types       []string
	required    []string
	properties  map[string]*Schema
	additional  *Schema // nil = anything
	noAdditonal bool    // additionalProperties: false
	items       *Schema
	enum        []any
	hasConst    bool
	constVal    any
	pattern     *regexp.Regexp
	minLength   int
	maxLength   int // -1 = none
}

// annotation keywords carry no constraint.
var annotations = map[string]bool{"$schema": true, "$id": true, "title": true, "description": true, "$comment": true}

var jsonTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// CompileSchema parses a schema document.
func CompileSchema(data []byte) (*Schema, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	return compile(v, "#")
}

func compile(v any, at string) (*Schema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s: want an object", at)
	}
	s := &Schema{maxLength: -1}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := m[k]
		bad := func() error { return fmt.Errorf("schema %s/%s: bad value %v", at, k, val) }
		switch {
		case annotations[k]:
		case k == "type":
			switch t := val.(type) {
			case string:
				s.types = []string{t}
			case []any:
				for _, e := range t {
					str, ok := e.(string)
					if !ok {
						return nil, bad()
					}
					s.types = append(s.types, str)
				}
			default:
				return nil, bad()
			}
			for _, t := range s.types {
				if !jsonTypes[t] {
					return nil, fmt.Errorf("schema %s/type: unknown type %q", at, t)
				}
			}
		case k == "required":
			arr, ok := val.([]any)
			if !ok {
				return nil, bad()
			}
			for _, e := range arr {
				str, ok := e.(string)
				if !ok {
					return nil, bad()
				}
				s.required = append(s.required, str)
			}
		case k == "properties":
			pm, ok := val.(map[string]any)
			if !ok {
				return nil, bad()
			}
			s.properties = map[string]*Schema{}
			for name, ps := range pm {
				c, err := compile(ps, at+"/properties/"+name)
				if err != nil {
					return nil, err
				}
				s.properties[name] = c
			}
		case k == "additionalProperties":
			switch a := val.(type) {
			case bool:
				s.noAdditonal = !a
			default:
				c, err := compile(a, at+"/additionalProperties")
				if err != nil {
					return nil, err
				}
				s.additional = c
			}
		case k == "items":
			c, err := compile(val, at+"/items")
			if err != nil {
				return nil, err
			}
			s.items = c
		case k == "enum":
			arr, ok := val.([]any)
			if !ok || len(arr) == 0 {
				return nil, bad()
			}
			s.enum = arr
		case k == "const":
			s.hasConst, s.constVal = true, val
		case k == "pattern":
			str, ok := val.(string)
			if !ok {
				return nil, bad()
			}
			re, err := regexp.Compile(str)
			if err != nil {
				return nil, fmt.Errorf("schema %s/pattern: %v", at, err)
			}
			s.pattern = re
		case k == "minLength", k == "maxLength":
			n, ok := val.(json.Number)
			i, err := strconv.Atoi(string(n))
			if !ok || err != nil || i < 0 {
				return nil, bad()
			}
			if k == "minLength" {
				s.minLength = i
			} else {
				s.maxLength = i
			}
		default:
			return nil, fmt.Errorf("schema %s: keyword %q is not supported by this validator", at, k)
		}
	}
	return s, nil
}

// Validate checks a value decoded with encoding/json (UseNumber, so
// numbers are json.Number) and returns every violation as
// "<json pointer>: <problem>", sorted.
func (s *Schema) Validate(v any) []string {
	var errs []string
	s.validate(v, "", &errs)
	sort.Strings(errs)
	return errs
}

// ValidateJSON decodes data and validates it.
func (s *Schema) ValidateJSON(data []byte) ([]string, error) {
	v, err := decodeStd(data)
	if err != nil {
		return nil, err
	}
	return s.Validate(v), nil
}

// decodeStd parses one JSON value; a syntax error is a *jsonpos.Error
// without a path: the caller sets it.
func decodeStd(data []byte) (any, error) {
	if e := jsonpos.Syntax("", data); e != nil {
		return nil, e
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: data after the top-level value")
	}
	return v, nil
}

func typeOf(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		// 2020-12: an integer is a number with a zero fractional part (1.0 too).
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return "integer"
		}
		if f, err := v.Float64(); err == nil && !math.IsInf(f, 0) && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func pointer(at string) string {
	if at == "" {
		return "/"
	}
	return at
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func (s *Schema) validate(v any, at string, errs *[]string) {
	add := func(format string, args ...any) {
		*errs = append(*errs, pointer(at)+": "+fmt.Sprintf(format, args...))
	}
	t := typeOf(v)
	if len(s.types) > 0 {
		ok := false
		for _, want := range s.types {
			if want == t || (want == "number" && t == "integer") {
				ok = true
			}
		}
		if !ok {
			add("is %s, want %s", t, strings.Join(s.types, " or "))
			return
		}
	}
	if s.hasConst && !equalStd(v, s.constVal) {
		add("must be %s", compact(s.constVal))
	}
	if s.enum != nil {
		ok := false
		for _, e := range s.enum {
			ok = ok || equalStd(v, e)
		}
		if !ok {
			alts := make([]string, len(s.enum))
			for i, e := range s.enum {
				alts[i] = compact(e)
			}
			add("%s is not one of %s", compact(v), strings.Join(alts, ", "))
		}
	}
	switch v := v.(type) {
	case string:
		n := utf8.RuneCountInString(v)
		if n < s.minLength {
			add("%q is shorter than %d characters", v, s.minLength)
		}
		if s.maxLength >= 0 && n > s.maxLength {
			add("is longer than %d characters", s.maxLength)
		}
		if s.pattern != nil && !s.pattern.MatchString(v) {
			add("%q does not match %s", v, s.pattern)
		}
	case map[string]any:
		for _, r := range s.required {
			if _, ok := v[r]; !ok {
				add("missing required field %q", r)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := at + "/" + escapePointer(k)
			if ps, ok := s.properties[k]; ok {
				ps.validate(v[k], sub, errs)
				continue
			}
			if s.noAdditonal {
				*errs = append(*errs, pointer(at)+": unknown field "+strconv.Quote(k))
				continue
			}
			if s.additional != nil {
				s.additional.validate(v[k], sub, errs)
			}
		}
	case []any:
		if s.items != nil {
			for i, e := range v {
				s.items.validate(e, at+"/"+strconv.Itoa(i), errs)
			}
		}
	}
}

// equalStd compares two values decoded with UseNumber; numbers compare by
// value.
func equalStd(a, b any) bool {
	if an, ok := a.(json.Number); ok {
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		af, e1 := an.Float64()
		bf, e2 := bn.Float64()
		return e1 == nil && e2 == nil && af == bf
	}
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !equalStd(av, bv) {
				return false
			}
		}
		return true
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !equalStd(a[i], ba[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[string]*Schema{}
)

// BundleSchema returns the embedded schema schemas/<name>.json.
func BundleSchema(name string) (*Schema, error) {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[name]; ok {
		return s, nil
	}
	data, err := schemaFS.ReadFile("schemas/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("no embedded schema %q", name)
	}
	s, err := CompileSchema(data)
	if err != nil {
		return nil, fmt.Errorf("schemas/%s.json: %w", name, err)
	}
	schemaCache[name] = s
	return s, nil
}
