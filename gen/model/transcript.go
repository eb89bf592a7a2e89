package model

// HarnessTranscript is what atlas/transcripts.cue says about one harness:
// its transcript (nil when the atlas has none) and its presence (nil when
// none).
type HarnessTranscript struct {
	Harness    string
	Transcript *Transcript
	Presence   *Presence
}

// Transcript is a harness's transcript: format family, location, record shapes.
type Transcript struct {
	Pos      Pos
	Format   Named // jsonl-cli | json-event
	Messages string
	Payload  bool
	Location Named
	HomeEnv  string
	// Store: the directory of the harness's sessions when Location
	// names no file sitter reads (a database); "" to take Location's.
	Store     string
	Prompts   []Record
	Assistant []Record
	ToolCalls []Record
	Usage     []Record
	Resume    Named
	// WriteLagMs: how long the harness may still be writing a turn's last
	// message after its hook fired (0: written before).
	WriteLagMs   int
	Capabilities TranscriptCaps
	Evidence     []Evidence
	Note         string
}

// TranscriptCaps are the capability flags of a harness's adapter.
type TranscriptCaps struct {
	HookInstallation, TranscriptAnalysis, TokenCalculation bool
}

// Match requires Path to hold the string Value.
type Match struct{ Path, Value string }

// Record is one record shape (#Record).
type Record struct {
	Pos        Pos
	When       []Match // sorted by path
	Each       string
	EachWhen   []Match
	Text       string
	SkipPrefix []string
	Key        string
	Name       string
	Input      string
	InputAs    string
	Files      []string
	WriteTools []string
	Usage      UsagePaths
}

// UsagePaths are the paths of the four token counts.
type UsagePaths struct{ Input, Output, CacheRead, CacheWrite string }

// Presence is how a host detects a harness (#Presence).
type Presence struct {
	Pos           Pos
	ProjectDirs   []string
	ProjectFiles  []string
	Binaries      []string
	VersionArgs   []string
	ProtectedDirs []string
	HookConfigs   []string
	Evidence      []Evidence
}
