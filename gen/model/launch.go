package model

// Launch is how `sitter launch` runs one harness (#Launch, atlas/launch.cue).
type Launch struct {
	Harness     string
	Pos         Pos
	Binary      string
	NpmBin      string
	Headless    []string
	Resume      []string
	ResumeID    []string
	MaxTurns    []string
	ModelArgs   []string
	Interactive []string
	Unattended  []string // added to Interactive in bridge-interactive mode
	Env         []KV     // sorted by name
	Files       []LaunchFile
	Connect     []Connect // atlas order; the first is used behind the proxy
	PluginKind  string    // flag | install
	PluginArgs  []string
	Bridge      []LaunchHook // sessionStart, stop, sessionEnd
	// ExitsHeadless and ExitsInteractive say whether the harness exits
	// after one task in each way of running it.
	ExitsHeadless, ExitsInteractive bool
	// Onboarding lists the prompts bridge-interactive mode answers.
	Onboarding []LaunchPrompt
	// TurnEnd is how bridge-interactive mode learns a turn ended (nil:
	// by the idle timeout).
	TurnEnd  *LaunchTurnEnd
	Evidence []Evidence
	Note     string
}

// LaunchPrompt is one prompt of an interactive terminal UI and its answer.
type LaunchPrompt struct {
	ID, Match, Keys string
	Pos             Pos
	Evidence        []Evidence
}

// LaunchTurnEnd registers a hook on the harness's stop event that runs
// {turnEndCommand} (bridge-interactive mode only).
type LaunchTurnEnd struct {
	Event    Named
	Files    []LaunchFile
	Evidence []Evidence
}

// KV is one environment variable template.
type KV struct{ Name, Value string }

// LaunchFile is one file a launch writes (path and content are templates).
type LaunchFile struct {
	Path, Content string
	Pos           Pos
}

// Connect points a harness at a base URL and key in one wire protocol.
type Connect struct {
	Protocol  Named
	ProxyPath string
	Env       []KV // sorted by name
	Files     []LaunchFile
}

// LaunchHook is one lifecycle event bridge-hooks mode emulates.
type LaunchHook struct {
	Role    string // sessionStart | stop | sessionEnd
	Event   Named
	Payload string
}
