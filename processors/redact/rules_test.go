package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// secretCase is a text holding secrets that must all be removed; rule, when
// set, is the rule that must name (one of) the findings.
type secretCase struct {
	name    string
	text    string
	secrets []string
	rule    string
}

// checkSecretCase fails unless r removes each of c's secrets from c.text
// and, when c.rule is set, one finding names it.
func checkSecretCase(t *testing.T, r *Redactor, c secretCase) {
	t.Helper()
	out, fs := r.RedactString(c.text)
	for _, s := range c.secrets {
		if strings.Contains(out, s) {
			t.Errorf("secret not removed\n  text: %q\n  out:  %q\n  findings: %v", c.text, out, fs)
		}
	}
	found := false
	for _, f := range fs {
		found = found || f.Rule == c.rule
	}
	if c.rule != "" && !found {
		t.Errorf("want a finding by %s, got %v (out %q)", c.rule, fs, out)
	}
}

// Values used by the cases; fake, and built at run time.
var (
	tr       = rand.New(rand.NewPCG(3, 5))
	pw1      = "Xk9#vR2!pq" + randMixed(tr, alnum, 6)
	pw2      = "t0p-" + randMixed(tr, alnum, 12)
	pwSym    = "w0-nTwu^yj" + randMixed(tr, alnum, 4) + "%+e"
	tok40    = randMixed(tr, alnum, 40)
	hex32    = randFrom(tr, hexLower, 32)
	b64key   = randMixed(tr, b64chars, 86) + "=="
	awsSec   = randMixed(tr, b64chars, 40)
	sessTok  = "IQoJb3JpZ2luX2VjE" + randMixed(tr, b64chars, 300)
	ghp      = "ghp_" + randMixed(tr, alnum, 36)
	basicB64 = "ZGVwbG95OnMzY3JldC1QYXNz" // deploy:s3cret-Pass
	pemRSA   = fakePEM(tr, "RSA PRIVATE KEY", "\n")
	pemPK8   = fakePEM(tr, "PRIVATE KEY", `\n`)
	pemEC    = fakePEM(tr, "EC PRIVATE KEY", "\r\n")
)

