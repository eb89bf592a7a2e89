package launch

// Spec is how sitter launch runs one harness: plain data generated from
// atlas/launch.cue (generated/launch). Strings are templates; see Expand.
type Spec struct {
	Harness string
	// Names are the harness id and its aliases.
	Names []string
	// Binary is looked up on PATH; NpmBin is where the npm package puts
	// the real binary, relative to its install folder.
	Binary, NpmBin string
	// Headless runs one task; Resume continues the launch's latest
	// session with {prompt}; ResumeID continues session {session}.
	Headless, Resume, ResumeID []string
	// MaxTurns and ModelArgs are added when a turn limit or --model is given.
	MaxTurns, ModelArgs []string
	Interactive         []string
	// Unattended is added to Interactive in bridge-interactive mode, where
	// nobody is at the terminal to approve a tool.
	Unattended []string
	Env        []KV
	Files      []File
	// Connect lists, per wire protocol the harness speaks, how it is
	// pointed at a base URL and key; the first is used behind the proxy.
	Connect []Connect
	// PluginKind is "flag" (PluginArgs name {bundle}) or "install".
	PluginKind string
	PluginArgs []string
	Bridge     Bridge
	// ExitsHeadless and ExitsInteractive say whether the harness exits
	// after one task when run each way.
	ExitsHeadless, ExitsInteractive bool
	// Onboarding lists the prompts of the interactive terminal UI that
	// bridge-interactive mode answers.
	Onboarding []Prompt
	// TurnEnd registers a hook on the harness's stop event that runs
	// {turnEndCommand} (bridge-interactive mode); without files, the idle
	// timeout ends a turn. A turn-end file may share its path with a
	// regular or connect file: Prepare merges them (MergeJSON).
	TurnEnd  TurnEnd
	Evidence []string
}

// Prompt is one prompt of an interactive terminal UI: Match is an RE2
// regexp searched in the screen's text with every run of blanks and
// newlines read as one space; Keys are typed to answer it.
type Prompt struct{ ID, Match, Keys string }

// TurnEnd is the hook that reports the end of a turn: Files register
// {turnEndCommand} on the harness's native Event.
type TurnEnd struct {
	Event string
	Files []File
}

// KV is one environment variable (template value).
type KV struct{ Name, Value string }

// File is one file a launch writes; Path starts with {home} or {workspace}.
type File struct{ Path, Content string }

// Connect points a harness at a base URL and key in one protocol.
type Connect struct {
	Protocol  string
	ProxyPath string
	Env       []KV
	Files     []File
}

// Hook is a native event bridge-hooks mode sends through `sitter hook`,
// with its payload template (JSON).
type Hook struct{ Event, Payload string }

// Bridge is the lifecycle bridge-hooks mode emulates.
type Bridge struct{ SessionStart, Stop, SessionEnd Hook }

// Find returns the spec of a harness id or alias.
func Find(specs []Spec, name string) (Spec, bool) {
	for _, s := range specs {
		for _, n := range s.Names {
			if n == name {
				return s, true
			}
		}
	}
	return Spec{}, false
}
