//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/adapter"
)

// The fidelity matrix: harness × native event × capability, written to
// docs/fidelity.md after a run when SITTER_E2E_FIDELITY=1 (make e2e sets
// it). A cell is "verified (<test>)" only when a case that passed proved it
// on the real CLI; what the atlas says an event cannot do is "not
// supported"; everything else is "not verifiable here".

// capabilities are the matrix columns: name and the atlas capability that
// backs it ("" = every event that fires can be observed).
var capabilities = []struct{ column, atlas string }{
	{"observe", ""},
	{"deny", "deny"},
	{"add context", "addContext"},
	{"continue", "block"},
	{"rewrite input", "rewriteInput"},
}

type cell struct{ harness, event, column string }

var (
	notesMu sync.Mutex
	notes   = map[string][]string{}
)

// fidelityNote adds a line under a harness's table (a skipped case, a
// finding), once.
func fidelityNote(harness, text string) {
	notesMu.Lock()
	defer notesMu.Unlock()
	if !slices.Contains(notes[harness], text) {
		notes[harness] = append(notes[harness], text)
	}
}

var (
	verifiedMu sync.Mutex
	verifiedBy = map[cell][]string{}
)

// verified claims that the calling case proves column for each native event
// of harness. The claim counts only if the case passes.
func verified(t *testing.T, harness, column string, nativeEvents ...string) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			return
		}
		verifiedMu.Lock()
		defer verifiedMu.Unlock()
		for _, e := range nativeEvents {
			c := cell{harness, e, column}
			if !slices.Contains(verifiedBy[c], t.Name()) {
				verifiedBy[c] = append(verifiedBy[c], t.Name())
			}
		}
	})
}

// observed claims "observe" for every native event the probe recorded.
func observed(t *testing.T, harness string, evs []event) {
	t.Helper()
	var names []string
	for _, e := range evs {
		if !slices.Contains(names, e.NativeEvent) {
			names = append(names, e.NativeEvent)
		}
	}
	verified(t, harness, "observe", names...)
}

func TestMain(m *testing.M) {
	if os.Getenv(mcpServerEnv) == "elicit" {
		os.Exit(mcpElicitServer(os.Stdin, os.Stdout))
	}
	code := m.Run()
	// Generated probe bundles and the sitter build live in temp dirs
	// shared by the cases; nothing refers to them after the run.
	if probeRoot != "" {
		os.RemoveAll(probeRoot)
	}
	if sitterBin != "" {
		os.RemoveAll(filepath.Dir(sitterBin))
	}
	verifiedMu.Lock()
	stale := staleReasons(registry.Registry(), verifiedBy)
	sum := summarize(registry.Registry(), verifiedBy)
	verifiedMu.Unlock()
	// A reason the atlas gives for a cell that a passing case proved is
	// stale: the run fails until it is deleted, or docs/fidelity.md and
	// the atlas would keep telling users a cell cannot be proved.
	for _, s := range stale {
		fmt.Fprintln(os.Stderr, "e2e: stale unverifiable reason:", s)
	}
	if len(stale) > 0 && code == 0 {
		code = 1
	}
	fmt.Fprintln(os.Stderr, "e2e: fidelity of this run:", sum.line())
	if os.Getenv("SITTER_E2E_FIDELITY") == "1" {
		if code != 0 {
			fmt.Fprintln(os.Stderr, "e2e: some cases failed; docs/fidelity.md left as it was")
		} else {
			path := filepath.Join("..", "docs", "fidelity.md")
			os.MkdirAll(filepath.Dir(path), 0o755)
			verifiedMu.Lock()
			doc := fidelity(registry.Registry(), verifiedBy)
			verifiedMu.Unlock()
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "e2e:", err)
				code = 1
			} else {
				fmt.Fprintln(os.Stderr, "e2e: wrote", path)
			}
		}
	}
	os.Exit(code)
}

