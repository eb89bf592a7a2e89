package verbs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/hook"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
	"sitter.dev/sitter/runtime/store"
	"sitter.dev/sitter/runtime/store/natsstore"
)

// storeFlag is --store on the run and task verbs.
const storeFlag = "store=the shared run store `URL`, nats://host:port ($SITTER_STORE; default: the local runs dir)"

// storeOnlyFlag is --store on a verb that works only on a store (what
// names what it does with it): it has no local default.
func storeOnlyFlag(what string) string {
	return "store=the shared run store `URL` " + what + ", nats://host:port ($SITTER_STORE; required)"
}

// storeNote says how a run is named with a shared store.
const storeNote = `

With --store URL (or $SITTER_STORE) the run lives in a shared store (NATS
JetStream, see docs/store.md) and <runDir> is its run id, from any machine
(or the runDir the verbs print: this machine's copy of the run).`

// storeURL is --store, else $SITTER_STORE; "" is the local runs dir.
func (f *cmdFlags) storeURL() string {
	if u, ok := f.vals["store"]; ok {
		return u
	}
	return os.Getenv("SITTER_STORE")
}

// storeCacheDir is where this machine keeps its copies of a store's runs:
// $SITTER_STORE_CACHE, else one directory per store URL in the cache dir.
func storeCacheDir(url string) (string, error) {
	if d := os.Getenv("SITTER_STORE_CACHE"); d != "" {
		return d, nil
	}
	c, err := runs.CacheDir()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(url))
	return filepath.Join(c, "store", hex.EncodeToString(h[:8])), nil
}

// checkStoreURL refuses a store URL of no NATS scheme.
func checkStoreURL(url string) error {
	switch store.Scheme(url) {
	case "nats", "tls", "ws", "wss":
		return nil
	}
	return fmt.Errorf("--store %s: a store URL is nats://host:port (or tls://, ws://, wss://)", natsstore.RedactURL(url))
}

// dialStore connects to a store's server without a run store (the team
// audit).
func dialStore(ctx context.Context, url string) (*natsstore.Conn, error) {
	if err := checkStoreURL(url); err != nil {
		return nil, err
	}
	return natsstore.Dial(ctx, url, natsstore.Options{})
}

// openStore connects to a shared store.
func openStore(ctx context.Context, url string) (*natsstore.Store, error) {
	if err := checkStoreURL(url); err != nil {
		return nil, err
	}
	cache, err := storeCacheDir(url)
	if err != nil {
		return nil, err
	}
	return natsstore.Open(ctx, url, natsstore.Options{CacheDir: cache})
}

// withStore runs a run or task verb on a run of the shared store when
// there is one: the verb runs on this machine's copy (its <runDir> is the
// copy), and a verb that writes commits what it wrote; when another
// machine committed first, the verb runs again on the run as it is now,
// so its output is kept until its commit counts. Without a store the verb
// runs as it always has.
func withStore(ctx context.Context, f *cmdFlags, verb string, write bool, stdout, stderr io.Writer, run func(stdout, stderr io.Writer) int) int {
	url := f.storeURL()
	if url == "" {
		return run(stdout, stderr)
	}
	if len(f.pos) == 0 {
		return usageFail(stderr, f)
	}
	ref, err := storeRef(url, f.pos[0])
	if err != nil {
		return fail(stderr, verb, err)
	}
	s, err := openStore(ctx, url)
	if err != nil {
		return fail(stderr, verb, err)
	}
	defer s.Close()
	return storeDo(ctx, s, ref, write, verb, stdout, stderr, func(dir string, stdout, stderr io.Writer) (int, error) {
		f.storeDir = dir
		return run(stdout, stderr), nil
	})
}

// storeDo runs fn on this machine's copy of a stored run under store.Do,
// which runs it again when another machine committed first: each try
// writes to buffers of its own, and only the try that counts reaches
// stdout and stderr.
func storeDo(ctx context.Context, s store.Store, runID string, write bool, verb string, stdout, stderr io.Writer, fn func(dir string, stdout, stderr io.Writer) (int, error)) int {
	var code int
	var out, errOut bytes.Buffer
	err := store.Do(ctx, s, runID, write, func(dir string) error {
		out.Reset()
		errOut.Reset()
		var err error
		code, err = fn(dir, &out, &errOut)
		return err
	})
	if err != nil {
		stderr.Write(errOut.Bytes())
		return fail(stderr, verb, err)
	}
	stdout.Write(out.Bytes())
	stderr.Write(errOut.Bytes())
	return code
}

// storeRef is the run that a verb on a stored run names: its id, or the
// directory of this machine's copy of it, which is the runDir every verb
// of a stored run prints (run create's included) and which the babysit
// guide has the agent pass back. Any other path is refused: with a store,
// a local run directory is not the run.
func storeRef(url, arg string) (string, error) {
	if !strings.ContainsRune(arg, '/') && !strings.ContainsRune(arg, filepath.Separator) {
		return arg, nil
	}
	cache, err := storeCacheDir(url)
	if err != nil {
		return "", err
	}
	if sameDir(filepath.Dir(filepath.Clean(arg)), cache) {
		return filepath.Base(filepath.Clean(arg)), nil
	}
	return "", fmt.Errorf("%s is not a run of the shared store (--store or $SITTER_STORE): name the run by its id, or by this machine's copy of it, %s; for a local run directory pass --store ''",
		arg, filepath.Join(cache, "<runId>"))
}

