//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"sitter.dev/sitter/e2e/llmscript"
)

// claudeSession is claude -p run as the Agent SDK runs it (stream-json in
// and out) and kept open: a test sends user messages and control requests
// (set_model, register_repo_root …) one at a time and waits for what each
// answers. Events that only a host can cause (a model switch, a directory
// added mid-session) fire this way without a terminal.
type claudeSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  interface{ Write([]byte) (int, error) }
	close_ func() error

	mu     sync.Mutex
	lines  []string
	more   chan struct{} // closed and replaced on every line
	done   chan struct{} // closed when stdout ends
	stderr lockedBuffer
	nextID int
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startClaudeSession starts claude in stream-json mode with Bash allowed.
// The session ends (stdin closed, the process waited for) at the test's
// end or by finish.
func startClaudeSession(t *testing.T, llm *llmscript.Server, project, home string, more []string, extra ...string) *claudeSession {
	t.Helper()
	cmd, _, cancel, stdin, out := claudeStreamCmd(t, llm, project, home, more, 90*time.Second, append([]string{"--allowedTools", "Bash"}, extra...)...)
	s := &claudeSession{t: t, cmd: cmd, cancel: cancel, stdin: stdin, close_: stdin.Close, more: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, sc.Text())
			close(s.more)
			s.more = make(chan struct{})
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { s.finish() })
	return s
}

// send writes one JSON message to claude's stdin.
func (s *claudeSession) send(v any) {
	b, _ := json.Marshal(v)
	s.stdin.Write(append(b, '\n'))
}

// waitLine waits up to timeout for a stdout line, from index from on,
// that satisfies fn; it returns the line and its index, or "" and -1.
func (s *claudeSession) waitLine(from int, timeout time.Duration, fn func(string) bool) (string, int) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		lines, more := s.lines, s.more
		s.mu.Unlock()
		for i := from; i < len(lines); i++ {
			if fn(lines[i]) {
				return lines[i], i
			}
		}
		from = len(lines)
		select {
		case <-more:
		case <-s.done:
			s.mu.Lock()
			n := len(s.lines)
			s.mu.Unlock()
			if n == from {
				return "", -1
			}
		case <-deadline:
			return "", -1
		}
	}
}

func (s *claudeSession) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lines)
}

// prompt sends a user message and waits for the turn's result line.
func (s *claudeSession) prompt(text string) string {
	s.t.Helper()
	from := s.count()
	s.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	line, _ := s.waitLine(from, 60*time.Second, isResultLine)
	if line == "" {
		s.t.Fatalf("no result for the prompt %q\n%s", text, s.output())
	}
	return line
}

// control sends a control request and returns its response: subtype
// "success" or "error", and the error message.
func (s *claudeSession) control(request map[string]any) (subtype, errMsg string) {
	s.t.Helper()
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf("e2e-%d", s.nextID)
	s.mu.Unlock()
	from := s.count()
	s.send(map[string]any{"type": "control_request", "request_id": id, "request": request})
	line, _ := s.waitLine(from, 60*time.Second, func(l string) bool {
		return strings.Contains(l, `"control_response"`) && strings.Contains(l, `"request_id":"`+id+`"`)
	})
	if line == "" {
		s.t.Fatalf("no answer to the control request %v\n%s", request, s.output())
	}
	var m struct {
		Response struct {
			Subtype string `json:"subtype"`
			Error   string `json:"error"`
		} `json:"response"`
	}
	json.Unmarshal([]byte(line), &m)
	return m.Response.Subtype, m.Response.Error
}

// isResultLine reports whether a stream-json line is the turn's result
// (2.1.332 no longer writes "type" first).
func isResultLine(l string) bool {
	var m struct {
		Type string `json:"type"`
	}
	return json.Unmarshal([]byte(l), &m) == nil && m.Type == "result"
}

// output is what claude wrote so far, stdout then stderr.
func (s *claudeSession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n") + "\n-- stderr --\n" + s.stderr.String()
}

// finish closes stdin and waits for claude to exit; a second call does
// nothing.
func (s *claudeSession) finish() runResult {
	if s.close_ == nil {
		return runResult{}
	}
	s.close_()
	s.close_ = nil
	err := s.cmd.Wait()
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return runResult{strings.Join(s.lines, "\n"), s.stderr.String(), err}
}
