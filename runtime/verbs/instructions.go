package verbs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"sitter.dev/sitter/runtime/adapter"
	runs "sitter.dev/sitter/runtime/run"
	"sitter.dev/sitter/runtime/session"
)

// guide is `instructions babysit --json`.
type guide struct {
	Harness     string   `json:"harness"`
	Interactive bool     `json:"interactive"`
	HookDriven  bool     `json:"hookDriven"`
	Why         string   `json:"hookDrivenBecause"`
	Context     guideCtx `json:"context"`
	Text        string   `json:"instructions"`
}

type guideCtx struct {
	CI      bool   `json:"ci"`
	RunsDir string `json:"runsDir"`
	// SharedStore: $SITTER_STORE names a shared store, where the run
	// verbs put and find runs (the local runs dir is not listed then).
	SharedStore bool        `json:"sharedStore,omitempty"`
	Session     *guideSess  `json:"session,omitempty"`
	ActiveRuns  []activeRun `json:"activeRuns"`
}

type guideSess struct {
	ID     string `json:"id"`
	Active bool   `json:"active"`
	RunID  string `json:"runId,omitempty"`
	RunDir string `json:"runDir,omitempty"`
	ref    string // how a command names the run (session.State.RunRef)
}

type activeRun struct {
	RunID     string `json:"runId"`
	RunDir    string `json:"runDir"`
	ProcessID string `json:"processId"`
	Status    string `json:"status"`
}

// newInstructionsCmd is `sitter instructions babysit`.
func newInstructionsCmd(e *env) *cobra.Command {
	babysit := flagged("babysit", "Print the orchestration guide of the babysit skill for a harness",
		"  sitter instructions babysit --harness claude-code\n  sitter instructions babysit --harness codex --no-interactive --json",
		[]string{"harness=the harness `HARNESS` (default: the one this command runs in)", "session-id=the session `ID` (default: the one this command runs in)",
			runsDirFlag, "interactive?a user answers breakpoints (the default outside CI)",
			"no-interactive?nobody answers breakpoints: the agent does (the default in CI)", "non-interactive?the same as --no-interactive", "json?print the guide and its context as JSON"},
		func(_ *cobra.Command, f *cmdFlags) int { return runInstructions(f, e.stdout, e.stderr, e.reg) })
	babysit.Args = nArgs(0, 0, "")
	babysit.Long = `The guide the babysit skill's agent follows, for the harness it runs in: how
the loop is driven there (its stop hook, or the agent itself), in interactive
or non-interactive mode, with the session's bound run and the project's
active runs.`
	return group(&cobra.Command{
		Use:     "instructions",
		Short:   "Guides an agent reads: the babysit orchestration guide",
		Example: "  sitter instructions babysit --harness gemini-cli",
	}, babysit)
}

// runInstructions is `sitter instructions babysit`.
func runInstructions(f *cmdFlags, stdout, stderr io.Writer, reg func() *adapter.Registry) int {
	name, sessionID := f.vals["harness"], f.vals["session-id"]
	if name == "" {
		// The harness the agent runs in, never a default: a Codex agent
		// must not get Claude Code's guide.
		c, err := session.Discover()
		if err != nil {
			// Outside a harness session --harness is required: a usage error.
			fmt.Fprintf(stderr, "sitter: %s: which harness? pass --harness (one of: %s); %v\n\n%s", f.verb, strings.Join(reg().Known, ", "), err, f.usage)
			return 2
		}
		name = c.Harness
		if sessionID == "" {
			sessionID = c.SessionID
		}
	}
	d, _, err := reg().Resolve(name)
	if err != nil {
		if f.vals["harness"] == "" { // the session's harness: no usage error
			return fail(stderr, "instructions", err)
		}
		// --harness names no harness: a mistake on the command line.
		fmt.Fprintf(stderr, "sitter: %s: %v\n\n%s", f.verb, err, f.usage)
		return 2
	}
	ci := isCI()
	interactive := !ci
	switch {
	case f.bools["interactive"]:
		interactive = true
	case f.bools["no-interactive"], f.bools["non-interactive"]:
		interactive = false
	}
	g := guide{Harness: d.ID, Interactive: interactive}
	g.HookDriven, g.Why = hookDriven(d, interactive)
	g.Context = detectContext(d.ID, sessionID, f.runsDir(), ci)
	g.Text = babysitText(g)
	return out(stdout, stderr, f.bools["json"], g, g.Text)
}