func secretCases() []secretCase {
	return []secretCase{
		// Passwords assigned in shell, env files, YAML, JSON, code, INI, XML.
		{"shell assignment", "DB_PASSWORD=" + pw1 + " ./run.sh", []string{pw1}, "password-assignment"},
		{"env prefix", "PGPASSWORD='" + pw2 + "' psql -h db -U app", []string{pw2}, "password-assignment"},
		{"export quoted", `export MYSQL_ROOT_PASSWORD="` + pwSym + `"`, []string{pwSym}, "password-assignment"},
		{"yaml", "database:\n  admin_password: " + pw1 + "\n  port: 5432", []string{pw1}, "password-assignment"},
		{"yaml quoted", "smtp_pass: '" + pw2 + "'", []string{pw2}, "password-assignment"},
		{"json", `{"user": "app", "password": "` + pw1 + `"}`, []string{pw1}, ""},
		{"json value wrapped to the next line", "{\"password\":\n    \"" + pw1 + "\",\n  \"user\": \"app\"}", []string{pw1}, "password-assignment"},
		{"json value wrapped before the closing brace", "{\"db\": {\"password\":\n  \"" + pw2 + "\"}}", []string{pw2}, "password-assignment"},
		{"call argument wrapped", "login(user,\n  password =\n    \"" + pwSym + "\");", []string{pwSym}, "password-assignment"},
		{"escaped json", `{\"user\": \"app\", \"password\": \"` + pw2 + `\"}`, []string{pw2}, ""},
		{"python kwargs", `conn = psycopg2.connect(host="db", password="` + pw1 + `")`, []string{pw1}, ""},
		{"python typed", `password: str = "` + pw2 + `"`, []string{pw2}, ""},
		{"go struct", `cfg := Config{User: "app", Password: "` + pw1 + `"}`, []string{pw1}, ""},
		{"ini", "[client]\nuser=root\npassword=" + pw2 + "\n", []string{pw2}, ""},
		{"toml", `passphrase = "` + pw1 + `"`, []string{pw1}, ""},
		{"xml", "<password>" + pw2 + "</password>", []string{pw2}, "password-assignment"},
		{"connection string", "Server=db;Database=app;User Id=sa;Password=" + pw1 + ";Encrypt=true", []string{pw1}, ""},
		{"spring", "spring.datasource.password=" + pw2, []string{pw2}, ""},
		{"flag equals", "wget --user=svc --password=" + pwSym + " https://files.example.com/a.zip", []string{pwSym}, ""},
		{"flag spaced", "vault login -method=userpass username=ops password=" + pw1, []string{pw1}, ""},
		{"docker env", "docker run -e POSTGRES_PASSWORD=" + pw2 + " postgres:16", []string{pw2}, ""},
		{"kubectl literal", "kubectl create secret generic db --from-literal=password=" + pw1, []string{pw1}, ""},

		// Command-line password flags.
		{"mysql -p", "mysql -u root -p" + pw2 + ` -e "show databases"`, []string{pw2}, "cli-password"},
		{"mysqldump -p quoted", "mysqldump -uroot -p'" + pwSym + "' shop > shop.sql", []string{pwSym}, "cli-password"},
		{"redis-cli -a", "redis-cli -h cache -a " + pw1 + " ping", []string{pw1}, "cli-password"},
		{"sshpass", "sshpass -p '" + pw2 + "' ssh deploy@host", []string{pw2}, "cli-password"},
		{"docker login -p", "docker login -u ci -p " + pw1 + " registry.example.com", []string{pw1}, "cli-password"},
		{"curl -u", "curl -u deploy:" + pwSym + " https://jenkins.example.com/api/json", []string{pwSym}, "cli-password"},
		{"curl --user quoted", `curl --user "admin:` + pw2 + `" https://x.example.com`, []string{pw2}, ""},
		{"curl continued", "curl -s \\\n  -u ops:" + pw1 + " \\\n  https://x.example.com", []string{pw1}, ""},
		{"sqlcmd", "sqlcmd -S db -U sa -P " + pw2 + " -Q 'select 1'", []string{pw2}, "cli-password"},
		{"ldapsearch", "ldapsearch -x -D cn=admin,dc=ex -w " + pw1 + " -b dc=ex", []string{pw1}, "cli-password"},
		{"openssl pass", "openssl pkcs12 -export -in c.pem -passout pass:" + pw2 + " -out c.p12", []string{pw2}, "cli-password"},
		{"htpasswd", "htpasswd -b .htpasswd admin " + pw1, []string{pw1}, "cli-password"},
		{"aws configure", "aws configure set aws_secret_access_key " + awsSec, []string{awsSec}, ""},

		// URLs with credentials.
		{"https userinfo", "git clone https://deploy:" + pw1 + "@git.example.com/team/repo.git", []string{pw1}, "url-credentials"},
		{"postgres url", "DATABASE_URL=postgres://app:" + pw2 + "@db.internal:5432/app", []string{pw2}, "url-credentials"},
		{"mongodb srv", "mongodb+srv://svc:" + pwSym + "@cluster0.ab12c.mongodb.net/test", []string{pwSym}, ""},
		{"redis empty user", "redis://:" + pw1 + "@cache:6379/0", []string{pw1}, "url-credentials"},
		{"jdbc", "jdbc:mysql://root:" + pw2 + "@db:3306/shop", []string{pw2}, ""},
		{"token as user", "https://" + ghp + "@github.com/acme/repo.git", []string{ghp}, ""},
		{"x-access-token", "https://x-access-token:" + tok40 + "@github.com/acme/repo.git", []string{tok40}, ""},
		{"at in password", "amqp://admin:" + pw2 + "@x@mq.internal:5672/", []string{pw2 + "@x"}, ""},

		// Authorization headers.
		{"basic header", "Authorization: Basic " + basicB64, []string{basicB64}, ""},
		{"basic in code", `headers = {"Authorization": "Basic ` + basicB64 + `"}`, []string{basicB64}, ""},
		{"bearer header", `curl -H "Authorization: Bearer ` + tok40 + `" https://api.example.com`, []string{tok40}, ""},
		{"token scheme", `-H 'Authorization: token ` + tok40 + `'`, []string{tok40}, ""},
		{"bearer alone", "use Bearer " + tok40 + " for the call", []string{tok40}, ""},
		{"api key header", "X-API-Key: " + tok40, []string{tok40}, ""},
		{"private-token header", `curl --header "PRIVATE-TOKEN: ` + tok40 + `" https://gitlab.example.com/api/v4/projects`, []string{tok40}, ""},
		{"http dump", "GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer " + tok40 + "\r\n", []string{tok40}, ""},

		// Secret-looking names with high-entropy values.
		{"api secret env", "API_SECRET=" + tok40, []string{tok40}, ""},
		{"client secret json", `"clientSecret": "` + tok40 + `",`, []string{tok40}, ""},
		{"access token yaml", "access_token: " + tok40, []string{tok40}, ""},
		{"encryption key", "ENCRYPTION_KEY=" + hex32 + hex32, []string{hex32 + hex32}, ""},
		{"auth in docker config", `{"auths": {"registry.example.com": {"auth": "` + basicB64 + tok40[:8] + `"}}}`, []string{basicB64 + tok40[:8]}, ""},
		{"azure storage key", "AZURE_STORAGE_KEY=" + b64key, []string{b64key}, ""},
		{"azure connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + b64key + ";EndpointSuffix=core.windows.net", []string{b64key}, "azure-storage-account-key"},
		{"npmrc", "//registry.npmjs.org/:_authToken=" + tok40, []string{tok40}, ""},
		{"query token", "https://api.example.com/v1/items?access_token=" + tok40 + "&page=2", []string{tok40}, ""},

		// Cloud credentials and metadata-service responses.
		{"aws credentials file", "[default]\naws_access_key_id = AKIA" + randFrom(tr, base32, 16) + "\naws_secret_access_key = " + awsSec + "\n", []string{awsSec}, ""},
		{"aws env", "export AWS_SECRET_ACCESS_KEY='" + awsSec + "'", []string{awsSec}, "aws-secret-access-key"},
		{"imds response", `{"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": "ASIA` + randFrom(tr, base32, 16) + `", "SecretAccessKey": "` + awsSec + `", "Token": "` + sessTok + `", "Expiration": "2026-11-22T16:00:00Z"}`, []string{awsSec, sessTok}, ""},
		{"session token env", "AWS_SESSION_TOKEN=" + sessTok, []string{sessTok}, ""},
		{"gcp metadata token", `{"access_token":"ya29.` + tok40 + tok40 + `","expires_in":3599,"token_type":"Bearer"}`, []string{tok40 + tok40}, ""},
		{"gcp service account", `{"type": "service_account", "private_key_id": "` + hex32 + `", "private_key": "` + pemPK8 + `", "client_email": "x@p.iam.gserviceaccount.com"}`, []string{pemPK8}, ""},

		// Private keys.
		{"pem rsa", "id_rsa contents:\n" + pemRSA + "\ndone", []string{pemRSA}, ""},
		{"pem crlf", pemEC, []string{pemEC}, ""},
		{"pem truncated", pemRSA[:300] + "\n[output truncated]", []string{pemRSA[40:300]}, "private-key-block"},
		{"kubeconfig client key", "client-key-data: " + b64PEM(), []string{b64PEM()}, "base64-private-key"},

		// A secret name, then its value with no operator.
		{"vendor token spaced", "ACME TOKEN " + tok40, []string{tok40}, "secret-assignment"},
		{"two-word api key", "Vendor API KEY " + tok40 + " (rotate monthly)", []string{tok40}, "secret-assignment"},
		{"two-word name with colon", "api key: " + tok40[:20], []string{tok40[:20]}, "secret-assignment"},
		{"export without equals", "export DEPLOY_TOKEN " + tok40, []string{tok40}, "secret-assignment"},
		{"set password", "set PASSWORD " + pw1, []string{pw1}, "password-assignment"},
		{"flag spaced long", "deploy --api-token " + tok40 + " --env prod", []string{tok40}, ""},
		{"flag password spaced", "backup --password " + pwSym + " --target s3", []string{pwSym}, ""},
		{"ruby hash rocket", `config["token"] => "` + tok40 + `"`, []string{tok40}, ""},
		{"go short decl", `token := "` + tok40 + `"`, []string{tok40}, ""},
		{"xml secret", "<clientSecret>" + tok40 + "</clientSecret>", []string{tok40}, ""},
		{"env file", "# service\nSERVICE_SECRET=" + tok40 + "\n", []string{tok40}, ""},
		{"properties xml entry", `<entry key="db.password">` + pw2 + `</entry>`, []string{pw2}, "password-assignment"},
		{"android string resource", `<string name="maps_api_key">` + tok40 + `</string>`, []string{tok40}, "secret-assignment"},
		{"name is value", "the deploy token is " + tok40, []string{tok40}, "secret-assignment"},
		{"compound weak name beside value", "VENDOR_KEY " + tok40, []string{tok40}, "secret-assignment"},
		{"dockerfile env", "ENV SERVICE_API_TOKEN " + tok40, []string{tok40}, "secret-assignment"},
		{"powershell securestring", `$cred = ConvertTo-SecureString "` + pwSym + `" -AsPlainText -Force`, []string{pwSym}, "powershell-plaintext-password"},
		{"net user", "net user svc_backup " + pw1 + " /add /domain", []string{pw1}, "windows-net-user-password"},
		{"jenkins encrypted credential", "<password>{AQAAABAAAAAQ" + b64key[:44] + "=}</password>", []string{b64key[:44]}, "password-assignment"},
		{"s3 presigned url", "https://b.s3.amazonaws.com/a.zip?X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=" + hex32 + hex32, []string{hex32 + hex32}, "presigned-url-signature"},
		{"wireguard preshared key", "PresharedKey = " + b64key[:43] + "=", []string{b64key[:43]}, "secret-assignment"},
		{"powershell env", `$env:SERVICE_TOKEN = "` + tok40 + `"`, []string{tok40}, "secret-assignment"},
		{"kubectl from-literal any key", "kubectl create secret generic app --from-literal=DB_URL=" + pw1 + " --from-literal=SIGNING=" + pw2, []string{pw1, pw2}, "cli-password"},
		{"gh secret set", "gh secret set DEPLOY_KEY --body " + tok40, []string{tok40}, "cli-password"},
		{"ssh-keygen passphrase", "ssh-keygen -t ed25519 -N '" + pw2 + "' -f deploy_key", []string{pw2}, "cli-password"},
		{"rar -p", "rar a -p" + pw1 + " out.rar data/", []string{pw1}, "cli-password"},
		{"sqlplus", "sqlplus -s system/" + pw2 + "@//db:1521/XE @init.sql", []string{pw2}, "sqlplus-password"},
		{"smbclient", "smbclient //fs/share -U backup%" + pw1 + " -c ls", []string{pw1}, "smb-user-password"},
		{"net use", `net use Z: \\fs\share ` + pw2 + ` /user:CORP\svc`, []string{pw2}, "windows-net-use-password"},
		{"echo into sudo -S", "echo '" + pwSym + "' | sudo -S apt-get update", []string{pwSym}, "piped-password"},
		{"echo into password-stdin", "echo " + tok40 + " | docker login -u ci --password-stdin ghcr.io", []string{tok40}, "piped-password"},
		{"sql identified by", "CREATE USER 'app'@'%' IDENTIFIED BY '" + pw1 + "';", []string{pw1}, "sql-password"},
		{"oracle identified by", "ALTER USER scott IDENTIFIED BY " + pw2 + ";", []string{pw2}, "sql-password"},
		{"ldap ssha", "userPassword: {SSHA}" + b64key[:32], []string{b64key[:32]}, "ldap-password-hash"},
		{"setProperty pair", `props.setProperty("password", "` + pw2 + `");`, []string{pw2}, "password-assignment"},
		{"header set pair", `req.Header.Set("X-Api-Key", "` + tok40 + `")`, []string{tok40}, ""},
		{"authorization scheme without colon", "Authorization Token " + tok40, []string{tok40}, "authorization-header"},
		{"environment after the secret word", "API_KEY_PROD=" + tok40, []string{tok40}, "secret-assignment"},
		{"rails secret key base", "SECRET_KEY_BASE=" + hex32 + hex32, []string{hex32 + hex32}, ""},
		{"password for staging", `db_password_staging: "` + pw2 + `"`, []string{pw2}, "password-assignment"},
		{"keytool storepass", "keytool -importkeystore -srckeystore a.p12 -srcstorepass " + pw2 + " -deststorepass " + pw1, []string{pw1, pw2}, "cli-password"},
		{"zip -P", "zip -P " + pwSym + " backup.zip db.sql", []string{pwSym}, "cli-password"},
		{"7z -p", "7z a -p" + pw2 + " backup.7z data/", []string{pw2}, "cli-password"},
		{"gpg passphrase", "gpg --batch --passphrase " + pw1 + " -d secrets.gpg", []string{pw1}, "cli-password"},
		{"okta header", "Authorization: SSWS 00" + tok40, []string{"00" + tok40}, ""},
		{"authorization, a scheme with no rule", "Authorization: Custom " + tok40, []string{tok40}, "authorization-header"},
		{"proxy authorization, hyphenated scheme", `curl -H "Proxy-Authorization: X-Gateway-Auth ` + tok40 + `" https://api.example.com`, []string{tok40}, "authorization-header"},
		{"putty key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI" + b64key[:39] + "\nPrivate-Lines: 1\n" + b64key[:44] + "\nPrivate-MAC: " + hex32 + "\n",
			[]string{b64key[:44]}, "putty-private-key"},
		{"shadow line", "deploy:$6$" + tok40[:16] + "$" + randMixed(tr, alnum+"./", 86) + ":19700:0:99999:7:::", []string{"$6$" + tok40[:16]}, "password-hash"},

		// .netrc.
		{"netrc one line", "machine api.example.com login deploy password " + pw1, []string{pw1}, "netrc-password"},
		{"netrc lines", "machine git.example.com\n  login deploy\n  password " + pw2 + "\n", []string{pw2}, "netrc-password"},
		{"netrc default", "default login anonymous password " + pw1, []string{pw1}, "netrc-password"},
	}
}

func b64PEM() string {
	// base64 of "-----BEGIN PRIVATE KEY-----\n" + body
	return "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDQktjd2dnU2pBZ0VBQW9JQkFRQz" + strings.Repeat("Q", 8) + "Zk5wZ3Zq"
}

func TestSecretsRemoved(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range secretCases() {
		t.Run(c.name, func(t *testing.T) {
			out, fs := r.RedactString(c.text)
			for _, s := range c.secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret not removed\n  text: %q\n  out:  %q\n  findings: %v", c.text, out, fs)
				}
			}
			if c.rule != "" {
				found := false
				for _, f := range fs {
					found = found || f.Rule == c.rule
				}
				if !found {
					t.Errorf("want a finding by %s, got %v (out %q)", c.rule, fs, out)
				}
			}
			for _, f := range fs {
				if f.Start < 0 || f.End > len(c.text) || f.Start >= f.End {
					t.Errorf("finding %v out of range of %d bytes", f, len(c.text))
				}
			}
		})
	}
}

