// Package hook owns sitter's canonical hook contract (Event, Result), the
// decision merge, the rendering of results into native answers from
// generated templates, and the engine that runs handlers for one hook call.
//
// It imports only the standard library: it is on the hot path of every hook
// call a harness makes.
package hook
