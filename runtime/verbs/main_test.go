package verbs

import (
	"os"
	"testing"

	"sitter.dev/sitter/generated/registry"
)

// TestMain: tests that need sitter-host as a real process (kills,
// concurrency, the npm SDK side by side) run this test binary with
// SITTER_TEST_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("SITTER_TEST_MAIN") == "1" {
		os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, registry.Registry))
	}
	os.Exit(m.Run())
}
