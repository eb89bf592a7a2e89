package observe

import (
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	runs "sitter.dev/sitter/runtime/run"
)

// Watching: the file system tells the index when a journal, the session
// states or the audit log change (inotify, kqueue, … through fsnotify),
// and a change is swept at once; a directory not there yet is watched
// through the folder above it. The stat sweep stays as the fallback:
// every Interval (200 ms) while anything that should be watched is not
// (no watcher on this system, the watch limit reached), else every
// Rescan (1 s), which also moves runs to stale as time passes and catches
// an event the system dropped.

// newWatcher is fsnotify's, replaced by tests to act out a system
// without one.
var newWatcher = fsnotify.NewWatcher

// settle is how long a burst of events is gathered before one sweep.
const settle = 10 * time.Millisecond

// watchSet is the directories a watcher holds.
type watchSet struct {
	w    *fsnotify.Watcher
	have map[string]bool
}

// add watches dir; it says whether dir is watched, and whether that is
// new.
func (ws *watchSet) add(dir string) (ok, added bool) {
	if ws.have[dir] {
		return true, false
	}
	if err := ws.w.Add(dir); err != nil {
		return false, false
	}
	ws.have[dir] = true
	return true, true
}

// sync watches what the index reads: the state dir and its sessions/,
// each runs directory, each run directory and its journal/; for one that
// does not exist yet, the nearest folder above it that does, which
// reports its creation. It drops the watches no longer needed, and says
// whether everything is watched, and whether any watch is new (the
// caller sweeps again: a change just before the watch was not reported).
func (ws *watchSet) sync(ix *Index) (complete, added bool) {
	want := map[string]bool{}
	complete = true
	need := func(dir string) {
		for {
			want[dir] = true
			ok, a := ws.add(dir)
			added = added || a
			if ok {
				return
			}
			delete(want, dir)
			up := filepath.Dir(dir)
			if _, err := os.Stat(dir); err == nil || up == dir {
				complete = false // there, yet not watched: the watch limit
				return
			}
			dir = up
		}
	}
	need(ix.stateDir)
	need(filepath.Join(ix.stateDir, "sessions"))
	for _, r := range ix.roots {
		need(r.runsDir)
	}
	ix.eachRunDir(func(_ root, d string) {
		need(d) // run.json and journal/ appear in it
		need(filepath.Join(d, runs.JournalDir))
	})
	for d := range ws.have {
		if !want[d] {
			ws.w.Remove(d)
			delete(ws.have, d)
		}
	}
	return complete, added
}

// Watching says whether the index's last sweep had every directory it
// reads watched (changes are then pushed as they happen, not found by
// polling).
func (ix *Index) Watching() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.watching
}

func (ix *Index) setWatching(on bool) {
	ix.mu.Lock()
	ix.watching = on
	ix.mu.Unlock()
}

// Watch sweeps at once (the first sweep indexes every run), then at every
// change the file system reports, and every interval while something is
// not watched, else every rescan, until stop is closed.
func (ix *Index) Watch(interval, rescan time.Duration, stop <-chan struct{}) {
	ix.Sweep()
	ix.SaveCache() // every run read: the next start shows them at once
	var ws *watchSet
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := newWatcher(); err == nil {
		defer w.Close()
		ws = &watchSet{w: w, have: map[string]bool{}}
		events, errs = w.Events, w.Errors
	}
	// period watches what is there now, and sweeps again when a watch is
	// new (what changed before it was found by no event); it returns the
	// time to the next sweep without an event.
	period := func() time.Duration {
		if ws == nil {
			ix.setWatching(false)
			return interval
		}
		for range 3 {
			complete, added := ws.sync(ix)
			ix.setWatching(complete)
			if !added {
				break
			}
			ix.Sweep()
		}
		if ix.Watching() {
			return max(interval, rescan)
		}
		return interval
	}
	t := time.NewTimer(period())
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case ev := <-events:
			// Gather the burst (one journal append is a few events): take
			// every event already waiting, then sweep once. A write to
			// run.json or a journal file has its run's fingerprint
			// checked: a file written in place changes no signature.
			ix.noteChange(ev.Name)
			time.Sleep(settle)
		drain:
			for range 1000 { // a flood still gets its sweeps
				select {
				case ev := <-events:
					ix.noteChange(ev.Name)
				default:
					break drain
				}
			}
		case <-errs:
			// An overflow: events were lost; the sweep finds the changes
			// the signatures show, and checks every run's fingerprint
			// for the writes in place.
			ix.verifyNext()
		case <-ix.poke:
		case <-t.C:
		}
		ix.Sweep()
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(period())
	}
}
