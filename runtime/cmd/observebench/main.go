// Command observebench measures `sitter observe` at scale: it makes runs
// (default 1,000) whose journals hold 100 events each, starts the
// dashboard's server on loopback as `sitter observe` does (watching the
// runs, with the stat sweep as the fallback), and reports
//
//   - the time from start to the URL (the runs are read in the background);
//
//   - the board's first response, asked for as soon as the URL is known
//     (target: under 300 ms), and how many runs it showed;
//
//   - the time until every run is read (the board says "indexing…" until
//     then), and the board's median response over the next requests;
//
//   - the delay between a journal append to one run and the update pushed
//     on an open event stream (target: under 1 s), over several appends;
//
//   - a sweep that finds nothing new (the watcher's cost every tick);
//
//   - memory: the Go heap in use after a GC, and the process's peak RSS;
//
//   - a second start on the same state dir: the board's first response,
//     from the index cache the first server wrote (target: under 300 ms,
//     with every run).
//
//     go run ./runtime/cmd/observebench [-runs 1000] [-events 100] [-n 10] [-strict]
//
// A miss is informational unless -strict.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"sitter.dev/sitter/runtime/journal"
	"sitter.dev/sitter/runtime/observe"
	"sitter.dev/sitter/runtime/run"
)

func main() {
	nRuns := flag.Int("runs", 1000, "runs to make")
	nEvents := flag.Int("events", 100, "events in each run's journal")
	n := flag.Int("n", 10, "board requests and journal appends timed")
	strict := flag.Bool("strict", false, "exit 1 when a target is missed")
	flag.Parse()
	if err := bench(*nRuns, *nEvents, *n, *strict); err != nil {
		fmt.Fprintln(os.Stderr, "observebench:", err)
		os.Exit(1)
	}
}

