package launch

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sitter.dev/sitter/runtime/hook"
)

// Values fill the slots of a spec's templates.
type Values struct {
	Prompt, Model, BaseURL, Key string
	Home, Workspace             string
	Session                     string
	MaxTurns                    int
	// ExplicitModel adds the spec's ModelArgs (the user passed --model).
	ExplicitModel bool
	// Bundles are plugin bundle dirs loaded by flag (PluginKind "flag").
	Bundles []string
	// TurnEndCommand, when set (bridge-interactive mode), fills
	// {turnEndCommand} and adds the spec's TurnEnd files.
	TurnEndCommand string
}

func (v Values) slots() map[string]string {
	last20 := v.Key
	if n := len(last20); n > 20 {
		last20 = last20[n-20:]
	}
	m := map[string]string{
		"prompt": v.Prompt, "model": v.Model, "baseURL": v.BaseURL, "key": v.Key, "keyLast20": last20,
		"home": v.Home, "workspace": v.Workspace, "session": v.Session, "maxTurns": "",
	}
	if v.TurnEndCommand != "" {
		m["turnEndCommand"] = v.TurnEndCommand
	}
	if v.MaxTurns > 0 {
		m["maxTurns"] = strconv.Itoa(v.MaxTurns)
	}
	return m
}

// Expand fills {slot}s in s. With escape, values are JSON-string escaped
// (valid inside JSON and TOML basic strings). Unknown slots stay as written.
func Expand(s string, slots map[string]string, escape bool) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+1 : i+j]
		val, ok := slots[name]
		if !ok {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		if escape {
			var q strings.Builder
			enc := json.NewEncoder(&q)
			enc.SetEscapeHTML(false) // <, > and & as written: valid in JSON and TOML
			enc.Encode(val)
			val = strings.TrimSuffix(q.String(), "\n")
			val = val[1 : len(val)-1]
		}
		b.WriteString(val)
		s = s[i+j+1:]
	}
}

// ExpandArgs fills an argument template; an argument that is exactly one
// slot whose value is empty is dropped.
func ExpandArgs(args []string, slots map[string]string) []string {
	out := []string{}
	for _, a := range args {
		if strings.HasPrefix(a, "{") && strings.HasSuffix(a, "}") {
			if v, ok := slots[a[1:len(a)-1]]; ok && v == "" {
				continue
			}
		}
		out = append(out, Expand(a, slots, false))
	}
	return out
}

// Plan is what one harness process of a launch gets: its arguments, the
// environment it adds to (or overrides in) the user's, and the files the
// overlay holds.
type Plan struct {
	Args  []string
	Env   []string // KEY=VALUE, sorted
	Files []PlannedFile
}

// PlannedFile is a file with its absolute path.
type PlannedFile struct{ Path, Content string }

// Args says which command a plan runs.
type Args int

const (
	Headless Args = iota
	Resume
	Interactive
	Unattended // Interactive plus Spec.Unattended (bridge-interactive)
	ResumeID   // continue the harness's session Values.Session
)

// Prepare computes the plan for one spawn: pure, no I/O. Files written to
// one path (the spec's, the connect entry's, the turn-end hook's, in that
// order) are merged as JSON objects; any other content cannot be written twice.
func Prepare(s Spec, c Connect, v Values, which Args) (Plan, error) {
	slots := v.slots()
	var p Plan
	tmpl := map[Args][]string{Headless: s.Headless, Resume: s.Resume, Interactive: s.Interactive,
		Unattended: append(slices.Clip(s.Interactive), s.Unattended...), ResumeID: s.ResumeID}[which]
	if which == ResumeID && (len(tmpl) == 0 || v.Session == "") {
		return Plan{}, fmt.Errorf("%s: no arguments that resume a session by id, or no session id", s.Harness)
	}
	p.Args = ExpandArgs(tmpl, slots)
	if v.ExplicitModel {
		p.Args = append(p.Args, ExpandArgs(s.ModelArgs, slots)...)
	}
	if v.MaxTurns > 0 && which != Interactive && which != Unattended {
		p.Args = append(p.Args, ExpandArgs(s.MaxTurns, slots)...)
	}
	if s.PluginKind == "flag" {
		for _, b := range v.Bundles {
			bs := map[string]string{"bundle": b}
			for k, x := range slots {
				bs[k] = x
			}
			p.Args = append(p.Args, ExpandArgs(s.PluginArgs, bs)...)
		}
	}
	env := map[string]string{}
	for _, kv := range s.Env {
		env[kv.Name] = Expand(kv.Value, slots, false)
	}
	for _, kv := range c.Env {
		env[kv.Name] = Expand(kv.Value, slots, false)
	}
	for k, x := range env {
		p.Env = append(p.Env, k+"="+x)
	}
	sort.Strings(p.Env)
	files := map[string]string{}
	all := append(append([]File{}, s.Files...), c.Files...)
	if v.TurnEndCommand != "" {
		all = append(all, s.TurnEnd.Files...)
	}
	for _, f := range all {
		path := Expand(f.Path, slots, false)
		if !filepath.IsAbs(path) {
			return Plan{}, fmt.Errorf("%s: file path %q is not absolute", s.Harness, path)
		}
		path = filepath.Clean(path)
		content := Expand(f.Content, slots, true)
		if prev, ok := files[path]; ok {
			merged, err := MergeJSON(prev, content)
			if err != nil {
				return Plan{}, fmt.Errorf("%s: %s is written twice: %v", s.Harness, path, err)
			}
			content = merged
		}
		files[path] = content
	}
	for path, content := range files {
		p.Files = append(p.Files, PlannedFile{path, content})
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
	return p, nil
}

// MergeJSON merges two JSON objects written to one file (the regular
// files, the connect entry's and the turn-end hook's, in that order):
// objects are merged key by key, arrays are concatenated, and any other
// value of b replaces a's. The result is compact JSON and a newline.
func MergeJSON(a, b string) (string, error) {
	var x, y map[string]any
	for _, d := range []struct {
		s string
		v *map[string]any
	}{{a, &x}, {b, &y}} {
		dec := json.NewDecoder(strings.NewReader(d.s))
		dec.UseNumber()
		if err := dec.Decode(d.v); err != nil || *d.v == nil || dec.More() {
			return "", fmt.Errorf("only JSON objects can be merged")
		}
	}
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(mergeValue(x, y)); err != nil {
		return "", err
	}
	return out.String(), nil
}

func mergeValue(a, b any) any {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return b
		}
		m := make(map[string]any, len(av)+len(bv))
		for k, x := range av {
			m[k] = x
		}
		for k, y := range bv {
			if x, ok := m[k]; ok {
				m[k] = mergeValue(x, y)
			} else {
				m[k] = y
			}
		}
		return m
	case []any:
		if av, ok := a.([]any); ok {
			return append(slices.Clip(av), bv...)
		}
	}
	return b
}

