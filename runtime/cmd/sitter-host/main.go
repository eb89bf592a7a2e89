// Command sitter-host runs every sitter verb other than the hook path
// (run, task, session, plugin, launch, transcript, checkpoint, audit,
// agents, doctor, atlas, instructions, proxy). Users type `sitter <verb>`:
// the sitter binary execs this one, which is installed next to it.
package main

import (
	"os"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/verbs"
)

func main() {
	os.Exit(verbs.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, registry.Registry))
}
