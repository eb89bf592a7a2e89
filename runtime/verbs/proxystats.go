package verbs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/hook"
	"sitter.dev/sitter/runtime/proxy"
)

// routeSum is one row of `sitter proxy stats`. Per rule a request counts
// once; per provider and per provider,model every attempt counts, the
// failed ones that fell back included (as errors), so that an upstream
// that keeps failing shows.
type routeSum struct {
	Name         string  `json:"name"`
	Requests     int     `json:"requests"`     // per provider and model: attempts
	Errors       int     `json:"errors"`       // answered with a status ≥ 400 (after fallbacks) or ended by an error (a stream cut); a 499 is not one
	ClientClosed int     `json:"clientClosed"` // status 499: the client left before the answer ended (no upstream failed)
	Fallbacks    int     `json:"fallbacks"`    // needed more than one upstream
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	LatencyMS    float64 `json:"meanLatencyMs"` // of the requests (attempts) that answered or failed over, those the client left excluded

	answered int // the attempts LatencyMS sums
}

type routeStats struct {
	File     string `json:"file"`
	Requests int    `json:"requests"`
	Skipped  int    `json:"skipped,omitempty"` // lines that are not records
	// FirstSkipped is the line number of the first of them.
	FirstSkipped int        `json:"firstSkippedLine,omitempty"`
	ByRule       []routeSum `json:"byRule"`
	ByProvider   []routeSum `json:"byProvider"`
	ByModel      []routeSum `json:"byModel"`
}

func newProxyStatsCmd(e *env) *cobra.Command {
	var file string
	var asJSON bool
	c := &cobra.Command{
		Use:   "stats",
		Short: "Sum the routed requests per rule, provider and model",
		Long: `Reads the JSON-lines record sitter proxy --routes writes (one line per routed
request: rule, provider, model, status, latency, tokens; by default
$SITTER_STATE_DIR/proxy/routes.jsonl) and sums it per rule, per provider and per
provider,model: requests, errors (a status of 400 or more after the fallbacks,
or an error that ended the request, such as a stream the upstream cut after
its 200), client closed (status 499: the client left before the answer
ended; no upstream error, and not in the mean latency), requests that needed
a fallback, input and output tokens, mean latency. Per provider and per
provider,model every upstream call counts: an attempt that failed and fell
back to the next target is a request, and an error, of its provider, with
its own latency in the mean; per rule a request counts once, with the whole
request's latency.`,
		Example: `  sitter proxy stats
  sitter proxy stats --json --file ./routes.jsonl`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			named := file != ""
			if !named {
				dir, err := hook.StateDir()
				if err != nil {
					return err
				}
				file = filepath.Join(dir, "proxy", "routes.jsonl")
			}
			st, err := sumRoutes(file)
			if errors.Is(err, fs.ErrNotExist) && !named {
				// Nothing routed yet on this machine: an empty summary.
				fmt.Fprintf(e.stderr, "sitter: proxy stats: no routed request recorded yet (sitter proxy --routes records them in %s)\n", file)
				st, err = &routeStats{File: file, ByRule: []routeSum{}, ByProvider: []routeSum{}, ByModel: []routeSum{}}, nil
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "sitter: proxy stats: %v\n", err)
				return code(1)
			}
			if st.Skipped > 0 {
				// Not summed, so not silently: a line cut by a crash, or
				// a file that is not a routes record.
				fmt.Fprintf(e.stderr, "sitter: proxy stats: %s:%d: %d line(s) skipped, not a routes record (the first at this line)\n", file, st.FirstSkipped, st.Skipped)
			}
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printRouteStats(e.stdout, st)
			return nil
		},
	}
	c.Flags().StringVar(&file, "file", "", "read the record from `FILE` (default: the state dir's proxy/routes.jsonl)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// clientClosed is the status the proxy records for a request its client
// left before the answer ended (runtime/proxy: "client closed request").
const clientClosed = 499

func sumRoutes(file string) (*routeStats, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st := &routeStats{File: file}
	rules, provs, models := map[string]*routeSum{}, map[string]*routeSum{}, map[string]*routeSum{}
	row := func(m map[string]*routeSum, k string) *routeSum {
		s := m[k]
		if s == nil {
			s = &routeSum{Name: k}
			m[k] = s
		}
		s.Requests++
		return s
	}
	// add counts r in row k of m; ms is the latency that row is charged:
	// the whole request's per rule, the answering attempt's per provider
	// and model.
	add := func(m map[string]*routeSum, k string, r proxy.RouteRecord, ms float64) {
		s := row(m, k)
		if r.Attempts > 1 {
			s.Fallbacks++
		}
		s.InputTokens += r.InputTokens
		s.OutputTokens += r.OutputTokens
		if r.Status == clientClosed {
			// The client's doing: no upstream failed, and how long it
			// waited is not how long the upstream took.
			s.ClientClosed++
			return
		}
		if r.Status >= 400 || r.Error != "" {
			s.Errors++
		}
		s.LatencyMS += ms
		s.answered++
	}
	// failed: an attempt that fell back, an error; its tokens are not
	// recorded, its latency is when known (records written before
	// failed_ms have none).
	failed := func(m map[string]*routeSum, k string, ms float64, known bool) {
		s := row(m, k)
		s.Errors++
		if known {
			s.LatencyMS += ms
			s.answered++
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		var r proxy.RouteRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Rule == "" {
			if st.Skipped == 0 {
				st.FirstSkipped = line
			}
			st.Skipped++
			continue
		}
		st.Requests++
		// The answering attempt's latency is the request's less the
		// failed attempts' before it.
		own := r.LatencyMS
		for _, ms := range r.FailedMS {
			own -= ms
		}
		add(rules, r.Rule, r, r.LatencyMS)
		add(provs, r.Provider, r, max(own, 0))
		add(models, r.Provider+","+r.Model, r, max(own, 0))
		for i, f := range r.Failed {
			p, _, _ := strings.Cut(f, ",")
			known := i < len(r.FailedMS)
			var ms float64
			if known {
				ms = r.FailedMS[i]
			}
			failed(provs, p, ms, known)
			failed(models, f, ms, known)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", file, line+1, err)
	}
	list := func(m map[string]*routeSum) []routeSum {
		out := []routeSum{}
		for _, s := range m {
			if s.answered > 0 {
				s.LatencyMS = float64(int(s.LatencyMS/float64(s.answered)*1000)) / 1000
			}
			out = append(out, *s)
		}
		slices.SortFunc(out, func(a, b routeSum) int {
			if a.Requests != b.Requests {
				return b.Requests - a.Requests
			}
			if a.Name < b.Name {
				return -1
			}
			return 1
		})
		return out
	}
	st.ByRule, st.ByProvider, st.ByModel = list(rules), list(provs), list(models)
	return st, nil
}

func printRouteStats(w io.Writer, st *routeStats) {
	noun := "requests"
	if st.Requests == 1 {
		noun = "request"
	}
	fmt.Fprintf(w, "%d routed %s in %s\n", st.Requests, noun, st.File)
	for _, sec := range []struct {
		title string
		rows  []routeSum
	}{{"rule", st.ByRule}, {"provider", st.ByProvider}, {"provider,model", st.ByModel}} {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\trequests\terrors\tclient closed\tfallbacks\tinput tokens\toutput tokens\tmean ms\n", sec.title)
		for _, r := range sec.rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\n", r.Name, r.Requests, r.Errors, r.ClientClosed, r.Fallbacks, r.InputTokens, r.OutputTokens, r.LatencyMS)
		}
		tw.Flush()
	}
}
