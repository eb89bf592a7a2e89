package run

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// jsFiles is sitter's JS runtime: runner.mjs replays a process once,
// hooks.mjs answers the SDK import, sdk.mjs is the process context.
//
//go:embed js/*.mjs
var jsFiles embed.FS

// DefaultProcessTimeout bounds one replay of a process.
const DefaultProcessTimeout = 2 * time.Minute

var (
	jsOnce sync.Once
	jsDir  string
	jsErr  error
)

// CacheDir is where sitter keeps its JS runtime: $SITTER_CACHE_DIR, else
// the user cache dir's sitter folder.
func CacheDir() (string, error) {
	if d := os.Getenv("SITTER_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache dir: set SITTER_CACHE_DIR (%w)", err)
	}
	return filepath.Join(d, "sitter"), nil
}

// RuntimeDir writes the JS runtime to the cache on first use and returns
// its directory. The directory is named by the hash of its content, so an
// upgraded sitter never runs an older runtime and two versions coexist.
func RuntimeDir() (string, error) {
	jsOnce.Do(func() { jsDir, jsErr = writeRuntime() })
	return jsDir, jsErr
}

func writeRuntime() (string, error) {
	entries, err := fs.ReadDir(jsFiles, "js")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := jsFiles.ReadFile("js/" + e.Name())
		if err != nil {
			return "", err
		}
		files[e.Name()] = b
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "jsrt-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "runner.mjs")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, ".jsrt-")
	if err != nil {
		return "", err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
	}
	// A package.json makes the .mjs siblings unambiguous ES modules.
	os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"type":"module","private":true}`+"\n"), 0o644)
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		// Another sitter won the race: its directory has the same content.
		if _, serr := os.Stat(filepath.Join(dir, "runner.mjs")); serr == nil {
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// replayInput is what Go sends the runner.
type replayInput struct {
	Entry      string                                `json:"entry"`
	ExportName string                                `json:"exportName"`
	Inputs     json.RawMessage                       `json:"inputs"`
	ProcessID  string                                `json:"processId"`
	RunID      string                                `json:"runId"`
	RunDir     string                                `json:"runDir"`
	Now        int64                                 `json:"now"`
	Results    map[string]map[string]json.RawMessage `json:"results"`
	Requested  map[string]string                     `json:"requested"`
	// Shim says how the runner answers the SDK import: "" (no module
	// names it), "vm" (only the entry does: the runner links the entry
	// itself) or "hook" (a resolve hook, whose loader thread costs Node
	// ~70 ms at start, so only graphs that need it pay for it).
	Shim string `json:"shim,omitempty"`
	// Mode "exports" asks only for the module's exports (see CheckEntry).
	Mode string `json:"mode,omitempty"`
}

// sdkSpecifier is the import sitter answers.
const sdkSpecifier = "@a5c-ai/babysitter-sdk"

// relImport is compiled on first use: every hook call links this package.
var relImport = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:from|import)\s*\(?\s*['"](\.{1,2}/[^'"]+)['"]`)
})

// shimMode reads the process's module graph (the entry and the files it
// imports by relative paths) for the SDK specifier: "" when no file names
// it, "vm" when only the entry does, "hook" otherwise. A file that cannot
// be read counts as naming it: the hook is always correct, only slower.
func shimMode(entry string) string {
	seen := map[string]bool{}
	queue := []string{entry}
	mode := ""
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		if len(seen) >= 200 {
			return "hook"
		}
		seen[p] = true
		b, err := os.ReadFile(p)
		if err != nil {
			return "hook"
		}
		if bytes.Contains(b, []byte(sdkSpecifier)) {
			if p != entry {
				return "hook"
			}
			mode = "vm"
		}
		for _, m := range relImport().FindAllSubmatch(b, -1) {
			queue = append(queue, filepath.Join(filepath.Dir(p), string(m[1])))
		}
	}
	return mode
}

// jsEffect is one effect the process asks for.
type jsEffect struct {
	Key      string          `json:"key"`
	EffectID string          `json:"effectId"`
	Existing bool            `json:"existing"`
	StepID   string          `json:"stepId"`
	TaskID   string          `json:"taskId"`
	Kind     string          `json:"kind"`
	Label    string          `json:"label"`
	Labels   []string        `json:"labels"`
	TaskDef  json.RawMessage `json:"taskDef"`
	Args     json.RawMessage `json:"args"`
	// ParallelGroupID marks the effects of one ctx.parallel batch.
	ParallelGroupID string `json:"parallelGroupId"`
}

// replayAnswer is what the runner answers.
type replayAnswer struct {
	Status  string            `json:"status"` // waiting, completed, failed, halted, runtime-error, exports
	Effects []jsEffect        `json:"effects"`
	Exports map[string]string `json:"exports"` // export name → typeof, for mode "exports"
	Output  json.RawMessage   `json:"output"`
	Error   json.RawMessage   `json:"error"`
	Reason  string            `json:"reason"`
	Logs    []string          `json:"logs"`
	// SyntaxErrorFile is, for a runtime error that is a SyntaxError, the
	// module of the entry's import graph that does not parse.
	SyntaxErrorFile string `json:"syntaxErrorFile"`
}

