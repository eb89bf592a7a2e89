package launch_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	genlaunch "sitter.dev/sitter/generated/launch"
	"sitter.dev/sitter/generated/providers"
	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/internal/golden"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/launch"
)

// TestPrepareGolden: per harness, the arguments, environment and overlay
// files of a headless, resumed (latest session), interactive,
// bridge-interactive (with the turn-end hook) and resumed-by-id run,
// behind the proxy and passed through, against
// testdata/<harness>.golden.
func TestPrepareGolden(t *testing.T) {
	if len(genlaunch.Specs) < 6 {
		t.Fatalf("only %d launch specs generated", len(genlaunch.Specs))
	}
	for _, s := range genlaunch.Specs {
		t.Run(s.Harness, func(t *testing.T) {
			var b strings.Builder
			v := launch.Values{Prompt: "do it", Model: "m-1", Key: "k\"ey", Home: "/overlay/home", Workspace: "/work/space",
				Session: "sess-1", MaxTurns: 3, ExplicitModel: true, Bundles: []string{"/bundles/p"}}
			for _, proxied := range []bool{true, false} {
				for _, c := range s.Connect {
					if proxied && c.Protocol != s.Connect[0].Protocol {
						continue
					}
					got, err := launch.ChooseConnect(s, c.Protocol, proxied)
					if err != nil {
						t.Fatal(err)
					}
					v.BaseURL = "http://127.0.0.1:9" + got.ProxyPath
					for _, which := range []launch.Args{launch.Headless, launch.Resume, launch.Interactive, launch.Unattended, launch.ResumeID} {
						v := v
						if which == launch.Unattended && len(s.TurnEnd.Files) > 0 {
							v.TurnEndCommand = `cat >> "$TURN_END"` // as bridge-interactive sets it
						}
						p, err := launch.Prepare(s, got, v, which)
						if err != nil {
							t.Fatal(err)
						}
						fmt.Fprintf(&b, "== proxied=%v protocol=%s args=%d\nargs: %q\n", proxied, got.Protocol, which, p.Args)
						for _, e := range p.Env {
							fmt.Fprintf(&b, "env: %s\n", e)
						}
						for _, f := range p.Files {
							fmt.Fprintf(&b, "file: %s\n%s\n", f.Path, f.Content)
						}
					}
				}
			}
			golden.File(t, filepath.Join("testdata", s.Harness+".golden"), []byte(b.String()))
		})
	}
}

