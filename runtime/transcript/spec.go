// Package transcript reads the native session transcripts of coding-agent
// harnesses through the record shapes the atlas declares
// (atlas/transcripts.cue → generated/transcript): a transcript's position,
// and the prompts, last assistant message, tool calls, modified files and
// token usage since a position. It streams: a JSONL transcript is read line
// by line with a bounded buffer (longer lines are skipped and counted), a
// json-event document message by message; no file is loaded whole.
//
// Stdlib only; no init-time work (every hook call links it).
package transcript

// Formats of a transcript (#TranscriptFormat in atlas/schema.cue).
const (
	JSONL     = "jsonl-cli"  // positions are line offsets
	JSONEvent = "json-event" // positions are message indices
)

// Match requires the value at Path to be the string Value.
type Match struct{ Path, Value string }

// UsagePaths are where a record holds the four token counts.
type UsagePaths struct{ Input, Output, CacheRead, CacheWrite string }

// Record is one record shape (#Record in atlas/transcripts.cue).
type Record struct {
	When       []Match
	Each       string
	EachWhen   []Match
	Text       string
	SkipPrefix []string
	Key        string
	Name       string
	Input      string
	InputAs    string // "", "json-string" or "patch"
	Files      []string
	WriteTools []string
	Usage      UsagePaths
}

// Spec is one harness's transcript description.
type Spec struct {
	Harness                              string
	Format                               string
	Messages                             string // json-event: path of the message array
	Payload                              bool   // the hook payload carries the transcript path
	Location                             string // pattern under the home directory ("" = none)
	HomeEnv                              string // replaces the location's first directory when set (an XDG variable: its default, ~/.local/share for XDG_DATA_HOME)
	Store                                string // the sessions' directory when Location names no file sitter reads ("" = Location's)
	Prompts, Assistant, ToolCalls, Usage []Record
	Resume                               string
	// WriteLagMs: how long after a hook fires the harness may still be
	// writing the turn's last message here, in milliseconds (0: it is
	// written before the hook fires).
	WriteLagMs int

	HookInstallation, TranscriptAnalysis, TokenCalculation bool
	Evidence                                               []string
}

// Presence is how a host detects a harness in a project and on the machine.
type Presence struct {
	Harness       string
	ProjectDirs   []string
	ProjectFiles  []string
	Binaries      []string
	VersionArgs   []string
	ProtectedDirs []string
	HookConfigs   []string
	Evidence      []string
}

// Specs and Presences are the generated tables; runtime/cmd/sitter sets
// them from generated/transcript (library packages cannot import generated).
var (
	Specs     []Spec
	Presences []Presence
)

// Lookup returns the spec of a harness id.
func Lookup(harness string) (*Spec, bool) {
	for i := range Specs {
		if Specs[i].Harness == harness {
			return &Specs[i], true
		}
	}
	return nil, false
}

// LookupPresence returns the presence of a harness id.
func LookupPresence(harness string) (*Presence, bool) {
	for i := range Presences {
		if Presences[i].Harness == harness {
			return &Presences[i], true
		}
	}
	return nil, false
}
