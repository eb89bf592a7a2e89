package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// mask replaces every secret.
const mask = "[REDACTED]"

// A rule finds one family of secrets. Its regexp is compiled the first
// time a text holds one of its triggers, and only the lines holding a
// trigger are searched, so text without secrets costs a few substring
// scans and the hook path compiles nothing it does not need.
type rule struct {
	name     string   // what it finds, for tests and docs
	triggers []string // lower-case substrings, one of which every match holds
	pattern  string   // groups named s are the secret (else the whole match)
	whole    bool     // matches span lines: search the whole text
	trim     bool     // an unquoted value: trailing ,.;)]} stay visible
	ok       func(secret string) bool

	once   sync.Once
	re     *regexp.Regexp
	groups []int // indexes of the groups named s
}

func (r *rule) compiled() (*regexp.Regexp, []int) {
	r.once.Do(func() {
		r.re = regexp.MustCompile(r.pattern)
		for i, n := range r.re.SubexpNames() {
			if n == "s" {
				r.groups = append(r.groups, i)
			}
		}
	})
	return r.re, r.groups
}

// present says whether low (the text, ASCII lower-cased) holds a trigger.
func (r *rule) present(low string) bool {
	for _, t := range r.triggers {
		if strings.Contains(low, t) {
			return true
		}
	}
	return false
}