func bench(nRuns, nEvents, n int, strict bool) error {
	tmp, err := os.MkdirTemp("", "observebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	runsDir := filepath.Join(project, ".a5c", "runs")
	t0 := time.Now()
	tmpl, err := templateRun(tmp, nEvents)
	if err != nil {
		return err
	}
	for i := 0; i < nRuns; i++ {
		if err := copyRun(tmpl, filepath.Join(runsDir, fmt.Sprintf("run-%05d", i))); err != nil {
			return err
		}
	}
	fmt.Printf("observebench: %d runs × %d events made in %s\n", nRuns, nEvents, time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	s, err := observe.New(observe.Options{Dirs: []string{project}, StateDir: filepath.Join(tmp, "state")})
	if err != nil {
		return err
	}
	l, url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	ready := time.Since(t0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan struct{})
	go func() { s.Serve(ctx, l); close(served) }()
	base := strings.SplitN(url, "/?", 2)[0]
	cookie := &http.Cookie{Name: observe.CookieName, Value: s.Token()}
	get := func(path string) (time.Duration, error) {
		d, _, err := fetch(base+path, cookie)
		return d, err
	}
	first, err := get("/")
	if err != nil {
		return err
	}
	_, shown, _ := s.Index().Indexing()
	for {
		on, _, _ := s.Index().Indexing()
		if !on {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	indexed := time.Since(t0)
	if got := len(s.Index().Runs()); got != nRuns {
		return fmt.Errorf("the index has %d runs, want %d", got, nRuns)
	}
	var boards []time.Duration
	for i := 0; i < n; i++ {
		d, err := get("/")
		if err != nil {
			return err
		}
		boards = append(boards, d)
	}

	// An open event stream, as every open page has.
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/events", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	events := make(chan time.Time, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() == "event: changed" {
				events <- time.Now()
			}
		}
	}()
	var pushes []time.Duration
	for i := 0; i < n; i++ {
		time.Sleep(300 * time.Millisecond) // let the stream settle between appends
		for len(events) > 0 {
			<-events
		}
		dir := filepath.Join(runsDir, fmt.Sprintf("run-%05d", (i*97)%nRuns))
		j, err := journal.Load(filepath.Join(dir, run.JournalDir))
		if err != nil {
			return err
		}
		t := time.Now()
		if _, err := journal.Append(filepath.Join(dir, run.JournalDir), j.Head(), journal.StopHookInvoked, map[string]any{"harness": "bench", "sessionId": "s", "decision": "block", "row": "effects-pending"}); err != nil {
			return err
		}
		select {
		case at := <-events:
			pushes = append(pushes, at.Sub(t))
		case <-time.After(5 * time.Second):
			return fmt.Errorf("no update pushed within 5 s of a journal append")
		}
	}
	t0 = time.Now()
	s.Index().Sweep()
	idle := time.Since(t0)

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	sort.Slice(boards, func(i, j int) bool { return boards[i] < boards[j] })
	sort.Slice(pushes, func(i, j int) bool { return pushes[i] < pushes[j] })
	ok1, ok2 := first < 300*time.Millisecond, pushes[len(pushes)-1] < time.Second
	fmt.Printf("  start to URL                          %s\n", ms3(ready))
	fmt.Printf("  board, first response                 %s   target < 300 ms: %s (%d of %d runs read by then)\n", ms3(first), verdict(ok1), shown, nRuns)
	fmt.Printf("  every run read (in the background)    %s\n", indexed.Round(time.Millisecond))
	fmt.Printf("  board, median of %d more              %s\n", n, ms3(boards[len(boards)/2]))
	fmt.Printf("  update pushed after a journal append  median %s, max %s   target < 1 s: %s\n", ms3(pushes[len(pushes)/2]), ms3(pushes[len(pushes)-1]), verdict(ok2))
	how := "the file system reports changes; swept every 1 s besides"
	if !s.Index().Watching() {
		how = "not watched: polled every 200 ms"
	}
	fmt.Printf("  a sweep that finds nothing new        %s (%s)\n", ms3(idle), how)
	fmt.Printf("  memory: Go heap in use %.1f MiB, peak RSS %s\n", float64(ms.HeapInuse)/(1<<20), peakRSS())

	// A second start on the same state dir: the first server wrote the
	// index cache when it stopped, and the board's first response shows
	// every run.
	cancel()
	<-served
	t0 = time.Now()
	s2, err := observe.New(observe.Options{Dirs: []string{project}, StateDir: filepath.Join(tmp, "state")})
	if err != nil {
		return err
	}
	l2, url2, err := s2.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	ready2 := time.Since(t0)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go s2.Serve(ctx2, l2)
	first2, page, err := fetch(strings.SplitN(url2, "/?", 2)[0]+"/", &http.Cookie{Name: observe.CookieName, Value: s2.Token()})
	if err != nil {
		return err
	}
	// The board counts every run it holds (its columns show a page of
	// cards each).
	cards := -1
	if m := regexp.MustCompile(`<p class="sub">(\d+) runs? under`).FindStringSubmatch(page); m != nil {
		cards, _ = strconv.Atoi(m[1])
	}
	ok3 := first2 < 300*time.Millisecond && cards == nRuns
	fmt.Printf("  second start (the index cache): start to URL %s, board's first response %s with %d of %d runs   target < 300 ms, every run: %s\n", ms3(ready2), ms3(first2), cards, nRuns, verdict(ok3))
	if strict && !(ok1 && ok2 && ok3) {
		return fmt.Errorf("a target was missed")
	}
	return nil
}

// fetch GETs u with the token's cookie and returns how long the whole
// response took, and its body.
func fetch(u string, cookie *http.Cookie) (time.Duration, string, error) {
	req, _ := http.NewRequest("GET", u, nil)
	req.AddCookie(cookie)
	t := time.Now()
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	d := time.Since(t)
	if r.StatusCode != 200 {
		return d, "", fmt.Errorf("GET %s: %d", u, r.StatusCode)
	}
	return d, string(b), err
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func ms3(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// peakRSS is VmHWM from /proc (Linux), "n/a" elsewhere.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "n/a"
}

// templateRun is one run with nEvents journal events written by sitter's
// own journal code: RUN_CREATED, then effects requested and resolved in
// turn, the last one still pending.
func templateRun(tmp string, nEvents int) (string, error) {
	proc := filepath.Join(tmp, "p.mjs")
	if err := os.WriteFile(proc, []byte("export async function process() {}\n"), 0o644); err != nil {
		return "", err
	}
	dir, _, err := run.Create(context.Background(), run.CreateOptions{RunsDir: filepath.Join(tmp, "template"), RunID: "template", ProcessID: "bench", Entry: proc + "#process"})
	if err != nil {
		return "", err
	}
	jdir := filepath.Join(dir, run.JournalDir)
	j, err := journal.Load(jdir)
	if err != nil {
		return "", err
	}
	head := j.Head()
	for i := 1; i < nEvents; i++ {
		id := fmt.Sprintf("e%03d", (i+1)/2)
		typ, data := journal.EffectRequested, any(map[string]any{"effectId": id, "invocationKey": "k" + id, "taskId": "t", "kind": "shell", "label": "step " + id})
		if i%2 == 0 {
			typ, data = journal.EffectResolved, map[string]any{"effectId": id, "status": "ok", "resultRef": "tasks/" + id + "/result.json"}
		}
		ev, err := journal.Append(jdir, head, typ, data)
		if err != nil {
			return "", err
		}
		head = &ev
	}
	return dir, nil
}

// copyRun copies a run directory (without fsync: the bench's runs are
// scratch) and gives it its own run id.
func copyRun(from, to string) error {
	return filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == run.MetadataFile {
			b = []byte(strings.Replace(string(b), `"runId": "template"`, `"runId": "`+filepath.Base(to)+`"`, 1))
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
