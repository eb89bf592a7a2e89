package proxy

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// SignalMatch tests one path of a request body (the atlas's
// #RequestMatch, generated/providers.Match): Values are JSON literals,
// Pattern a regular expression, Present "true" or "false".
type SignalMatch struct {
	Path                     string
	Values                   []string
	Prefix, Pattern, Present string
}

// Signals are the atlas's request signals (atlas/routing.cue): per
// protocol, what makes a think, web-search or image request; per harness,
// what makes a background call (all matches of one group).
type Signals struct {
	Think, WebSearch, Image map[string][]SignalMatch // by protocol
	Background              map[string][][]SignalMatch
}

// matcher is a compiled SignalMatch.
type matcher struct {
	segs []pathSeg
	// name is the last member's name, quoted: a body without it has no
	// value at the path. lits: a body with none of them cannot match
	// (a value or prefix, as it is written in JSON).
	name    []byte
	lits    [][]byte
	values  [][]byte
	prefix  string
	re      *regexp.Regexp
	present int // 0: not this kind, 1: present, -1: absent
}

type pathSeg struct {
	name string
	each bool   // name[]
	key  string // the path up to and including this segment (cache key)
}

func compileMatch(m SignalMatch) (*matcher, error) {
	c := &matcher{prefix: m.Prefix}
	var key strings.Builder
	for i, s := range strings.Split(m.Path, ".") {
		if i > 0 {
			key.WriteByte('.')
		}
		key.WriteString(s)
		name, each := strings.CutSuffix(s, "[]")
		c.segs = append(c.segs, pathSeg{name: name, each: each, key: key.String()})
	}
	c.name = []byte(`"` + c.segs[len(c.segs)-1].name + `"`)
	for _, v := range m.Values {
		c.values = append(c.values, []byte(v))
		c.lits = append(c.lits, []byte(v))
	}
	if m.Prefix != "" {
		b, _ := json.Marshal(m.Prefix)
		c.lits = append(c.lits, b[:len(b)-1])
	}
	if m.Pattern != "" {
		re, err := regexp.Compile(m.Pattern)
		if err != nil {
			return nil, err
		}
		c.re = re
	}
	switch m.Present {
	case "true":
		c.present = 1
	case "false":
		c.present = -1
	}
	return c, nil
}

// compiled signals, by protocol and harness.
type compiledSignals struct {
	think, webSearch, image map[string][]*matcher
	background              map[string][][]*matcher
}

func compileSignals(s Signals) (*compiledSignals, error) {
	c := &compiledSignals{think: map[string][]*matcher{}, webSearch: map[string][]*matcher{}, image: map[string][]*matcher{}, background: map[string][][]*matcher{}}
	for _, set := range []struct {
		in  map[string][]SignalMatch
		out map[string][]*matcher
	}{{s.Think, c.think}, {s.WebSearch, c.webSearch}, {s.Image, c.image}} {
		for proto, ms := range set.in {
			for _, m := range ms {
				cm, err := compileMatch(m)
				if err != nil {
					return nil, err
				}
				set.out[proto] = append(set.out[proto], cm)
			}
		}
	}
	for h, groups := range s.Background {
		for _, g := range groups {
			var cg []*matcher
			for _, m := range g {
				cm, err := compileMatch(m)
				if err != nil {
					return nil, err
				}
				cg = append(cg, cm)
			}
			c.background[h] = append(c.background[h], cg)
		}
	}
	return c, nil
}

// bodyView decodes a request body lazily: the top-level members once,
// deeper paths only when a match asks, each path prefix once.
type bodyView struct {
	body      []byte
	pathModel string // Gemini: the model is in the URL
	// model is the request's model as JSON, once known.
	model   *json.RawMessage
	root    map[string]json.RawMessage
	decoded bool
	cache   map[string][]json.RawMessage
}

func (v *bodyView) top() map[string]json.RawMessage {
	if !v.decoded {
		v.decoded = true
		v.root = topMembers(v.body)
	}
	return v.root
}

// values returns every value at the path up to segment i.
func (v *bodyView) values(segs []pathSeg, i int) []json.RawMessage {
	s := segs[i]
	if got, ok := v.cache[s.key]; ok {
		return got
	}
	var out []json.RawMessage
	var parents []map[string]json.RawMessage
	if i == 0 {
		if s.name == "model" && v.pathModel != "" {
			b, _ := json.Marshal(v.pathModel)
			out = []json.RawMessage{b}
			parents = nil
		} else {
			parents = []map[string]json.RawMessage{v.top()}
		}
	} else {
		for _, raw := range v.values(segs, i-1) {
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) == nil {
				parents = append(parents, m)
			}
		}
	}
	for _, p := range parents {
		raw, ok := p[s.name]
		if !ok {
			continue
		}
		if !s.each {
			out = append(out, raw)
			continue
		}
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) == nil {
			out = append(out, arr...)
		}
	}
	if v.cache == nil {
		v.cache = map[string][]json.RawMessage{}
	}
	v.cache[s.key] = out
	return out
}

func present(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "false", `""`, "[]", "{}":
		return false
	}
	b := bytes.TrimSpace(raw)
	if (b[0] == '[' || b[0] == '{') && len(bytes.TrimSpace(b[1:len(b)-1])) == 0 {
		return false
	}
	return true
}

// holds reports whether the match holds on a body. Bytes first: a body
// that does not contain the member's name, or any of the values the match
// looks for, is decided without decoding it (a client that escapes plain
// letters in JSON, which none does, would go unmatched).
func (m *matcher) holds(v *bodyView) bool {
	if len(m.segs) == 1 && m.segs[0].name == "model" && v.model != nil {
		return m.test([]json.RawMessage{*v.model})
	}
	if !bytes.Contains(v.body, m.name) {
		return m.present < 0
	}
	if m.lits != nil && !slices.ContainsFunc(m.lits, func(l []byte) bool { return bytes.Contains(v.body, l) }) {
		return false
	}
	return m.test(v.values(m.segs, len(m.segs)-1))
}

func (m *matcher) test(vals []json.RawMessage) bool {
	if m.present < 0 {
		for _, raw := range vals {
			if present(raw) {
				return false
			}
		}
		return true
	}
	for _, raw := range vals {
		switch {
		case m.present > 0:
			if present(raw) {
				return true
			}
		case m.values != nil:
			t := bytes.TrimSpace(raw)
			for _, want := range m.values {
				if bytes.Equal(t, want) {
					return true
				}
			}
		default:
			var s string
			if json.Unmarshal(raw, &s) != nil {
				continue
			}
			if m.re != nil && m.re.MatchString(s) || m.prefix != "" && strings.HasPrefix(s, m.prefix) {
				return true
			}
		}
	}
	return false
}

func anyHolds(ms []*matcher, v *bodyView) bool {
	for _, m := range ms {
		if m.holds(v) {
			return true
		}
	}
	return false
}
