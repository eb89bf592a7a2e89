// Package run owns babysitter runs: the run directory (the SDK's 2026.01
// storage layout), replay of the journal into run state, effects and their
// results, and iteration, which replays a process (an ES module run by
// Node through sitter's embedded JS runtime) from the start against the
// journaled results and journals what it asks for next.
package run