// apply masks the rule's secrets in s (low is s lower-cased byte for byte).
func (r *rule) apply(s, low string) (string, bool) {
	re, groups := r.compiled()
	var b strings.Builder
	last := 0
	for _, w := range r.windows(s, low) {
		for _, m := range re.FindAllStringSubmatchIndex(s[w[0]:w[1]], -1) {
			a, e := m[0], m[1]
			for _, g := range groups {
				if a, e = m[2*g], m[2*g+1]; a >= 0 {
					break
				}
			}
			if a < 0 {
				continue
			}
			a, e = a+w[0], e+w[0]
			if strings.HasPrefix(s[a:e], mask) {
				continue
			}
			if r.whole { // a block keeps its first and last line breaks
				a, e = trimBreaks(s, a, e)
			}
			if r.trim {
				for e > a && strings.IndexByte(",.;)]}", s[e-1]) >= 0 {
					e--
				}
			}
			sec := s[a:e]
			if a < last || e == a || (r.ok != nil && !r.ok(sec)) {
				continue
			}
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:a])
			b.WriteString(mask)
			last = e
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

// windows returns the sorted, disjoint byte ranges to search: the lines
// holding a trigger, or the whole text for a rule whose matches span lines.
func (r *rule) windows(s, low string) [][2]int {
	if r.whole || !strings.Contains(s, "\n") {
		return [][2]int{{0, len(s)}}
	}
	var ws [][2]int
	for _, t := range r.triggers {
		for i := 0; i < len(s); {
			j := strings.Index(low[i:], t)
			if j < 0 {
				break
			}
			j += i
			a := strings.LastIndexByte(s[:j], '\n') + 1
			e := strings.IndexByte(s[j:], '\n')
			if e < 0 {
				e = len(s)
			} else {
				e += j
			}
			ws = append(ws, [2]int{a, e})
			i = e + 1
		}
	}
	slices.SortFunc(ws, func(x, y [2]int) int { return x[0] - y[0] })
	out := ws[:0]
	for _, w := range ws {
		if n := len(out); n > 0 && w[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
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
// nameWhole (auth, DB_PASS), or ends with _, - or . and one of nameSep
// (MYSQL_PWD, but not the shell's PWD). password_reset_url, max_tokens,
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
	nameWhole = []string{"auth", "pass", "pw"}
	nameSep   = []string{"pwd"}
)

// allNameAny is nameAny plus every <prefix>[sep]key.
var allNameAny = sync.OnceValue(func() []string {
	out := slices.Clone(nameAny)
	for _, p := range keyPrefixes {
		for _, sep := range []string{"", "_", "-", "."} {
			out = append(out, p+sep+"key")
		}
	}
	return out
})

// secretName says whether a key or variable name names a secret.
func secretName(name string) bool {
	n := lowerASCII(name)
	for _, w := range allNameAny() {
		if strings.HasSuffix(n, w) {
			return true
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
	if v == "" || strings.HasPrefix(v, mask) {
		return false
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
		if strings.HasPrefix(v, "{{") {
			return false
		}
	}
	if strings.Trim(v, "*xX•.") == "" {
		return false
	}
	switch lowerASCII(v) {
	case "null", "nil", "none", "undefined", "true", "false", "string", "str", "bool",
		"boolean", "int", "number", "any", "object", "redacted", "required", "optional",
		"bearer", "basic":
		return false
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
	valBare   = "(?P<s>[^\\s\"'\\\\=&|;<>`-][^\\s\"'\\\\&|;<>`]*)"
	// a command line's arguments up to the end of that command
	argsTo = `[^\n|;&]*?`
)

func alt(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = regexp.QuoteMeta(w)
	}
	return strings.Join(q, "|")
}

// token is a rule for a token with a known shape.
func token(name, pattern string, triggers ...string) *rule {
	return &rule{name: name, pattern: pattern, triggers: triggers}
}

// rules, in the order they run: multi-line blocks, then tokens whose
// shape gives them away anywhere, then secrets known by their context.
// A later rule leaves an earlier rule's mask alone.
var rules = sync.OnceValue(func() []*rule {
	names := `(?:[a-z0-9_.\-]*(?:` + alt(allNameAny()) + `)` +
		`|(?:[a-z0-9_.\-]*[_.\-])?(?:` + alt(nameWhole) + `)` +
		`|[a-z0-9_.\-]*[_.\-](?:` + alt(nameSep) + `))`
	var nameTriggers []string
	words := slices.Concat(nameAny, []string{"key"}, nameWhole, nameSep)
	slices.SortStableFunc(words, func(a, b string) int { return len(a) - len(b) })
	for _, w := range words {
		if !slices.ContainsFunc(nameTriggers, func(t string) bool { return strings.Contains(w, t) }) {
			nameTriggers = append(nameTriggers, w)
		}
	}
	return []*rule{
		{
			name:     "PEM private key",
			triggers: []string{"private key"},
			whole:    true,
			// the body: base64, armor headers (Proc-Type: 4,ENCRYPTED),
			// escaped newlines; up to the END line or, in a key cut short,
			// the first character no key holds
			pattern: `-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<s>(?:[A-Za-z0-9+/=\s:,.\\]|-[A-Za-z0-9])+)`,
		},
		{
			name:     "Anthropic / OpenAI / OpenRouter / DeepSeek key",
			triggers: []string{"sk-"},
			pattern:  `\bsk-[A-Za-z0-9_\-]{20,}`,
			ok:       notKebab, // not sk-video-processing-tools
		},
		token("GitHub token", `\bgh[pousr]_[A-Za-z0-9]{30,}`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
		token("GitHub fine-grained token", `\bgithub_pat_[A-Za-z0-9_]{22,}`, "github_pat_"),
		token("AWS access key id", `\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b`,
			"akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"),
		token("Google API key", `\bAIza[0-9A-Za-z_\-]{35}`, "aiza"),
		token("Google OAuth client secret", `\bGOCSPX-[A-Za-z0-9_\-]{24,}`, "gocspx-"),
		token("Google OAuth access token", `\bya29\.[0-9A-Za-z_\-]{20,}`, "ya29."),
		token("Slack token", `\bxox[abposrce]-[A-Za-z0-9\-]{10,}|\bxapp-\d-[A-Za-z0-9\-]{10,}`, "xox", "xapp-"),
		token("Slack webhook", `hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/]{16,})`, "hooks.slack.com/"),
		token("Discord webhook", `discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_\-]{20,})`, "/api/webhooks/"),
		token("Stripe secret key", `\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|\bwhsec_[A-Za-z0-9+/]{24,}`, "sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"),
		token("npm token", `\bnpm_[A-Za-z0-9]{36,}`, "npm_"),
		token("Hugging Face token", `\b(?:hf|api_org)_[A-Za-z0-9]{30,}`, "hf_", "api_org_"),
		token("GitLab token", `\bgl(?:pat|dt|rt|ptt|cbt|imt|soat|ft|oas|agent|ffct|wt)-[0-9A-Za-z_\-]{20,}|\bGR1348941[0-9A-Za-z_\-]{20,}`, "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "glsoat-", "glft-", "gloas-", "glagent-", "glffct-", "glwt-", "gr1348941"),
		token("JWT", `\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`, "eyj"),
		token("Twilio API key", `\bSK[0-9a-f]{32}\b`, "sk"),
		token("SendGrid key", `\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{30,}`, "sg."),
		token("DigitalOcean token", `\bdo[opr]_v1_[a-f0-9]{64}`, "do_v1_", "dop_v1_", "dor_v1_"),
		token("Shopify token", `\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, "shp"),
		token("PyPI token", `\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}`, "pypi-"),
		token("Docker Hub token", `\bdckr_pat_[A-Za-z0-9_\-]{20,}`, "dckr_pat_"),
		token("Atlassian API token", `\bATATT3[A-Za-z0-9_\-=]{50,}`, "atatt3"),
		token("Databricks token", `\bdapi[a-f0-9]{32}(?:-\d)?\b`, "dapi"),
		token("Mailgun key", `\bkey-[0-9a-f]{32}\b`, "key-"),
		token("Postman key", `\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`, "pmak-"),
		token("Linear key", `\blin_(?:api|oauth)_[A-Za-z0-9]{32,}`, "lin_"),
		token("Notion token", `\b(?:secret|ntn)_[A-Za-z0-9]{40,}`, "secret_", "ntn_"),
		token("Grafana token", `\bglsa_[A-Za-z0-9]{32}_[a-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}`, "glsa_", "glc_"),
		token("Azure AD client secret", `\b[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}`, "q~"),
		token("age secret key", `\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b`, "age-secret-key-1"),
		token("Heroku key", `\bHRKU-[A-Za-z0-9_\-]{20,}`, "hrku-"),
		token("Groq / Replicate / xAI / Perplexity key", `\b(?:gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|xai-[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,})`, "gsk_", "r8_", "xai-", "pplx-"),
		token("Square token", `\bsq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}|\bEAAA[A-Za-z0-9_\-]{60,}`, "sq0", "eaaa"),
		token("Telegram bot token", `\b\d{8,10}:AA[0-9A-Za-z_\-]{33}\b`, ":aa"),
		token("Sentry token", `\bsntry[su]_[A-Za-z0-9+/=_]{40,}`, "sntrys_", "sntryu_"),
		token("Supabase token", `\bsbp_[a-f0-9]{40}\b`, "sbp_"),
		token("1Password service account token", `\bops_[A-Za-z0-9_\-]{40,}`, "ops_"),
		token("Tailscale key", `\btskey-(?:auth|api|client|webhook|scim)-[A-Za-z0-9]+-[A-Za-z0-9]+`, "tskey-"),
		token("Terraform Cloud token", `\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}`, ".atlasv1."),
		token("Vault token", `\bhv[sbr]\.[A-Za-z0-9_\-]{24,}`, "hvs.", "hvb.", "hvr."),
		token("Pulumi token", `\bpul-[a-f0-9]{40}\b`, "pul-"),
		token("New Relic key", `\bNRAK-[A-Z0-9]{27}\b`, "nrak-"),
		token("Figma token", `\bfigd_[A-Za-z0-9_\-]{40,}`, "figd_"),
		token("Doppler token", `\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}`, "dp."),
		{
			name:     "URL userinfo password",
			triggers: []string{"://"},
			pattern:  `(?i)\b[a-z][a-z0-9+.\-]*://[^\s/?#@:'"]*:(?P<s>[^\s/?#'"]+)@`,
		},
		{
			name:     "Authorization header",
			triggers: []string{"authorization"},
			pattern: `(?i)\bauthorization\\?["']?[ \t]*[:=][ \t]*\\?["']?[ \t]*` +
				`(?:(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate|ntlm|hmac|otp|key)[ \t]+)?(?P<s>[^\s"'\\]+)`,
			ok: maskable,
		},
		{
			name:     "Bearer credential",
			triggers: []string{"bearer"},
			pattern:  `(?i)\bbearer[ \t]+(?P<s>[A-Za-z0-9._~+/\-]+=*)`,
			ok:       func(s string) bool { return len(s) >= 16 || (len(s) >= 6 && hasDigit(s)) },
		},
		{
			name:     "curl/httpie -u user:password",
			triggers: []string{"curl", "http", "xh"},
			pattern: `\b(?:curl\b` + argsTo + `\s(?:-[a-zA-Z]*u|-U|--user|--proxy-user)|(?:xh|https?)\b` + argsTo + `\s(?:-a|--auth))` +
				`(?:[ \t]+|=)?["']?[^\s:'"/]+:(?P<s>[^\s'"/][^\s'"]*)`,
			ok: maskable,
		},
		{
			name:     "mysql -pPASSWORD",
			triggers: []string{"mysql", "mariadb"},
			pattern:  `\b(?:mysql|mariadb)[a-z\-]*\b` + argsTo + `\s-p(?:` + valQuoted + `|(?P<s>[^\s'"]+))`,
			ok:       maskable,
		},
		{
			name:     "sshpass -p / registry login -p / redis-cli -a",
			triggers: []string{"sshpass", "login", "redis-cli"},
			pattern: `(?:\bsshpass\b` + argsTo + `\s-p|\b(?:docker|podman|buildah|nerdctl|skopeo|oras|crane|helm\s+registry)\s+login\b` + argsTo + `\s-p|\bredis-cli\b` + argsTo + `\s-a)` +
				`[ \t]*(?:` + valQuoted + `|` + valBare + `)`,
			trim: true,
			ok:   maskable,
		},
		{
			name:     "openssl pass:",
			triggers: []string{"pass:"},
			pattern:  `(?:^|\s)pass:(?:` + valQuoted + `|(?P<s>[^\s'"]+))`,
			ok:       maskable,
		},
		{
			name:     ".netrc password",
			triggers: []string{"password"},
			pattern:  `\blogin\s+\S+\s+password\s+(?P<s>\S+)`,
			ok:       maskable,
		},
		{
			name:     "--password X, --token=X",
			triggers: []string{"pass", "token", "secret", "key"},
			pattern: `(?i)(?:^|\s)--?(?:[a-z0-9\-]*(?:password|passwd|passphrase|token|secret|api-?key|access-?key|secret-?key|auth-?key)|(?:src|dest)?(?:store|key)?pass)` +
				`(?:=|[ \t]+)(?:` + valQuoted + `|` + valBare + `)`,
			trim: true,
			ok:   maskable,
		},
		{
			name:     "NAME=value, name: value, \"name\": \"value\"",
			triggers: nameTriggers,
			pattern: `(?i)(?:^|[^a-z0-9_.\-])` + names + `\\?["']?[ \t]*(?::=|[:=])[ \t]*` +
				`(?:` + valQuoted + `|` + valBare + `)`,
			trim: true,
			ok:   maskable,
		},
	}
})