// fidelity renders the matrix. It depends only on the registry and the
// claims, in sorted order, so the same run writes the same file.
func fidelity(reg *adapter.Registry, claims map[cell][]string) string {
	var b strings.Builder
	b.WriteString("<!-- Written by the e2e suite (e2e/fidelity_test.go) on `make e2e`. DO NOT EDIT. -->\n\n")
	b.WriteString("# Fidelity matrix\n\n")
	b.WriteString("What sitter's generated hooks were proved to do on the real harness CLIs, run headless and offline against a fake LLM on 127.0.0.1 (e2e/, docs/harnesses.md).\n\n")
	b.WriteString("- **verified (Test…)**: a case of this run that passed proved it on the pinned CLI. For observe: the harness called the generated hook and sitter normalized the payload with the turn's session id, the project as cwd and, on tool phases, the shell kind. For the other columns: the case fails if the harness ignores sitter's answer (the tool still runs, the context or reason never reaches the model, the original command runs).\n")
	b.WriteString("- **not supported**: the atlas says the native event cannot do this (its `can` list, or `support: unsupported`).\n")
	b.WriteString("- **not verifiable: <reason>**: the atlas says it can, and says why no offline run of the real CLI can prove it (the event's `unverifiable` reasons).\n")
	b.WriteString("- **not verifiable here**: the atlas says it can, but no case here proves it: the harness cannot run on this machine, or the suite does not exercise that event or capability.\n\n")
	b.WriteString("Columns: observe (a handler sees the canonical event), deny (`deny`), add context (`addContext`), continue (`block` on a stop phase: the session goes on with the reason), rewrite input (`rewriteInput`).\n\n")

	ds := append([]*adapter.Descriptor(nil), reg.Descriptors...)
	sort.Slice(ds, func(i, j int) bool { return ds[i].ID < ds[j].ID })

	b.WriteString("| harness | version | run here |\n|---|---|---|\n")
	for _, d := range ds {
		version, run := "", "yes"
		if c, ok := clis[d.ID]; ok {
			version = fmt.Sprintf("`%s@%s`", c.pkg, c.version)
		} else {
			pkg, vs := "no package", "none"
			if d.Package.Name != "" {
				pkg = "`" + d.Package.Name + "`"
			}
			if len(d.Verified) > 0 {
				vs = strings.Join(d.Verified, ", ")
			}
			version = fmt.Sprintf("%s (atlas verified: %s)", pkg, vs)
			run = "no: " + d.NotRunHere
			if d.NotRunHere == "" {
				run = "no"
			}
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s |\n", d.DisplayName, d.ID, version, run)
	}
	b.WriteString("\n")

	sum := summarize(reg, claims)
	b.WriteString("## Summary\n\n")
	b.WriteString("Claimed cells (every cell that is not \"not supported\") of the harnesses run here:\n\n")
	b.WriteString("| harness | claimed | verified | not verifiable: reason | not verifiable here |\n|---|---|---|---|---|\n")
	for _, h := range sum.harnesses {
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d | %d |\n", h.id, h.claimed, h.verified, h.reasoned, h.claimed-h.verified-h.reasoned)
	}
	fmt.Fprintf(&b, "| all | %d | %d | %d | %d |\n\n", sum.total.claimed, sum.total.verified, sum.total.reasoned, sum.total.claimed-sum.total.verified-sum.total.reasoned)
	b.WriteString(sum.line() + "\n\n")

	for _, d := range ds {
		fmt.Fprintf(&b, "## %s (`%s`)\n\n", d.DisplayName, d.ID)
		if c, ok := clis[d.ID]; ok {
			fmt.Fprintf(&b, "Run here: `%s@%s`.\n\n", c.pkg, c.version)
		} else {
			fmt.Fprintf(&b, "Not run here. %s\n\n", d.NotRunHere)
		}
		b.WriteString("| native event | phase | support |")
		for _, c := range capabilities {
			b.WriteString(" " + c.column + " |")
		}
		b.WriteString("\n|---|---|---|")
		for range capabilities {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		evs := append([]adapter.EventSpec(nil), d.Events...)
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Name < evs[j].Name })
		for _, e := range evs {
			fmt.Fprintf(&b, "| `%s` | %s | %s |", e.Name, e.Phase, e.Support)
			for _, c := range capabilities {
				b.WriteString(" " + fidelityCell(d.ID, e, c.column, c.atlas, claims) + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
		notesMu.Lock()
		ns := slices.Clone(notes[d.ID])
		notesMu.Unlock()
		sort.Strings(ns)
		for _, n := range ns {
			b.WriteString("- " + n + "\n")
		}
		if len(ns) > 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func fidelityCell(harness string, e adapter.EventSpec, column, capability string, claims map[cell][]string) string {
	if e.Support == "unsupported" || (capability != "" && !slices.Contains(e.Can, capability)) {
		return "not supported"
	}
	if tests := claims[cell{harness, e.Name, column}]; len(tests) > 0 {
		tests = slices.Clone(tests)
		sort.Strings(tests)
		return "verified (" + strings.Join(tests, ", ") + ")"
	}
	if r := e.Unverifiable[reasonKey(capability)]; r != "" {
		return "not verifiable: " + strings.ReplaceAll(r, "|", "\\|")
	}
	return "not verifiable here"
}

// reasonKey is the key of the atlas's unverifiable map for a column's
// capability ("" is observe).
func reasonKey(capability string) string {
	if capability == "" {
		return "observe"
	}
	return capability
}

// claimed reports whether the atlas says the event can do the column's
// capability (the cell is not "not supported").
func claimed(e adapter.EventSpec, capability string) bool {
	return e.Support != "unsupported" && (capability == "" || slices.Contains(e.Can, capability))
}

// staleReasons lists the cells that a passing case verified although the
// atlas still says why they cannot be verified, sorted.
func staleReasons(reg *adapter.Registry, claims map[cell][]string) []string {
	var out []string
	for _, d := range reg.Descriptors {
		for _, e := range d.Events {
			for _, c := range capabilities {
				r := e.Unverifiable[reasonKey(c.atlas)]
				tests := claims[cell{d.ID, e.Name, c.column}]
				if r == "" || len(tests) == 0 || !claimed(e, c.atlas) {
					continue
				}
				tests = slices.Clone(tests)
				sort.Strings(tests)
				out = append(out, fmt.Sprintf("%s %s %s is verified by %s, but %s gives unverifiable.%s %q: delete the reason",
					d.ID, e.Name, c.column, strings.Join(tests, ", "), d.Source, reasonKey(c.atlas), r))
			}
		}
	}
	sort.Strings(out)
	return out
}

type tally struct {
	id                          string
	claimed, verified, reasoned int
}

type summary struct {
	harnesses []tally // the harnesses run here, by id
	total     tally
}

// summarize counts the claimed cells of the harnesses the suite runs
// (those in clis): verified by a passing case, not verifiable with the
// atlas's reason, and the rest.
func summarize(reg *adapter.Registry, claims map[cell][]string) summary {
	var s summary
	for _, d := range reg.Descriptors {
		if _, ok := clis[d.ID]; !ok {
			continue
		}
		t := tally{id: d.ID}
		for _, e := range d.Events {
			for _, c := range capabilities {
				if !claimed(e, c.atlas) {
					continue
				}
				t.claimed++
				switch {
				case len(claims[cell{d.ID, e.Name, c.column}]) > 0:
					t.verified++
				case e.Unverifiable[reasonKey(c.atlas)] != "":
					t.reasoned++
				}
			}
		}
		s.harnesses = append(s.harnesses, t)
		s.total.claimed += t.claimed
		s.total.verified += t.verified
		s.total.reasoned += t.reasoned
	}
	sort.Slice(s.harnesses, func(i, j int) bool { return s.harnesses[i].id < s.harnesses[j].id })
	return s
}

// line is the summary in one sentence.
func (s summary) line() string {
	pct := 0.0
	if s.total.claimed > 0 {
		pct = 100 * float64(s.total.verified) / float64(s.total.claimed)
	}
	return fmt.Sprintf("verified %d of %d claimed cells of the harnesses run here (%.1f%%); %d carry the atlas's reason why they cannot be; %d are not verifiable here.",
		s.total.verified, s.total.claimed, pct, s.total.reasoned, s.total.claimed-s.total.verified-s.total.reasoned)
}

// TestFidelityMatrix checks the generator itself: the same claims in any
// order give the same file, and each kind of cell comes out as described.
func TestFidelityMatrix(t *testing.T) {
	reg := registry.Registry()
	a := map[cell][]string{
		{"codex", "Stop", "continue"}:       {"TestB", "TestA"},
		{"codex", "PreToolUse", "deny"}:     {"TestA"},
		{"codex", "SessionEnd", "continue"}: {"TestA"}, // the atlas says SessionEnd cannot
	}
	b := map[cell][]string{
		{"codex", "PreToolUse", "deny"}:     {"TestA"},
		{"codex", "SessionEnd", "continue"}: {"TestA"},
		{"codex", "Stop", "continue"}:       {"TestA", "TestB"},
	}
	da, db := fidelity(reg, a), fidelity(reg, b)
	if da != db {
		t.Fatalf("the matrix depends on claim order")
	}
	for _, want := range []string{
		"| `Stop` | stop | native | not verifiable here | not supported | not supported | verified (TestA, TestB) | not supported |",
		"| `PreToolUse` | preToolUse | native | not verifiable here | verified (TestA) | not verifiable here | not supported | not verifiable here |",
		"| `SessionEnd` | sessionEnd | native | not verifiable here | not supported | not supported | not supported | not supported |",
		// A harness the suite cannot run says why, from the atlas.
		"| Cursor (`cursor`) | no package (atlas verified: none) | no: No Cursor CLI is available",
	} {
		if !strings.Contains(da, want) {
			t.Errorf("matrix lacks %s", want)
		}
	}
}

// TestFidelityReasons checks the atlas's unverifiable reasons: a cell with
// a reason says it, a verified cell says verified whatever the atlas says
// and is reported stale, a reason never shows on a cell the event does not
// claim, and the summary counts the claimed cells of runnable harnesses.
func TestFidelityReasons(t *testing.T) {
	d := &adapter.Descriptor{ID: "codex", DisplayName: "Codex CLI", Source: "atlas/harnesses/codex.cue", Events: []adapter.EventSpec{
		{Name: "Notify", Phase: "notification", Support: "native", Unverifiable: map[string]string{"observe": "fires only on a desktop | OS notification"}},
		{Name: "Pre", Phase: "preToolUse", Support: "native", Can: []string{"deny"}, Unverifiable: map[string]string{"observe": "needs a TTY", "deny": "needs a prompt"}},
		{Name: "Gone", Phase: "notification", Support: "unsupported", Unverifiable: map[string]string{"observe": "a reason the check rejects"}},
	}}
	off := &adapter.Descriptor{ID: "cursor", DisplayName: "Cursor", Events: []adapter.EventSpec{{Name: "Other", Phase: "stop", Support: "native"}}}
	reg := &adapter.Registry{Descriptors: []*adapter.Descriptor{off, d}}
	claims := map[cell][]string{{"codex", "Pre", "deny"}: {"TestDeny"}}
	doc := fidelity(reg, claims)
	for _, want := range []string{
		"| `Notify` | notification | native | not verifiable: fires only on a desktop \\| OS notification | not supported | not supported | not supported | not supported |",
		"| `Pre` | preToolUse | native | not verifiable: needs a TTY | verified (TestDeny) | not supported | not supported | not supported |",
		"| `Gone` | notification | unsupported | not supported | not supported | not supported | not supported | not supported |",
		// cursor is not run here: its cells are not counted.
		"| `codex` | 3 | 1 | 2 | 0 |",
		"verified 1 of 3 claimed cells of the harnesses run here (33.3%); 2 carry the atlas's reason why they cannot be; 0 are not verifiable here.",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("matrix lacks %s", want)
		}
	}
	if strings.Contains(doc, "cursor` |") {
		t.Errorf("the summary counts a harness the suite does not run:\n%s", doc)
	}
	stale := staleReasons(reg, claims)
	want := []string{`codex Pre deny is verified by TestDeny, but atlas/harnesses/codex.cue gives unverifiable.deny "needs a prompt": delete the reason`}
	if !slices.Equal(stale, want) {
		t.Errorf("stale reasons = %q, want %q", stale, want)
	}
	if s := staleReasons(reg, map[cell][]string{{"codex", "Gone", "observe"}: {"TestX"}}); len(s) != 0 {
		t.Errorf("a reason on a cell the event does not claim is reported stale: %q", s)
	}
}
