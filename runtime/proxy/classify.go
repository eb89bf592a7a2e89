package proxy

import (
	"bytes"
	"encoding/json"
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

// matcher is a compiled SignalMatch. It reads the request's bytes: the
// value of its path's first member comes from the one split of the
// body's top level (bodyView), the rest of the path is walked in that
// value's bytes, and nothing is decoded.
type matcher struct {
	segs []pathSeg
	top  int // index of segs[0].name in compiledSignals.tops
	// name is the last member's name, quoted: a member value without it
	// has no value at the path. lits: one without any of them cannot
	// match (a value or prefix, as it is written in JSON).
	name    []byte
	lits    [][]byte
	values  [][]byte
	prefix  []byte
	re      *Pattern
	present int // 0: not this kind, 1: present, -1: absent
}

type pathSeg struct {
	name string
	each bool // name[]
}

func compileMatch(m SignalMatch) (*matcher, error) {
	c := &matcher{}
	for _, s := range strings.Split(m.Path, ".") {
		name, each := strings.CutSuffix(s, "[]")
		c.segs = append(c.segs, pathSeg{name: name, each: each})
	}
	c.name = []byte(`"` + c.segs[len(c.segs)-1].name + `"`)
	for _, v := range m.Values {
		c.values = append(c.values, []byte(v))
		c.lits = append(c.lits, []byte(v))
	}
	if m.Prefix != "" {
		c.prefix = []byte(m.Prefix)
		b, _ := json.Marshal(m.Prefix)
		c.lits = append(c.lits, b[:len(b)-1])
	}
	if m.Pattern != "" {
		re, err := CompilePattern(m.Pattern)
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

// compiled signals, by protocol and harness, and the top-level members
// any of them reads ("model" first).
type compiledSignals struct {
	think, webSearch, image map[string][]*matcher
	background              map[string][][]*matcher
	tops                    []string
}

func compileSignals(s Signals) (*compiledSignals, error) {
	c := &compiledSignals{think: map[string][]*matcher{}, webSearch: map[string][]*matcher{}, image: map[string][]*matcher{}, background: map[string][][]*matcher{}, tops: []string{"model"}}
	compile := func(m SignalMatch) (*matcher, error) {
		cm, err := compileMatch(m)
		if err != nil {
			return nil, err
		}
		cm.top = slices.Index(c.tops, cm.segs[0].name)
		if cm.top < 0 {
			cm.top = len(c.tops)
			c.tops = append(c.tops, cm.segs[0].name)
		}
		return cm, nil
	}
	for _, set := range []struct {
		in  map[string][]SignalMatch
		out map[string][]*matcher
	}{{s.Think, c.think}, {s.WebSearch, c.webSearch}, {s.Image, c.image}} {
		for proto, ms := range set.in {
			for _, m := range ms {
				cm, err := compile(m)
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
				cm, err := compile(m)
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

// bodyView is a request body split once at its top level: the values of
// the members the signals read (tops[i] for compiledSignals.tops[i], nil
// when absent), as slices of the body.
type bodyView struct {
	body []byte
	tops [][]byte
}

// splitBody splits body into tops (len(names) long); pathModel (Gemini:
// the model is in the URL) stands for the "model" member.
func splitBody(body []byte, names []string, tops [][]byte, pathModel string) bodyView {
	topMembers(body, names, tops)
	if pathModel != "" {
		b, _ := json.Marshal(pathModel)
		tops[0] = b
	}
	return bodyView{body: body, tops: tops}
}

// rawString is the text of a JSON string without copying it when it has
// no escapes.
func rawString(raw []byte) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

func present(raw []byte) bool {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return false
	}
	switch string(b) {
	case "null", "false", `""`:
		return false
	}
	if (b[0] == '[' || b[0] == '{') && len(bytes.TrimSpace(b[1:len(b)-1])) == 0 {
		return false
	}
	return true
}

// holds reports whether the match holds on a body. Bytes first: a member
// value that does not contain the path's last name, or any of the values
// the match looks for, is decided without walking it (a client that
// escapes plain letters in JSON, which none does, would go unmatched).
func (m *matcher) holds(v *bodyView) bool {
	raw := v.tops[m.top]
	if raw == nil {
		return m.present < 0
	}
	if len(m.segs) > 1 && !bytes.Contains(raw, m.name) {
		return m.present < 0
	}
	if m.lits != nil && !slices.ContainsFunc(m.lits, func(l []byte) bool { return bytes.Contains(raw, l) }) {
		return false
	}
	hit := m.walk(raw, 0)
	if m.present < 0 {
		return !hit
	}
	return hit
}

// walk reports whether any value at the path from segment i on, in raw
// (segment i's value), hits.
func (m *matcher) walk(raw []byte, i int) bool {
	if !m.segs[i].each {
		return m.down(raw, i)
	}
	j := skipSpace(raw, 0)
	if j >= len(raw) || raw[j] != '[' {
		return false
	}
	j = skipSpace(raw, j+1)
	for j < len(raw) && raw[j] != ']' {
		end := skipValue(raw, j)
		if end < 0 {
			return false
		}
		if m.down(raw[j:end], i) {
			return true
		}
		j = skipSpace(raw, end)
		if j < len(raw) && raw[j] == ',' {
			j = skipSpace(raw, j+1)
		}
	}
	return false
}

func (m *matcher) down(raw []byte, i int) bool {
	if i == len(m.segs)-1 {
		return m.hit(raw)
	}
	c := member(raw, m.segs[i+1].name)
	if c == nil {
		return false
	}
	return m.walk(c, i+1)
}

// hit tests one value at the path (for present: false, whether it is
// present: the match then holds when none is).
func (m *matcher) hit(raw []byte) bool {
	switch {
	case m.present != 0:
		return present(raw)
	case m.values != nil:
		t := bytes.TrimSpace(raw)
		for _, want := range m.values {
			if bytes.Equal(t, want) {
				return true
			}
		}
		return false
	}
	s, ok := rawString(raw)
	if !ok {
		return false
	}
	return m.re != nil && m.re.Match(s) || m.prefix != nil && bytes.HasPrefix(s, m.prefix)
}

func anyHolds(ms []*matcher, v *bodyView) bool {
	for _, m := range ms {
		if m.holds(v) {
			return true
		}
	}
	return false
}
