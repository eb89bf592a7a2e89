package sitter_test

// The README runs as written: TestReadme extracts every fenced shell block
// of README.md and runs it, in README order, as a new user would type it.
//
// The rules a README block follows (docs/architecture.md, "The README
// runs as written", says the same for writers):
//
//   - Every fence names its language. sh, bash and shell blocks are run;
//     any other language (text for a synopsis, json, yaml, js) is shown
//     only.
//   - A shell block that needs what a test cannot have (a real harness
//     CLI, a provider's API key, a browser) is preceded, on the line just
//     above its fence, by an HTML comment a rendered README does not show:
//     <!-- readme-test: skip (needs the real Claude Code CLI) -->
//     The reason in parentheses is required.
//   - A block whose last line is a comment line ("# …") shows what its
//     last command prints last: the test compares it with the last line
//     of stdout, exactly, or as a prefix when the comment ends in " …".
//
// Each block runs with `sh -e` on its own, from the root of a fresh copy of
// the checkout (the files git knows, as a clone has them), after `make
// build`, with that copy's bin/ first on PATH, HOME an empty temp folder
// holding an empty ~/my-project (the reader's own project), and nothing of
// the caller's sitter, harness or XDG settings. Go keeps its module and
// build caches, so the builds the blocks run reuse them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeBlock is one fenced block of the README.
type readmeBlock struct {
	line   int    // 1-based line of the opening fence
	lang   string // the fence's language
	text   string // the block's lines
	skip   string // the reason of a readme-test: skip marker, "" if none
	marked bool   // a marker precedes the block
}

var (
	fenceRE  = regexp.MustCompile("^(`{3,}|~{3,})\\s*([A-Za-z0-9_+-]*)")
	markerRE = regexp.MustCompile(`^<!--\s*readme-test:(.*?)-->\s*$`)
	skipRE   = regexp.MustCompile(`^\s*skip\s*\((.*)\)\s*$`)
)

// shellLangs are the fence languages TestReadme runs.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true}

// parseReadme splits a markdown text into its fenced blocks, with the
// readme-test markers applied. Every problem of the markup is an error
// naming README.md:LINE: a fence with no language, a marker with no reason
// or an unknown directive, a marker not directly above a shell fence, an
// unclosed fence.
func parseReadme(text string) ([]readmeBlock, []error) {
	var blocks []readmeBlock
	var errs []error
	lines := strings.Split(text, "\n")
	pending := -1 // line index of a marker waiting for its fence
	var pendingReason string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := markerRE.FindStringSubmatch(l); m != nil {
			if pending >= 0 {
				errs = append(errs, fmt.Errorf("README.md:%d: readme-test marker not directly above a shell block", pending+1))
			}
			sm := skipRE.FindStringSubmatch(m[1])
			switch {
			case sm == nil:
				errs = append(errs, fmt.Errorf("README.md:%d: readme-test marker %q: want <!-- readme-test: skip (REASON) -->", i+1, strings.TrimSpace(l)))
				pending = -1
			case strings.TrimSpace(sm[1]) == "":
				errs = append(errs, fmt.Errorf("README.md:%d: readme-test: skip without a reason: say in the parentheses what the block needs that a test cannot have", i+1))
				pending = -1
			default:
				pending, pendingReason = i, strings.TrimSpace(sm[1])
			}
			continue
		}
		m := fenceRE.FindStringSubmatch(l)
		if m == nil {
			if pending >= 0 {
				errs = append(errs, fmt.Errorf("README.md:%d: readme-test marker not directly above a shell block", pending+1))
				pending = -1
			}
			continue
		}
		b := readmeBlock{line: i + 1, lang: m[2]}
		if pending >= 0 {
			b.marked, b.skip = true, pendingReason
			pending = -1
		}
		closer := m[1]
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimSpace(lines[i]), closer) && strings.Trim(strings.TrimSpace(lines[i]), closer[:1]) == "" {
				closed = true
				break
			}
			body = append(body, lines[i])
		}
		if !closed {
			errs = append(errs, fmt.Errorf("README.md:%d: the block is never closed", b.line))
			break
		}
		b.text = strings.Join(body, "\n") + "\n"
		switch {
		case b.lang == "":
			errs = append(errs, fmt.Errorf("README.md:%d: a fence without a language: say sh (the test runs it) or text (shown only)", b.line))
		case b.marked && !shellLangs[b.lang]:
			errs = append(errs, fmt.Errorf("README.md:%d: readme-test marker above a %s block, which is never run", b.line, b.lang))
		}
		blocks = append(blocks, b)
	}
	if pending >= 0 {
		errs = append(errs, fmt.Errorf("README.md:%d: readme-test marker not directly above a shell block", pending+1))
	}
	return blocks, errs
}

// wantLastLine is the output a block shows on its last line ("# …"):
// the last line of stdout, or its prefix (prefix true) when the comment
// ends in " …".
func wantLastLine(b readmeBlock) (want string, prefix, ok bool) {
	lines := strings.Split(strings.TrimRight(b.text, "\n"), "\n")
	last, ok := strings.CutPrefix(lines[len(lines)-1], "# ")
	if !ok {
		return "", false, false
	}
	if w, cut := strings.CutSuffix(last, " …"); cut {
		return w, true, true
	}
	return last, false, true
}

