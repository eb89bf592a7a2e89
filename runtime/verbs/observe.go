package verbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/observe"
)

// newObserveCmd is `sitter observe`.
func newObserveCmd(e *env) *cobra.Command {
	var dirs []string
	var listen string
	var open, asJSON bool
	var stale time.Duration
	c := &cobra.Command{
		Use:   "observe",
		Short: "A live dashboard of runs, sessions and hook decisions",
		Long: `A live dashboard of the babysitter runs under each --dir (default the current
directory), the sessions driving them and the audit log's hook decisions.
Prints the URL (with its token) once; serves until interrupted.

Where the runs of --dir D are, first rule that holds: D has a .a5c folder: a
project, its runs in D/.a5c/runs; D holds a run or is named runs: a runs
directory; D has a .git folder: a project; otherwise (an empty folder, say)
both D and D/.a5c/runs are watched.`,
		Example: `  sitter observe
  sitter observe --dir ~/proj-a --dir ~/proj-b --open
  sitter observe --listen 127.0.0.1:8790 --stale 1h --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			for _, d := range dirs { // repeatable: checkDir reads one
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
					fmt.Fprintf(e.stderr, "sitter: observe: --dir %s is not a directory\n", d)
					return exitCode(1)
				}
			}
			if stale <= 0 {
				return usageErr("--stale %s: want a duration such as 30m", stale)
			}
			if err := checkListen(listen); err != nil {
				return usageErr("--listen %q: %v (want HOST:PORT, such as 127.0.0.1:8790)", listen, err)
			}
			return code(runObserve(dirs, listen, open, stale, asJSON, e.stdout, e.stderr))
		},
	}
	c.Flags().StringArrayVar(&dirs, "dir", nil, "watch `DIR`, a project or runs directory (repeatable; default: the current directory)")
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "listen address `HOST:PORT` (another than loopback is reachable from other machines, guarded by the token alone: a warning says so)")
	c.Flags().BoolVar(&open, "open", false, "open the dashboard in a browser")
	c.Flags().DurationVar(&stale, "stale", 30*time.Minute, "a run quiet for `D` is shown as stale")
	jsonFlag(c, &asJSON, "print the URL and the runs dirs as one JSON line")
	return c
}

// runObserve serves the dashboard until interrupted.
func runObserve(dirs []string, listen string, open bool, stale time.Duration, asJSON bool, stdout, stderr io.Writer) int {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	stateDir, err := hook.StateDir()
	if err != nil {
		return fail(stderr, "observe", err)
	}
	s, err := observe.New(observe.Options{Dirs: dirs, StateDir: stateDir, Stale: stale})
	if err != nil {
		return fail(stderr, "observe", err)
	}
	l, url, err := s.Listen(listen)
	if err != nil {
		// A well-formed address that cannot be had (the port is taken,
		// the host is not this machine's): not a usage error.
		return fail(stderr, "observe", fmt.Errorf("--listen %s: %w", listen, err))
	}
	fmt.Fprint(stderr, exposedNote(l.Addr()))
	// The URL comes first: the runs are read in the background (the board
	// says "indexing…" until they all are).
	if asJSON {
		writeJSONLine(stdout, stderr, map[string]any{"url": url, "runsDirs": s.Index().RunsDirs()})
	} else {
		fmt.Fprintf(stdout, "sitter observe: watching the runs under %v\nSITTER_OBSERVE_URL=%s\n", s.Index().RunsDirs(), url)
	}
	if f, ok := stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}
	if open {
		openBrowser(url, stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := s.Serve(ctx, l); err != nil {
		return fail(stderr, "observe", err)
	}
	return 0
}

// checkListen refuses a --listen value no listener could ever open: not
// HOST:PORT, or a port that is no number from 0 to 65535 (nor a service
// name). Whether the address can be bound is left to the listen itself.
func checkListen(addr string) error {
	if addr == "" {
		return nil // the default
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return errors.New(ae.Err) // without "address X:" (the caller names the value)
	}
	return err
}

// openBrowser asks the desktop to open url; failing is only a note.
func openBrowser(url string, stderr io.Writer) {
	name, args := "xdg-open", []string{url}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	}
	if err := exec.Command(name, args...).Start(); err != nil {
		fmt.Fprintf(stderr, "sitter observe: could not open a browser (%v); open the URL above\n", err)
	}
}

// exposedNote is what observe says on stderr when it listens beyond
// loopback (--listen 0.0.0.0:PORT, :PORT, a LAN address): the token is
// then all that keeps others out, and plain HTTP carries it in clear.
// "" on loopback.
func exposedNote(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || ta.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("sitter observe: warning: listening on %s, reachable from other machines: "+
		"anyone who has the URL's token can read these runs and answer their breakpoints, "+
		"and plain HTTP is not encrypted (the token can be read on the network); "+
		"from another machine, put this one's address in place of 127.0.0.1; "+
		"use --listen 127.0.0.1:PORT to keep it on this machine\n", ta)
}