// Clean texts: placeholders, references, code, identifiers, hashes and
// public values that look like secrets but are not.
var cleanCases = []string{
	// Placeholders and references (the list and their cousins).
	`API_KEY=${API_KEY}`,
	`api_key = os.environ["OPENAI_API_KEY"]`,
	`OPENAI_API_KEY=YOUR_API_KEY_HERE`,
	`Authorization: Bearer <token>`,
	`export ANTHROPIC_API_KEY=<your-anthropic-key>`,
	`token: "${{ secrets.GITHUB_TOKEN }}"`,
	`password: "{{ .Values.db.password }}"`,
	`const key = process.env.STRIPE_SECRET_KEY;`,
	`key := os.Getenv("ANTHROPIC_API_KEY")`,
	`SET PASSWORD=%DB_PASSWORD%`,
	`password=$(cat /run/secrets/db_password)`,
	`curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user`,
	`mysql -u root -p"$MYSQL_PWD" shop`,
	`DATABASE_URL=postgres://$PGUSER:$PGPASSWORD@$PGHOST/$PGDATABASE`,
	`postgres://user:password@localhost:5432/dbname`,
	`mongodb://<username>:<password>@localhost:27017`,
	`https://USERNAME:PASSWORD@example.com/`,
	`api_key: "REPLACE_ME"`,
	`OPENAI_API_KEY=sk-...`,
	`GITHUB_TOKEN=ghp_************************************`,
	`HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`,
	`STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx`,
	`SLACK_BOT_TOKEN=xoxb-your-bot-token-here`,
	`password = "changeme"`,
	`password: ********`,
	`secret=REDACTED`,
	`api_key: "[REDACTED:openai-api-key]"`,
	`token = None`,
	`password: string;`,
	`aws_access_key_id = AKIAIOSFODNN7EXAMPLE`,
	`aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`,
	`client_secret: "{{ client_secret }}"`,
	`auth_header = f"Bearer {token}"`,
	`-----BEGIN RSA PRIVATE KEY-----`,
	"-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----",
	`machine example.com login me password <password>`,
	`env: [{name: API_TOKEN, valueFrom: {secretKeyRef: {name: api, key: token}}}]`,
	`docker login -u "$USER" --password-stdin <<< "$PASS"`,

	// Selectors, UI labels and resource names that hold a secret word.
	`input[type=password] { border: 1px solid #ccc; }`,
	`.password-field, .token-input { width: 100%; }`,
	`<input type="password" name="password" placeholder="Enter your password">`,
	`<label for="api-key">API key</label>`,
	`Password: ********`,
	`label="Password"`,
	`"SecretId": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/AppSecret-q7Rt2Z"`,
	`secret: arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!db-4a7e1c2b-9d3f-4e5a-8b6c-1f2e3d4c5b6a`,
	`API_TOKEN=<your-token>`,
	`export API_TOKEN ${API_TOKEN}`,
	`api_key = "xxxx"`,
	`the access token expires after 3600 seconds`,
	`cache key 7a5df6e6f200481129bea2134caada0e481011cf`,
	`public key AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsab`,
	`export TOKEN_FILE /run/secrets/token`,
	`<entry key="password.min.length">12</entry>`,
	`<string name="password_hint">Enter your password</string>`,
	`the token is expired, refresh it`,
	`cache_key 7a5df6e6f200481129bea2134caada0e481011cf`,
	`net user alice * /add`,
	`echo "$TOKEN" | docker login ghcr.io -u me --password-stdin`,
	`ssh-keygen -t ed25519 -N '' -f key`,
	`sqlplus /nolog`,
	`api_key_prod = os.environ["API_KEY_PROD"]`,
	`TOKEN_NEW=${TOKEN_NEW}`,
	`Authorization Basic realm required`,
	`authorization token flow for public clients`,
	`CREATE USER app IDENTIFIED BY VALUES '%s'`,
	`ALTER USER app IDENTIFIED EXTERNALLY;`,
	`props.setProperty("password", passwordField.getText());`,
	`t("password", "Password")`,
	`userPassword: {SSHA}`,
	`net use Z: \fs\share /user:CORP\svc`,
	`msg = "{user_token}"`,
	`password: "{password}"`,
	`{"password": {"type": "string", "minLength": 12}}`,
	`$p = Read-Host -AsSecureString`,

	// Ordinary code and prose that mentions secrets.
	`if (password !== confirmPassword) setError("Passwords do not match");`,
	`PASSWORD_MIN_LENGTH = 12`,
	`TOKEN_EXPIRY_SECONDS = 3600`,
	`password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())`,
	`"token_type": "Bearer", "expires_in": 3600`,
	`Authorization: Basic`,
	`WWW-Authenticate: Basic realm="staging"`,
	`secret_name = "prod/api/key"`,
	`private_key_path = "~/.ssh/id_ed25519"`,
	`token, err := s.auth.Issue(r.Context(), user.ID, 24*time.Hour)`,
	`for key, value := range headers { req.Header.Set(key, value) }`,
	`key = cache_key(user_id, "profile")`,
	`max_tokens=1024`,
	`The API key is sent in the X-API-Key header.`,
	`Rotate the signing key every 90 days; never commit keys that start with sk-ant- or ghp_.`,
	`keyring.get_password("myapp", username)`,
	`vault kv get -field=password secret/db`,
	`aws secretsmanager get-secret-value --secret-id prod/db`,
	`grant_type=client_credentials&scope=read`,
	`jwt.decode(token, key, algorithms=["HS256"])`,
	`"i18n_key": "settings.security.password_reset_title"`,
	`api_key_hash = sha256(api_key).hexdigest()`,
	`Use the Bearer authentication scheme with your access token.`,
	`curl -u "$USER:$TOKEN" https://api.example.com`,
	`git config --global credential.helper osxkeychain`,
	`ssh -i ~/.ssh/id_ed25519 deploy@host`,
	`login: alice`,
	`machine learning models need a login page and a password field`,

	// Identifiers, hashes and public values.
	`commit 3c8800442714ba5e33630bb0685523e9390fc002`,
	`sha256:16b08b5d7db86316ff12552a6c54951cc05693763efcdebc27788184dd091bc0`,
	`"id": "2d0ded09-3e85-487c-8577-1e954361b7f4"`,
	`"integrity": "sha512-PlzW6iXVpj5vIxIYfJF+ZIkwwwJiEm8GKyNrshvKodX1bo39yKC6fYoVsVllYaGlzBJp7c4ItA2kzntwb09fEg=="`,
	`STRIPE_PUBLISHABLE_KEY=pk_live_` + randMixed(tr, alnum, 24),
	`ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dev@laptop`,
	`-----BEGIN PUBLIC KEY-----`,
	`https://user@example.com/path`,
	`git@github.com:acme/repo.git`,
	`http://169.254.169.254/latest/meta-data/iam/security-credentials/`,
	`uses: actions/checkout@84a9e358729f45e5b9b0113a6e6e85ee77f9c70d # v4.1.1`,
	`echo eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoidmlld2VyIn0= | base64 -d`,
	`<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">`,
	`trace_id=5162cd496cb198833becbd5a525dd9e2 span_id=045962842b55b190`,
	`cache-key: linux-node-7a5df6e6f200481129bea2134caada0e481011cf832a781e4348d8ceae81ee49`,
}

func TestCleanNotRedacted(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range cleanCases {
		out, fs := r.RedactString(c)
		if len(fs) > 0 {
			t.Errorf("clean text redacted\n  text: %q\n  out:  %q\n  findings: %v", c, out, fs)
		}
	}
}