// hookDriven reads the atlas: the loop is hook-driven when the harness's
// stop event can block (continue the session). A native stop hook does so
// in both modes; an emulated one (a bridge re-prompting the session) only
// interactively, where a session outlives the turn.
func hookDriven(d *adapter.Descriptor, interactive bool) (bool, string) {
	for _, e := range d.Events {
		if e.Phase != "stop" || !slices.Contains(e.Can, "block") {
			continue
		}
		switch {
		case e.Support == "native":
			return true, fmt.Sprintf("%s's %s hook is native and can block a stop", d.ID, e.Name)
		case interactive:
			return true, fmt.Sprintf("%s's %s hook is %s: it re-prompts an interactive session", d.ID, e.Name, e.Support)
		default:
			return false, fmt.Sprintf("%s's %s hook is %s: without an interactive session it cannot continue the run", d.ID, e.Name, e.Support)
		}
	}
	return false, d.ID + " has no stop hook that can block: the agent drives the loop itself"
}

func isCI() bool {
	for _, k := range []string{"CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "JENKINS_URL", "TF_BUILD"} {
		if v := os.Getenv(k); v != "" && v != "false" && v != "0" {
			return true
		}
	}
	return false
}

func detectContext(harness, sessionID, runsDir string, ci bool) guideCtx {
	c := guideCtx{CI: ci, RunsDir: runsDir, SharedStore: os.Getenv("SITTER_STORE") != "", ActiveRuns: []activeRun{}}
	if sessionID == "" {
		sessionID = os.Getenv("SITTER_SESSION_ID")
	}
	if sessionID != "" {
		if st, _, err := session.Read(harness, sessionID); err == nil && st != nil {
			c.Session = &guideSess{ID: sessionID, Active: st.Active, RunID: st.RunID, RunDir: st.RunDir, ref: st.RunRef()}
		} else {
			c.Session = &guideSess{ID: sessionID}
		}
	}
	if c.SharedStore {
		return c
	}
	entries, _ := os.ReadDir(runsDir)
	for _, e := range entries {
		dir := filepath.Join(runsDir, e.Name())
		st, err := runs.Load(dir)
		if err != nil || st.Terminal() {
			continue
		}
		c.ActiveRuns = append(c.ActiveRuns, activeRun{st.Meta.RunID, dir, st.Meta.ProcessID, st.Status})
	}
	return c
}