// TestProxyDecision: the launch's pass-through agrees with the generated
// ProxyRequired for every harness and provider.
func TestProxyDecision(t *testing.T) {
	for _, s := range genlaunch.Specs {
		for _, p := range providers.All {
			need, err := providers.ProxyRequired(s.Harness, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			c, err := launch.ChooseConnect(s, p.Protocol, need)
			if err != nil {
				t.Errorf("%s on %s: %v", s.Harness, p.ID, err)
				continue
			}
			if !need && c.Protocol != p.Protocol {
				t.Errorf("%s on %s: passes through in %s", s.Harness, p.ID, c.Protocol)
			}
		}
	}
	for h, p := range map[string]string{"claude-code": "openai", "codex": "anthropic", "gemini-cli": "openai"} {
		if need, _ := providers.ProxyRequired(h, p); !need {
			t.Errorf("%s on %s: want the proxy", h, p)
		}
	}
	for h, p := range map[string]string{"claude-code": "anthropic", "codex": "openai-responses", "gemini-cli": "gemini", "copilot": "anthropic"} {
		if need, _ := providers.ProxyRequired(h, p); need {
			t.Errorf("%s on %s: want no proxy", h, p)
		}
	}
}

func TestExpand(t *testing.T) {
	slots := map[string]string{"prompt": "", "model": "m", "key": `a"b`}
	if got := launch.ExpandArgs([]string{"-p", "{prompt}", "--model", "{model}", "x{prompt}y", "{other}"}, slots); fmt.Sprint(got) != "[-p --model m xy {other}]" {
		t.Errorf("ExpandArgs = %q", got)
	}
	if got := launch.Expand(`{"k":"{key}","j":{"n":1}}`, slots, true); got != `{"k":"a\"b","j":{"n":1}}` {
		t.Errorf("Expand escaped = %s", got)
	}
	if got := launch.Expand(`{"c":"{cmd}"}`, map[string]string{"cmd": "cat >> \"$F\" && x\n"}, true); got != `{"c":"cat >> \"$F\" && x\n"}` {
		t.Errorf("Expand escaped = %s", got)
	}
}

func TestStopDecision(t *testing.T) {
	for _, c := range []struct {
		out, errOut string
		code        int
		cont        bool
		reason      string
	}{
		{`{"decision":"block","reason":"more"}`, "", 0, true, "more"},
		{`{"followup_message":"again"}`, "", 0, true, "again"},
		{"", "", 0, false, ""},
		{`{"continue":true}`, "", 0, false, ""},
		{"", "by exit 2\n", 2, true, "by exit 2"},
		{"not json", "", 1, false, ""},
	} {
		cont, reason := launch.StopDecision([]byte(c.out), []byte(c.errOut), c.code)
		if cont != c.cont || reason != c.reason {
			t.Errorf("StopDecision(%q, %q, %d) = %v %q", c.out, c.errOut, c.code, cont, reason)
		}
	}
}

func TestPayload(t *testing.T) {
	s, _ := launch.Find(genlaunch.Specs, "codex")
	b, err := launch.Payload(s.Bridge.Stop.Payload, launch.Values{Session: "s1", Workspace: "/w"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"cwd":"/w","hook_event_name":"Stop","session_id":"s1","stop_hook_active":true}` {
		t.Errorf("payload = %s", b)
	}
}

// TestPrepareBridgeInteractive: Claude's overlay approves the launch's
// key by its last 20 characters, and only a bridge-interactive launch
// (TurnEndCommand set) gets the turn-end hook in its user settings
// (merged with the settings every launch writes).
func TestPrepareBridgeInteractive(t *testing.T) {
	s, _ := launch.Find(genlaunch.Specs, "claude-code")
	v := launch.Values{Prompt: "p", Key: "sk-0123456789abcdefghijKLMN", Home: "/h", Workspace: "/w"}
	files := func(v launch.Values) map[string]string {
		p, err := launch.Prepare(s, s.Connect[0], v, launch.Interactive)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range p.Files {
			m[f.Path] = f.Content
		}
		return m
	}
	plain := files(v)
	if !strings.Contains(plain["/h/.claude.json"], `"approved":["456789abcdefghijKLMN"]`) {
		t.Errorf(".claude.json = %s", plain["/h/.claude.json"])
	}
	// The user settings only keep Claude from cleaning up the transcripts,
	// which live in the user's own projects dir.
	if got := plain["/h/.claude/settings.json"]; got != `{"cleanupPeriodDays":36500}`+"\n" {
		t.Errorf("settings.json without bridge-interactive = %s", got)
	}
	v.TurnEndCommand = `cat >> "$F"`
	hooked := files(v)
	if got := hooked["/h/.claude/settings.json"]; got != `{"cleanupPeriodDays":36500,"hooks":{"Stop":[{"hooks":[{"command":"cat >> \"$F\"","type":"command"}]}]}}`+"\n" {
		t.Errorf("settings.json = %s", got)
	}
	if s.TurnEnd.Event != "Stop" || len(s.Onboarding) == 0 {
		t.Errorf("claude-code spec: turn end %q, %d onboarding prompts", s.TurnEnd.Event, len(s.Onboarding))
	}
}

// TestPrepareTurnEndMerged: for every harness with a turn-end hook, the
// bridge-interactive overlay runs the command from each turn-end file's
// path, and a regular file written to the same path keeps its settings.
func TestPrepareTurnEndMerged(t *testing.T) {
	n := 0
	for _, s := range genlaunch.Specs {
		if len(s.TurnEnd.Files) == 0 {
			continue
		}
		n++
		v := launch.Values{Prompt: "p", Model: "m", Key: "k", BaseURL: "http://127.0.0.1:9", Home: "/h", Workspace: "/w", TurnEndCommand: `cat >> "$F"`}
		p, err := launch.Prepare(s, s.Connect[0], v, launch.Unattended)
		if err != nil {
			t.Fatalf("%s: %v", s.Harness, err)
		}
		planned := map[string]string{}
		for _, f := range p.Files {
			planned[f.Path] = f.Content
		}
		slots := map[string]string{"home": "/h", "workspace": "/w"}
		for _, f := range s.TurnEnd.Files {
			got := planned[launch.Expand(f.Path, slots, false)]
			if !strings.Contains(got, `cat >> \"$F\"`) {
				t.Errorf("%s: %s does not run the turn-end command:\n%s", s.Harness, f.Path, got)
			}
			for _, r := range append(append([]launch.File{}, s.Files...), s.Connect[0].Files...) {
				if r.Path != f.Path {
					continue
				}
				var want, have map[string]any
				if err := json.Unmarshal([]byte(launch.Expand(r.Content, slots, true)), &want); err != nil {
					t.Fatalf("%s: %s: %v", s.Harness, r.Path, err)
				}
				json.Unmarshal([]byte(got), &have)
				for k := range want {
					if _, ok := have[k]; !ok {
						t.Errorf("%s: %s lost %q of the regular file:\n%s", s.Harness, r.Path, k, got)
					}
				}
			}
		}
	}
	if n < 3 {
		t.Errorf("%d harnesses with a turn-end hook, want claude-code, codex and gemini-cli at least", n)
	}
}

