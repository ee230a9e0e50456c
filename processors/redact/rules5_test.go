package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// The rules written for heldout_secrets5.jsonl's classes, each with its
// own examples (not lines of that table) and look-alikes it must keep.

var (
	r5     = rand.New(rand.NewPCG(24, 5))
	r5pw   = "Lq8" + randMixed(r5, alnum, 9) + "-"
	r5tok  = randMixed(r5, alnum, 32)
	r5hex  = randFrom(r5, hexLower, 64)
	r5b64  = randMixed(r5, alnum, 40)
	r5sess = randFrom(r5, "abcdefghijklmnopqrstuvwxyz0123456789", 32)
	r5jwkd = randMixed(r5, alnum+"-_", 43)
	r5ghp  = "ghp_" + randMixed(r5, alnum, 36)
)

func TestHeldout5RulesFire(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range []secretCase{
		{"oracle thin url", "jdbc:oracle:thin:hr/" + r5pw + "@db01:1521/ORCL", []string{r5pw}, "sqlplus-password"},
		{"signed url signature", "https://cdn.example.net/a.mp4?Expires=1796000000&Signature=" + r5b64 + "~" + r5b64 + "&Key-Pair-Id=K1", []string{r5b64}, "presigned-url-signature"},
		{"sigv4 header", "Authorization: AWS4-HMAC-SHA256 Credential=x/20261207/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=" + r5hex, []string{r5hex}, "presigned-url-signature"},
		{"ssh2 key", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"k\"\n" + r5b64 + "\n" + r5tok + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----", []string{r5b64, r5tok}, "ssh2-private-key"},
		{"webhook path", "url: https://chat.example.org/hooks/" + r5sess[:26], []string{r5sess[:26]}, "webhook-url-token"},
		{"redis conf", "port 6379\nrequirepass " + r5tok + "\n", []string{r5tok}, "redis-config-password"},
		{"sasl_passwd", "[mail.example.org]:587 relay@example.org:" + r5pw, []string{r5pw}, "sasl-passwd-password"},
		{"base64 of a token", `tok = b64decode("` + base64.StdEncoding.EncodeToString([]byte(r5ghp)) + `")`, []string{base64.StdEncoding.EncodeToString([]byte(r5ghp))}, "base64-encoded-token"},
		{"pdo third argument", `$db = new PDO("pgsql:host=db", "app", "` + r5pw + `");`, []string{r5pw}, "positional-password-argument"},
		{"basic auth tuple", `requests.post(u, auth=("svc", "` + r5pw + `"))`, []string{r5pw}, "positional-password-argument"},
		{"every session cookie of a header", "Cookie: sid=" + r5sess + "; theme=dark; remember_token=" + r5tok, []string{r5sess, r5tok}, "session-cookie"},
		{"session cookie by its name", "JSESSIONID=" + r5tok + "; Path=/", []string{r5tok}, "session-cookie"},
		{"jwk private member", `{"kty":"OKP","crv":"Ed25519","x":"` + r5b64 + `","d":"` + r5jwkd + `"}`, []string{r5jwkd}, "jwk-private-key"},
		{"concatenated literals", `API_TOKEN = "` + r5tok[:16] + `" + "` + r5tok[16:] + `"`, []string{r5tok[:16], r5tok[16:]}, "secret-assignment"},
		{"adjacent literals", "#define DB_PASSWORD \"" + r5pw[:6] + "\" \\\n  \"" + r5pw[6:] + "\"", []string{r5pw[:6], r5pw[6:]}, "password-assignment"},
		{"joined list", `secret_key = "".join(["` + r5tok[:16] + `", "` + r5tok[16:] + `"])`, []string{r5tok[:16], r5tok[16:]}, "secret-assignment"},
		{"mosquitto", "mosquitto_sub -h b -u u -P " + r5pw + " -t x", []string{r5pw}, "cli-password"},
		{"freerdp", "xfreerdp /v:h /u:admin /p:" + r5pw, []string{r5pw}, "cli-password"},
		{"net use, user first", `net use \\srv\c$ /user:ADMIN ` + r5pw, []string{r5pw}, "windows-net-use-password"},
		{"open-world user and password flags", "  88  snowsql -a acct -u ann -p " + r5pw, []string{r5pw}, "cli-user-password"},
		{"open-world, long flags", "cqlsh --username cassandra --password '" + r5pw + "' 10.0.0.5", []string{r5pw}, "cli-user-password"},
		{"the id half of a key pair", "VENDOR_SECRET_ID=AKID" + r5tok + "\nVENDOR_SECRET_KEY=" + r5b64, []string{r5tok, r5b64}, ""},
		{"vendor prefix split off", "const k = 'sk_live_' +\n  '" + r5tok + "';", []string{r5tok}, "split-vendor-token"},
		{"webhook with a uuid", "https://open.example.cn/open-apis/bot/v2/hook/3f2a9c1e-8f0b-4a61-9d2e-5b7c0a1d2e3f", []string{"3f2a9c1e-8f0b-4a61-9d2e-5b7c0a1d2e3f"}, "webhook-url-token"},
		{"twitch stream key", "rtmp://live.twitch.tv/app/live_123456789_" + r5tok[:30], []string{r5tok[:30]}, "twitch-stream-key"},
		{"url password with @ and #", "postgres://app:m@ple" + r5tok[:8] + "#12@db.example.org:5432/app", []string{"ple" + r5tok[:8]}, "url-credentials"},
		{"lftp user,password", "lftp -u deploy," + r5pw + " sftp://files.example.org", []string{r5pw}, "cli-password"},
		{"ipmitool", "ipmitool -I lanplus -H 10.0.0.9 -U ADMIN -P " + r5pw + " chassis status", []string{r5pw}, "cli-password"},
		{"go strings.Join", `token := strings.Join([]string{"` + r5tok[:16] + `", "` + r5tok[16:] + `"}, "")`, []string{r5tok[:16], r5tok[16:]}, "secret-assignment"},
		{"sigv2 signature", "https://b.s3.amazonaws.com/k?AWSAccessKeyId=x&Expires=1796000000&Signature=" + r5b64[:27] + "%3D", []string{r5b64[:27]}, "presigned-url-signature"},
		{"office connector webhook", "https://outlook.office.com/webhook/3f2a9c1e-8f0b-4a61-9d2e-5b7c0a1d2e3f@1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d/IncomingWebhook/" + r5tok + "/0b1c2d3e-4f50-4a61-8b7c-9d0e1f2a3b4c", []string{r5tok}, "office-connector-webhook"},
		{"openvpn static key", "<tls-crypt>\n-----BEGIN OpenVPN Static key V1-----\n" + r5hex[:32] + "\n" + r5hex[32:] + "\n-----END OpenVPN Static key V1-----\n</tls-crypt>", []string{r5hex[:32], r5hex[32:]}, "openvpn-static-key"},
		{"ldap bindpw", "uri ldaps://ldap.example.org\nbindpw " + r5pw + "\n", []string{r5pw}, "password-assignment"},
		{"plist key and string", "<key>ApiSecret</key>\n\t<string>" + r5tok + "</string>", []string{r5tok}, "secret-assignment"},
		{"session cookie in an access log", `"GET / HTTP/1.1" 200 "session=` + r5tok + `"`, []string{r5tok}, "session-cookie"},
	} {
		t.Run(c.name, func(t *testing.T) { checkSecretCase(t, r, c) })
	}
}

func TestHeldout5RulesKeep(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range []string{
		`"password": "Salasanasi"`,
		`password: Mot-de-passe`,
		`"password": "E-Mail/Passwort"`,
		`"pwd": "PIN-Code"`,
		`"secret": "Geheimnis:"`,
		`"password": "Passwort_bestätigen"`,
		`CREATE ROLE app LOGIN PASSWORD :'app_password';`,
		"kind: SealedSecret\nspec:\n  encryptedData:\n    db_password: Ag" + randMixed(r5, b64chars, 300),
		"X-Hub-Signature-256: sha256=" + r5hex,
		"signature_version = s3v4",
		"Cookie: cookie_consent=1; lang=en; _ga=GA1.2.1234567890.1796000000",
		"Set-Cookie: sessionid=; Max-Age=0",
		`label = "API " + "Key"`,
		`const tokens = ["sk-", "ghp_"];`,
		`const key = ["user", "id"].join("")`,
		`{"kty":"RSA","n":"` + r5b64 + r5b64 + `","e":"AQAB","kid":"k1"}`,
		"requirepass ${REDIS_PASSWORD}",
		"new PDO($dsn, $user, $pass);",
		"xfreerdp /v:h /u:admin /p:$RDP_PASSWORD",
		"https://gitlab.example.org/api/v4/projects/12/hooks/34",
		"echo 'eyJraW5kIjoiQ29uZmlnTWFwIn0=' | base64 -d",
		`"password": "ENC(` + r5b64 + `)"`,
		"docker run -u 1000 -p 8080:80 nginx",
		"see https://example.com/page#section@2 for details",
		"const prefixes = ['ghp_', 'gho_', 'ghs_'];",
		`PREFIXES = ["sk-proj-", "sk-ant-api03-"]`,
		"https://x.example.org/git/hook/pre-commit-config",
		`"secretVersion": "2a6d3de4-0556-4480-892c-9007262c48d8"`,
		`SECRET_ID = "1f0c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b";`,
		`"tokenId": "` + randMixed(r5, alnum, 20) + `"`,
		"TOKEN_AUDIENCE=" + randMixed(r5, alnum, 16),
		"CACHE_KEY=" + randMixed(r5, alnum, 24),
		`"keyVersion": "` + randFrom(r5, hexLower, 32) + `"`,
		"ssh -l ann -p 2222 bastion",
		"cp -u -p src/main.go dst/",
		"tool -u ann -p v1.2.3",
		"hydra -l admin -P rockyou.txt ssh://10.0.0.5",
		"tool --user ann --password \"$PASS\"",
		"token: AQICAHh" + randMixed(r5, b64chars, 120) + "==",
		"key_id = \"3f2a9c1e-8f0b-4a61-9d2e-5b7c0a1d2e3f\"",
		"<key>NSCameraUsageDescription</key>\n<string>Scan a QR code to add a token</string>",
	} {
		if out, fs := r.RedactString(c); len(fs) > 0 {
			t.Errorf("look-alike redacted\n  text: %q\n  out:  %q\n  findings: %v", c, out, fs)
		}
	}
}
