package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
)

// Fixtures are made at run time from a seed, so that this file holds no
// string a secret scanner would take for a live credential.
const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64url = alnum + "-_"
	hex    = "0123456789abcdef"
	upnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	digits = "0123456789"
)

// fake returns n characters of alphabet, pseudo-random from seed.
func fake(seed, alphabet string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	x := h.Sum64() | 1
	b := make([]byte, n)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = alphabet[x%uint64(len(alphabet))]
	}
	return string(b)
}

// secretCase: tmpl with § replaced by secret is the input; with §
// replaced by the mask, the exact output (the text around is kept).
type secretCase struct {
	name, tmpl, secret string
}

func pemBody(seed string) string {
	var lines []string
	for i := range 4 {
		lines = append(lines, fake(fmt.Sprint(seed, i), alnum+"+/", 64))
	}
	return strings.Join(lines, "\n")
}

func jwt(seed string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"`+fake(seed, digits, 10)+`","name":"a b","iat":1516239022}`)) + "." +
		fake(seed, b64url, 43)
}

func corpus() []secretCase {
	f := fake
	return []secretCase{
		// tokens known by their shape, wherever they are
		{"Anthropic API key", "using § now", "sk-ant-api03-" + f("ant", b64url, 93) + "AA"},
		{"OpenAI project key", "key: §\n", "sk-proj-" + f("oai-proj", b64url, 74)},
		{"OpenAI legacy key", "echo § | llm", "sk-" + f("oai1", alnum, 20) + "T3BlbkFJ" + f("oai2", alnum, 20)},
		{"OpenRouter key", "--header x §", "sk-or-v1-" + f("or", hex, 64)},
		{"DeepSeek key", "cfg(§)", "sk-" + f("ds", hex, 32)},
		{"GitHub classic PAT in a remote", "git push https://§@github.com/o/r.git", "ghp_" + f("ghp", alnum, 36)},
		{"GitHub OAuth token", "gh says §.", "gho_" + f("gho", alnum, 36)},
		{"GitHub app installation token", "[§]", "ghs_" + f("ghs", alnum, 36)},
		{"GitHub fine-grained PAT", "pat §\n", "github_pat_" + f("fg1", alnum, 22) + "_" + f("fg2", alnum, 59)},
		{"AWS access key id", "aws configure set § x", "AKIA" + f("akia", upnum, 16)},
		{"AWS STS key id", "id=§", "ASIA" + f("asia", upnum, 16)},
		{"Google API key", "maps?key2 §&x", "AIza" + f("aiza", b64url, 35)},
		{"Google OAuth client secret", "client §", "GOCSPX-" + f("gocspx", b64url, 28)},
		{"Google OAuth access token", "tok §", "ya29." + f("ya29", b64url, 80)},
		{"Slack bot token", "slack §", "xoxb-" + f("sb1", digits, 12) + "-" + f("sb2", digits, 13) + "-" + f("sb3", alnum, 24)},
		{"Slack user token", "slack §", "xoxp-" + f("sp1", digits, 12) + "-" + f("sp2", digits, 12) + "-" + f("sp3", digits, 13) + "-" + f("sp4", hex, 32)},
		{"Slack app token", "app §", "xapp-1-A" + f("xa1", upnum, 10) + "-" + f("xa2", digits, 13) + "-" + f("xa3", hex, 64)},
		{"Slack webhook", "curl https://hooks.slack.com/services/§ -d x", "T" + f("sw1", upnum, 8) + "/B" + f("sw2", upnum, 8) + "/" + f("sw3", alnum, 24)},
		{"Discord webhook", "post https://discord.com/api/webhooks/123456789012345678/§ ok", f("dw", b64url, 68)},
		{"Stripe live secret key", "stripe §", "sk_" + "live_" + f("skl", alnum, 24)},
		{"Stripe test secret key", "stripe §", "sk_" + "test_" + f("skt", alnum, 99)},
		{"Stripe restricted key", "stripe §", "rk_" + "live_" + f("rkl", alnum, 24)},
		{"Stripe webhook secret", "whsec: §", "whsec_" + f("whsec", alnum, 32)},
		{"npm token", "//registry.npmjs.org/:_password §", "npm_" + f("npm", alnum, 36)},
		{"Hugging Face token", "hf login §", "hf_" + f("hf", alnum, 34)},
		{"GitLab PAT", "glab §", "glpat-" + f("glpat", b64url, 20)},
		{"GitLab deploy token", "deploy §", "gldt-" + f("gldt", b64url, 20)},
		{"GitLab runner token", "runner §", "glrt-" + f("glrt", b64url, 20)},
		{"JWT", "cookie: session §; Path=/", jwt("jwt")},
		{"PEM RSA private key", "key.pem:\n-----BEGIN RSA PRIVATE KEY-----\n§\n-----END RSA PRIVATE KEY-----\ndone", pemBody("rsa")},
		{"PEM encrypted key", "-----BEGIN RSA PRIVATE KEY-----\n§\n-----END RSA PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + f("dek", hex, 32) + "\n\n" + pemBody("enc")},
		{"PEM OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\r\n§\r\n-----END OPENSSH PRIVATE KEY-----", strings.ReplaceAll(pemBody("ssh"), "\n", "\r\n")},
		{"PEM key in escaped JSON", `{"pem":"-----BEGIN EC PRIVATE KEY-----\n§\n-----END EC PRIVATE KEY-----\n"}`, f("ec1", alnum, 64) + `\n` + f("ec2", alnum, 20) + "=="},
		{"PEM key cut short", "x -----BEGIN PRIVATE KEY-----\n§\n", pemBody("cut")},
		{"PGP private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n§\n-----END PGP PRIVATE KEY BLOCK-----", pemBody("pgp") + "\n=" + f("crc", alnum, 4)},
		{"Twilio API key", "twilio §", "SK" + f("tw", hex, 32)},
		{"SendGrid key", "sg §", "SG." + f("sg1", b64url, 22) + "." + f("sg2", b64url, 43)},
		{"DigitalOcean token", "doctl §", "dop_v1_" + f("do", hex, 64)},
		{"Shopify token", "shop §", "shpat_" + f("shp", hex, 32)},
		{"PyPI token", "twine §", "pypi-AgEIcHlwaS5vcmc" + f("pypi", b64url, 70)},
		{"Docker Hub PAT", "hub §", "dckr_pat_" + f("dckr", b64url, 27)},
		{"Atlassian API token", "jira §", "ATATT3" + f("atatt", b64url, 180)},
		{"Databricks token", "dbx §", "dapi" + f("dapi", hex, 32)},
		{"Mailgun key", "mg §", "key-" + f("mg", hex, 32)},
		{"Postman key", "pm §", "PMAK-" + f("pm1", hex, 24) + "-" + f("pm2", hex, 34)},
		{"Linear key", "linear §", "lin_api_" + f("lin", alnum, 40)},
		{"Notion token", "notion §", "ntn_" + f("ntn", alnum, 46)},
		{"Grafana service account token", "grafana §", "glsa_" + f("glsa", alnum, 32) + "_" + f("glsa2", hex, 8)},
		{"Azure AD client secret", "az §", f("az1", alnum, 3) + "8Q~" + f("az2", alnum, 34)},
		{"age secret key", "age §", "AGE-SECRET-KEY-1" + f("age", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)},
		{"Groq key", "groq §", "gsk_" + f("gsk", alnum, 52)},
		{"Replicate token", "replicate §", "r8_" + f("r8", alnum, 37)},
		{"xAI key", "grok §", "xai-" + f("xai", alnum, 80)},
		{"Telegram bot token", "bot §", f("tg1", digits, 10) + ":AA" + f("tg2", b64url, 33)},
		{"Sentry org token", "sentry §", "sntrys_" + f("sentry", alnum, 60)},
		{"Supabase token", "supabase §", "sbp_" + f("sbp", hex, 40)},
		{"Tailscale auth key", "tailscale up --auth-key=§", "tskey-auth-" + f("ts1", alnum, 12) + "-" + f("ts2", alnum, 30)},
		{"Vault token", "vault §", "hvs." + f("hvs", b64url, 90)},
		{"Terraform Cloud token", "tfc §", f("tf1", alnum, 14) + ".atlasv1." + f("tf2", b64url, 67)},
		{"New Relic key", "nr §", "NRAK-" + f("nr", upnum, 27)},
		{"Figma token", "figma §", "figd_" + f("figma", b64url, 40)},
		{"Doppler token", "doppler §", "dp.pt." + f("dp", alnum, 43)},
		{"Square token", "square §", "sq0atp-" + f("sq", b64url, 22)},
		{"Heroku key", "heroku §", "HRKU-" + f("hrku", b64url, 60)},
		{"Pulumi token", "pulumi login --token §", "pul-" + f("pul", hex, 40)},
		{"Perplexity key", "pplx §", "pplx-" + f("pplx", alnum, 48)},
		{"Vault batch token", "vault §", "hvb." + f("hvb", b64url, 120)},
		{"Sentry user token", "sentry §", "sntryu_" + f("sntryu", hex, 64)},
		{"Grafana cloud token", "grafana §", "glc_" + f("glc", alnum, 40) + "=="},
		{"1Password service account token", "op §", "ops_" + f("ops", b64url, 60)},

		// secrets known by their context
		{"AWS_SECRET_ACCESS_KEY=", "export AWS_SECRET_ACCESS_KEY=§\naws s3 ls", f("aws", alnum+"+/", 40)},
		{"aws credentials file", "[default]\naws_secret_access_key = §\nregion = eu-west-1", f("awsc", alnum+"+/", 40)},
		{"DB_PASSWORD=", "DB_PASSWORD=§ ./migrate up", "Tr0ub4dor&3"[:8]},
		{"GITHUB_TOKEN= without a known prefix", "GITHUB_TOKEN=§ gh pr list", f("ght", alnum, 40)},
		{"OPENAI_API_KEY= without a known prefix", "env OPENAI_API_KEY=§ python app.py", f("oak", alnum, 32)},
		{"quoted env value with a space", "export PGPASSWORD='§' && psql", "correct horse"},
		{"MYSQL_PWD=", "MYSQL_PWD=§ mysqldump app", "s3cr3tpw"},
		{"SMTP_PASS=", "SMTP_PASS=§\n", "mailpass1"},
		{"JSON password in text", `{"user":"bob","password":"§","n":1}`, "hunter22"},
		{"JSON client_secret in text", `{"client_id":"abc","client_secret": "§"}`, f("cs", alnum, 32)},
		{"escaped JSON api_key", `echo "{\"api_key\":\"§\"}"`, f("esc", alnum, 24)},
		{"YAML secret", "auth:\n  secret: §\n  user: bob", "topsecret9"},
		{"Python keyword argument", `connect(host="db", password="§", port=5432)`, "pa55word"},
		{"camelCase JS field", `const cfg = { clientSecret: '§' };`, f("js", alnum, 20)},
		{"URL query token", "GET /cb?access_token=§&page=2", f("q", alnum, 30)},
		{"postgres URL password", "psql postgres://app:§@db.internal:5432/app", "pw-" + f("pg", alnum, 10)},
		{"redis URL password, no user", "redis-cli -u redis://:§@cache:6379", f("redis", alnum, 16)},
		{"git remote with x-access-token", "git clone https://x-access-token:§@github.com/o/r", f("xat", alnum, 40)},
		{"curl -u user:pw", "curl -u admin:§ https://api.example.com/x", "pa$$w0rd"},
		{"curl --user quoted", `curl -s --user 'admin:§' https://x/`, "s3cret!"},
		{"httpie -a", "http -a bob:§ example.org", "hunter22"},
		{"--password X", "app login --user bob --password § --verbose", "hunter22"},
		{"--password=X", "wget --user=bob --password=§ https://x/f", "hunter22"},
		{"--token X", "tool deploy --token § --env prod", f("tok", alnum, 24)},
		{"--api-key X", "cli --api-key=§", f("apk", alnum, 24)},
		{"mysql -pSECRET", "mysql -u root -p§ app", "rootpw1"},
		{"sshpass -p", "sshpass -p § ssh deploy@host", "sshpw42"},
		{"docker login -p", "docker login -u me -p § registry.example.com", "regpw123"},
		{"redis-cli -a", "redis-cli -h cache -a § ping", "redispw9"},
		{"openssl pass:", "openssl rsa -in k.pem -passin pass:§ -out k2.pem", "keypw77"},
		{"keytool -storepass", "keytool -list -keystore ks.jks -storepass §", "changeit"},
		{"Authorization: Bearer opaque", "curl -H 'Authorization: Bearer §' https://x", f("bear", b64url, 40)},
		{"Authorization: Basic", "Authorization: Basic §\r\nHost: x", base64.StdEncoding.EncodeToString([]byte("bob:hunter22"))},
		{"Authorization: token", `-H "Authorization: token §"`, f("authtok", alnum, 40)},
		{"X-API-Key header", "curl -H 'X-API-Key: §' https://x", f("xak", alnum, 32)},
		{"GitLab PRIVATE-TOKEN header", "--header \"PRIVATE-TOKEN: §\"", f("glh", alnum, 20)},
		{"bare Bearer", "Bearer §", f("bb", alnum+".", 30)},
		{".netrc", "machine api.example.com login bob password §", "netrcpw1"},
		{"kubectl --from-literal", "kubectl create secret generic db --from-literal=password=§", "kubepw12"},
		{"Azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=§;EndpointSuffix=core.windows.net", f("azs", alnum+"+/", 86) + "=="},
		{".npmrc _authToken", "//registry.npmjs.org/:_authToken=§", f("npmrc", alnum, 36)},
		{".npmrc _auth", "_auth=§", base64.StdEncoding.EncodeToString([]byte("bob:hunter22"))},
		{"Java toString", "Config{user=bob, password=§, port=5432}", "javapw1"},
		{"Go assignment", `apiKey := "§"`, f("goa", alnum, 32)},
		{"aws configure set", "aws configure set aws_secret_access_key § --profile dev", f("awsset", alnum+"+/", 40)},
		{"npm config set", "npm config set //registry.npmjs.org/:_authToken §", f("npmcfg", alnum, 36)},
		{"helm --set", "helm upgrade app ./chart --set auth.password=§ --wait", "helmpw12"},
		{"docker -e", "docker run -e POSTGRES_PASSWORD=§ postgres:16", "pgpw1234"},
		{"git http.extraheader", `git -c http.extraheader="AUTHORIZATION: basic §" clone x`, base64.StdEncoding.EncodeToString([]byte("x-access-token:" + f("xh", alnum, 20)))},
	}
}

