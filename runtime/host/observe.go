package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/observe"
)

const observeUsage = `usage: sitter observe [--dir D]... [--listen 127.0.0.1:0] [--open] [--stale 30m]
  A live dashboard of the babysitter runs under each D (a project, whose runs are
  in D/.a5c/runs, or a runs directory; default the current directory), the
  sessions driving them and the audit log's hook decisions. Prints the URL (with
  its token) once; serves until interrupted.`

// runObserve is `sitter observe`.
func runObserve(args []string, stdout, stderr io.Writer) int {
	var dirs []string
	listen, open, stale := "127.0.0.1:0", false, 30*time.Minute
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-h", "--help", "help":
			fmt.Fprintln(stdout, observeUsage)
			return 0
		case "--open":
			open = true
			continue
		case "--dir", "--listen", "--stale":
		default:
			fmt.Fprintf(stderr, "sitter observe: unknown argument %q\n%s\n", a, observeUsage)
			return 2
		}
		if i+1 >= len(args) {
			fmt.Fprintf(stderr, "sitter observe: %s needs a value\n%s\n", a, observeUsage)
			return 2
		}
		i++
		switch a {
		case "--dir":
			if fi, err := os.Stat(args[i]); err != nil || !fi.IsDir() {
				fmt.Fprintf(stderr, "sitter observe: --dir %s: not a directory\n", args[i])
				return 2
			}
			dirs = append(dirs, args[i])
		case "--listen":
			listen = args[i]
		case "--stale":
			d, err := time.ParseDuration(args[i])
			if err != nil || d <= 0 {
				fmt.Fprintf(stderr, "sitter observe: --stale %q: want a duration such as 30m\n", args[i])
				return 2
			}
			stale = d
		}
	}
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
		return fail(stderr, "observe", err)
	}
	fmt.Fprintf(stdout, "sitter observe: %d runs under %v\nSITTER_OBSERVE_URL=%s\n", len(s.Index().Runs()), s.Index().RunsDirs(), url)
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
