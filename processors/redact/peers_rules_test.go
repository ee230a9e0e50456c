package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// Rules added to agree with other projects' suites (issue 11, secrets):
// each with texts where it must fire and texts where it must not. Values
// are fake and built at run time.

var (
	pr       = rand.New(rand.NewPCG(11, 17))
	prTok    = randMixed(pr, alnum, 32)
	prPw     = "Qz7#" + randMixed(pr, alnum, 10)
	prHex32  = randFrom(pr, hexLower, 32)
	prUUID4  = randFrom(pr, hexLower, 8) + "-" + randFrom(pr, hexLower, 4) + "-4" + randFrom(pr, hexLower, 3) + "-a" + randFrom(pr, hexLower, 3) + "-" + randFrom(pr, hexLower, 12)
	prSym    = "m{{h}o)p${e]n" + randMixed(pr, alnum, 12) + "(x[y>-_$#z}}"
	prPyPI   = "pypi-AgENdGVzdC5weXBpLm9yZw" + randMixed(pr, urlsafe, 120)
	prSlack  = "xoxp-" + randFrom(pr, digits, 6) + "-" + randFrom(pr, digits, 6) + "-" + randFrom(pr, digits, 6) + "-" + randFrom(pr, hexLower, 18) + "1a"
	prChimp  = prHex32 + "-us12"
	prIDB64  = base64.RawStdEncoding.EncodeToString([]byte("1" + randFrom(pr, digits, 17)))
	prDisc   = prIDB64 + "." + randMixed(pr, urlsafe, 6) + "." + randMixed(pr, urlsafe, 27)
	prJWTHdr = base64.RawURLEncoding.EncodeToString([]byte(`{"typ":"JWT","alg":"HS256"}`))
	prJWTPay = base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"` + randFrom(pr, digits, 10) + `","name":"Ann Lee"}`))
	prJWTUns = prJWTHdr + "." + prJWTPay
	prTeams  = prUUIDish(pr) + "@" + prUUIDish(pr) + "/IncomingWebhook/" + randFrom(pr, hexLower, 32) + "/" + prUUIDish(pr)
	prK8sB64 = base64.StdEncoding.EncodeToString([]byte("s3cr3t-" + randMixed(pr, alnum, 20)))
)

func prUUIDish(r *rand.Rand) string {
	return randFrom(r, hexLower, 8) + "-" + randFrom(r, hexLower, 4) + "-" + randFrom(r, hexLower, 4) + "-" + randFrom(r, hexLower, 4) + "-" + randFrom(r, hexLower, 12)
}

func TestPeerRulesFire(t *testing.T) {
	r := newTestRedactor(t)
	cases := []secretCase{
		// A value on the line after its key or between XML tags on their own lines.
		{"xml element on its own line", "<apiToken>\n    " + prTok + "\n</apiToken>", []string{prTok}, "secret-assignment"},
		{"yaml value on the next line", "auth:\n  api_token:\n    " + prTok + "\n  user: x", []string{prTok}, "secret-assignment"},
		{"yaml block scalar", "client_secret: |\n  " + prTok + "\n", []string{prTok}, "secret-assignment"},
		{"assignment continued on the next line", "password =\n    \"" + prPw + "\"", []string{prPw}, "password-assignment"},

		// A keyword beside a value with no = or :.
		{"comparison name first", `if (api_key == "` + prTok + `") {`, []string{prTok}, "secret-assignment"},
		{"comparison literal first", `if ("` + prPw + `" !== password) {`, []string{prPw}, "password-assignment"},
		{"strict comparison", `assert secret === '` + prTok + `'`, []string{prTok}, "secret-assignment"},
		{"quoted value beside its name", `password "` + prPw + `";`, []string{prPw}, "password-assignment"},
		{"config line", "requirepass 1\n\tpassword " + prPw + "\n", []string{prPw}, "password-assignment"},
		{"c array", `static const char password[32] = "` + prPw + `";`, []string{prPw}, "password-assignment"},
		{"objective-c literal", `NSString *password = @"` + prPw + `";`, []string{prPw}, "password-assignment"},
		{"symbols no code nests this way", "db_pass: " + prSym + ",", []string{prSym}, "password-assignment"},
		{"symbols in a secret", "api_key = '" + prSym + "'", []string{prSym}, "secret-assignment"},
		{"spanish name", `contrasena = "` + prPw + `"`, []string{prPw}, "password-assignment"},
		{"portuguese name", "senha: " + prPw, []string{prPw}, "password-assignment"},
		{"secreto", `SECRETO = "` + prTok + `"`, []string{prTok}, "secret-assignment"},
		{"short pw suffix", "cloudant_pw='" + prPw + "'", []string{prPw}, "password-assignment"},
		{"npmrc auth token", "//registry.npmjs.org/:_authToken=" + prUUID4, []string{prUUID4}, "secret-assignment"},

		// Kubernetes Secret manifests, whatever the keys are named.
		{"k8s secret yaml", "apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  # comment\n  tls.key: " + prK8sB64 + "\n  user: YWRtaW4=\nmetadata:\n  name: x\n", []string{prK8sB64}, "kubernetes-secret-data"},
		{"k8s secret yaml kind after data", "apiVersion: v1\ndata:\n\tconfig: '" + prK8sB64 + "'\nkind: 'Secret'\n", []string{prK8sB64}, "kubernetes-secret-data"},
		{"k8s secret block scalar", "kind: Secret\ndata:\n  blob: |\n    " + prK8sB64 + "\n", []string{prK8sB64}, "kubernetes-secret-data"},
		{"k8s stringData", "kind: Secret\nstringData:\n  conn: " + prPw + "\n", []string{prPw}, "kubernetes-secret-data"},
		{"kubectl json", `{"apiVersion": "v1", "data": {"ca.crt": "` + prK8sB64 + `", "x": "` + prK8sB64 + `"}, "kind": "Secret"}`, []string{prK8sB64}, "kubernetes-secret-data"},

		// A rule whose first group is a repeated fragment removes its whole match.
		{"teams webhook whole", "hook: https://acme.webhook.office.com/webhookb2/" + prTeams + " done", []string{prTeams}, "microsoft-teams-webhook"},

		// Vendor formats.
		{"supabase", "SUPABASE_ACCESS_TOKEN=sbp_" + randFrom(pr, hexLower, 40), []string{"sbp_"}, "supabase-token"},
		{"figma", "export FIGMA=figd_" + randMixed(pr, urlsafe, 40), []string{"figd_"}, "figma-token"},
		{"stripe webhook", "endpointSecret = 'whsec_" + randMixed(pr, alnum, 32) + "'", []string{"whsec_"}, "stripe-webhook-secret"},
		{"mapbox secret", "sk.eyJ1Ijoi" + randMixed(pr, urlsafe, 40) + "." + randMixed(pr, urlsafe, 22), []string{"sk.eyJ1Ijoi"}, "mapbox-secret-token"},
		{"discord bot token", "DISCORD=" + prDisc, []string{prDisc}, "discord-bot-token"},
		{"discord bot token alone", "client.run('" + prDisc + "')", []string{prDisc}, "discord-bot-token"},
		{"mailchimp key", "mc.setConfig({apiKey: '" + prChimp + "'})", []string{prChimp}, "mailchimp-key"},
		{"unsigned jwt", "Authorization token: " + prJWTUns, []string{prJWTUns}, "json-web-token"},
		{"testpypi token", "password = " + prPyPI, []string{prPyPI}, "pypi-token"},
		{"short slack token", "token " + prSlack + " ok", []string{prSlack}, "slack-token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkSecretCase(t, r, c) })
	}
}

func TestPeerRulesDoNotFire(t *testing.T) {
	r := newTestRedactor(t)
	badHdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"`)) // no closing brace
	for _, c := range []string{
		// Rails' CSRF token is sent to every browser that loads the form.
		`<input type="hidden" name="authenticity_token" value="` + randMixed(pr, urlsafe, 86) + `" autocomplete="off" />`,
		// A content hash between a file name and its extension.
		"http://assets.example.com/media/video_box.ico-" + prHex32 + ".png",
		// Templates and references still stand for a secret.
		`password: "{{ .Values.db.password }}"`,
		`api_key: "${API_KEY}"`,
		`token = "${{ secrets.GH_TOKEN }}"`,
		`password = "${DB_PASSWORD:-}"`,
		// A typed alphabet is not a generated key.
		"sk-ant-api03-abc123xyz-456de-klMnopqrstuvwx-3456yza789bcde-1234fghijklmnopAA",
		// A stand-in, even inside a longer word; separators are not passwords.
		`password = "somefakekey"`,
		`password = ",.:-@*?!"`,
		// No value beside the name, or prose around it.
		`print("wrong password "+pw+"!")`,
		`log.Printf("bad token "+tokenName+" for user")`,
		"passwd deploy01",
		"Alternatively, you can pass \"gobuildid\" in order to derive it",
		"it is more convenient to pass `-gcflags` to a build command",
		"password reset",
		"if (password == confirmPassword) {",
		`if token == "" {`,
		"api_key:\n  name: primary\n",
		// The passwd command's argument, and a YAML mapping under the key.
		"secret:\n  name: db\n  key: password\n",
		// JWT shapes whose header is not a JSON object; a 23-character Discord id.
		badHdr + "." + prJWTPay + "." + randMixed(pr, urlsafe, 43),
		base64.RawStdEncoding.EncodeToString([]byte("1"+randFrom(pr, digits, 16))) + "." + randMixed(pr, urlsafe, 6) + "." + randMixed(pr, urlsafe, 27),
		// Java packages and dotted identifiers with dots in them.
		"org.springframework.boot.autoconfigure.SpringBootApplication.run",
		// Slack-looking strings that are placeholders.
		"SLACK_BOT_TOKEN=xoxb-your-bot-token-here",
		`"token4": "xoxp-572370529330-573807301142-572331691188-####################"`,
		// Secret-like manifests that hold no secret: other kinds, another
		// document's kind, templates, empty and placeholder values.
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  app.conf: " + prK8sB64 + "\n",
		"kind: SopsSecret\nspec:\n  data:\n    x: " + prK8sB64 + "\n",
		"kind: Secret\nmetadata:\n  name: a\n---\nkind: ConfigMap\ndata:\n  conf: " + prK8sB64 + "\n",
		"kind: Secret\ndata:\n  password: {{ .Values.Password }}\n  htpasswd: \"\"\n  extra: YmFyCg==\n",
		`{"kind": "Secret", "metadata": {"name": "` + prK8sB64 + `"}}`,
		// Prefixes alone, names with pat in them that are not tokens.
		"sbp_ and figd_ and whsec_ are token prefixes",
		// Mailchimp's shape without its hex.
		"see docs at https://us12.api.mailchimp.com for the -us12 suffix",
	} {
		out, fs := r.RedactString(c)
		if len(fs) > 0 {
			t.Errorf("clean text redacted\n  text: %q\n  out:  %q\n  findings: %v", c, out, fs)
		}
	}
}

func TestHasTemplateRef(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"{{ .Values.password }}", true},
		{"${API_KEY}", true},
		{"${#ARR}", true},
		{"${VAR:-default}", true},
		{"prefix-${env.NAME}-suffix", true},
		{".Values.x }}", true},
		{"{{ cut at the end", true},
		{"m{{h}o)p${e]nob(ody[finds>-_$#thisone}}", false},
		{"a${1abc}", false},
		{"abc}}{{", true},
		{"plain", false},
	} {
		if got := hasTemplateRef(c.in); got != c.want {
			t.Errorf("hasTemplateRef(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMismatchedBrackets(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"m{{h}o)p", true},
		{"a(b]", true},
		{"getpass()", false},
		{"x[0])", false}, // ends a call: a closer with nothing open
		{"f(a, b", false},
		{"plain", false},
	} {
		if got := mismatchedBrackets(c.in); got != c.want {
			t.Errorf("mismatchedBrackets(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
