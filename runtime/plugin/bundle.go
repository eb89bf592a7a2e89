package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"sitter.dev/sitter/runtime/adapter"
	"sitter.dev/sitter/runtime/internal/jsonpos"
)

// File names every bundle carries (see gen/emit/bundle.go).
const (
	MarkerFile   = ".sitter-bundle.json"
	HandlerTable = "sitter-handlers.json"
	Launcher     = "bin/sitter-hook"
)

// Marker is a bundle's .sitter-bundle.json.
type Marker struct {
	GeneratedBy string   `json:"generatedBy"`
	Plugin      string   `json:"plugin"`
	Version     string   `json:"version"`
	Harness     string   `json:"harness"`
	Format      string   `json:"format"`
	Hooks       []string `json:"hooks"`
}

// Bundle is a bundle folder and its marker.
type Bundle struct {
	Dir    string // as found (for messages)
	Marker Marker
}

// slug is what a plugin name must look like to become a path element.
// slug is compiled on first use: every hook call links this package.
var slug = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$`) })

// ValidPluginName says whether name can be used in install paths.
func ValidPluginName(name string) bool {
	return slug().MatchString(name) && !strings.Contains(name, "..")
}

// OpenBundle reads dir's marker.
func OpenBundle(dir string) (*Bundle, error) {
	data, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a sitter bundle (no %s)", dir, MarkerFile)
		}
		return nil, err
	}
	var m Marker
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, jsonpos.Wrap(dir+"/"+MarkerFile, data, err)
	}
	if !ValidPluginName(m.Plugin) {
		return nil, fmt.Errorf("%s/%s: plugin name %q is not a slug", dir, MarkerFile, m.Plugin)
	}
	if m.Harness == "" || m.Format == "" {
		return nil, fmt.Errorf("%s/%s: harness and format are required", dir, MarkerFile)
	}
	return &Bundle{Dir: dir, Marker: m}, nil
}

func isBundle(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, MarkerFile))
	return err == nil && fi.Mode().IsRegular()
}

// FindBundle resolves what `sitter plugin install` was given for harness
// d: a bundle dir, a plugin dir holding <harness>/, or a plugin name looked
// up in NameDirs. The bundle must be for d. When none is found, the error
// lists every place looked in, as absolute paths, so that the user sees
// where a bundle would be found.
func FindBundle(arg string, d *adapter.Descriptor, reg *adapter.Registry) (*Bundle, error) {
	var tried []string
	candidates := []string{arg, filepath.Join(arg, d.ID)}
	if ValidPluginName(arg) {
		for _, dir := range NameDirs() {
			candidates = append(candidates, filepath.Join(dir, arg, d.ID))
		}
	}
	for _, c := range candidates {
		if abs, err := filepath.Abs(c); err == nil && !slices.Contains(tried, abs) {
			tried = append(tried, abs)
		}
		if !isBundle(c) {
			continue
		}
		b, err := OpenBundle(c)
		if err != nil {
			return nil, err
		}
		bd, _, err := reg.Resolve(b.Marker.Harness)
		if err != nil {
			return nil, fmt.Errorf("%s: bundle for %s: %v", c, b.Marker.Harness, err)
		}
		if bd.ID != d.ID {
			return nil, fmt.Errorf("%s is a bundle for %s, not %s", c, bd.ID, d.ID)
		}
		return b, nil
	}
	// A name: say which plugins are there, and the one it likely means.
	var known []string
	if ValidPluginName(arg) {
		for _, dir := range NameDirs() {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.IsDir() && isBundle(filepath.Join(dir, e.Name(), d.ID)) && !slices.Contains(known, e.Name()) {
					known = append(known, e.Name())
				}
			}
		}
	}
	hint, there := "", ""
	if s := adapter.Closest(arg, known); s != "" {
		hint = "; did you mean " + s + "?"
	}
	if len(known) > 0 {
		slices.Sort(known)
		there = fmt.Sprintf("; plugins with a %s bundle there: %s", d.ID, strings.Join(known, ", "))
	}
	return nil, fmt.Errorf("no %s bundle found for %q%s (looked for %s in %s%s)", d.ID, arg, hint, MarkerFile, strings.Join(tried, ", "), there)
}

// executable is the running binary (a test points it elsewhere).
var executable = os.Executable

// NameDirs lists the folders a plugin name is looked up in, in order,
// whether they exist or not: ./artifacts (a checkout, from the working
// directory); then, beside the bin/ folder holding the running binary,
// share/sitter/artifacts (make install, a release archive) and artifacts
// (a checkout whose bin/ make build filled, on PATH from anywhere). The
// binary is seen as invoked and, when that is a symlink, as its target.
// The first is relative, the others absolute.
func NameDirs() []string {
	out := []string{"artifacts"}
	add := func(d string) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	var prefixes []string
	if self, err := executable(); err == nil {
		prefixes = append(prefixes, filepath.Dir(filepath.Dir(self)))
		if real, err := filepath.EvalSymlinks(self); err == nil {
			prefixes = append(prefixes, filepath.Dir(filepath.Dir(real)))
		}
	}
	for _, p := range prefixes {
		add(filepath.Join(p, "share", "sitter", "artifacts"))
	}
	for _, p := range prefixes {
		add(filepath.Join(p, "artifacts"))
	}
	return out
}

// FindBundles lists the bundles under each path: a bundle dir, or any dir
// whose subfolders hold bundles (a plugin dir, artifacts/). Bundles are not
// searched inside.
func FindBundles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", p)
		}
		n := len(out)
		err = filepath.WalkDir(walkRoot(p), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() {
				return nil
			}
			if isBundle(path) {
				out = append(out, path)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: no sitter bundle (no %s in it or below)", p, MarkerFile)
		}
	}
	return out, nil
}

// walkRoot is dir as filepath.WalkDir's root: a symlink to a folder (an
// artifacts/ linked from elsewhere) is walked as the folder, which
// WalkDir does not do by itself, through a trailing separator.
func walkRoot(dir string) string {
	if li, err := os.Lstat(dir); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		return dir + string(filepath.Separator)
	}
	return dir
}

// ShellQuote quotes s for a POSIX shell: in single quotes, each single
// quote inside written as quote, backslash, quote, quote.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWord quotes s only when a POSIX shell would not read it as itself.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return ShellQuote(s)
}

// launcherCommand parses a bundle's hook command,
// `"<root>/bin/sitter-hook" <harness> <event>`, into its root and arguments.
func launcherCommand(cmd string) (root string, args []string, ok bool) {
	rest, found := strings.CutPrefix(cmd, `"`)
	if !found {
		return "", nil, false
	}
	quoted, tail, found := strings.Cut(rest, `"`)
	if !found {
		return "", nil, false
	}
	root, found = strings.CutSuffix(quoted, "/"+Launcher)
	if !found || strings.ContainsAny(root, "\"\\`") {
		return "", nil, false
	}
	if tail != "" && !strings.HasPrefix(tail, " ") {
		return "", nil, false
	}
	return root, strings.Fields(tail), true
}
