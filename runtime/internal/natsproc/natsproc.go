// Package natsproc builds nats-server from the Go module sitter requires
// (github.com/nats-io/nats-server/v2, so no download beyond the module
// cache) and runs it as a separate process on loopback: what storebench
// and make chaos use to exercise the run store against a real server, one
// that can be killed with SIGKILL and restarted on its store directory.
package natsproc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Build compiles nats-server into dir and returns the binary's path. It
// must run inside the sitter module (go build resolves the version from
// its go.mod).
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "nats-server")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build nats-server: %v\n%s", err, out)
	}
	return bin, nil
}

// Server is a running nats-server process with JetStream.
type Server struct {
	Bin      string
	StoreDir string
	Port     int
	URL      string // nats://127.0.0.1:PORT
	cmd      *exec.Cmd
}

// Start runs bin on a free loopback port with JetStream stored in
// storeDir, and waits until it accepts connections.
func Start(bin, storeDir string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Bin: bin, StoreDir: storeDir, Port: port, URL: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	return s, s.start()
}

func (s *Server) start() error {
	s.cmd = exec.Command(s.Bin, "-a", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-js", "-sd", s.StoreDir)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("nats-server did not listen on %s within 20s", addr)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it.
func (s *Server) Kill() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("nats-server is not running")
	}
	err := s.cmd.Process.Signal(os.Kill)
	s.cmd.Wait()
	s.cmd = nil
	return err
}

// Restart starts the server again on the same port and store directory.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("nats-server is still running")
	}
	return s.start()
}

// Stop kills the process if it runs.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}
