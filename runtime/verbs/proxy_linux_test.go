package verbs

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildGateway builds sitter-proxy into a fresh directory.
func buildGateway(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "sitter-proxy"), "sitter.dev/sitter/runtime/cmd/sitter-proxy").CombinedOutput()
	if err != nil {
		t.Skipf("cannot build sitter-proxy: %v\n%s", err, out)
	}
	return dir
}

// startSitterProxy runs `sitter proxy` (this test binary as sitter-host)
// with sitter-proxy from dir, and returns it, the gateway's pid and the
// address it serves.
func startSitterProxy(t *testing.T, dir string) (*exec.Cmd, int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "proxy", "--provider", "openai", "--upstream", "http://127.0.0.1:9/v1", "--token", "t")
	cmd.Env = append(os.Environ(), "SITTER_TEST_MAIN=1", "PATH="+dir+":"+os.Getenv("PATH"), "OPENAI_API_KEY=sk-test")
	// A file, not a buffer: Wait must not wait for a gateway left holding
	// a copied stderr pipe open.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(5 * time.Second):
		b, _ := os.ReadFile(stderr.Name())
		t.Fatalf("no URL line from sitter proxy; stderr: %s", b)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "SITTER_PROXY_URL=http://")
	if !ok {
		b, _ := os.ReadFile(stderr.Name())
		t.Fatalf("first line %q; stderr: %s", line, b)
	}
	kids := childrenOf(cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("sitter proxy has children %v, want the gateway", kids)
	}
	t.Cleanup(func() { syscall.Kill(kids[0], syscall.SIGKILL) })
	return cmd, kids[0], addr
}

// childrenOf lists the pids whose parent is pid (from /proc).
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(p); ok && st.ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

type stat struct {
	state byte
	ppid  int
}

// procStat reads the state and parent of a process; false when it is gone.
func procStat(pid int) (stat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, false
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return stat{state: f[0][0], ppid: ppid}, true
}

// gone: no such process, or a zombie (it serves nothing and holds no key;
// whoever inherited it reaps it).
func gone(pid int) bool {
	st, ok := procStat(pid)
	return !ok || st.state == 'Z' || st.state == 'X'
}

// TestChaosProxySignals: SIGTERM, SIGHUP and SIGINT to `sitter proxy`
// stop the gateway before sitter proxy exits, and SIGKILL to sitter proxy
// takes the gateway down with it (Pdeathsig): no sitter-proxy process is
// left serving, its port is closed.
func TestChaosProxySignals(t *testing.T) {
	dir := buildGateway(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, gw, addr := startSitterProxy(t, dir)
			if c, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
				t.Fatalf("gateway not serving: %v", err)
			} else {
				c.Close()
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-exited:
			case <-time.After(8 * time.Second):
				t.Fatalf("sitter proxy still running 8 s after %s", sig)
			}
			if sig != syscall.SIGKILL && !gone(gw) {
				t.Errorf("sitter proxy exited with its gateway (pid %d) still running", gw)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !gone(gw) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !gone(gw) {
				st, _ := procStat(gw)
				t.Fatalf("gateway pid %d still alive 5 s after %s to sitter proxy (state %c, parent %d)", gw, sig, st.state, st.ppid)
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("port %s still open after %s", addr, sig)
			}
		})
	}
}
