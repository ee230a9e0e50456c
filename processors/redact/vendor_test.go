package redact

import (
	"math/rand/v2"
	"testing"
)

// Vendor token formats from the vendors' own documentation, secret names
// followed by their value in prose or in a table with no operator, and
// look-alikes (selectors, labels, resource names, documentation) that hold
// the same words. Values are fake and built at run time.

var vr = rand.New(rand.NewPCG(11, 13))

func vendorCases() []secretCase {
	upperDigits := upper + digits
	urlSafe := alnum + "-_"
	okta := "00" + randMixed(vr, urlSafe, 40)
	nrak := "NRAK-" + randMixed(vr, upperDigits, 27)
	figd := "figd_" + randMixed(vr, urlSafe, 40)
	sbp := "sbp_" + randFrom(vr, hexLower, 40)
	tsk := "tskey-auth-k" + randMixed(vr, alnum, 11) + "CNTRL-" + randMixed(vr, alnum, 33)
	dckr := "dckr_pat_" + randMixed(vr, urlSafe, 27)
	lsv2 := "lsv2_pt_" + randFrom(vr, hexLower, 32) + "_" + randFrom(vr, hexLower, 10)
	sg := "SG." + randMixed(vr, urlSafe, 22) + "." + randMixed(vr, urlSafe, 43)
	gsk := "gsk_" + randMixed(vr, alnum, 52)
	r8 := "r8_" + randMixed(vr, alnum, 37)
	nvapi := "nvapi-" + randMixed(vr, urlSafe, 64)
	pcsk := "pcsk_" + randMixed(vr, alnum, 6) + "_" + randMixed(vr, alnum, 63)
	nfp := "nfp_" + randMixed(vr, alnum, 36)
	rnd := "rnd_" + randMixed(vr, alnum, 32)
	phx := "phx_" + randMixed(vr, alnum, 43)
	xai := "xai-" + randMixed(vr, alnum, 80)
	tok := randMixed(vr, alnum, 36)
	pw := "Qm4!" + randMixed(vr, alnum, 12)
	hex40 := randFrom(vr, hexLower, 40)
	azdo := randMixed(vr, lower+"234567", 52)
	hex32 := randFrom(vr, hexLower, 32)
	uuid := prUUIDish(vr)
	lowHex := randFrom(vr, "012345abcd", 40) // hex of about 3.2 bits a character
	return []secretCase{
		{"okta ssws in prose", "Call the Okta API with SSWS " + okta + " in the Authorization header.", []string{okta}, ""},
		{"okta ssws in curl", `curl -H "Authorization: SSWS ` + okta + `" https://dev-1.okta.com/api/v1/users`, []string{okta}, ""},
		{"new relic user key", "NEW_RELIC_API_KEY=" + nrak, []string{nrak}, ""},
		{"new relic key in prose", "my key is " + nrak + " for the staging account", []string{nrak}, ""},
		{"figma token", "figma token " + figd, []string{figd}, ""},
		{"supabase access token", "supabase login --token " + sbp, []string{sbp}, ""},
		{"tailscale auth key", "tailscale up --authkey=" + tsk, []string{tsk}, ""},
		{"docker hub pat", "echo " + dckr + " | docker login -u me --password-stdin", []string{dckr}, ""},
		{"langsmith key", "LANGSMITH_API_KEY=" + lsv2, []string{lsv2}, ""},
		{"sendgrid key", "sg = SendGridAPIClient('" + sg + "')", []string{sg}, ""},
		{"groq key", "client = Groq(api_key=\"" + gsk + "\")", []string{gsk}, ""},
		{"replicate token", "REPLICATE_API_TOKEN " + r8, []string{r8}, ""},
		{"nvidia key", "key " + nvapi, []string{nvapi}, ""},
		{"pinecone key", "pc = Pinecone(api_key=\"" + pcsk + "\")", []string{pcsk}, ""},
		{"netlify pat", "netlify deploy --auth " + nfp, []string{nfp}, ""},
		{"render key", "Authorization: Bearer " + rnd, []string{rnd}, ""},
		{"posthog personal key", "POSTHOG_PERSONAL_API_KEY=" + phx, []string{phx}, ""},
		{"xai key", "export XAI_API_KEY=" + xai, []string{xai}, ""},
		{"bare vendor prefix in prose", "paste " + sbp + " into the dashboard", []string{sbp}, ""},

		// A secret name, then its value, with no operator.
		{"vendor token spaced lower", "stripe secret key " + "sk_live_" + randMixed(vr, alnum, 24), []string{"sk_live_"}, ""},
		{"token in a markdown table", "| DEPLOY TOKEN | " + tok + " |", []string{tok}, ""},
		{"password then value in prose", "the admin password is " + pw + " until Friday", []string{pw}, ""},
		{"api key with dash", "API key - " + tok, []string{tok}, ""},
		{"arrow", "access token -> " + tok, []string{tok}, ""},
		{"name, qualifier, is", "the password for the vpn is " + pw + ".", []string{pw}, ""},
		{"set name to value", "set api_key to " + tok, []string{tok}, ""},
		{"doppler service token", "doppler run --token dp.st.prd." + randMixed(vr, alnum, 40), []string{"dp.st.prd."}, "doppler-token"},
		{"posthog personal key", "phx_" + randMixed(vr, alnum, 43) + " is the key", []string{"phx_"}, "posthog-personal-api-key"},
		{"square oauth secret", "SQUARE_APP_SECRET: sq0csp-" + randMixed(vr, urlSafe, 43), []string{"sq0csp-"}, ""},
		{"meta token", "curl 'https://graph.facebook.com/me?access_token=EAAG" + randMixed(vr, alnum, 150) + "'", []string{"EAAG"}, ""},
		{"plaid token", "access_token = access-sandbox-" + randFrom(vr, hexLower, 8) + "-" + randFrom(vr, hexLower, 4) + "-" + randFrom(vr, hexLower, 4) + "-" + randFrom(vr, hexLower, 4) + "-" + randFrom(vr, hexLower, 12), []string{"access-sandbox-"}, ""},
		{"em dash", "staging token \u2014 " + tok + " (expires Monday)", []string{tok}, ""},

		// Issue 24, from the held-out suite's dev half.
		{"vault service token, short", "vault login hvs." + randMixed(vr, alnum, 24), []string{"hvs."}, "hashicorp-vault-token"},
		{"vault batch token", `{"client_token": "hvb.AAAAAQ` + randMixed(vr, urlSafe, 120) + `"}`, []string{"hvb."}, ""},
		{"honeycomb ingest key", "* Honeycomb: `hcaik_01" + randMixed(vr, lower+digits, 56) + "`", []string{"hcaik_01"}, "honeycomb-api-key"},
		{"session cookie", "Cookie: theme=dark; sessionid=" + tok + "; lang=en", []string{tok}, "session-cookie"},
		{"set-cookie", "Set-Cookie: connect.sid=s%3A" + tok + "; Path=/; HttpOnly", []string{tok}, "session-cookie"},
		{"terraform variable default", "variable \"db_password\" {\n  type    = string\n  default = \"" + pw + "\"\n}", []string{pw}, "terraform-variable-default"},
		{"client constructor", `co = cohere.Client("` + tok + `")`, []string{tok}, "client-constructor-key"},
		{"new sdk client", `const client = new AcmeClient('` + tok + `', { region: 'eu' })`, []string{tok}, "client-constructor-key"},
		{"echo into a login subcommand", "echo " + tok + " | az devops login --organization https://dev.azure.com/acme", []string{tok}, "piped-password"},
		{"echo into --with-token", "echo " + tok + " | gh auth login --with-token", []string{tok}, "piped-password"},
		{"echo into a secret store", "printf '" + pw + "' | wrangler secret put DB_PASSWORD", []string{pw}, "piped-password"},
		{"echo into gcloud secrets", "echo -n " + tok + " | gcloud secrets versions add api-token --data-file=-", []string{tok}, "piped-password"},
		{"echo into docker secret", "echo " + tok + " | docker secret create api_token -", []string{tok}, "piped-password"},
		{"vendor word then key, no operator", "deepgram key " + hex40, []string{hex40}, "secret-assignment"},
		{"markdown emphasis around the name", "**Todoist token** `" + tok + "`", []string{tok}, "secret-assignment"},
		{"markdown emphasis, colon", "**API key**: " + tok, []string{tok}, ""},
		{"pat name", "AZURE_DEVOPS_EXT_PAT=" + azdo, []string{azdo}, "pat-assignment"},
		{"pat name, yaml", "gitlab_pat: " + tok, []string{tok}, ""},
		{".net setting value", `<setting name="ZoomClientSecret" serializeAs="String">` + "\n  <value>" + tok + "</value>\n</setting>", []string{tok}, "secret-assignment"},
		{"vendor name as the key, json", `"rollbar": "` + hex32 + `",`, []string{hex32}, "vendor-name-value"},
		{"vendor name then value", "Pagerduty " + tok, []string{tok}, "vendor-name-value"},
		{"vendor name, uuid key", "LOGGLY=" + uuid, []string{uuid}, "vendor-name-value"},
		{"vendor constructor", `const client = new Hunter("` + hex40 + `");`, []string{hex40}, "vendor-name-value"},
		{"vendor name with a suffix", "pusher_app = '" + tok + "'", []string{tok}, "vendor-name-value"},
		{"hex key of low entropy for hex", "[DEBUG] Using Acme key " + lowHex, []string{lowHex}, "secret-assignment"},
		{"pgpass line", "db.acme.internal:5432:orders:app:" + pw, []string{pw}, "pgpass-password"},
		{"pgpass any port", "*:*:*:replicator:" + pw, []string{pw}, "pgpass-password"},
		{"wpa psk", "network={\n  ssid=\"office\"\n  psk=\"" + pw + "\"\n}", []string{pw}, "password-assignment"},
		{"password with non-ascii letters", `password: "Gr\u00fc\u00dfe-` + pw + `"`, []string{pw}, "password-assignment"},
		{"element with more attributes", `<entry key="password" type="string">` + pw + `</entry>`, []string{pw}, "password-assignment"},
	}
}

