package model

// Routing is what `sitter proxy --routes` reads in a request
// (atlas/routing.cue): per protocol, the think, web-search and image
// signals; per harness, its background-call signals.
type Routing struct {
	Protocols []ProtocolSignals // sorted by protocol
	Harnesses []HarnessSignals  // sorted by harness id
}

// ProtocolSignals: any match makes a request of the protocol a think,
// web-search or image request.
type ProtocolSignals struct {
	Protocol                Named
	Think, WebSearch, Image []SignalMatch
}

// HarnessSignals: a request is the harness's background call when every
// match of one of the Background groups holds.
type HarnessSignals struct {
	Harness    Named
	Background [][]SignalMatch
	// RoutedUnsetEnv: variables a routed launch leaves out.
	RoutedUnsetEnv []string
}

// SignalMatch tests one path of a request body (see #SignalMatch).
type SignalMatch struct {
	Path    string
	Values  []string // JSON literals: "\"enabled\"", "true", "1"
	Prefix  string
	Pattern string
	// Present is "" (not this kind), "true" or "false".
	Present  string
	Evidence []Evidence
	Pos      Pos
}
