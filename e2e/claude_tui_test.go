//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// claudeTTY starts the real Claude Code TUI in a pseudo-terminal in
// project, against llm, with the onboarding done, the project trusted and
// the key approved in home (as sitter launch's overlay has them), extra
// args after the bundle's --plugin-dir.
func claudeTTY(t *testing.T, llm *llmscript.Server, project, home string, more []string, bundle string, extra ...string) *tty {
	t.Helper()
	bin := install(t, clis["claude-code"])
	key := interactiveKey
	state := fmt.Sprintf(`{"hasCompletedOnboarding":true,"customApiKeyResponses":{"approved":[%q],"rejected":[]},"projects":{%q:{"hasTrustDialogAccepted":true}}}`+"\n", key[len(key)-20:], project)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(state), 0o644)
	env := append(append(baseEnv(t, home), more...),
		"ANTHROPIC_BASE_URL="+llm.URL,
		"ANTHROPIC_API_KEY="+key,
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	return startTTY(t, project, env, bin, append([]string{"--plugin-dir", bundle}, extra...)...)
}

// TestClaudeTUI drives the real Claude Code TUI for the events only an
// interactive session raises.
func TestClaudeTUI(t *testing.T) {
	replier := replierBundle(t, "claude-code")
	// A command Claude will not run unasked (a cd with a redirection) opens
	// the permission dialog; left unanswered it raises Notification
	// (permission_prompt). Claude (2.1.197, 2.1.332) runs Notification
	// hooks without reading their output: the additionalContext its schema
	// accepts never reaches the model, so the atlas does not claim
	// addContext there. This case fails if a Claude version starts
	// honouring it (then claim it again).
	t.Run("notification", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		os.MkdirAll(filepath.Join(project, "sub"), 0o755)
		os.WriteFile(filepath.Join(rec, "notification-reply"), []byte(`{"additionalContext":"CTX-REPLY-NOTIFICATION"}`), 0o644)
		llm := startLLM(t, llmscript.ShellThenText("cd sub && echo x > x.txt", "TURN-DONE"))
		// 2.1.332 starts in auto mode, which asks nobody: the default
		// mode shows the dialog.
		d := claudeTTY(t, llm, project, home, []string{"E2E_DIR=" + rec}, replier, "--permission-mode", "default")
		d.waitScreen(`for shortcuts`, 90*time.Second)
		d.typeLine("write x.txt in sub")
		d.waitScreen(`Do you want to proceed\?`, 90*time.Second)
		// Claude notifies when the dialog has waited a few seconds.
		waitEvent(t, d, rec, "Notification", time.Minute)
		d.send("1")
		d.waitScreen(`● TURN-DONE`, 90*time.Second)
		evs := events(t, rec)
		got := nativeEvents(t, "claude-code", project, evs, "Notification", "notification")
		observed(t, "claude-code", got)
		if !strings.Contains(string(got[0].Raw), "permission_prompt") {
			t.Errorf("Notification payload %s: want notification_type permission_prompt", got[0].Raw)
		}
		if !exists(filepath.Join(project, "sub", "x.txt")) {
			t.Errorf("the approved command did not run")
		}
		if llm.Any(func(q *llmscript.Request) bool { return q.Contains("CTX-REPLY-NOTIFICATION") }) {
			t.Errorf("the Notification context reached the model: Claude now reads Notification output; claim addContext on Notification in the atlas again")
		}
	})
	// /add-dir of a folder outside the project (trusted, added for the
	// session) raises DirectoryAdded (source slash_command). A hook's
	// systemMessage goes to the model (which answers it at once), not to
	// the screen: the atlas claims no userMessage there.
	t.Run("directory-added", func(t *testing.T) {
		project, home, rec := probeCase(t, "")
		outside := filepath.Join(filepath.Dir(project), "outside")
		os.MkdirAll(outside, 0o755)
		claudeSettings(t, project,
			settingsHook{event: "DirectoryAdded", command: sitterHook("DirectoryAdded", claudeRecorder)},
			settingsHook{event: "DirectoryAdded", command: `echo '{"systemMessage":"SAY-DIRECTORY-ADDED"}'`})
		llm := startLLM(t, llmscript.Text("TURN-DONE"))
		d := claudeTTY(t, llm, project, home, []string{"E2E_DIR=" + rec}, replier, "--permission-mode", "default")
		d.waitScreen(`for shortcuts`, 90*time.Second)
		d.typeLine("/add-dir " + outside)
		// Trust it (Down to "Yes, add it"), then "Yes, for this session".
		d.waitScreen(`❯ No, leave it out Yes, add it`, 30*time.Second)
		d.send("\x1b[B\r")
		d.waitScreen(`❯ 1\. Yes, for this session`, 30*time.Second)
		d.send("\r")
		waitEvent(t, d, rec, "DirectoryAdded", time.Minute)
		got := nativeEvents(t, "claude-code", project, events(t, rec), "DirectoryAdded", "directoryAdded")
		observed(t, "claude-code", got)
		if !strings.Contains(string(got[0].Raw), `"source":"slash_command"`) || !strings.Contains(string(got[0].Raw), `"directory":"`+outside+`"`) {
			t.Errorf("DirectoryAdded payload %s: want directory %s, source slash_command", got[0].Raw, outside)
		}
		d.waitFor("the systemMessage to reach the model", time.Minute, func(string) bool {
			return llm.Any(func(q *llmscript.Request) bool { return q.Contains("SAY-DIRECTORY-ADDED") })
		})
		if strings.Contains(d.text(), "SAY-DIRECTORY-ADDED") {
			t.Errorf("the DirectoryAdded systemMessage shows on the screen: claim userMessage on DirectoryAdded in the atlas again")
		}
	})
}
