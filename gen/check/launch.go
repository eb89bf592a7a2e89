package check

import (
	"encoding/json"
	"regexp"
	"strings"

	"sitter.dev/sitter/gen/model"
)

var launchSlot = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// launchSlots are the template slots `sitter launch` fills.
var launchSlots = map[string]bool{"prompt": true, "model": true, "baseURL": true, "key": true, "keyLast20": true, "home": true,
	"workspace": true, "bundle": true, "session": true, "maxTurns": true}

// Launches checks the launch settings of each harness: known slots, a
// prompt in every headless and resume command, connect entries that are
// exactly the protocols the harness speaks (so the generated ProxyRequired
// and the launch's pass-through agree), bridge events that exist with the
// right phase, payloads that are JSON objects, and a plugin loading that
// names the bundle or has a bundle format to install; onboarding prompts
// with unique ids and regexps that compile, a turn-end hook on an event
// of phase stop whose files run {turnEndCommand}, and files one run writes
// to the same path (regular, connect and turn-end files, which sitter
// launch merges) that are all JSON objects.
func Launches(a *model.Atlas) model.Errors {
	var errs model.Errors
	for _, l := range a.Launches {
		h := a.Harness(l.Harness)
		if h == nil {
			errs.Addf(l.Pos, "launch: unknown harness %q", l.Harness)
			continue
		}
		slots := func(what string, extra map[string]bool, ss ...string) {
			for _, s := range ss {
				for _, m := range launchSlot.FindAllStringSubmatch(s, -1) {
					if !launchSlots[m[1]] && !extra[m[1]] {
						errs.Addf(l.Pos, "harness %s: launch %s: unknown slot {%s}", h.ID, what, m[1])
					}
				}
			}
		}
		has := func(ss []string, slot string) bool {
			for _, s := range ss {
				if strings.Contains(s, "{"+slot+"}") {
					return true
				}
			}
			return false
		}
		for what, args := range map[string][]string{"headless": l.Headless, "resume": l.Resume, "resumeId": l.ResumeID,
			"maxTurns": l.MaxTurns, "modelArgs": l.ModelArgs, "interactive": l.Interactive, "plugin.args": l.PluginArgs} {
			slots(what, nil, args...)
		}
		if !has(l.Headless, "prompt") {
			errs.Addf(l.Pos, "harness %s: launch headless args do not pass {prompt}", h.ID)
		}
		if !has(l.Resume, "prompt") {
			errs.Addf(l.Pos, "harness %s: launch resume args do not pass {prompt}", h.ID)
		}
		if len(l.ResumeID) > 0 && !has(l.ResumeID, "session") {
			errs.Addf(l.Pos, "harness %s: launch resumeId args do not name {session}", h.ID)
		}
		if len(l.MaxTurns) > 0 && !has(l.MaxTurns, "maxTurns") {
			errs.Addf(l.Pos, "harness %s: launch maxTurns args do not pass {maxTurns}", h.ID)
		}
		checkKV := func(what string, kvs []model.KV) {
			for _, kv := range kvs {
				slots(what+" "+kv.Name, nil, kv.Value)
			}
		}
		checkFiles := func(what string, fs []model.LaunchFile) {
			for _, f := range fs {
				slots(what+" "+f.Path, nil, f.Path, f.Content)
			}
		}
		checkKV("env", l.Env)
		checkFiles("file", l.Files)
		speaks := map[string]bool{}
		for _, s := range h.Speaks {
			speaks[s.Name] = true
		}
		seen := map[string]bool{}
		for _, c := range l.Connect {
			p := c.Protocol.Name
			if !speaks[p] {
				errs.Addf(c.Protocol.Pos, "harness %s: launch connects in %s, which is not in its speaks (protocols.cue)", h.ID, p)
			}
			if seen[p] {
				errs.Addf(c.Protocol.Pos, "harness %s: launch connects in %s twice", h.ID, p)
			}
			seen[p] = true
			checkKV("connect "+p+" env", c.Env)
			checkFiles("connect "+p+" file", c.Files)
			if !mentions(c, "baseURL") || !mentions(c, "key") {
				errs.Addf(c.Protocol.Pos, "harness %s: launch connect %s must pass {baseURL} and {key} in its env or files", h.ID, p)
			}
		}
		for _, s := range h.Speaks {
			if !seen[s.Name] {
				errs.Addf(l.Pos, "harness %s: speaks %s but launch has no connect entry for it: ProxyRequired would pass it through with no way to configure it", h.ID, s.Name)
			}
		}
		switch l.PluginKind {
		case "flag":
			if !has(l.PluginArgs, "bundle") {
				errs.Addf(l.Pos, "harness %s: launch plugin kind flag needs args naming {bundle}", h.ID)
			}
		case "install":
			if h.Packaging.Format.Name == "" {
				errs.Addf(l.Pos, "harness %s: launch plugin kind install needs packaging (a bundle format)", h.ID)
			}
		}
		want := map[string]func(string) bool{
			"sessionStart": func(p string) bool { return p == "sessionStart" },
			"stop":         func(p string) bool { return p == "stop" },
			"sessionEnd":   func(p string) bool { return p == "sessionEnd" },
		}
		for _, b := range l.Bridge {
			var ev *model.Event
			for _, e := range h.Events {
				if e.Name == b.Event.Name {
					ev = e
				}
			}
			if ev == nil {
				errs.Addf(b.Event.Pos, "harness %s: launch bridge %s: unknown event %q", h.ID, b.Role, b.Event.Name)
			} else if !want[b.Role](ev.Phase.Name) {
				errs.Addf(b.Event.Pos, "harness %s: launch bridge %s: event %s has phase %s", h.ID, b.Role, b.Event.Name, ev.Phase.Name)
			}
			slots("bridge "+b.Role, map[string]bool{"stopHookActive": true}, b.Payload)
			var obj map[string]any
			if err := json.Unmarshal([]byte(b.Payload), &obj); err != nil {
				errs.Addf(b.Event.Pos, "harness %s: launch bridge %s: payload is not a JSON object: %v", h.ID, b.Role, err)
			}
		}
		ids := map[string]bool{}
		for _, p := range l.Onboarding {
			if ids[p.ID] {
				errs.Addf(p.Pos, "harness %s: launch onboarding prompt %s declared twice", h.ID, p.ID)
			}
			ids[p.ID] = true
			if _, err := regexp.Compile(p.Match); err != nil {
				errs.Addf(p.Pos, "harness %s: launch onboarding prompt %s: match is not a regexp: %v", h.ID, p.ID, err)
			} else if regexp.MustCompile(p.Match).MatchString("") {
				errs.Addf(p.Pos, "harness %s: launch onboarding prompt %s: match matches an empty screen", h.ID, p.ID)
			}
			if p.Keys == "" {
				errs.Addf(p.Pos, "harness %s: launch onboarding prompt %s types no keys", h.ID, p.ID)
			}
			if len(p.Evidence) == 0 {
				errs.Addf(p.Pos, "harness %s: launch onboarding prompt %s has no evidence", h.ID, p.ID)
			}
		}
		if te := l.TurnEnd; te != nil {
			var ev *model.Event
			for _, e := range h.Events {
				if e.Name == te.Event.Name {
					ev = e
				}
			}
			if ev == nil {
				errs.Addf(te.Event.Pos, "harness %s: launch turnEnd: unknown event %q", h.ID, te.Event.Name)
			} else if ev.Phase.Name != "stop" {
				errs.Addf(te.Event.Pos, "harness %s: launch turnEnd: event %s has phase %s, want stop", h.ID, te.Event.Name, ev.Phase.Name)
			}
			runs := false
			for _, f := range te.Files {
				slots("turnEnd file "+f.Path, map[string]bool{"turnEndCommand": true}, f.Path, f.Content)
				runs = runs || strings.Contains(f.Content, "{turnEndCommand}")
			}
			if !runs {
				errs.Addf(te.Event.Pos, "harness %s: launch turnEnd files never run {turnEndCommand}", h.ID)
			}
		}
		// Files of one run that share a path are merged by sitter launch,
		// which only JSON objects can be.
		merged := map[model.Pos]bool{}
		for _, c := range l.Connect {
			run := append(append([]model.LaunchFile{}, l.Files...), c.Files...)
			if l.TurnEnd != nil {
				run = append(run, l.TurnEnd.Files...)
			}
			byPath := map[string]int{}
			for _, f := range run {
				byPath[f.Path]++
			}
			for _, f := range run {
				if byPath[f.Path] < 2 || merged[f.Pos] {
					continue
				}
				merged[f.Pos] = true
				var obj map[string]any
				if err := json.Unmarshal([]byte(launchSlot.ReplaceAllString(f.Content, "x")), &obj); err != nil || obj == nil {
					errs.Addf(f.Pos, "harness %s: launch writes %s more than once (files, connect %s, turnEnd): each must be a JSON object to be merged", h.ID, f.Path, c.Protocol.Name)
				}
			}
		}
		if len(l.Evidence) == 0 {
			errs.Addf(l.Pos, "harness %s: launch has no evidence", h.ID)
		}
	}
	return errs
}

func mentions(c model.Connect, slot string) bool {
	for _, kv := range c.Env {
		if strings.Contains(kv.Value, "{"+slot+"}") {
			return true
		}
	}
	for _, f := range c.Files {
		if strings.Contains(f.Content, "{"+slot+"}") {
			return true
		}
	}
	return false
}
