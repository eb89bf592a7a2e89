package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Resolve finds a session's transcript file: the payload's transcript path
// when the harness hands one over and it exists, else the spec's location
// pattern filled in with the session id and cwd (the newest match of its
// globs). trace says what was tried, in order.
func Resolve(spec *Spec, payloadPath, sessionID, cwd, home string, getenv func(string) string) (path string, trace []string, err error) {
	if payloadPath != "" {
		if _, err := os.Stat(payloadPath); err == nil {
			return payloadPath, append(trace, "payload transcript path "+payloadPath+": found"), nil
		}
		trace = append(trace, "payload transcript path "+payloadPath+": not found")
	} else if spec.Payload {
		trace = append(trace, "payload transcript path: absent")
	}
	if spec.Location == "" {
		return "", append(trace, "the atlas documents no transcript location"), errors.New("no transcript location for " + spec.Harness)
	}
	if sessionID == "" && strings.Contains(spec.Location, "{sessionId") {
		return "", append(trace, "location "+spec.Location+" needs a session id"), errors.New("no session id")
	}
	pat := Expand(spec, sessionID, cwd, home, getenv)
	ms, _ := filepath.Glob(pat)
	if len(ms) == 0 {
		return "", append(trace, "location "+pat+": no match"), errors.New("no transcript at " + pat)
	}
	best, bt := "", int64(-1)
	for _, m := range ms {
		if st, err := os.Stat(m); err == nil && st.ModTime().UnixNano() > bt {
			best, bt = m, st.ModTime().UnixNano()
		}
	}
	return best, append(trace, "location "+pat+": "+best), nil
}

// Expand fills a spec's location pattern.
func Expand(spec *Spec, sessionID, cwd, home string, getenv func(string) string) string {
	loc := spec.Location
	rest := strings.TrimPrefix(loc, "~/")
	base := home
	if spec.HomeEnv != "" && getenv != nil {
		if v := getenv(spec.HomeEnv); v != "" {
			// $CODEX_HOME replaces ~/.codex.
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				base, rest = v, rest[i+1:]
			}
		}
	}
	id8 := sessionID
	if len(id8) > 8 {
		id8 = id8[:8]
	}
	r := strings.NewReplacer(
		"{sessionId}", globEscape(sessionID),
		"{sessionId8}", globEscape(id8),
		"{cwdSlug}", globEscape(Slug(cwd)),
		"{cwdDashed}", globEscape(strings.ReplaceAll(strings.TrimPrefix(cwd, "/"), "/", "-")),
	)
	return filepath.Join(base, r.Replace(rest))
}

// Slug is a cwd with every character outside [A-Za-z0-9] replaced by "-"
// (Claude Code's project directory name).
func Slug(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}
