// Command sitter-gen turns the CUE atlas into generated/ (Go normalizers,
// renderers, descriptors and JSON Schemas).
//
//	sitter-gen [-root DIR] [-check]
//
// Errors are printed as `atlas/harnesses/x.cue:LINE:COL: message`, all of
// them, sorted; the exit code is then 1.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"sitter.dev/sitter/gen"
	"sitter.dev/sitter/gen/model"
	"sitter.dev/sitter/gen/write"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sitter-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "repository root (holds atlas/ and generated/)")
	checkOnly := fs.Bool("check", false, "load and check the atlas, write nothing")
	verbose := fs.Bool("v", false, "list written and removed files")
	quiet := fs.Bool("q", false, "print only errors and the summary")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	begin := time.Now()
	progress := func(line string) { fmt.Fprintln(stdout, "sitter-gen:", line) }
	if *quiet {
		progress = nil
	}
	warn := func(w model.Error) { fmt.Fprintln(stderr, w) }
	_, files, err := gen.GenerateWith(*root, gen.Options{Progress: progress, Warn: warn})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *checkOnly {
		fmt.Fprintf(stdout, "sitter-gen: atlas ok (%d files would be generated; -check writes nothing)\n", len(files))
		return 0
	}
	st, err := write.Files(*root, files, gen.Owned)
	if err != nil {
		fmt.Fprintf(stderr, "sitter-gen: write: %v\n", err)
		return 1
	}
	if *verbose {
		for _, p := range st.Written {
			fmt.Fprintln(stdout, "wrote", p)
		}
		for _, p := range st.Removed {
			fmt.Fprintln(stdout, "removed", p)
		}
	}
	fmt.Fprintf(stdout, "sitter-gen: %d files (%d written, %d unchanged, %d removed) in %s\n", len(files), len(st.Written), len(st.Unchanged), len(st.Removed), time.Since(begin).Round(time.Millisecond))
	return 0
}