// negatives: text that looks a little like a secret and must stay as is.
func negatives() []string {
	sha := fake("sha256", hex, 64)
	return []string{
		"sha256:" + sha,
		"image@sha256:" + sha,
		sha + "  go.sum",
		"sha1 " + fake("sha1", hex, 40),
		"commit " + fake("commit", hex, 40) + " (HEAD -> main)",
		"git show " + fake("short", hex, 7),
		"session 5f0e2c71-8a4b-4d3e-9c1a-2b7d6e9f0a13 started",
		`{"session_id":"5f0e2c71-8a4b-4d3e-9c1a-2b7d6e9f0a13"}`,
		"ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"toolu_01HkQ7v3mXbN2pR8sT4uW6yZ",
		base64.StdEncoding.EncodeToString([]byte("Hello, world! This is ordinary text, nothing secret here.")),
		"integrity sha512-" + base64.StdEncoding.EncodeToString([]byte(fake("integrity", alnum, 64))),
		"eyJhIjoxfQ==",
		"/home/dev/.ssh/id_ed25519",
		"src/auth/token.go:12: func refreshToken()",
		"~/.aws/credentials",
		"/etc/secrets/db-password",
		"cat /run/secrets/api_key",
		"v1.2.3", "go1.26.8 linux/amd64", "node v20.11.1", "sitter 0.4.0-rc.1+build.5",
		"password_reset_url=/x",
		"max_tokens=4096 temperature=0.2",
		`{"max_tokens": 1024, "token_count": 3, "input_tokens": 12}`,
		"token_count: 12",
		"token_type=bearer",
		"secret_name=db-creds",
		"token_url=https://auth.example.com/oauth/token",
		"gh auth login --with-token < token.txt",
		"tool --token-file /run/token",
		"echo $PW | docker login --password-stdin -u bob",
		"PWD=/home/dev/acme OLDPWD=/tmp",
		"git push -u origin main",
		"docker run -u 1000:1000 alpine id",
		"mysql -u root -p app",
		"ssh git@github.com",
		"git clone git@github.com:org/repo.git",
		"https://github.com/org/repo/pull/12",
		"postgres://app@localhost/app",
		"http://[::1]:8080/health",
		"curl -fsSL https://example.com/install.sh | sh",
		"mail bob@example.com",
		"the key is in the drawer",
		"Bearer tokens expire after an hour",
		"Authorization: Bearer <token>",
		"disk-usage-report-for-the-cluster-2024",
		"pip install scikit-learn sk-video-processing-tools",
		"password: ${DB_PASSWORD}",
		"token: ${{ secrets.GITHUB_TOKEN }}",
		"api_key=$API_KEY ./run",
		"password: \"\"",
		"password: null",
		"bypass=true compass=north keyboard=us monkey=banana",
		"passport_number=X primary_key: id sort_key=name",
		"public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + fake("pub", alnum, 43),
		"-----BEGIN PUBLIC KEY-----\n" + fake("pubkey", alnum, 64) + "\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----\n" + fake("cert", alnum, 64) + "\n-----END CERTIFICATE-----",
		"npm test -- --runInBand src/orders",
		"go test ./... -run TestToken -count=1",
		"Password: ",
		"if password == confirm {",
		`password = request.form["password"]`,
		"token := r.Header.Get(\"X-Token\")",
		"const token = await getToken();",
		"secret = os.environ['SECRET']",
		"token: string; password?: string",
		"git config set user.name bob",
		`"../../etc/passwd": path traversal (..) is not allowed`,
		`auth: "x-api-key"`,
		`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`,
		`"options":{"baseURL":"{baseURL}","apiKey":"{key}"}`,
		"sitter proxy [--token T | --token-file F]",
		"export OPENAI_API_KEY=…",
		"pw := filepath.Join(dir, \"pw\")",
		"password: # set below",
		`env = append(env, "GEMINI_API_KEY="+key, "HOME="+home)`,
		"postgres://user:…@host",
		"npm config set registry https://registry.npmjs.org/",
		"ls -la",
	}
}

