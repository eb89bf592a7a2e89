package launch

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Bridge-interactive mode runs the harness's interactive command in a
// pseudo-terminal, answers the onboarding prompts the atlas declares,
// and turns what the terminal shows into NDJSON events on stdout:
//
//	output       {text}: terminal output with control sequences stripped
//	onboarding   {id, keys}: a declared prompt was answered
//	turn_end     {turn, source: "hook"|"idle", payload?}: a turn ended
//	max_iterations, idle {quiet, screen}, terminate {reason, screen},
//	kill, signal {signal}
//	exit         {code, harnessCode, endedBy: "harness"|"sitter"|"signal"}
//
// A declared prompt found on the emulated screen is answered (its keys
// typed) once the output has been quiet for Settle, or 5 × Settle after it
// appeared if the output never goes quiet.
//
// A turn ends when the harness's stop event runs the hook the atlas's
// turnEnd files register (payload: what the harness passed to it), or,
// for a harness without one, when its output has been quiet for the idle
// timeout. Harnesses that never exit interactively are then ended by
// sitter: once the output has settled after the turn (a plugin's stop hook
// that blocks makes the harness carry on, and the run goes on to its next
// turn end), or at once after --max-iterations turns; SIGTERM to the
// harness's process group, SIGKILL if it is still there after killGrace.
//
// Exit code: the harness's own when it exits by itself or after a
// forwarded signal; 0 when sitter ended it after a turn ended; 124 (as
// timeout(1)) when sitter ended it because its output was quiet for the
// idle timeout before any turn ended (an unexpected prompt, a model that
// never answered: the idle event carries the screen).

// turnEndEnv names the FIFO the turn-end hook writes the stop payload to.
const turnEndEnv = "SITTER_LAUNCH_TURN_END"

// turnEndCommand is the hook command that fills {turnEndCommand}: it
// hands the hook's stdin (the stop event's payload) to the launcher.
const turnEndCommand = `cat >> "$` + turnEndEnv + `"`

// The pseudo-terminal's size: wide, so that few lines wrap.
const termRows, termCols = 50, 160

// exitIdle is the exit code of a run ended by the idle timeout before any
// turn ended, or by the overall timeout (as timeout(1) exits).
const exitIdle = 124

// prompt is a compiled onboarding prompt.
type prompt struct {
	Prompt
	re *regexp.Regexp
}

func compilePrompts(ps []Prompt) ([]prompt, error) {
	var out []prompt
	for _, p := range ps {
		re, err := regexp.Compile(p.Match)
		if err != nil {
			return nil, fmt.Errorf("onboarding prompt %s: %v", p.ID, err)
		}
		out = append(out, prompt{p, re})
	}
	return out, nil
}

func checkPrompts(ps []Prompt) error {
	_, err := compilePrompts(ps)
	return err
}

// flat is screen text with every run of blanks and newlines as one space,
// what onboarding prompts are matched against.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// completeUTF8 splits b before an incomplete UTF-8 sequence at its end,
// which the next chunk completes.
func completeUTF8(b []byte) (complete, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		c := b[i]
		if c < 0x80 {
			break
		}
		if c >= 0xc0 { // a lead byte: is its sequence complete?
			if !utf8.FullRune(b[i:]) {
				return b[:i], b[i:]
			}
			break
		}
	}
	return b, nil
}

// ptyEnv is the harness's environment for the pseudo-terminal: an xterm
// of sitter's size, not the terminal application sitter runs in.
func ptyEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "COLUMNS", "LINES", turnEndEnv:
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TERM=xterm-256color")
}
