// Command sitter-clidoc writes the CLI reference (docs/cli by default)
// from sitter's command tree; make generate runs it.
package main

import (
	"fmt"
	"os"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/verbs"
)

func main() {
	dir := "docs/cli"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := verbs.WriteReference(dir, registry.Registry); err != nil {
		fmt.Fprintf(os.Stderr, "sitter-clidoc: %v\n", err)
		os.Exit(1)
	}
}
