//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
	"sitter.dev/sitter/runtime/proxy"
)

// startProxy runs the gateway in-process on 127.0.0.1 in front of the fake
// LLM, which speaks protocol.
func startProxy(t *testing.T, llm *llmscript.Server, protocol string) (url, token string) {
	t.Helper()
	base := llm.URL
	auth := map[string]string{proxy.Anthropic: "x-api-key", proxy.OpenAIChat: "bearer", proxy.OpenAIResponses: "bearer", proxy.Gemini: "x-goog-api-key"}[protocol]
	if protocol == proxy.OpenAIChat || protocol == proxy.OpenAIResponses {
		base += "/v1"
	}
	token = "sitter-e2e-token"
	srv, err := proxy.New(proxy.Config{Provider: proxy.Provider{ID: "fake-" + protocol, Protocol: protocol, BaseURL: base, Auth: auth, Key: "sk-upstream", DefaultModel: "fake-model", MaxOutputTokens: 4096}, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String(), token
}

// TestProxyClaudeCode: Claude Code (Anthropic Messages) completes a turn
// with a shell tool call through sitter proxy to an upstream speaking
// OpenAI Chat, then Responses, then Gemini.
func TestProxyClaudeCode(t *testing.T) {
	bin := install(t, clis["claude-code"])
	for _, up := range []string{proxy.OpenAIChat, proxy.OpenAIResponses, proxy.Gemini} {
		t.Run(up, func(t *testing.T) {
			project, home := t.TempDir(), t.TempDir()
			llm := startLLM(t, llmscript.ShellThenText("echo proxied > proxied.txt", "done"))
			url, token := startProxy(t, llm, up)
			env := append(baseEnv(t, home),
				"ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY="+token,
				"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
			r := runCLI(t, project, env, 2*time.Minute, bin, "-p", "write the file", "--output-format", "json", "--allowedTools", "Bash")
			if r.err != nil {
				t.Fatalf("claude: %v\n%s\n%s", r.err, r.stdout, r.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(project, "proxied.txt")); err != nil || string(b) != "proxied\n" {
				t.Errorf("the tool call did not run: %q %v\n%s", b, err, r.stdout)
			}
			mustContain(t, "claude output", r.stdout, "done")
			if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Protocol == llmProto(up) }) {
				t.Errorf("the upstream never received the tool result in %s", up)
			}
		})
	}
}

// TestProxyCodex: Codex (Responses) completes a turn with a tool call
// through sitter proxy to an Anthropic upstream.
func TestProxyCodex(t *testing.T) {
	bin := install(t, clis["codex"])
	project, home := t.TempDir(), t.TempDir()
	llm := startLLM(t, llmscript.ShellThenText("echo proxied > proxied.txt", "done"))
	url, token := startProxy(t, llm, proxy.Anthropic)
	codexHome := filepath.Join(home, ".codex")
	os.MkdirAll(codexHome, 0o755)
	config := fmt.Sprintf(`model = "fake-model"
model_provider = "sitter"

[model_providers.sitter]
name = "sitter proxy"
base_url = %q
env_key = "SITTER_PROXY_TOKEN"
wire_api = "responses"

[projects.%q]
trust_level = "trusted"
`, url+"/v1", project)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(t, home), "CODEX_HOME="+codexHome, "SITTER_PROXY_TOKEN="+token)
	r := runCLI(t, project, env, 2*time.Minute, bin, "exec", "-s", "danger-full-access", "--skip-git-repo-check", "write the file")
	if r.err != nil {
		t.Fatalf("codex: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(project, "proxied.txt")); err != nil || string(b) != "proxied\n" {
		t.Errorf("the tool call did not run: %q %v\n%s\n%s", b, err, r.stdout, r.stderr)
	}
	if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Protocol == "anthropic" }) {
		t.Errorf("the Anthropic upstream never received the tool result")
	}
}

func llmProto(p string) string {
	return map[string]string{proxy.Anthropic: "anthropic", proxy.OpenAIChat: "chat", proxy.OpenAIResponses: "responses", proxy.Gemini: "gemini"}[p]
}

// TestProxyGeminiCLI: Gemini CLI (generateContent, streamed SSE) completes
// a turn with a shell call through sitter proxy to Anthropic and to OpenAI
// Chat upstreams.
func TestProxyGeminiCLI(t *testing.T) {
	bin := install(t, clis["gemini-cli"])
	for _, up := range []string{proxy.Anthropic, proxy.OpenAIChat} {
		t.Run(up, func(t *testing.T) {
			project, home := t.TempDir(), t.TempDir()
			dir := filepath.Join(home, ".gemini")
			os.MkdirAll(dir, 0o755)
			settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}`
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			llm := startLLM(t, llmscript.ShellThenText("echo proxied > proxied.txt", "done"))
			url, token := startProxy(t, llm, up)
			env := append(baseEnv(t, home), "GEMINI_API_KEY="+token, "GOOGLE_GEMINI_BASE_URL="+url, "GEMINI_CLI_TRUST_WORKSPACE=true")
			r := runCLI(t, project, env, 2*time.Minute, bin, "-m", geminiModel, "-p", "write the file", "--output-format", "json", "--approval-mode", "yolo")
			if r.err != nil {
				t.Fatalf("gemini: %v\n%s\n%s", r.err, r.stdout, r.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(project, "proxied.txt")); err != nil || string(b) != "proxied\n" {
				t.Errorf("the tool call did not run: %q %v\n%s", b, err, r.stdout)
			}
			if !llm.Any(func(q *llmscript.Request) bool { return q.HasToolResult() && q.Protocol == llmProto(up) }) {
				t.Errorf("the upstream never received the tool result in %s", up)
			}
		})
	}
}