// printed says whether got, the last line a block printed, is what the
// block shows.
func printed(got, want string, prefix bool) bool {
	if prefix {
		return strings.HasPrefix(got, want)
	}
	return got == want
}

func TestParseReadmeMarkup(t *testing.T) {
	for _, c := range []struct {
		name, text, err string
		skips           []string
	}{
		{name: "run and show", text: "```sh\necho hi\n```\n\n```text\nsitter hook <h>\n```\n", skips: []string{"", ""}},
		{name: "skip with reason", text: "<!-- readme-test: skip (needs the real Claude Code CLI) -->\n```sh\nclaude\n```\n", skips: []string{"needs the real Claude Code CLI"}},
		{name: "no reason", text: "<!-- readme-test: skip () -->\n```sh\nclaude\n```\n", err: "README.md:1: readme-test: skip without a reason"},
		{name: "bare skip", text: "<!-- readme-test: skip -->\n```sh\nclaude\n```\n", err: "README.md:1: readme-test marker"},
		{name: "no language", text: "```\nsitter hook\n```\n", err: "README.md:1: a fence without a language"},
		{name: "marker astray", text: "<!-- readme-test: skip (x) -->\n\n```sh\nclaude\n```\n", err: "README.md:1: readme-test marker not directly above"},
		{name: "marker on json", text: "<!-- readme-test: skip (x) -->\n```json\n{}\n```\n", err: "README.md:2: readme-test marker above a json block"},
		{name: "unclosed", text: "```sh\necho\n", err: "README.md:1: the block is never closed"},
	} {
		blocks, errs := parseReadme(c.text)
		if c.err != "" {
			if len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), c.err) {
				t.Errorf("%s: errors %v, want %q", c.name, errs, c.err)
			}
			continue
		}
		if len(errs) > 0 {
			t.Errorf("%s: %v", c.name, errs)
			continue
		}
		var skips []string
		for _, b := range blocks {
			skips = append(skips, b.skip)
		}
		if fmt.Sprint(skips) != fmt.Sprint(c.skips) {
			t.Errorf("%s: skips %q, want %q", c.name, skips, c.skips)
		}
	}
}

func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and the artifacts in a copy of the checkout")
	}
	if os.Getenv("SITTER_SUITE_IN_COPY") != "" {
		// gen's TestAddedHarnessPassesTheSuite runs the whole suite in a
		// copy with no .git; the README ran in the suite that started it.
		t.Skip("the README runs in the outer suite")
	}
	if err := exec.Command("git", "rev-parse", "--show-toplevel").Run(); err != nil {
		t.Skipf("not a git checkout (the README test copies the files git knows): %v", err)
	}
	for _, tool := range []string{"git", "make", "go", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's blocks need %s on PATH: %v", tool, err)
		}
	}
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := parseReadme(string(raw))
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		return
	}

	tmp := t.TempDir()
	checkout := filepath.Join(tmp, "sitter")
	copyCheckout(t, checkout)
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(filepath.Join(home, "my-project"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := readmeEnv(t, checkout, home, filepath.Join(tmp, "tmp"))
	if out, err := runIn(checkout, env, "make build"); err != nil {
		t.Fatalf("make build in the copy of the checkout: %v\n%s", err, out)
	}

	ran := 0
	for _, b := range blocks {
		if !shellLangs[b.lang] || b.skip != "" {
			continue
		}
		ran++
		out, err := runIn(checkout, env, b.text)
		if err != nil {
			t.Errorf("README.md:%d: the block fails as written (%v); fix it, or mark it <!-- readme-test: skip (what it needs) --> if a test cannot have what it needs:\n%s\noutput:\n%s", b.line, err, b.text, out)
			continue
		}
		if want, prefix, ok := wantLastLine(b); ok {
			stdout := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if got := stdout[len(stdout)-1]; !printed(got, want, prefix) {
				t.Errorf("README.md:%d: the block's last line printed is\n%s\nthe README says\n%s", b.line, got, want)
			}
		}
	}
	if ran < 4 {
		t.Errorf("only %d README blocks ran", ran)
	}
}

// runIn runs script with sh -e in dir; stdout and stderr together (stdout
// first when the block checks its last line: stderr goes apart).
func runIn(dir string, env []string, script string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return append(stdout.Bytes(), append([]byte("\nstderr:\n"), stderr.Bytes()...)...), err
	}
	return stdout.Bytes(), nil
}

// readmeEnv is a new user's environment: the copy's bin/ first on PATH, an
// empty HOME, Go's caches kept (so that builds reuse them), nothing else
// of the caller's.
func readmeEnv(t *testing.T, checkout, home, tmpdir string) []string {
	if err := os.MkdirAll(tmpdir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + filepath.Join(checkout, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + tmpdir,
		"LANG=C.UTF-8",
	}
	for _, k := range []string{"GOPATH", "GOCACHE", "GOMODCACHE", "GOENV", "GOPROXY", "GONOSUMDB", "GOFLAGS", "GOTOOLCHAIN", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		if v := strings.TrimSpace(string(out)); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// copyCheckout copies the files git knows (tracked, and new ones not
// ignored) into dst, as a fresh clone of this tree would have them.
func copyCheckout(t *testing.T, dst string) {
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}
