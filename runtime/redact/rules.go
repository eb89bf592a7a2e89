package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// mask replaces every secret.
const mask = "[REDACTED]"

// A rule finds one family of secrets. Where a text holds one of its
// triggers, the rule's regexp is tried once, anchored at the start of the
// match the trigger belongs to: the trigger itself, or, for a rule with a
// back set, the start of the run of back bytes around it (the start of a
// name for "DB_PASSWORD=", of a URL's scheme for "://"). So a text costs
// a substring scan per trigger plus one short anchored match per hit,
// never a regexp run over all of it, and a regexp is compiled the first
// time a text holds its trigger: the hook path compiles nothing it does
// not need.
type rule struct {
	name      string   // what it finds, for tests and docs
	triggers  []string // lower-case substrings, one of which every match holds
	back      func(byte) bool
	pre       func(s string, a, e int) bool // a cheap test of the run (or trigger) s[a:e] before the regexp
	args      []string                      // a cheap test too: the trigger is a command whose line holds one of these (commandWith)
	pattern   string                        // matched at the start; groups named s are the secret (else the whole match)
	multiline bool                          // the match may run past the line's end (else it stops there)
	span      int                           // the longest match looked for (default 4 KiB)
	trim      bool                          // an unquoted value: trailing ,.;)]} stay visible
	command   string                        // a command's name (a regexp matched at the start): pattern is then searched for in its arguments, up to | ; & or the line's end
	ok        func(secret string) bool

	once   sync.Once
	re     *regexp.Regexp
	cmdRE  *regexp.Regexp
	groups []int // indexes of the groups named s
}

func (r *rule) compiled() (*regexp.Regexp, []int) {
	r.once.Do(func() {
		if r.command != "" {
			r.cmdRE = regexp.MustCompile(`^(?:` + r.command + `)`)
			r.re = regexp.MustCompile(r.pattern)
		} else {
			r.re = regexp.MustCompile(`^(?:` + r.pattern + `)`)
		}
		for i, n := range r.re.SubexpNames() {
			if n == "s" {
				r.groups = append(r.groups, i)
			}
		}
	})
	return r.re, r.groups
}

func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// nameByte: a byte of a variable, key, header or flag name.
func nameByte(c byte) bool { return wordByte(c) || c == '-' || c == '.' }

func schemeByte(c byte) bool { return wordByte(c) && c != '_' || c == '+' || c == '-' || c == '.' }

func alnumByte(c byte) bool { return wordByte(c) && c != '_' }

func digitByte(c byte) bool { return '0' <= c && c <= '9' }

// hit: a trigger n bytes long of rule r at byte p.
type hit struct{ r, p, n int }

// triggerIndex finds every rule's triggers, in any case, in one pass
// over a text.
type triggerIndex struct {
	first [1 << 16]uint8 // by a trigger's first two bytes (either case): 1 + its slot in lists
	lists [][]trigger
}