// TestChaosRedactionCorpus: every secret format in the corpus is masked
// with the text around it kept exactly, in text and inside a JSON
// document; masking twice changes nothing; the negatives stay visible,
// alone and among the secrets; every rule has a case. It prints nothing
// on success.
func TestChaosRedactionCorpus(t *testing.T) {
	cs := corpus()
	t.Run("formats", func(t *testing.T) {
		if len(cs) < 40 {
			t.Fatalf("corpus has %d formats, want at least 40", len(cs))
		}
		for _, c := range cs {
			testFormat(t, c)
		}
	})
	t.Run("negatives", func(t *testing.T) {
		for _, n := range negatives() {
			if got, red := String(n); got != n || red {
				t.Errorf("negative changed:\n  in  %q\n  got %q", n, got)
			}
			doc, _ := json.Marshal(map[string]any{"tool_input": map[string]any{"command": n}})
			if got, red, err := JSON(doc); err != nil || red || string(got) != string(doc) {
				t.Errorf("negative changed in JSON: %s → %s", doc, got)
			}
		}
	})
	t.Run("one_text", func(t *testing.T) {
		// all at once, one per line: each masked, nothing else touched
		var in, want strings.Builder
		for _, n := range negatives() {
			in.WriteString(n + "\n")
			want.WriteString(n + "\n")
		}
		for _, c := range cs {
			in.WriteString(strings.Replace(c.tmpl, "§", c.secret, 1) + "\n")
			want.WriteString(strings.Replace(c.tmpl, "§", mask, 1) + "\n")
		}
		if got, _ := String(in.String()); got != want.String() {
			gl, wl := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Errorf("line %d = %q, want %q", i+1, gl[i], wl[i])
					break
				}
			}
			if len(gl) != len(wl) {
				t.Errorf("%d lines, want %d", len(gl), len(wl))
			}
		}
	})
	t.Run("json_keys", testJSONKeys)
	t.Run("every_rule", func(t *testing.T) { testEveryRuleTried(t, cs) })
}

