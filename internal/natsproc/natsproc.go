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
	"strings"
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
	// Name is the server's name; in a cluster (StartCluster) it is n1,
	// n2, … and the node listens for routes on ClusterPort.
	Name        string
	ClusterPort int
	routes      string
	cmd         *exec.Cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs bin on a free loopback port with JetStream stored in
// storeDir, and waits until it accepts connections.
func Start(bin, storeDir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Bin: bin, StoreDir: storeDir, Port: port, URL: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	return s, s.start()
}

// StartCluster runs one JetStream node per store directory, clustered on
// loopback (cluster sitter-test, every node routing to every other, named
// n1, n2, …), and waits until each accepts connections. The JetStream
// meta leader is elected after that: a client's first requests may find
// none for a moment (the store's retries cover it).
func StartCluster(bin string, storeDirs []string) ([]*Server, error) {
	var srvs []*Server
	var routes []string
	for i, dir := range storeDirs {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		cport, err := freePort()
		if err != nil {
			return nil, err
		}
		srvs = append(srvs, &Server{Bin: bin, StoreDir: dir, Port: port, URL: fmt.Sprintf("nats://127.0.0.1:%d", port),
			Name: fmt.Sprintf("n%d", i+1), ClusterPort: cport})
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", cport))
	}
	for _, s := range srvs {
		s.routes = strings.Join(routes, ",")
		if err := s.start(); err != nil {
			for _, s := range srvs {
				s.Stop()
			}
			return nil, err
		}
	}
	return srvs, nil
}

func (s *Server) start() error {
	args := []string{"-a", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-js", "-sd", s.StoreDir}
	if s.Name != "" {
		args = append(args, "-n", s.Name)
	}
	if s.ClusterPort != 0 {
		args = append(args, "--cluster_name", "sitter-test", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", s.ClusterPort), "--routes", s.routes)
	}
	s.cmd = exec.Command(s.Bin, args...)
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