// ChooseConnect picks how the harness is pointed at its endpoint: behind
// the proxy the spec's first entry, else the entry of the provider's protocol.
func ChooseConnect(s Spec, protocol string, proxied bool) (Connect, error) {
	if len(s.Connect) == 0 {
		return Connect{}, fmt.Errorf("%s has no configurable LLM endpoint", s.Harness)
	}
	if proxied {
		return s.Connect[0], nil
	}
	for _, c := range s.Connect {
		if c.Protocol == protocol {
			return c, nil
		}
	}
	return Connect{}, fmt.Errorf("%s cannot be configured for the %s protocol without the proxy", s.Harness, protocol)
}

// Payload fills a bridge payload template: slots in its string values, at
// any depth, take their values; "{stopHookActive}" becomes a JSON bool.
func Payload(tmpl string, v Values, stopHookActive bool) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(tmpl), &obj); err != nil {
		return nil, err
	}
	slots := v.slots()
	var fill func(x any) any
	fill = func(x any) any {
		switch y := x.(type) {
		case string:
			if y == "{stopHookActive}" {
				return stopHookActive
			}
			return Expand(y, slots, false)
		case map[string]any:
			for k, e := range y {
				y[k] = fill(e)
			}
		case []any:
			for i, e := range y {
				y[i] = fill(e)
			}
		}
		return x
	}
	return json.Marshal(fill(obj))
}

// StopDecisionBy reads a harness's native answer to its stop event with
// the atlas's render rule for a block (hook.Rules.Block of the event):
// the answer blocks when it is the rule's exit code (the reason on stderr),
// or a JSON object with every constant of the rule's stdout skeleton, and
// its reason is where the skeleton's {reason} slot is ({"decision":"block",
// "reason":R}; Pi's bridge {"followUp":R}; OpenCode's {"prompt":R}).
// Without a rule it is StopDecision.
func StopDecisionBy(rule *hook.Rule, stdout, stderr []byte, code int) (bool, string) {
	if rule == nil {
		return StopDecision(stdout, stderr, code)
	}
	if rule.Exit != 0 {
		if code != rule.Exit {
			return false, ""
		}
		return true, strings.TrimSpace(string(stderr))
	}
	if len(rule.Stdout) == 0 {
		return false, ""
	}
	var out map[string]any
	if json.Unmarshal(stdout, &out) != nil || out == nil {
		return false, ""
	}
	reason := ""
	var match func(ms []hook.Member, obj map[string]any) bool
	match = func(ms []hook.Member, obj map[string]any) bool {
		for _, m := range ms {
			v, ok := obj[m.Key]
			switch {
			case m.Kids != nil:
				kid, _ := v.(map[string]any)
				if kid == nil || !match(m.Kids, kid) {
					return false
				}
			case m.Slot == hook.SlotReason:
				if r, _ := v.(string); r != "" {
					reason = r
				}
			case m.Slot != hook.NoSlot:
			default:
				var want any
				if json.Unmarshal([]byte(m.Const), &want) != nil || !ok || !reflect.DeepEqual(v, want) {
					return false
				}
			}
		}
		return true
	}
	if !match(rule.Stdout, out) {
		return false, ""
	}
	return true, reason
}

// StopDecision reads a harness's native answer to its stop event when no
// render rule is known: {"decision":"block","reason":R} (Cursor's
// followup_message), or exit code 2 with the reason on stderr.
func StopDecision(stdout, stderr []byte, code int) (bool, string) {
	if code == 2 {
		return true, strings.TrimSpace(string(stderr))
	}
	var out struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Followup string `json:"followup_message"`
	}
	if json.Unmarshal(stdout, &out) != nil {
		return false, ""
	}
	if out.Decision == "block" || out.Decision == "deny" {
		return true, out.Reason
	}
	if out.Followup != "" {
		return true, out.Followup
	}
	return false, ""
}

// AdditionalContext finds the context a session-start answer adds
// (additionalContext at the top level or in hookSpecificOutput).
func AdditionalContext(stdout []byte) string {
	var out struct {
		AdditionalContext string `json:"additionalContext"`
		HSO               struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(stdout, &out) != nil {
		return ""
	}
	if out.HSO.AdditionalContext != "" {
		return out.HSO.AdditionalContext
	}
	return out.AdditionalContext
}