// TestMergeJSON: two writes of one file merge as JSON objects (objects key
// by key, arrays concatenated, other values replaced, numbers as written);
// anything else cannot be written twice.
func TestMergeJSON(t *testing.T) {
	got, err := launch.MergeJSON(`{"a":{"x":1,"l":[1]},"s":"old","n":12345678901234567890}`, `{"a":{"y":"<&>","l":[{"k":2}]},"s":"new"}`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"l":[1,{"k":2}],"x":1,"y":"<&>"},"n":12345678901234567890,"s":"new"}` + "\n"; got != want {
		t.Errorf("MergeJSON = %s, want %s", got, want)
	}
	for _, c := range [][2]string{{"a = 1\n", `{"b":2}`}, {`{"a":1}`, "[1]"}, {`{"a":1}`, "null"}, {`{"a":1} {"b":2}`, `{}`}} {
		if _, err := launch.MergeJSON(c[0], c[1]); err == nil {
			t.Errorf("MergeJSON(%q, %q) merged", c[0], c[1])
		}
	}
	s := launch.Spec{Harness: "x", Files: []launch.File{{Path: "{home}/c.toml", Content: "a = 1\n"}},
		TurnEnd: launch.TurnEnd{Event: "Stop", Files: []launch.File{{Path: "{home}/c.toml", Content: "b = \"{turnEndCommand}\"\n"}}}}
	if _, err := launch.Prepare(s, launch.Connect{}, launch.Values{Home: "/h", TurnEndCommand: "c"}, launch.Unattended); err == nil || !strings.Contains(err.Error(), "/h/c.toml is written twice") {
		t.Errorf("two TOML writes of one file: %v", err)
	}
}

// TestBridgePayloadsNormalize: every payload bridge-hooks mode sends
// through `sitter hook` is read by the harness's own normalizer as the
// phase it stands for, with the launch's session id and workspace (the
// babysitter plugin's session handlers key on them).
func TestBridgePayloadsNormalize(t *testing.T) {
	reg := registry.Registry()
	for _, s := range genlaunch.Specs {
		d, _, err := reg.Resolve(s.Harness)
		if err != nil {
			t.Fatal(err)
		}
		for phase, h := range map[string]launch.Hook{"sessionStart": s.Bridge.SessionStart, "stop": s.Bridge.Stop, "sessionEnd": s.Bridge.SessionEnd} {
			p, err := launch.Payload(h.Payload, launch.Values{Session: "sess-1", Workspace: "/work/space"}, true)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Harness, h.Event, err)
			}
			ev, err := d.Normalize(p, h.Event)
			if err != nil {
				t.Errorf("%s %s: %v\n%s", s.Harness, h.Event, err, p)
				continue
			}
			if ev.Phase != phase || ev.Session.ID != "sess-1" || ev.Session.Cwd != "/work/space" {
				t.Errorf("%s %s: phase %q session %q cwd %q, want %s sess-1 /work/space\n%s", s.Harness, h.Event, ev.Phase, ev.Session.ID, ev.Session.Cwd, phase, p)
			}
		}
	}
}

// TestStopDecisionBy: the answer sitter hook renders for a stop block,
// in every harness's own format (Pi's followUp, OpenCode's prompt), is
// read back as a block with its reason; a no-op is not.
func TestStopDecisionBy(t *testing.T) {
	reg := registry.Registry()
	for _, s := range genlaunch.Specs {
		d, _, _ := reg.Resolve(s.Harness)
		rules := d.Rules(s.Bridge.Stop.Event)
		if rules == nil || rules.Block == nil {
			t.Errorf("%s %s: no block rule", s.Harness, s.Bridge.Stop.Event)
			continue
		}
		ev := hook.Event{Harness: s.Harness, NativeEvent: s.Bridge.Stop.Event, Phase: "stop"}
		out := hook.Render(ev, hook.Result{Decision: hook.Block, Reason: "go on: iterate"}, rules)
		if ok, r := launch.StopDecisionBy(rules.Block, out.Stdout, out.Stderr, out.Exit); !ok || r != "go on: iterate" {
			t.Errorf("%s: block %s (exit %d) read as %v %q", s.Harness, out.Stdout, out.Exit, ok, r)
		}
		noop := hook.Render(ev, hook.Result{Decision: hook.Noop}, rules)
		if ok, _ := launch.StopDecisionBy(rules.Block, noop.Stdout, noop.Stderr, noop.Exit); ok {
			t.Errorf("%s: no-op %s read as a block", s.Harness, noop.Stdout)
		}
	}
	if ok, r := launch.StopDecisionBy(nil, []byte(`{"decision":"block","reason":"R"}`), nil, 0); !ok || r != "R" {
		t.Errorf("without a rule: %v %q", ok, r)
	}
}