// runtimeError is a failure to run the process at all (no node, a module
// that does not load, a runner that died), as opposed to the process
// failing.
type runtimeError struct {
	msg    string
	stderr string
}

func (e *runtimeError) Error() string { return e.msg }

// nodeBinary is $SITTER_NODE, else node on PATH.
func nodeBinary() (string, error) {
	if n := os.Getenv("SITTER_NODE"); n != "" {
		return n, nil
	}
	p, err := exec.LookPath("node")
	if err != nil {
		return "", errors.New("node is not on PATH (processes are ES modules run by Node ≥ 20.6; set SITTER_NODE to its path)")
	}
	return p, nil
}

// replayJS runs the process once in Node.
func replayJS(ctx context.Context, in replayInput, stderr io.Writer) (*replayAnswer, error) {
	dir, err := RuntimeDir()
	if err != nil {
		return nil, &runtimeError{msg: "JS runtime: " + err.Error()}
	}
	node, err := nodeBinary()
	if err != nil {
		return nil, &runtimeError{msg: err.Error()}
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, node, "--no-warnings", "--experimental-vm-modules", filepath.Join(dir, "runner.mjs"))
	cmd.Dir = filepath.Dir(in.Entry)
	cmd.Env = runnerEnv()
	cmd.Stdin = bytes.NewReader(payload)
	var errBuf bytes.Buffer
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(&errBuf, stderr)
	} else {
		cmd.Stderr = &errBuf
	}
	cmd.ExtraFiles = []*os.File{w}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, &runtimeError{msg: "start node: " + err.Error()}
	}
	w.Close()
	out, rerr := io.ReadAll(r)
	werr := cmd.Wait()
	tail := lastLines(errBuf.String(), 20)
	if ctx.Err() != nil {
		return nil, &runtimeError{msg: "the process did not finish in time: " + ctx.Err().Error(), stderr: tail}
	}
	if rerr != nil || len(bytes.TrimSpace(out)) == 0 {
		msg := "the JS runner gave no answer"
		if werr != nil {
			msg += " (" + werr.Error() + ")"
		}
		return nil, &runtimeError{msg: msg, stderr: tail}
	}
	var a replayAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, &runtimeError{msg: "the JS runner's answer is not JSON: " + err.Error(), stderr: tail}
	}
	if a.Status == "runtime-error" {
		msg := "the process module did not load"
		var e struct {
			Name    string `json:"name"`
			Message string `json:"message"`
		}
		if json.Unmarshal(a.Error, &e) == nil && e.Message != "" {
			if e.Name == "SyntaxError" {
				file := a.SyntaxErrorFile
				if file == "" {
					file = in.Entry
				}
				if at := syntaxErrorAt(ctx, node, file); at != "" {
					msg += ": " + at
				}
			}
			msg += ": " + e.Message
		}
		return nil, &runtimeError{msg: msg, stderr: tail}
	}
	return &a, nil
}

// syntaxErrorAt is where the syntax error of the module file is,
// "file:line:col", or "" when Node does not find one there. Node's
// import error does not say where, nor in which module of the import
// graph (the runner finds that one); `node --check` prints "file:line",
// the source line and a caret under the column.
func syntaxErrorAt(ctx context.Context, node, file string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--check", file)
	cmd.Env = runnerEnv()
	out, err := cmd.CombinedOutput()
	if err == nil {
		return ""
	}
	lines := strings.Split(string(out), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, file+":") })
	if i < 0 {
		return ""
	}
	line := strings.TrimPrefix(lines[i], file+":")
	if _, err := strconv.Atoi(line); err != nil {
		return ""
	}
	at := file + ":" + line
	if i+2 < len(lines) {
		if c := strings.IndexByte(lines[i+2], '^'); c >= 0 && strings.TrimLeft(lines[i+2][:c], " \t") == "" {
			at += ":" + strconv.Itoa(utf8.RuneCountInString(lines[i+2][:c])+1)
		}
	}
	return at
}

func lastLines(s string, n int) string {
	b := []byte(s)
	count := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' && i != len(b)-1 {
			count++
			if count == n {
				return string(b[i+1:])
			}
		}
	}
	return s
}

// runnerEnv is the runner's environment: sitter's own, minus
// NODE_EXTRA_CA_CERTS, which Node 20 loads eagerly at start-up (about
// 150 ms for a system bundle) although a process, replayed on every
// iteration, does no network I/O: that belongs in its effects.
// SITTER_NODE_KEEP_CA=1 passes it on.
func runnerEnv() []string {
	env := os.Environ()
	if os.Getenv("SITTER_NODE_KEEP_CA") == "1" {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "NODE_EXTRA_CA_CERTS=") {
			out = append(out, kv)
		}
	}
	return out
}
