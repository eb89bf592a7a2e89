package hook

import "encoding/json"

// Version is the canonical contract version carried by every Event.
const Version = "sitter.hook.v1"

// Event is what a handler receives on stdin. Absent facts are omitted, never
// invented: every optional field uses omitempty or a pointer. File is the
// file a fileChanged event is about, as the harness names it (Claude Code:
// an absolute path).
type Event struct {
	Version              string          `json:"version"`
	Harness              string          `json:"harness"`
	NativeEvent          string          `json:"nativeEvent"`
	Phase                string          `json:"phase"`
	Support              string          `json:"support"`
	Session              Session         `json:"session"`
	Tool                 *Tool           `json:"tool,omitempty"`
	Prompt               string          `json:"prompt,omitempty"`
	Source               string          `json:"source,omitempty"`
	Reason               string          `json:"reason,omitempty"`
	StopHookActive       *bool           `json:"stopHookActive,omitempty"`
	LastAssistantMessage string          `json:"lastAssistantMessage,omitempty"`
	File                 string          `json:"file,omitempty"`
	Raw                  json.RawMessage `json:"raw,omitempty"`
}

// Session identifies the agent session an event belongs to.
type Session struct {
	ID             string `json:"id,omitempty"`
	Cwd            string `json:"cwd,omitempty"`
	ProjectDir     string `json:"projectDir,omitempty"`
	TranscriptPath string `json:"transcriptPath,omitempty"`
	TurnID         string `json:"turnId,omitempty"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permissionMode,omitempty"`
}

// Tool describes the tool call of a tool event. Kind is the canonical tool
// class declared per harness in the atlas.
type Tool struct {
	Name     string          `json:"name,omitempty"`
	Kind     string          `json:"kind,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	CallID   string          `json:"callId,omitempty"`
}

// Tool kinds: the canonical tool classes.
const (
	KindShell  = "shell"
	KindRead   = "read"
	KindWrite  = "write"
	KindEdit   = "edit"
	KindSearch = "search"
	KindFetch  = "fetch"
	KindTask   = "task"
	KindMCP    = "mcp"
	KindOther  = "other"
)

// Phases that a stop decision applies to: there "block" means "keep going".
func IsStopPhase(phase string) bool { return phase == "stop" || phase == "subagentStop" }
