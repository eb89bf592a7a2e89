package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/journal"
)

// A harness runs its hooks and its agent's shell commands as child
// processes of its own process. So the harness process is an ancestor both
// of a hook handler and of a `sitter run create` the agent types, and it
// names the session when the harness offers no other way to tell the
// agent's shell (atlas agentEnv). The session-start and prompt handlers
// record their anchor: the nearest ancestor that is neither a shell nor
// part of sitter's own hook chain. A command from the agent's shell walks
// its ancestors up to the first recorded anchor. Anchors are keyed by pid
// and start time, so a reused pid never matches an old record.

// proc is one process: its parent, start time (opaque, comparable) and
// command name.
type proc struct {
	pid, ppid int
	start     string
	comm      string
}

// chainSkip are the processes between a harness and a handler, or between
// a harness and the command its agent runs: shells, sitter's own binaries
// and the bundle launcher, process wrappers.
var chainSkip = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "fish": true, "busybox": true,
	"env": true, "timeout": true, "nohup": true, "setsid": true, "stdbuf": true, "nice": true, "xargs": true,
	"sitter": true, "sitter-host": true, "sitter-hook": true,
}

// ancestry lists pid's process and its ancestors, nearest first, up to
// (not including) pid 1.
func ancestry(pid int) []proc {
	var out []proc
	table := psTable // nil on Linux: /proc is read per process
	for i := 0; i < 64 && pid > 1; i++ {
		p, ok := readProc(pid, &table)
		if !ok {
			break
		}
		out = append(out, p)
		pid = p.ppid
	}
	return out
}

// psTable is, off Linux, every process from ps; read once per walk.
var psTable map[int]proc

func readProc(pid int, table *map[int]proc) (proc, bool) {
	if runtime.GOOS == "linux" {
		return procStat(pid)
	}
	if *table == nil {
		*table = psAll()
	}
	p, ok := (*table)[pid]
	return p, ok
}

// procStat reads /proc/<pid>/stat: "pid (comm) state ppid … starttime(22nd)".
func procStat(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return proc{}, false
	}
	rest := strings.Fields(string(b[close+1:]))
	// rest[0] is field 3 (state): ppid is field 4, starttime field 22.
	if len(rest) < 20 {
		return proc{}, false
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, start: rest[19], comm: string(b[open+1 : close])}, true
}

// psAll lists processes with ps (macOS, BSDs): pid, ppid, start, command.
func psAll() map[int]proc {
	out, err := exec.Command("ps", "-A", "-o", "pid=,ppid=,lstart=,comm=").Output()
	m := map[int]proc{}
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		// pid ppid Day Mon DD HH:MM:SS YYYY comm…
		if len(f) < 8 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		m[pid] = proc{pid: pid, ppid: ppid, start: strings.Join(f[2:7], " "), comm: filepath.Base(strings.Join(f[7:], " "))}
	}
	return m
}

// anchorOf is the nearest process of a chain that is not a shell, a
// wrapper or sitter: the harness.
func anchorOf(chain []proc) (proc, bool) {
	for _, p := range chain {
		if !chainSkip[p.comm] {
			return p, true
		}
	}
	return proc{}, false
}

// anchor is a recorded harness process and the session it runs.
type anchor struct {
	Harness   string `json:"harness"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd,omitempty"`
	Pid       int    `json:"pid"`
	Comm      string `json:"comm"`
	At        string `json:"recordedAt"`
}

func anchorDir() (string, error) {
	d, err := hook.StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "anchors"), nil
}

func anchorFile(dir string, p proc) string {
	start := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			return r
		}
		return '_'
	}, p.start)
	return filepath.Join(dir, strconv.Itoa(p.pid)+"-"+start+".json")
}

// RecordAnchor records that the harness process this handler runs under
// runs (harness, sessionID). A later session in the same process (a
// cleared conversation) replaces it. Without a harness process above this
// one there is nothing to record.
func RecordAnchor(harness, sessionID, cwd string) error {
	if harness == "" || sessionID == "" {
		return nil
	}
	p, ok := anchorOf(ancestry(os.Getpid()))
	if !ok {
		return nil
	}
	dir, err := anchorDir()
	if err != nil {
		return err
	}
	return recordAt(dir, p, harness, sessionID, cwd)
}

func recordAt(dir string, p proc, harness, sessionID, cwd string) error {
	path := anchorFile(dir, p)
	if old, err := readAnchor(path); err == nil && old.Harness == harness && old.SessionID == sessionID && old.Cwd == cwd {
		return nil // already recorded: no write on every prompt
	}
	pruneAnchors(dir)
	b, _ := json.Marshal(anchor{Harness: harness, SessionID: sessionID, Cwd: cwd, Pid: p.pid, Comm: p.comm, At: now()})
	return journal.WriteFileAtomic(path, append(b, '\n'))
}

func readAnchor(path string) (*anchor, error) {
	b, err := audit.ReadNoFollow(path)
	if err != nil {
		return nil, err
	}
	var a anchor
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// pruneAnchors removes the records of processes that are gone, at most once
// an hour, so the directory does not grow with every session.
func pruneAnchors(dir string) {
	mark := filepath.Join(dir, ".pruned")
	if fi, err := os.Lstat(mark); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) < time.Hour {
		return
	}
	// Made anew, never opened through a link planted at its name (which
	// os.WriteFile would follow and truncate the target of).
	os.Remove(mark)
	if f, err := os.OpenFile(mark, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		f.Close()
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pid, _, ok := strings.Cut(e.Name(), "-")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil {
			continue
		}
		if _, alive := readProc(n, &psTable); !alive {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Caller is the session a command run by an agent belongs to, and how it
// was found.
type Caller struct {
	Harness   string
	SessionID string
	Cwd       string
	// Via: "env" (SITTER_SESSION_ID and SITTER_HARNESS, which the
	// harness's agentEnv mechanism or a handler's environment set) or
	// "ancestry" (a recorded harness process above this one).
	Via string
}

// ErrNoCaller: nothing tells which session this command belongs to.
var ErrNoCaller = errors.New("no harness session found for this command: it does not run under a harness session that the babysitter plugin saw start (pass --harness and --session-id)")

// Discover finds the session the current process runs in: the environment
// first, then the nearest recorded harness process among its ancestors.
func Discover() (Caller, error) {
	if id, h := os.Getenv("SITTER_SESSION_ID"), os.Getenv("SITTER_HARNESS"); id != "" && h != "" {
		return Caller{Harness: h, SessionID: id, Via: "env"}, nil
	}
	dir, err := anchorDir()
	if err != nil {
		return Caller{}, err
	}
	return discoverChain(dir, ancestry(os.Getpid()))
}

// discoverChain finds the nearest process of chain with a recorded anchor.
func discoverChain(dir string, chain []proc) (Caller, error) {
	for _, p := range chain {
		a, err := readAnchor(anchorFile(dir, p))
		if err != nil {
			continue
		}
		return Caller{Harness: a.Harness, SessionID: a.SessionID, Cwd: a.Cwd, Via: "ancestry"}, nil
	}
	return Caller{}, ErrNoCaller
}

// Describe is one line for users: "claude-code session abc (via ancestry)".
func (c Caller) Describe() string {
	return fmt.Sprintf("%s session %s (found by %s)", c.Harness, c.SessionID, c.Via)
}
