package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/runtime/proxy"
)

// TestRoutesStartErrors: a bad routes file stops sitter proxy at start,
// naming file:line:col.
func TestRoutesStartErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ file, want string }{
		{`{"providers": {"x": {"provider": "no-such"}}, "rules": {"default": "x,m"}}`, `routes.json:1:34: providers.x: unknown provider "no-such"`},
		{`{"providers": {"openai": {}}, "rules": {"default": "openai,m"}}`, `routes.json:1:16: providers.openai: the key variable OPENAI_API_KEY is not set`},
		{"{\"providers\": {\"anthropic\": {}},\n\"rules\": {\"default\": {\"use\": \"anthropic,a\", \"fallbacks\": [\"background\"]},\n\"background\": {\"use\": \"anthropic,b\", \"fallbacks\": [\"default\"]}}}", `routes.json:2:59: rules.default.fallbacks: cyclic fallback background → default → background`},
	}
	for _, c := range cases {
		p := filepath.Join(dir, "routes.json")
		os.WriteFile(p, []byte(c.file), 0o600)
		var out, errb strings.Builder
		env := map[string]string{"ANTHROPIC_API_KEY": "k", "SITTER_STATE_DIR": dir}
		code := run(context.Background(), []string{"--routes", p}, func(k string) string { return env[k] }, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), p+strings.TrimPrefix(c.want, "routes.json")) || out.Len() > 0 {
			t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
		}
	}
	var errb strings.Builder
	if code := run(context.Background(), []string{"--routes", "r.json", "--provider", "openai"}, func(string) string { return "" }, &strings.Builder{}, &errb); code != 2 {
		t.Errorf("--routes with --provider: exit %d", code)
	}
}

// TestGeneratedSignals: the atlas's signals, as generated, tell a Claude
// Code housekeeping call (2.1.197's title call: no tools, thinking
// disabled) from its main turn, and read each protocol's think, web-search
// and image fields.
func TestGeneratedSignals(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "k"}
	rt, err := proxy.LoadRoutes("r.json", []byte(`{"providers": {"anthropic": {}}, "rules": {
		"default": "anthropic,main", "background": "anthropic,bg", "think": "anthropic,think",
		"webSearch": "anthropic,web", "image": "anthropic,image"}}`), routesAtlas(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	r, err := proxy.NewRouter(proxy.RouterConfig{Routes: rt, Signals: Signals()})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ proto, harness, body, pathModel, want string }{
		{proxy.Anthropic, "claude-code", `{"model":"claude-opus-4-8","max_tokens":32000,"thinking":{"type":"disabled"},"system":[{"type":"text","text":"Generate a concise, sentence-case title"}],"messages":[{"role":"user","content":[{"type":"text","text":"<session>write the file</session>"}]}],"stream":true}`, "", "background"},
		{proxy.Anthropic, "claude-code", `{"model":"claude-opus-4-8","thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"write the file"}],"tools":[{"name":"Bash","input_schema":{}}]}`, "", "default"},
		{proxy.Anthropic, "claude-code", `{"model":"claude-haiku-4-5","messages":[],"tools":[{"name":"Bash","input_schema":{}}]}`, "", "background"},
		{proxy.Anthropic, "", `{"model":"claude-haiku-4-5","messages":[]}`, "", "default"},
		{proxy.Anthropic, "claude-code", `{"model":"m","thinking":{"type":"enabled","budget_tokens":2048},"messages":[],"tools":[{"name":"Bash","input_schema":{}}]}`, "", "think"},
		{proxy.Anthropic, "claude-code", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{}}]}]}],"tools":[{"name":"Bash","input_schema":{}}]}`, "", "image"},
		{proxy.OpenAIResponses, "codex", `{"model":"gpt-5","reasoning":{"effort":"medium"},"input":[],"tools":[{"type":"function","name":"shell"}]}`, "", "think"},
		// Codex's compaction request carries no tools.
		{proxy.OpenAIResponses, "codex", `{"model":"gpt-5","reasoning":{"effort":"medium"},"input":[{"role":"user","content":[{"type":"input_text","text":"You are performing a CONTEXT CHECKPOINT COMPACTION."}]}],"tools":[]}`, "", "background"},
		{proxy.OpenAIResponses, "codex", `{"model":"gpt-5","tools":[{"type":"web_search"}],"input":[]}`, "", "webSearch"},
		{proxy.OpenAIResponses, "codex", `{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:"}]}],"tools":[{"type":"function","name":"shell"}]}`, "", "image"},
		{proxy.OpenAIChat, "", `{"model":"x","reasoning_effort":"high","messages":[]}`, "", "think"},
		{proxy.OpenAIChat, "", `{"model":"x","web_search_options":{},"messages":[]}`, "", "default"},
		{proxy.OpenAIChat, "", `{"model":"x","web_search_options":{"search_context_size":"low"},"messages":[]}`, "", "webSearch"},
		{proxy.OpenAIChat, "", `{"model":"x","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:"}}]}]}`, "", "image"},
		{proxy.Gemini, "gemini-cli", `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":""}}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`, "gemini-2.5-pro", "image"},
		{proxy.Gemini, "gemini-cli", `{"contents":[],"tools":[{"googleSearch":{"x":1}}]}`, "gemini-2.5-pro", "webSearch"},
		{proxy.Gemini, "gemini-cli", `{"contents":[],"generationConfig":{"thinkingConfig":{"includeThoughts":true}},"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`, "gemini-2.5-pro", "think"},
		// Gemini CLI's chat compression (and its other BaseLlmClient calls) carries no tools.
		{proxy.Gemini, "gemini-cli", `{"contents":[{"role":"user","parts":[{"text":"Generate a new <state_snapshot>"}]}],"systemInstruction":{"parts":[{"text":"distilling chat history"}]}}`, "gemini-3-pro-preview", "background"},
	}
	for _, c := range cases {
		rule, _ := r.Classify(c.proto, c.harness, []byte(c.body), http.Header{}, c.pathModel)
		if rule != c.want {
			t.Errorf("%s %s %s: rule %s, want %s", c.proto, c.harness, c.body, rule, c.want)
		}
	}
}

// The routes record in the state dir is never written through a symlink
// (live or dangling): the proxy refuses to start, naming the file, and the
// link's target is untouched.
func TestChaosRoutesRecordRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.json")
	os.WriteFile(routes, []byte(`{"providers": {"anthropic": {}}, "rules": {"default": "anthropic,m"}}`), 0o600)
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	for _, target := range []string{victim, filepath.Join(dir, "created-through-link")} {
		state := t.TempDir()
		record := filepath.Join(state, "proxy", "routes.jsonl")
		os.MkdirAll(filepath.Dir(record), 0o700)
		if err := os.Symlink(target, record); err != nil {
			t.Skip(err)
		}
		env := map[string]string{"ANTHROPIC_API_KEY": "k", "SITTER_STATE_DIR": state}
		var errb strings.Builder
		// A proxy that starts anyway is stopped after a while.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		code := run(ctx, []string{"--routes", routes, "--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, io.Discard, &errb)
		cancel()
		if code != 1 || !strings.Contains(errb.String(), record) {
			t.Errorf("link to %s: exit %d, stderr %q; want 1 naming %s", filepath.Base(target), code, errb.String(), record)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); !os.IsNotExist(err) {
		t.Errorf("a dangling link's target was created: %v", err)
	}
}
