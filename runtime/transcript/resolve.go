package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
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
	if len(ms) == 0 && strings.Contains(spec.Location, "{cwdSlug}") {
		if d := dashed(cwd); len(d) > slugMax {
			// Claude Code 2.1.332 also takes a cut name's directory
			// with another suffix: one whose name starts with the first
			// slugMax characters and "-".
			trace = append(trace, "location "+pat+": no match")
			pat = expand(spec, sessionID, globEscape(d[:slugMax])+"-*", cwd, home, getenv)
			ms, _ = filepath.Glob(pat)
		}
	}
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
	return expand(spec, sessionID, globEscape(Slug(cwd)), cwd, home, getenv)
}

// expand fills a spec's location pattern with slug (a glob) as {cwdSlug}.
func expand(spec *Spec, sessionID, slug, cwd, home string, getenv func(string) string) string {
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
		"{cwdSlug}", slug,
		"{cwdDashed}", globEscape(strings.ReplaceAll(strings.TrimPrefix(cwd, "/"), "/", "-")),
	)
	return filepath.Join(base, r.Replace(rest))
}

// slugMax is the longest project directory name Claude Code makes whole.
const slugMax = 200

// Slug is Claude Code's project directory name for a cwd (2.1.332:
// cwd.replace(/[^a-zA-Z0-9]/g, "-"), whose JavaScript string has one
// character per UTF-16 code unit: "é" becomes one "-", a character outside
// the BMP two). A name longer than slugMax keeps its first slugMax
// characters, then "-" and slugHash of the cwd.
func Slug(cwd string) string {
	s := dashed(cwd)
	if len(s) <= slugMax {
		return s
	}
	return s[:slugMax] + "-" + slugHash(cwd)
}

// dashed is cwd with each UTF-16 code unit outside [A-Za-z0-9] replaced
// by "-": ASCII, so its bytes are Claude Code's characters.
func dashed(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case utf16.RuneLen(r) == 2:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// slugHash is the hash Claude Code appends to a cut project directory
// name: over the cwd's UTF-16 code units, h = h*31 + c in 32-bit
// integers, its absolute value in base 36.
func slugHash(cwd string) string {
	var h int32
	for _, c := range utf16.Encode([]rune(cwd)) {
		h = h*31 + int32(c)
	}
	return strconv.FormatInt(max(int64(h), -int64(h)), 36)
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}
