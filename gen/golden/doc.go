// Package golden holds the golden tests of the generated harness code:
// native payload in → canonical event out, canonical result in → native
// answer out, for every harness and event of the atlas. It lives under gen/
// because it validates against JSON Schemas, which the runtime never imports.
//
// Update the goldens with: go test ./gen/golden -update, or every golden of
// the repository at once with make golden (internal/golden holds the flag).
package golden