// testFormat: the secret is masked and the text around it kept exactly,
// in text and inside a JSON document; masking twice changes nothing.
func testFormat(t *testing.T, c secretCase) {
	if !strings.Contains(c.tmpl, "§") || c.secret == "" {
		t.Fatalf("%s: bad case", c.name)
	}
	in := strings.Replace(c.tmpl, "§", c.secret, 1)
	want := strings.Replace(c.tmpl, "§", mask, 1)
	got, red := String(in)
	if got != want || !red {
		t.Errorf("%s:\n  in   %q\n  got  %q %v\n  want %q", c.name, in, got, red, want)
		return
	}
	if again, red := String(got); again != got || red {
		t.Errorf("%s: masking twice changed %q to %q", c.name, got, again)
	}
	doc, _ := json.Marshal(map[string]any{"tool_input": map[string]any{"command": in}, "n": 1})
	out, red, err := JSON(doc)
	if err != nil || !red || !json.Valid(out) {
		t.Errorf("%s: JSON: %v %v %s", c.name, red, err, out)
		return
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Errorf("%s: JSON: %v", c.name, err)
		return
	}
	if cmd := back["tool_input"].(map[string]any)["command"]; cmd != want {
		t.Errorf("%s: JSON command = %q, want %q", c.name, cmd, want)
	}
}