func babysitText(g guide) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	mode := "interactive"
	if !g.Interactive {
		mode = "non-interactive"
	}
	w("# Babysit: orchestrate a run with sitter (%s, %s)\n\n", g.Harness, mode)
	w("## Non-negotiables\n")
	w("- The process file decides what happens; you execute its effects. Never skip, reorder or invent effects.\n")
	w("- Every result goes through `sitter task post`; never edit files under the run directory by hand.\n")
	w("- Never claim completion without the run's completion proof, and never print the proof before `sitter run iterate` reports `completed`.\n")
	w("- One effect, one post: post exactly what happened, errors included (`--status error`).\n\n")

	w("## Context\n")
	if g.Context.CI {
		w("- Running in CI: there is no human to ask.\n")
	} else {
		w("- Running locally.\n")
	}
	run := "<runDir>" // how the loop's commands name the run
	if g.Context.SharedStore {
		run = "<runId>"
		w("- Runs live in the shared store that $SITTER_STORE names, not in %s: `sitter run create` puts the run there and every `sitter run` and `sitter task` command here finds it by its runId (the runDir they print is this machine's copy of it). Add no --store flag.\n", g.Context.RunsDir)
	}
	if s := g.Context.Session; s != nil {
		if s.Active {
			w("- This session (%s) drives run %s: resume it (`sitter run iterate %s --json`) instead of creating a new one.\n", s.ID, s.RunID, s.ref)
		} else {
			w("- Session %s has no active run.\n", s.ID)
		}
	}
	if g.Context.SharedStore {
		// The local runs dir is not where this session's verbs look.
	} else if len(g.Context.ActiveRuns) > 0 {
		w("- Unfinished runs in %s:\n", g.Context.RunsDir)
		for _, r := range g.Context.ActiveRuns {
			w("  - %s (process %s, %s): %s\n", r.RunID, r.ProcessID, r.Status, r.RunDir)
		}
		w("  Ask whether to resume one before starting another.\n")
	} else {
		w("- No unfinished runs in %s.\n", g.Context.RunsDir)
	}
	w("\n")

	w("## 1. Understand the request\n")
	if g.Interactive {
		w("Interview the user before writing anything: the goal, what done looks like, constraints (files, tools, time), and where they want to review (these become breakpoints). Ask a few precise questions, not a questionnaire; restate the plan and get a yes.\n\n")
	} else {
		w("There is no one to interview: take the goal from the prompt, state your assumptions in the process's inputs, and prefer conservative choices. Do not add breakpoints; nobody will answer them.\n\n")
	}

	w("## 2. Write the process\n")
	w("An ES module exporting `process(inputs, ctx)`, e.g. `.a5c/processes/<name>.mjs`:\n\n")
	w("```js\nimport { defineTask } from '@a5c-ai/babysitter-sdk'; // answered by sitter, nothing to install\n\n")
	w("export const build = defineTask('build', (args) => ({ kind: 'shell', title: 'Build', shell: { command: 'make build' } }));\n")
	w("export const review = defineTask('review', (args) => ({ kind: 'agent', title: 'Review', agent: { prompt: `Review ${args.diff}` } }));\n\n")
	w("export async function process(inputs, ctx) {\n  const built = await ctx.task(build, {});\n")
	if g.Interactive {
		w("  await ctx.breakpoint({ question: 'Ship it?' }, { label: 'approve' });\n")
	}
	w("  const [a, b] = await ctx.parallel.all([() => ctx.task(review, { diff: 'a' }), () => ctx.task(review, { diff: 'b' }, { label: 'second' })]);\n")
	w("  return { built, a, b };\n}\n```\n\n")
	w("ctx gives `task(taskDef, args, {label, key})`, `breakpoint(payload, {label})`, `sleepUntil(isoOrEpochMs)`, `parallel.all([...thunks])`, `parallel.map(items, fn)`, `halt(reason)`, `log(...)`, `now()`. The process is replayed from the start on every iteration: keep it deterministic (no Date.now(), Math.random() or I/O outside tasks). A task's identity is its task id, label, the shape of its args and its occurrence count: give repeated calls distinct labels or an explicit `key`.\n\n")

	w("## 3. Create the run\n")
	w("```sh\nsitter run create --process-id <name> --entry .a5c/processes/<name>.mjs#process --inputs inputs.json --json\n```\n")
	w("It prints `runId`, `runDir` and `session`: the run is bound to this session (sitter finds the session this command runs in), so the stop hook drives it. If `session` is missing or has an `error`, bind it: `sitter session bind --run-id <runId> --harness %s --session-id <this session's id>`.\n\n", g.Harness)

	w("## 4. The loop\n")
	w("1. `sitter run iterate %s --json` → `{status, nextActions:[{effectId, kind, label, taskDef}], completionProof?}`.\n", run)
	w("2. `waiting`: execute every next action (they are independent: run them in parallel when you can), then post each result:\n   `sitter task post %s <effectId> --status ok --value-inline '<json>'` (or `--value result.json`; for a failure `--status error --error err.json` with err.json `{\"name\": \"Error\", \"message\": \"what went wrong\", \"data\": {…}}`, `--error -` reads it from stdin; `--stdout-file`/`--stderr-file` keep logs). After an error result `task post` exits 1, as the SDK's does: its `[task:post] status=error` line says the result is recorded; do not post it again.\n", run)
	w("3. Iterate again. Repeat until the status is `completed`, `failed` or `halted`.\n")
	if g.HookDriven {
		w("\nThis harness's stop hook drives the loop (%s): when you stop while effects are pending, the hook hands you the next step. Still, keep going on your own while there is work.\n", g.Why)
	} else {
		w("\nNothing will wake you up (%s): loop by yourself in this turn until the run ends. Do not stop while the run is waiting on anything but a breakpoint.\n", g.Why)
	}
	w("\n## 5. Effects by kind\n")
	w("- `agent`: do what `taskDef.agent.prompt` (or the task's title/description) asks yourself, or with a subagent; post a JSON value with what was produced.\n")
	w("- `skill`: load and follow the named skill (`taskDef.skill.name`) with its args; post its outcome.\n")
	w("- `shell`: run `taskDef.shell.command` (cwd and env if given); post `{exitCode, stdout}` with `--stdout-file`/`--stderr-file`; a non-zero exit is `--status error` with `{\"name\": \"Error\", \"message\": \"exit N\", \"data\": {\"exitCode\": N}}` as its `--error` unless the task says otherwise.\n")
	w("- `breakpoint`: needs a human (see below); its question and payload are `taskDef.metadata.payload`.\n")
	w("- `sleep`: wait until `taskDef.sleep.iso`; sitter resolves it by itself when you iterate after that time.\n")
	w("- other kinds (`node`, …): follow the taskDef; if you cannot, post `--status error` explaining why.\n\n")

	w("## 6. Breakpoints\n")
	if g.Interactive {
		w("Show the user the breakpoint's payload and question, wait for their answer, and post it: `--value-inline '{\"approved\": true, \"response\": \"…\"}'` (approved false when they decline). The stop hook lets the session stop while only breakpoints are pending.\n\n")
	} else {
		w("Nobody can answer: post `{\"approved\": true, \"response\": \"auto-approved (non-interactive)\"}` unless the payload shows the step is unsafe, then post approved false with the reason.\n\n")
	}
	w("## 7. Completion\n")
	w("When iterate reports `completed`, it prints `completionProof`. Summarize the output for the user and end your final message with `<promise>COMPLETION_PROOF</promise>` (the proof itself). The stop hook checks it and releases the session. `failed`: report the error and stop; `halted`: report the reason.\n")
	return b.String()
}
