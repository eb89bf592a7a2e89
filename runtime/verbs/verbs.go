// Package verbs is everything `sitter` does besides answering hook calls:
// runs, sessions, plugins, launch, transcripts, checkpoints, audit,
// readiness. It is the sitter-host binary, which the sitter binary execs
// for these verbs, so that a hook call starts a binary holding only the
// hook path (see runtime/cmd/sitter). Every verb is a command of one
// cobra tree (cli.go: NewCommand, Run).
package verbs