// testEveryRuleTried: each rule of the table masks some corpus case on
// its own, so the corpus and the table do not drift apart.
func testEveryRuleTried(t *testing.T, cs []secretCase) {
	for k := range table {
		tried := false
		for _, c := range cs {
			in := strings.Replace(c.tmpl, "§", c.secret, 1)
			var hs []hit
			for _, h := range scan(in) {
				if h.r == k {
					hs = append(hs, h)
				}
			}
			if _, red := table[k].apply(in, hs); red {
				tried = true
				break
			}
		}
		if !tried {
			t.Errorf("no corpus case for rule %q", table[k].name)
		}
	}
}

// testJSONKeys: a string under a key that names a secret is masked whole,
// whatever it looks like; keys that only look alike are not.
func testJSONKeys(t *testing.T) {
	in := `{"password":"hunter22","client_secret":"abc def","token":"t0k3n","api_key":"k1","apiKey":"k2",` +
		`"secret":"s3","private_key":"-----BEGIN","authorization":"Bearer x","access_token":"a4","refresh_token":"r5",` +
		`"x-api-key":"h6","db":{"PASSWORD":"p7"},"env":[{"name":"DB_PASSWORD","value":"p8"},{"name":"HOME","value":"/root"}],` +
		`"max_tokens":1024,"token_count":3,"password_reset_url":"/x","secret_name":"db","public_key":"ssh-ed25519 AAAA",` +
		`"primary_key":"id","session_id":"5f0e2c71-8a4b-4d3e-9c1a-2b7d6e9f0a13","token_type":"Bearer","auth":{"type":"oauth"},` +
		`"secret_ref":"${{ secrets.X }}","password2":"","auth":"x-api-key","apiKey2":"{key}","token3":"…"}`
	out, red, err := JSON([]byte(in))
	if err != nil || !red {
		t.Fatalf("JSON keys: %v %v", red, err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"password", "client_secret", "token", "api_key", "apiKey", "secret", "private_key",
		"authorization", "access_token", "refresh_token", "x-api-key"} {
		if got[k] != mask {
			t.Errorf("JSON key %q: %v, want masked", k, got[k])
		}
	}
	if v := got["db"].(map[string]any)["PASSWORD"]; v != mask {
		t.Errorf("nested PASSWORD: %v", v)
	}
	env := got["env"].([]any)
	if v := env[0].(map[string]any)["value"]; v != mask {
		t.Errorf("name/value DB_PASSWORD: %v", v)
	}
	if v := env[1].(map[string]any)["value"]; v != "/root" {
		t.Errorf("name/value HOME: %v", v)
	}
	want := map[string]any{"password_reset_url": "/x", "secret_name": "db", "public_key": "ssh-ed25519 AAAA",
		"primary_key": "id", "session_id": "5f0e2c71-8a4b-4d3e-9c1a-2b7d6e9f0a13", "token_type": "Bearer",
		"secret_ref": "${{ secrets.X }}", "password2": "", "auth": "x-api-key", "apiKey2": "{key}", "token3": "…"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("JSON key %q: %v, want %v", k, got[k], v)
		}
	}
}