func TestVendorSecretsRemoved(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range vendorCases() {
		t.Run(c.name, func(t *testing.T) { checkSecretCase(t, r, c) })
	}
}

var vendorCleanCases = []string{
	`form input[type="password"]:focus { outline: none; }`,
	`document.querySelector('input[name=password]').value = ''`,
	`$("input[type=password]").val("")`,
	`Password: ••••••••`,
	`password: "Enter your password"`,
	`Password: (hidden)`,
	`api_key: "Your API key"`,
	`Token: Click "Generate" to create one`,
	`<input type="password" placeholder="Password (min 12 characters)">`,
	`"arn:aws:secretsmanager:us-west-2:111122223333:secret:db-password-AbCdEf"`,
	`SecretArn: arn:aws:secretsmanager:eu-central-1:123456789012:secret:prod/api-token-Xy12Zq`,
	`arn:aws:ssm:us-east-1:123456789012:parameter/prod/db/password`,
	`Use SSWS followed by your API token in the Authorization header.`,
	`New Relic user keys start with NRAK- and are 32 characters long.`,
	`Set the PASSWORD environment variable before running the tests.`,
	`password reset link expires in 24 hours`,
	`the access token endpoint returns JSON`,
	`token_endpoint_auth_method: client_secret_basic`,
	`if token == "" { return errMissingToken }`,
	`| API_KEY | your key from the dashboard |`,
	`| TOKEN | string | The token used to authenticate |`,
	`password - see the team vault entry for the staging database`,
	`api-key - required - the key of the account`,
	`the password for the vpn is stored in the team vault`,
	`set api_key to the value shown on the dashboard`,
	`the token for each session is generated at login`,
	`password: !!binary |`,
	`key: "sha256:16b08b5d7db86316ff12552a6c54951cc05693763efcdebc27788184dd091bc0"`,
	`phc_ keys are public project keys`,
	`the EAA prefix marks a Meta access token`,
	// Issue 24: look-alikes of the rules above.
	`vault token lookup hvs.`,
	`Cookie: theme=dark; lang=en-US; _ga=GA1.2.1234567890.1712345678`,
	`Cookie: session=${SESSION}`,
	`variable "db_password" {\n  type      = string\n  sensitive = true\n}`,
	`variable "api_key" {\n  default = ""\n}`,
	`variable "region" {\n  default = "eu-west-1a-zone-primary-2"\n}`,
	`client = boto3.client("secretsmanager")`,
	`c := NewClient("https://api.acme.io/v2/endpoint")`,
	`echo "$AZURE_DEVOPS_EXT_PAT" | az devops login`,
	`echo hello | ssh-keygen login`,
	`echo "$API_TOKEN" | wrangler secret put API_TOKEN`,
	`echo done | tee -a secrets.log`,
	`primary key (id, tenant_id)`,
	`the key 3f9a2c7d is in the ring`,
	`**Password**: see the team vault`,
	`GITLAB_PAT=${GITLAB_PAT}`,
	// Locale files: the word for password as the label of a password key;
	// labels under key names; type annotations with nullability marks.
	`"password": "Passwort",`,
	`password = "Lösenord"`,
	`<data name="Password" xml:space="preserve">` + "\n  <value>Kennwort</value>\n</data>",
	`"api_key": "API-Schlüssel"`,
	`"token": "Jeton d'accès"`,
	`input LoginInput { email: String!, password: String! }`,
	`var password: String?`,
	`localhost:5432:*:postgres:*`,
	// Hex digests under names that are not secret names.
	`cache key 0123401234abcdabcd0123401234abcdabcd0123`,
	`"checksum": "0123401234abcdabcd0123401234abcdabcd0123"`,
	`root:x:0:0:root:/root:/bin/bash`,
	// A vendor's name beside what is not its key.
	`"algolia": "^4.22.1",`,
	`"pusher-js": "8.4.0-rc2-" `,
	`go get github.com/acme/rollbar-go@3f9a2c7d1b8e4f6a0c2d4e6f8a1b3c5d7e9f0a2b`,
	`heroku app id 0b1ac2cf-0328-4fc7-a6b7-d59f1a6997e0`,
	`Trello board: https://trello.com/b/AbC123xY/roadmap`,
	`datadog/agent:7.52.0`,
	`  resolved "https://registry.yarnpkg.com/algoliasearch/-/algoliasearch-4.22.1.tgz#3f9a2c7d1b8e4f6a0c2d4e6f8a1b3c5d7e9f0a2b"`,
	`HUBSPOT=${HUBSPOT_TOKEN}`,
	`zoom: https://acme.zoom.us/j/81234567890?pwd=x`,
	`snyk test --severity-threshold=high`,
	`spec_pat: "src/**/*_test.go"`,
	`<setting name="ApiToken" serializeAs="String"><value /></setting>`,
	`<setting name="ApiToken" serializeAs="String"><value>Paste your token here</value></setting>`,
}

func TestVendorCleanNotRedacted(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range vendorCleanCases {
		if out, fs := r.RedactString(c); len(fs) > 0 {
			t.Errorf("clean text redacted\n  text: %q\n  out:  %q\n  findings: %v", c, out, fs)
		}
	}
}