type trigger struct {
	t string // lower-case
	r int
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upperByte(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// indexBuilt says index has been built: from then on short texts use it
// too.
var indexBuilt atomic.Bool

var index = sync.OnceValue(func() *triggerIndex {
	defer indexBuilt.Store(true)
	ix := &triggerIndex{}
	slot := map[[2]byte]int{}
	for k := range table {
		for _, t := range table[k].triggers {
			if len(t) < 2 || lowerASCII(t) != t {
				panic("redact: trigger " + t + " must be lower-case and 2 bytes or more")
			}
			key := [2]byte{t[0], t[1]}
			n, ok := slot[key]
			if !ok {
				n = len(ix.lists)
				slot[key] = n
				ix.lists = append(ix.lists, nil)
				for _, a := range []byte{t[0], upperByte(t[0])} {
					for _, b := range []byte{t[1], upperByte(t[1])} {
						ix.first[uint16(a)<<8|uint16(b)] = uint8(n + 1)
					}
				}
			}
			ix.lists[n] = append(ix.lists[n], trigger{t, k})
		}
	}
	if len(ix.lists) > 255 {
		panic("redact: too many trigger prefixes")
	}
	return ix
})

// scan returns the hits of the rules' triggers in s, ordered by rule,
// then by position. A short text is searched trigger by trigger, which
// needs no index (the hook path masks a few short strings: building the
// index would cost more); a long one in one pass with the index.
func scan(s string) []hit {
	if len(s) >= 1024 || indexBuilt.Load() {
		return index().scan(s)
	}
	return scanShort(s)
}

func scanShort(s string) []hit {
	low := lowerASCII(s)
	var hs []hit
	for k := range table {
		n := len(hs)
		for _, t := range table[k].triggers {
			for i := 0; ; {
				j := strings.Index(low[i:], t)
				if j < 0 {
					break
				}
				hs = append(hs, hit{r: k, p: i + j, n: len(t)})
				i += j + 1
			}
		}
		if len(hs)-n > 1 {
			slices.SortStableFunc(hs[n:], func(a, b hit) int { return a.p - b.p })
		}
	}
	return hs
}

// scan returns the hits in s, ordered by rule, then by position.
func (ix *triggerIndex) scan(s string) []hit {
	var hs []hit
	for i := 0; i+1 < len(s); i++ {
		n := ix.first[uint16(s[i])<<8|uint16(s[i+1])]
		if n == 0 {
			continue
		}
	next:
		for _, t := range ix.lists[n-1] {
			if len(s)-i < len(t.t) {
				continue
			}
			for k := 2; k < len(t.t); k++ {
				if lowerByte(s[i+k]) != t.t[k] {
					continue next
				}
			}
			hs = append(hs, hit{r: t.r, p: i, n: len(t.t)})
		}
	}
	slices.SortStableFunc(hs, func(a, b hit) int { return a.r - b.r })
	return hs
}

// starts returns, in order, where the rule's matches may start in s,
// given its triggers' hits, each with the end of its trigger (for a rule
// with a back set, of the run around it).
func (r *rule) starts(s string, hs []hit) [][2]int {
	var out [][2]int
	runEnd := 0
	for _, h := range hs {
		p := h.p
		if r.back == nil {
			// at a word's start only, as \b would
			if p == 0 || !wordByte(s[p-1]) {
				out = append(out, [2]int{p, p + h.n})
			}
			continue
		}
		if p < runEnd {
			continue // every hit in one run has the same start
		}
		for p > 0 && r.back(s[p-1]) {
			p--
		}
		runEnd = h.p + h.n
		for runEnd < len(s) && r.back(s[runEnd]) {
			runEnd++
		}
		out = append(out, [2]int{p, runEnd})
	}
	if len(r.triggers) > 1 && r.back == nil {
		slices.SortFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
		out = slices.CompactFunc(out, func(a, b [2]int) bool { return a[0] == b[0] })
	}
	return out
}

// Cheap tests of a trigger at s[a:e], so that the common text that holds
// one (every URL holds "://") does not compile the rule's regexp.

// hexAfter: the n bytes after the trigger's first k are lower-case hex.
// The rules name functions, not closures, so that the rule table is
// static data: a closure stored in it at start-up would copy its pages
// in every sitter process.
func hexAfter(s string, a, k, n int) bool {
	if len(s)-a < k+n {
		return false
	}
	for _, c := range []byte(s[a+k : a+k+n]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func hex32After2(s string, a, e int) bool { return hexAfter(s, a, 2, 32) }
func hex32After4(s string, a, e int) bool { return hexAfter(s, a, 4, 32) }

// hasUserinfo: "://" is followed by user:password@ (before any / ? # or
// blank).
func hasUserinfo(s string, a, e int) bool {
	colon := false
	for i := e; i < len(s); i++ {
		switch s[i] {
		case ':':
			colon = true
		case '@':
			return colon
		case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'':
			return false
		}
	}
	return false
}

// assignedAfter: the trigger is followed, after a quote and blanks, by
// : or =.
func assignedAfter(s string, a, e int) bool {
	for e < len(s) && strings.IndexByte("\\\"' \t", s[e]) >= 0 {
		e++
	}
	return e < len(s) && (s[e] == ':' || s[e] == '=')
}

// blankAfter: the trigger is a word followed by a blank.
func blankAfter(s string, a, e int) bool {
	return e < len(s) && (s[e] == ' ' || s[e] == '\t')
}

// commandWith: the trigger, ending at e, is a word (a command) and the
// rest of its command line holds one of subs (a rule's args).
func commandWith(subs []string, s string, e int) bool {
	if e < len(s) && wordByte(s[e]) && s[e] != '_' {
		// mysqldump, mariadb-dump: the command goes on
		for e < len(s) && (wordByte(s[e]) || s[e] == '-') {
			e++
		}
	}
	end := min(len(s), e+2048)
	if k := strings.IndexAny(s[e:end], "\n|;&"); k >= 0 {
		end = e + k
	}
	for _, sub := range subs {
		if strings.Contains(s[e:end], sub) {
			return true
		}
	}
	return false
}

// configSet: "set" follows config or configure (aws configure set, npm
// config set, yarn config set) and is followed by a secret name.
func configSet(s string, a, e int) bool {
	before := strings.TrimRight(s[:a], " \t")
	if !strings.HasSuffix(before, "config") && !strings.HasSuffix(before, "configure") {
		return false
	}
	for _, f := range strings.Fields(s[e:min(len(s), e+512)]) {
		if !strings.HasPrefix(f, "-") {
			return !strings.Contains(f, "=") && secretName(strings.Trim(f, `"'`))
		}
	}
	return false
}

// nameThenSep: the run s[a:e] names a secret and is followed by an
// assignment (=, :, :=), maybe after a closing quote.
func nameThenSep(s string, a, e int) bool {
	// an Authorization header's value is a scheme and a credential: the
	// Authorization rule has masked the credential
	if !secretName(s[a:e]) || strings.HasSuffix(lowerASCII(s[a:e]), "authorization") {
		return false
	}
	if a > 0 && (s[a-1] == '/' || s[a-1] == '\\') {
		return false // a path: "/etc/passwd": no such file
	}
	if a > 0 && (s[a-1] == '"' || s[a-1] == '\'') && e+1 < len(s) && (s[e] == '=' || s[e] == ':') && s[e+1] == s[a-1] {
		return false // a string that ends with the name: "API_KEY="+key
	}
	if e < len(s) && s[e] == '\\' {
		e++
	}
	if e < len(s) && (s[e] == '"' || s[e] == '\'') {
		e++
	}
	for e < len(s) && (s[e] == ' ' || s[e] == '\t') {
		e++
	}
	return e < len(s) && (s[e] == ':' || s[e] == '=')
}

// flagThenValue: the run s[a:e] is a flag that takes a secret
// (--password, --api-key, -storepass) followed by = or a blank.
func flagThenValue(s string, a, e int) bool {
	if s[a] != '-' || e >= len(s) || (s[e] != '=' && s[e] != ' ' && s[e] != '\t') {
		return false
	}
	f := lowerASCII(strings.TrimPrefix(s[a+1:e], "-"))
	for _, w := range secretFlags {
		if strings.HasSuffix(f, w) {
			return true
		}
	}
	switch strings.TrimPrefix(strings.TrimPrefix(f, "src"), "dest") {
	case "pass", "storepass", "keypass": // keytool, openssl
		return true
	}
	return false
}

// secretFlags: a flag whose name ends with one of these takes a secret.
var secretFlags = []string{
	"password", "passwd", "passphrase", "token", "secret", "api-key", "apikey",
	"access-key", "accesskey", "secret-key", "secretkey", "auth-key", "authkey",
}

// apply masks the rule's secrets in s, given its triggers' hits.
func (r *rule) apply(s string, hs []hit) (string, bool) {
	starts := r.starts(s, hs)
	if len(starts) == 0 {
		return s, false
	}
	span := r.span
	if span == 0 {
		span = 4 << 10
	}
	var (
		b    strings.Builder
		last int
	)
	// emit masks the secret of match m of a regexp run on s[base:]
	emit := func(m []int, base int, groups []int) {
		a, e := m[0], m[1]
		for _, g := range groups {
			if a, e = m[2*g], m[2*g+1]; a >= 0 {
				break
			}
		}
		if a < 0 {
			return
		}
		a, e = a+base, e+base
		if strings.HasPrefix(s[a:e], mask) {
			return
		}
		if r.multiline { // a block keeps its first and last line breaks
			a, e = trimBreaks(s, a, e)
		}
		if r.trim && (e == len(s) || strings.IndexByte(`"'\\`, s[e]) < 0) { // not a quoted value
			for e > a && strings.IndexByte(",.;)]}", s[e-1]) >= 0 {
				e--
			}
		}
		if a < last || e == a || (r.ok != nil && !r.ok(s[a:e])) {
			return
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:a])
		b.WriteString(mask)
		last = e
	}
	seen := 0
	for _, se := range starts {
		st := se[0]
		if st < seen {
			continue
		}
		end := min(len(s), st+span)
		if !r.multiline {
			if k := strings.IndexByte(s[st:end], '\n'); k >= 0 {
				end = st + k
			}
		}
		if r.command != "" {
			if k := strings.IndexAny(s[st:end], "|;&"); k >= 0 {
				end = st + k
			}
			seen = end // a later hit in this command has the same arguments
		}
		if r.pre != nil && !r.pre(s[:end], st, min(se[1], end)) || r.args != nil && !commandWith(r.args, s[:end], min(se[1], end)) {
			continue
		}
		re, groups := r.compiled()
		if r.command == "" {
			if m := re.FindStringSubmatchIndex(s[st:end]); m != nil {
				seen = max(seen, st+m[1])
				emit(m, st, groups)
			}
			continue
		}
		// a command: its name here, then any of its arguments
		c := r.cmdRE.FindStringIndex(s[st:end])
		if c == nil {
			continue
		}
		for _, m := range re.FindAllStringSubmatchIndex(s[st+c[1]:end], -1) {
			emit(m, st+c[1], groups)
		}
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// trimBreaks narrows [a, e) past white space and escaped line breaks
// (\n, \r in a JSON string) at both ends.
func trimBreaks(s string, a, e int) (int, int) {
	brk := func(i int) int { // length of the break at i, or 0
		switch {
		case strings.IndexByte(" \t\r\n", s[i]) >= 0:
			return 1
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r'):
			return 2
		}
		return 0
	}
	for a < e {
		n := brk(a)
		if n == 0 {
			break
		}
		a += n
	}
	for e > a {
		switch {
		case brk(e-1) == 1:
			e--
		case e-2 >= a && brk(e-2) == 2:
			e -= 2
		default:
			return a, e
		}
	}
	return a, e
}

// lowerASCII lower-cases ASCII letters only, so offsets match s.
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// Names that say their value is a secret. A name is secret when,
// lower-cased, it ends with one of nameAny (DB_PASSWORD, clientSecret,
// GITHUB_TOKEN, OPENAI_API_KEY), is or ends with _, - or . and one of
// nameWhole (pass, DB_PASS), or ends with _, - or . and one of nameSep
// (MYSQL_PWD and .npmrc's _auth, but not the shell's PWD nor a config's
// auth: "x-api-key"). password_reset_url, max_tokens,
// token_count, secret_name and public_key are not.
var (
	nameAny = []string{
		"password", "passwd", "passphrase", "secret", "token", "credential", "credentials",
	}
	// <prefix>key with an optional separator: api_key, apiKey, x-api-key,
	// AWS_SECRET_ACCESS_KEY, AccountKey, SharedAccessKey
	keyPrefixes = []string{
		"api", "access", "secret", "private", "account", "master", "signing", "encryption",
		"auth", "session", "client", "app", "shared", "webhook", "license", "admin",
		"service", "consumer", "subscription", "storage", "deploy", "sas",
	}
	nameWhole = []string{"pass", "pw"}
	nameSep   = []string{"pwd", "auth"}
)

// secretName says whether a key or variable name names a secret.
func secretName(name string) bool {
	n := lowerASCII(name)
	for _, w := range nameAny {
		if strings.HasSuffix(n, w) {
			return true
		}
	}
	if rest, ok := strings.CutSuffix(n, "key"); ok {
		if rest != "" && strings.IndexByte("_-.", rest[len(rest)-1]) >= 0 {
			rest = rest[:len(rest)-1]
		}
		for _, p := range keyPrefixes {
			if strings.HasSuffix(rest, p) {
				return true
			}
		}
	}
	sepEnd := func(w string) bool {
		if len(n) <= len(w) || !strings.HasSuffix(n, w) {
			return false
		}
		c := n[len(n)-len(w)-1]
		return c == '_' || c == '-' || c == '.'
	}
	for _, w := range nameWhole {
		if n == w || sepEnd(w) {
			return true
		}
	}
	for _, w := range nameSep {
		if sepEnd(w) {
			return true
		}
	}
	return n == "authorization" || strings.HasSuffix(n, "-authorization") || strings.HasSuffix(n, "_authorization")
}

// maskable says whether a value under a secret name is worth masking:
// not empty, not a reference ($VAR, ${{ secrets.X }}, {{ .x }}), a
// placeholder (<token>, ***, xxxx), a type or keyword (string, null,
// true), or a file path.
func maskable(v string) bool {
	if len(v) < 2 || strings.HasPrefix(v, mask) || strings.Contains(v, "…") {
		return false // a one-letter metavariable (--token T), an ellipsis
	}
	switch v[0] {
	case '$', '%':
		return false
	case '/':
		return false
	case '<':
		return !strings.HasSuffix(v, ">")
	case '.', '~':
		if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/") {
			return false
		}
	case '{':
		// a template: {{ .x }}, {key}
		if strings.HasPrefix(v, "{{") || strings.HasSuffix(v, "}") && !strings.ContainsAny(v[1:len(v)-1], "{} ") {
			return false
		}
	}
	if strings.Trim(v, "*xX•.") == "" || codeLike(v) {
		return false
	}
	switch lowerASCII(v) {
	case "null", "nil", "none", "undefined", "true", "false", "string", "str", "bool",
		"boolean", "int", "number", "any", "object", "redacted", "required", "optional",
		"bearer", "basic", "await", "new", "function", "lambda", "async", "yield", "typeof":
		return false
	}
	return true
}

// codeLike: a call or an index in code, as in password =
// request.form["password"] or pw := filepath.Join(dir, "pw"): an
// identifier chain followed by ( or [.
func codeLike(v string) bool {
	k := strings.IndexAny(v, "([")
	if k <= 0 {
		return false
	}
	for i, part := range strings.Split(v[:k], ".") {
		if part == "" || i == 0 && digitByte(part[0]) {
			return false
		}
		for _, c := range []byte(part) {
			if !wordByte(c) && c != '$' {
				return false
			}
		}
	}
	return true
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// notKebab says s is not lower-case words joined by hyphens (a package
// name such as sk-video-processing-tools).
func notKebab(s string) bool {
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz-") != "" || !strings.Contains(strings.TrimPrefix(s, "sk-"), "-")
}

// Value patterns after a secret name or flag: double-, single- or
// backslash-double-quoted (a JSON document inside a string), or bare.
const (
	valQuoted = `"(?P<s>(?:[^"\\\n]|\\.)+)"|'(?P<s>[^'\n]+)'|\\"(?P<s>(?:[^"\\\n]|\\[^"\n])+)\\"`
	valBare   = "(?P<s>[^\\s\"'\\\\=&|;<>`({\\[#-][^\\s\"'\\\\&|;<>`]*)"
	// user:password after -u, --user=, -a
	userPassword = `(?:[ \t]+|=)?["']?[^\s:'"/]+:(?P<s>[^\s'"/][^\s'"]*)`
)

// nameTriggers: every name secretName accepts holds one of these.
var nameTriggers = []string{"pw", "key", "auth", "pass", "token", "secret", "credential"}

func azureByte(c byte) bool { return alnumByte(c) || c == '_' || c == '~' || c == '.' }

// bearerLike: a credential after "Bearer", not a word of prose.
func bearerLike(s string) bool { return len(s) >= 16 || (len(s) >= 6 && hasDigit(s)) }

// table holds the rules, in the order they run: multi-line blocks, then
// tokens whose shape gives them away anywhere, then secrets known by
// their context. A later rule leaves an earlier rule's mask alone. The
// table is static data: nothing runs at start-up.
var table = []rule{
	{
		name:      "PEM private key",
		triggers:  []string{"-----begin"},
		multiline: true,
		span:      64 << 10,
		// the body: base64, armor headers (Proc-Type: 4,ENCRYPTED),
		// escaped newlines; up to the END line or, in a key cut short,
		// the first character no key holds
		pattern: `-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<s>(?:[A-Za-z0-9+/=\s:,.\\]|-[A-Za-z0-9])+)`,
	},
	{
		name:     "Anthropic / OpenAI / OpenRouter / DeepSeek key",
		triggers: []string{"sk-"},
		pattern:  `sk-[A-Za-z0-9_\-]{20,}`,
		ok:       notKebab, // not sk-video-processing-tools
	},
	{name: "GitHub token", pattern: `gh[pousr]_[A-Za-z0-9]{30,}`, triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}},
	{name: "GitHub fine-grained token", pattern: `github_pat_[A-Za-z0-9_]{22,}`, triggers: []string{"github_pat_"}},
	{name: "AWS access key id", pattern: `(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b`, triggers: []string{"akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"}},
	{name: "Google API key", pattern: `AIza[0-9A-Za-z_\-]{35}`, triggers: []string{"aiza"}},
	{name: "Google OAuth client secret", pattern: `GOCSPX-[A-Za-z0-9_\-]{24,}`, triggers: []string{"gocspx-"}},
	{name: "Google OAuth access token", pattern: `ya29\.[0-9A-Za-z_\-]{20,}`, triggers: []string{"ya29."}},
	{name: "Slack token", pattern: `xox[abposrce]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{10,}`, triggers: []string{"xox", "xapp-"}},
	{name: "Slack webhook", pattern: `hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/]{16,})`, triggers: []string{"hooks.slack.com/"}},
	{name: "Discord webhook", pattern: `discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_\-]{20,})`, triggers: []string{"discord"}},
	{name: "Stripe secret key", pattern: `(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9+/]{24,}`, triggers: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"}},
	{name: "npm token", pattern: `npm_[A-Za-z0-9]{36,}`, triggers: []string{"npm_"}},
	{name: "Hugging Face token", pattern: `(?:hf|api_org)_[A-Za-z0-9]{30,}`, triggers: []string{"hf_", "api_org_"}},
	{name: "GitLab token", pattern: `gl(?:pat|dt|rt|ptt|cbt|imt|soat|ft|oas|agent|ffct|wt)-[0-9A-Za-z_\-]{20,}|GR1348941[0-9A-Za-z_\-]{20,}`, triggers: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "glsoat-", "glft-", "gloas-", "glagent-", "glffct-", "glwt-", "gr1348941"}},
	{name: "JWT", pattern: `eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`, triggers: []string{"eyj"}},
	{name: "Twilio API key", pattern: `SK[0-9a-f]{32}\b`, triggers: []string{"sk"}, pre: hex32After2},
	{name: "SendGrid key", pattern: `SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{30,}`, triggers: []string{"sg."}},
	{name: "DigitalOcean token", pattern: `do[opr]_v1_[a-f0-9]{64}`, triggers: []string{"do_v1_", "dop_v1_", "dor_v1_"}},
	{name: "Shopify token", pattern: `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, triggers: []string{"shp"}},
	{name: "PyPI token", pattern: `pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}`, triggers: []string{"pypi-"}},
	{name: "Docker Hub token", pattern: `dckr_pat_[A-Za-z0-9_\-]{20,}`, triggers: []string{"dckr_pat_"}},
	{name: "Atlassian API token", pattern: `ATATT3[A-Za-z0-9_\-=]{50,}`, triggers: []string{"atatt3"}},
	{name: "Databricks token", pattern: `dapi[a-f0-9]{32}(?:-\d)?\b`, triggers: []string{"dapi"}},
	{name: "Mailgun key", pattern: `key-[0-9a-f]{32}\b`, triggers: []string{"key-"}, pre: hex32After4},
	{name: "Postman key", pattern: `PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`, triggers: []string{"pmak-"}},
	{name: "Linear key", pattern: `lin_(?:api|oauth)_[A-Za-z0-9]{32,}`, triggers: []string{"lin_"}},
	{name: "Notion token", pattern: `(?:secret|ntn)_[A-Za-z0-9]{40,}`, triggers: []string{"secret_", "ntn_"}},
	{name: "Grafana token", pattern: `glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}\b|glc_[A-Za-z0-9+/]{32,}={0,2}`, triggers: []string{"glsa_", "glc_"}},
	{
		name:     "Azure AD client secret",
		triggers: []string{"q~"},
		back:     azureByte,
		pattern:  `[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}`,
	},
	{name: "age secret key", pattern: `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b`, triggers: []string{"age-secret-key-1"}},
	{name: "Heroku key", pattern: `HRKU-[A-Za-z0-9_\-]{20,}`, triggers: []string{"hrku-"}},
	{name: "Groq / Replicate / xAI / Perplexity key", pattern: `(?:gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|xai-[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,})`, triggers: []string{"gsk_", "r8_", "xai-", "pplx-"}},
	{name: "Square token", pattern: `sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}|EAAA[A-Za-z0-9_\-]{60,}`, triggers: []string{"sq0", "eaaa"}},
	{name: "Telegram bot token", triggers: []string{":aa"}, back: digitByte, pattern: `\d{8,10}:AA[0-9A-Za-z_\-]{33}\b`},
	{name: "Sentry token", pattern: `sntry[su]_[A-Za-z0-9+/=_]{40,}`, triggers: []string{"sntrys_", "sntryu_"}},
	{name: "Supabase token", pattern: `sbp_[a-f0-9]{40}\b`, triggers: []string{"sbp_"}},
	{name: "1Password service account token", pattern: `ops_[A-Za-z0-9_\-]{40,}`, triggers: []string{"ops_"}},
	{name: "Tailscale key", pattern: `tskey-(?:auth|api|client|webhook|scim)-[A-Za-z0-9]+-[A-Za-z0-9]+`, triggers: []string{"tskey-"}},
	{name: "Terraform Cloud token", triggers: []string{".atlasv1."}, back: alnumByte, pattern: `[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}`},
	{name: "Vault token", pattern: `hv[sbr]\.[A-Za-z0-9_\-]{24,}`, triggers: []string{"hvs.", "hvb.", "hvr."}},
	{name: "Pulumi token", pattern: `pul-[a-f0-9]{40}\b`, triggers: []string{"pul-"}},
	{name: "New Relic key", pattern: `NRAK-[A-Z0-9]{27}\b`, triggers: []string{"nrak-"}},
	{name: "Figma token", pattern: `figd_[A-Za-z0-9_\-]{40,}`, triggers: []string{"figd_"}},
	{name: "Doppler token", pattern: `dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}`, triggers: []string{"dp."}},
	{
		name:     "URL userinfo password",
		pre:      hasUserinfo,
		triggers: []string{"://"},
		back:     schemeByte,
		pattern:  `(?i)[a-z][a-z0-9+.\-]*://[^\s/?#@:'"]*:(?P<s>[^\s/?#'"]+)@`,
		ok:       maskable,
	},
	{
		name:     "Authorization header",
		pre:      assignedAfter,
		triggers: []string{"authorization"},
		back:     nameByte,
		pattern: `(?i)[a-z0-9_.\-]*authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?[ \t]*` +
			`(?:(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate|ntlm|hmac|otp|key)[ \t]+)?(?P<s>[^\s"'\\]+)`,
		ok: maskable,
	},
	{
		name:     "Bearer credential",
		pre:      blankAfter,
		triggers: []string{"bearer"},
		pattern:  `(?i)bearer[ \t]+(?P<s>[A-Za-z0-9._~+/\-]+=*)`,
		ok:       bearerLike,
	},
	{
		name:     "curl -u user:password",
		triggers: []string{"curl"},
		span:     2048,
		args:     []string{"--user", "--proxy-user", " -u", " -U", "u ", "u\t", "u'", "u\""},
		command:  `curl\b`,
		pattern:  `(?:^|\s)(?:-[a-zA-Z]*u|-U|--user|--proxy-user)` + userPassword,
		ok:       maskable,
	},
	{
		name:     "httpie -a user:password",
		triggers: []string{"http", "xh"},
		span:     2048,
		args:     []string{" -a", "--auth"},
		command:  `(?:xh|https?)[ \t]`,
		pattern:  `(?:^|\s)(?:-a|--auth)` + userPassword,
		ok:       maskable,
	},
	{
		name:     "mysql -pPASSWORD",
		triggers: []string{"mysql", "mariadb"},
		span:     2048,
		args:     []string{" -p"},
		command:  `(?:mysql|mariadb)[a-z\-]*\b`,
		pattern:  `(?:^|\s)-p(?:` + valQuoted + `|(?P<s>[^\s'"]+))`,
		ok:       maskable,
	},
	{
		name:     "sshpass -p",
		triggers: []string{"sshpass"},
		span:     2048,
		args:     []string{" -p"},
		command:  `sshpass\b`,
		pattern:  `(?:^|\s)-p[ \t]*(?:` + valQuoted + `|` + valBare + `)`,
		trim:     true,
		ok:       maskable,
	},
	{
		name:     "registry login -p",
		triggers: []string{"docker", "podman", "buildah", "nerdctl", "skopeo", "oras", "crane", "helm"},
		span:     2048,
		args:     []string{" -p"},
		command:  `(?:docker|podman|buildah|nerdctl|skopeo|oras|crane|helm\s+registry)\s+login\b`,
		pattern:  `(?:^|\s)-p[ \t]*(?:` + valQuoted + `|` + valBare + `)`,
		trim:     true,
		ok:       maskable,
	},
	{
		name:     "redis-cli -a",
		triggers: []string{"redis-cli"},
		span:     2048,
		args:     []string{" -a"},
		command:  `redis-cli\b`,
		pattern:  `(?:^|\s)-a[ \t]*(?:` + valQuoted + `|` + valBare + `)`,
		trim:     true,
		ok:       maskable,
	},
	{
		name:     "openssl pass:",
		triggers: []string{"pass:"},
		pattern:  `pass:(?:` + valQuoted + `|(?P<s>[^\s'"]+))`,
		ok:       maskable,
	},
	{
		name:     "config set NAME VALUE",
		triggers: []string{"set"},
		pre:      configSet,
		pattern:  `set[ \t]+(?:-[-A-Za-z]+[ \t]+)*[^\s=]+[ \t]+(?:` + valQuoted + `|` + valBare + `)`,
		trim:     true,
		ok:       maskable,
	},
	{
		name:     ".netrc password",
		args:     []string{" password"},
		triggers: []string{"login"},
		pattern:  `login\s+\S+\s+password\s+(?P<s>\S+)`,
		ok:       maskable,
	},
	{
		name:     "--password X, --token=X",
		triggers: []string{"pass", "token", "secret", "key"},
		back:     nameByte,
		pre:      flagThenValue,
		// the flag was tested by flagThenValue
		pattern: `--?[A-Za-z0-9\-]+(?:=|[ \t]+)(?:` + valQuoted + `|` + valBare + `)`,
		trim:    true,
		ok:      maskable,
	},
	{
		name:     "NAME=value, name: value, \"name\": \"value\"",
		triggers: nameTriggers,
		back:     nameByte,
		pre:      nameThenSep,
		// the name was tested by nameThenSep
		pattern: `[A-Za-z0-9_.\-]+\\?["']?[ \t]*(?::=|[:=])[ \t]*(?:` + valQuoted + `|` + valBare + `)`,
		trim:    true,
		ok:      maskable,
	},
}