// event1MB is a canonical PreToolUse event of about 1 MB: a Write of a
// source file with a secret every 200 lines.
func event1MB() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		switch {
		case i%200 == 7:
			fmt.Fprintf(&b, "\tclient := api.New(\"sk-proj-%s\") // line %d\n", fake(fmt.Sprint(i), b64url, 48), i)
		case i%200 == 99:
			fmt.Fprintf(&b, "DB_PASSWORD=%s\n", fake(fmt.Sprint(i), alnum, 16))
		case i%10 == 3:
			fmt.Fprintf(&b, "\t// see https://example.com/docs/%d for the key format and the token flow\n", i)
		default:
			fmt.Fprintf(&b, "\tx%d := compute(ctx, %q, %d) // sha %s\n", i, "item", i, fake(fmt.Sprint(i), hex, 40))
		}
	}
	doc, _ := json.Marshal(map[string]any{
		"harness": "claude-code", "phase": "preToolUse", "session": map[string]any{"id": "5f0e2c71-8a4b-4d3e-9c1a-2b7d6e9f0a13"},
		"tool": map[string]any{"kind": "write", "input": map[string]any{"file_path": "/home/dev/acme/main.go", "content": b.String()}},
	})
	return doc
}

func BenchmarkJSON1MB(b *testing.B) {
	doc := event1MB()
	if _, red, err := JSON(doc); err != nil || !red {
		b.Fatal(red, err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		JSON(doc)
	}
}

func BenchmarkString1MB(b *testing.B) {
	s := string(event1MB())
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		String(s)
	}
}

// BenchmarkStringClean: a short command with nothing to mask, the audit
// log's common case on the hook path.
func BenchmarkStringClean(b *testing.B) {
	for b.Loop() {
		String("npm test -- --runInBand src/orders")
	}
}
