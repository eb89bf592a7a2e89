package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// CheckEntry checks that FILE#export names a function the process module
// exports: from its source when it plainly declares it, else by loading
// it with Node the way iterate will. A typo then fails `run create` with
// the names the module does export, instead of making a run that iterate
// would run with another export. Without #export the module must export
// a `process` or default function (the ones iterate falls back to).
func CheckEntry(ctx context.Context, entry string) error {
	file, export, explicit := strings.Cut(entry, "#")
	explicit = explicit && export != ""
	if file == "" {
		return errors.New("--entry FILE#export is required")
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("process entry file %s: %w", file, err)
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return fmt.Errorf("process entry file not found: %s (the path must name a JS module)", abs)
	}
	if !explicit {
		export = "process"
	}
	if declaresFunction(src, export) || export == "process" && !explicit && declaresFunction(src, "default") {
		return nil
	}
	kinds, err := moduleExports(ctx, abs)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err) // "the process module did not load: …"
	}
	if !explicit {
		if kinds["process"] == "function" || kinds["default"] == "function" {
			return nil
		}
		return fmt.Errorf("%s exports no process function (neither \"process\" nor a default export); it exports: %s", file, exportList(kinds))
	}
	kind, ok := kinds[export]
	switch {
	case !ok:
		return fmt.Errorf("export %q not found in %s; it exports: %s", export, file, exportList(kinds))
	case kind != "function":
		return fmt.Errorf("export %q of %s is a %s, not a function; it exports: %s", export, file, kind, exportList(kinds))
	}
	return nil
}

// exportedFunction matches `export [async] function[*] name` at the start
// of a line; compiled on first use, as every hook call links this package.
var exportedFunction = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*export[ \t]+(default[ \t]+)?(?:async[ \t]+)?function[ \t]*\*?[ \t]*([A-Za-z_$][\w$]*)?`)
})

// declaresFunction says whether the source plainly declares the export as
// a function, which spares the common case a Node start (about 40 ms);
// any other answer is Node's to give.
func declaresFunction(src []byte, export string) bool {
	for _, m := range exportedFunction().FindAllSubmatch(src, -1) {
		if isDefault := len(m[1]) > 0; isDefault && export == "default" || !isDefault && string(m[2]) == export {
			return true
		}
	}
	return false
}

// moduleExports asks the JS runner for the module's exports and their
// typeof.
func moduleExports(ctx context.Context, abs string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultProcessTimeout)
	defer cancel()
	a, err := replayJS(ctx, replayInput{Entry: abs, Mode: "exports", Shim: shimMode(abs)}, nil)
	if err != nil {
		return nil, err
	}
	if a.Status != "exports" {
		return nil, fmt.Errorf("the JS runner answered %q to a question about exports", a.Status)
	}
	return a.Exports, nil
}

func exportList(kinds map[string]string) string {
	if len(kinds) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