// sameDir says whether a and b name one directory (through symlinks too).
func sameDir(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// storeCreate is `run create --store`: the run is made in the store, with
// its process module and inputs. It is not bound to a session: sessions
// drive local runs (docs/store.md).
func storeCreate(ctx context.Context, url string, o runs.CreateOptions) (string, *runs.Metadata, error) {
	s, err := openStore(ctx, url)
	if err != nil {
		return "", nil, err
	}
	defer s.Close()
	return s.Create(ctx, o)
}

// newRunExportCmd is `run export`.
func newRunExportCmd(e *env) *cobra.Command {
	return flagged("export <runId>", "Copy a run of a shared store into a local runs dir (the SDK layout)",
		"  sitter run export 01JB7ZK3Q8X4M2N5P6R7S8T9V0 --store nats://127.0.0.1:4222 --to .a5c/runs",
		[]string{storeOnlyFlag("to export from"), "to=the runs directory `DIR` to write DIR/<runId> in (default: --runs-dir)", runsDirFlag, jsonOut},
		func(_ *cobra.Command, f *cmdFlags) int {
			const verb = "run export"
			if len(f.pos) != 1 {
				return usageFail(e.stderr, f)
			}
			url := f.storeURL()
			if url == "" {
				return fail(e.stderr, verb, errors.New("--store (or $SITTER_STORE) names the store to export from"))
			}
			to := f.vals["to"]
			if to == "" {
				to = f.runsDir()
			}
			ctx := context.Background()
			s, err := openStore(ctx, url)
			if err != nil {
				return fail(e.stderr, verb, err)
			}
			defer s.Close()
			id, err := storeRef(url, f.pos[0])
			if err != nil {
				return fail(e.stderr, verb, err)
			}
			dir, err := s.Export(ctx, id, to)
			if err != nil {
				return fail(e.stderr, verb, err)
			}
			return out(e.stdout, e.stderr, f.bools["json"], map[string]any{"runId": id, "runDir": dir},
				fmt.Sprintf("[run:export] runId=%s runDir=%s\n", id, dir))
		})
}

// newRunImportCmd is `run import`.
func newRunImportCmd(e *env) *cobra.Command {
	return flagged("import <runDir>", "Put a local run directory into a shared store, under its run id",
		"  sitter run import .a5c/runs/01JB7ZK3Q8X4M2N5P6R7S8T9V0 --store nats://127.0.0.1:4222",
		[]string{storeOnlyFlag("to import into"), runsDirFlag, jsonOut},
		func(_ *cobra.Command, f *cmdFlags) int {
			const verb = "run import"
			if len(f.pos) != 1 {
				return usageFail(e.stderr, f)
			}
			url := f.storeURL()
			if url == "" {
				return fail(e.stderr, verb, errors.New("--store (or $SITTER_STORE) names the store to import into"))
			}
			src, err := runs.ResolveDir(f.pos[0], f.runsDir())
			if err != nil {
				return fail(e.stderr, verb, err)
			}
			ctx := context.Background()
			s, err := openStore(ctx, url)
			if err != nil {
				return fail(e.stderr, verb, err)
			}
			defer s.Close()
			id, err := s.Import(ctx, src)
			if err != nil {
				return fail(e.stderr, verb, err)
			}
			return out(e.stdout, e.stderr, f.bools["json"], map[string]any{"runId": id, "store": s.URL()},
				fmt.Sprintf("[run:import] runId=%s store=%s\n", id, s.URL()))
		})
}

// storeBind makes a session drive a run of a shared store: the run is
// checked as a local one is (readable, not finished), SESSION_BOUND is
// journaled in the store, and the session records the store, so its stop
// check goes through sitter-host and the agent is told to name the run
// with --store.
func storeBind(ctx context.Context, harness, sessionID, runID, url string, max int, via string) (*session.State, error) {
	s, err := openStore(ctx, url)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var st *session.State
	err = store.Do(ctx, s, runID, true, func(dir string) error {
		rs, err := runs.Load(dir)
		if err != nil {
			return fmt.Errorf("run %s cannot be read: %w", runID, err)
		}
		if rs.Terminal() {
			return fmt.Errorf("run %s is already %s: nothing to drive", rs.Meta.RunID, rs.Status)
		}
		var took []*session.State
		st, took, _, err = session.RebindStore(harness, sessionID, "", rs.Meta.RunID, dir, url, max)
		if err != nil {
			return err
		}
		return journalBound(ctx, dir, via, st, took)
	})
	if err != nil {
		// The checkout says when the run is not in the store; any other
		// failure is the run's or the store's, not a missing run.
		return nil, err
	}
	return st, nil
}

// stopCheck is `session stop-check` in sitter-host. A session bound to a
// run of a shared store is decided on this machine's copy of the run, as
// one writer of the store (the decision is journaled there); any other
// is decided as the hook binary decides it.
func stopCheck(ctx context.Context, ev hook.Event, stdout, stderr io.Writer) int {
	st, _, err := session.Read(ev.Harness, ev.Session.ID)
	if err != nil || st == nil || !st.Active || st.Store == "" {
		return session.StopCheckAnswer(ctx, ev, stdout, stderr)
	}
	const verb = "session stop-check"
	s, err := openStore(ctx, st.Store)
	if err != nil {
		return fail(stderr, verb, err)
	}
	defer s.Close()
	return storeDo(ctx, s, st.RunID, true, verb, stdout, stderr, func(dir string, stdout, stderr io.Writer) (int, error) {
		if dir != st.RunDir {
			// This machine keeps its copies elsewhere than the binder's.
			if _, _, err := session.Update(st.Harness, st.SessionID, func(cur *session.State) (*session.State, error) {
				if cur == nil || !cur.Active || cur.RunID != st.RunID || cur.Store != st.Store {
					return nil, nil // let go meanwhile
				}
				cur.RunDir = dir
				return cur, nil
			}); err != nil {
				return 0, err
			}
		}
		return session.StopCheckAnswer(ctx, ev, stdout, stderr), nil
	})
}
