//go:build e2e

package e2e

import (
	"testing"

	"sitter.dev/sitter/e2e/llmscript"
)

// kiloRun runs one `kilo run` against the fake LLM (OpenAI Chat
// Completions through @ai-sdk/openai-compatible, configured in the
// project's kilo.json).
func kiloRun(t *testing.T, llm *llmscript.Server, project, home string, more []string, prompt string) runResult {
	t.Helper()
	return kilo.run(t, llm, project, home, more, prompt)
}

func TestKiloGuard(t *testing.T) { guardCase(t, "kilo-code", "tool.execute.before", kiloRun) }

// Kilo's plugin API is OpenCode's, and so are its cases (ocFamily):
// chat.message (userPromptSubmit) and experimental.chat.system.transform
// (beforePromptBuild) add context, tool.execute.before rewrites,
// tool.execute.after adds context, the compaction, command and error
// events fire as in OpenCode.
func TestKiloProbe(t *testing.T) { ocProbe(t, kilo) }

func TestKiloObserve(t *testing.T) { ocObserve(t, kilo) }

// TestKiloStop drives session.idle through `kilo serve` and `kilo run
// --attach`, as TestOpenCodeStop does.
func TestKiloStop(t *testing.T) { ocStop(t, kilo) }
