package observe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"

	"sitter.dev/sitter/runtime/audit"
	"sitter.dev/sitter/runtime/journal"
)

// The index cache: the board's summary of every run (no events), kept in
// the state dir, so that the next `sitter observe` of the same directories
// shows every run in its first response, before it has read any journal.
// The first sweep then reads again the runs whose journal directory or
// run.json changed since (the signature that finds changes while
// serving), checks the fingerprint of the others (the size and time of
// each journal file and run.json: a file edited in place while no
// observe ran) and reads those whose fingerprint changed, and drops the
// runs gone. It is written when the first sweep is done and when the
// server stops. A cache that does not load is ignored: the runs are read
// as without one.

// cacheVersion changes when RunView or its signature does (2: Launched;
// 3: run.json in the signature, the fingerprint; 4: Failure, which a
// failed run of an older cache would lack until it changed).
const cacheVersion = 4

type cacheFile struct {
	Version  int          `json:"version"`
	RunsDirs []string     `json:"runsDirs"`
	Runs     []cachedView `json:"runs"`
}

type cachedView struct {
	RunView
	JournalMod  int64  `json:"journalMod"`
	JournalSize int64  `json:"journalSize"`
	MetaMod     int64  `json:"metaMod"`
	MetaSize    int64  `json:"metaSize"`
	Fingerprint uint64 `json:"fingerprint"`
}

// cachePath is the cache of these runs directories in the state dir.
func (ix *Index) cachePath() string {
	dirs := ix.RunsDirs()
	sort.Strings(dirs)
	h := sha256.Sum256([]byte(strings.Join(dirs, "\x00")))
	return filepath.Join(ix.stateDir, "observe", "index-"+hex.EncodeToString(h[:8])+".json")
}

// loadCache puts the cached runs in the index (before any sweep).
func (ix *Index) loadCache() {
	if ix.stateDir == "" {
		return
	}
	b, err := audit.ReadNoFollow(ix.cachePath()) // a state file: never through a link
	if err != nil {
		return
	}
	var c cacheFile
	if json.Unmarshal(b, &c) != nil || c.Version != cacheVersion {
		return
	}
	watched := map[string]bool{}
	for _, r := range ix.roots {
		watched[r.runsDir] = true
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, e := range c.Runs {
		v := e.RunView
		if v.Err != "" || !watched[filepath.Dir(v.Dir)] || v.RunsDir != filepath.Dir(v.Dir) {
			continue
		}
		v.sig = signature{e.JournalMod, e.JournalSize, e.MetaMod, e.MetaSize}
		v.fp = e.Fingerprint
		ix.runs[v.Dir] = &v
	}
	// The signature misses a file edited in place: the first sweep checks
	// each cached run's fingerprint.
	ix.verifyAll = true
}

// SaveCache writes the index cache; a run that does not load is left out
// (it is read again next time).
func (ix *Index) SaveCache() error {
	if ix.stateDir == "" {
		return nil
	}
	c := cacheFile{Version: cacheVersion, RunsDirs: ix.RunsDirs()}
	ix.mu.RLock()
	for _, v := range ix.runs {
		if v.Err == "" {
			c.Runs = append(c.Runs, cachedView{*v, v.sig.journalMod, v.sig.journalSize, v.sig.metaMod, v.sig.metaSize, v.fp})
		}
	}
	ix.mu.RUnlock()
	sort.Slice(c.Runs, func(i, j int) bool { return c.Runs[i].Dir < c.Runs[j].Dir })
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return journal.WriteFileAtomic(ix.cachePath(), b)
}
