package session

import (
	"os"
	"testing"

	gentranscript "sitter.dev/sitter/generated/transcript"
	"sitter.dev/sitter/runtime/transcript"
)

// The stop check reads transcripts through the atlas's record shapes, which
// the sitter binary registers at start-up; the tests register them too.
func TestMain(m *testing.M) {
	transcript.Specs = gentranscript.Specs
	os.Exit(m.Run())
}
