#!/usr/bin/env python3
"""Writes heldout_secrets4.jsonl: the negatives other secret scanners write
for their rules (values that look like secrets and are not) and, so that a
rule cannot pass by redacting nothing, real-looking secrets in the same
syntaxes. Written before any rule fitted to it; values random (seeded), fake.

usage: python3 heldout_secrets4_gen.py > heldout_secrets4.jsonl

Markers and storage as in heldout_secrets_gen.py («name» a secret that must
not survive, «~name» a random value that is no secret; ROT13 on disk).
"""
import base64

import heldout_secrets_gen as h
from heldout_secrets_gen import G, HX, B64, AL, UP, LO, DG, US, rs, mixed, uid

R = h.R

G.update({
    "~sha256": lambda: rs(HX, 64),
    "~sha1": lambda: rs(HX, 40),
    "~md5": lambda: rs(HX, 32),
    "~short": lambda: rs(HX, 7),
    "~sri384": lambda: "sha384-" + base64.b64encode(bytes(R.getrandbits(8) for _ in range(48))).decode(),
    "~png": lambda: "iVBORw0KGgoAAAANSUhEUgAA" + rs(B64, 120) + "=",
    "~woff": lambda: "d09GMgABAAAAA" + rs(B64, 120),
    "~ec2": lambda: "i-0" + rs(HX, 16),
    "~vpc": lambda: "vpc-0" + rs(HX, 16),
    "~sg": lambda: "sg-0" + rs(HX, 16),
    "~ami": lambda: "ami-0" + rs(HX, 16),
    "~acct": lambda: str(R.randint(100000000000, 999999999999)),
    "~reqid": lambda: rs(UP + DG, 16),
    "~b64id": lambda: base64.b64encode(("gid://shopify/Product/" + str(R.randint(10**9, 10**10))).encode()).decode(),
    "~ulid": lambda: "01" + rs("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 24),
    "~pubec": lambda: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + rs(B64, 86) + "==",
    "~ed": lambda: "AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(B64, 43),
    "~rsa": lambda: "AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + rs(B64, 180),
    "~cert": lambda: "MIID" + rs(B64, 60),
    "~kid": lambda: rs(AL, 43),
    "~fp": lambda: ":".join(rs(HX, 2) for _ in range(16)),
    "~fp256": lambda: "SHA256:" + rs(B64, 43),
    "~gpg": lambda: rs("0123456789ABCDEF", 16),
    "~ver": lambda: "%d.%d.%d" % (R.randint(0, 9), R.randint(0, 30), R.randint(0, 99)),
    "~etag": lambda: rs(HX, 32),
    "~nonce": lambda: rs(AL, 22),
    "~b64txt": lambda: base64.b64encode(R.choice(["hello world, this is a test fixture", "{\"kind\":\"ConfigMap\",\"name\":\"app\"}", "Copyright 2026 Acme Inc. All rights reserved."]).encode()).decode(),
})

# (key name, value, how the value is written): s = a string literal,
# c = a code expression written unquoted
NEGV = [
    # placeholders
    ("api_key", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "s"),
    ("password", "changeme", "s"),
    ("api_key", "<your-api-key>", "s"),
    ("client_secret", "<CLIENT_SECRET>", "s"),
    ("api_token", "${API_TOKEN}", "s"),
    ("db_password", "${DB_PASSWORD:-}", "s"),
    ("secret_key", "{{ .Values.secretKey }}", "s"),
    ("password", "{{ secrets.DB_PASSWORD }}", "s"),
    ("password", "%(db_password)s", "s"),
    ("auth_token", "YOUR_AUTH_TOKEN_HERE", "s"),
    ("access_key", "REPLACE_WITH_YOUR_ACCESS_KEY", "s"),
    ("token", "TODO", "s"),
    ("api_key", "your_api_key", "s"),
    ("secret", "<%= ENV['APP_SECRET'] %>", "s"),
    ("password", "$PASSWORD", "s"),
    ("token", "{token}", "s"),
    ("api_key", "#{api_key}", "s"),
    ("client_secret", "@CLIENT_SECRET@", "s"),
    ("password", "__PASSWORD__", "s"),
    ("private_key", "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----", "s"),
    ("api_key", "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "s"),
    ("token", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "s"),
    ("access_key_id", "AKIAXXXXXXXXXXXXXXXX", "s"),
    ("password", "example-password", "s"),
    ("api_key", "dummy-api-key", "s"),
    ("secret", "not-a-real-secret", "s"),
    ("token", "test-token", "s"),
    ("password", "password", "s"),
    ("api_key", "0000000000000000000000000000000000000000", "s"),
    ("secret", "1234567890abcdef", "s"),
    # secret managers and references
    ("password", "vault:secret/data/prod/db#password", "s"),
    ("db_password", "ref+awsssm://prod/db/password", "s"),
    ("api_key", "op://Engineering/Stripe/credential", "s"),
    ("secret", "arn:aws:secretsmanager:us-east-1:«~acct»:secret:prod/api-key-AbCdEf", "s"),
    ("password", "projects/acme-prod/secrets/db-password/versions/latest", "s"),
    ("token", "secretsmanager:prod/github-token", "s"),
    ("secret_ref", "azure-keyvault://kv-acme-prod/secrets/api-key", "s"),
    ("password", "sm://acme/db-password", "s"),
    ("password_file", "/run/secrets/db_password", "s"),
    ("key_vault_secret_id", "https://kv-acme.vault.azure.net/secrets/api-key/«~md5»", "s"),
    ("secret_name", "prod/payments/stripe", "s"),
    ("ssm_parameter", "/acme/prod/DB_PASSWORD", "s"),
    # env reads and calls that fetch a secret
    ("api_key", "os.environ[\"API_KEY\"]", "c"),
    ("password", "os.getenv(\"DB_PASSWORD\", \"\")", "c"),
    ("token", "process.env.GITHUB_TOKEN", "c"),
    ("secret", "System.getenv(\"APP_SECRET\")", "c"),
    ("api_key", "ENV.fetch(\"API_KEY\")", "c"),
    ("token", "std::env::var(\"TOKEN\").unwrap()", "c"),
    ("password", "getSecret(\"db-password\")", "c"),
    ("api_key", "vault.read(\"secret/data/stripe\")[\"api_key\"]", "c"),
    ("client_secret", "config.get(\"oauth.client_secret\")", "c"),
    ("secret", "keyring.get_password(\"acme\", \"deploy\")", "c"),
    ("token", "await secrets.getSecretValue({ SecretId: \"prod/token\" })", "c"),
    ("password", "Environment.GetEnvironmentVariable(\"DB_PASSWORD\")", "c"),
    ("api_key", "settings.API_KEY", "c"),
    ("secret_key", "env(\"SECRET_KEY\")", "c"),
    ("password", "$(cat /run/secrets/db_password)", "s"),
    ("token", "$(gh auth token)", "s"),
    ("password", "self.password", "c"),
    ("token", "request.headers.get(\"Authorization\")", "c"),
    # masked or redacted values
    ("password", "********", "s"),
    ("api_key", "sk-...a1b2", "s"),
    ("token", "[REDACTED]", "s"),
    ("secret", "<redacted>", "s"),
    ("api_key", "****************a9f3", "s"),
    ("password", "•••••••", "s"),
    ("token", "ghp_****", "s"),
    ("client_secret", "REDACTED", "s"),
    ("access_key", "AKIA****************", "s"),
    ("api_key", "sk_live_...4242", "s"),
    # documented example keys
    ("aws_access_key_id", "AKIAIOSFODNN7EXAMPLE", "s"),
    ("aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "s"),
    ("stripe_key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "s"),
    ("jwt_secret", "your-256-bit-secret", "s"),
    # hashes and checksums
    ("sha256", "«~sha256»", "s"),
    ("checksum", "sha256:«~sha256»", "s"),
    ("digest", "sha256:«~sha256»", "s"),
    ("commit", "«~sha1»", "s"),
    ("integrity", "«~sha512»", "s"),
    ("integrity", "«~sri384»", "s"),
    ("md5", "«~md5»", "s"),
    ("etag", "\\\"«~etag»\\\"", "s"),
    ("revision", "«~sha1»", "s"),
    ("password_hash", "$argon2id$v=19$m=65536,t=3,p=4$«~nonce»$«~kid»", "s"),
    ("file_hash", "«~sha256»", "s"),
    ("image", "ghcr.io/acme/api@sha256:«~sha256»", "s"),
    ("token_hash", "«~sha256»", "s"),
    ("build_id", "«~short»", "s"),
    # ids
    ("request_id", "«~uuid»", "s"),
    ("trace_id", "«~md5»", "s"),
    ("instance_id", "«~ec2»", "s"),
    ("vpc_id", "«~vpc»", "s"),
    ("security_group_id", "«~sg»", "s"),
    ("ami", "«~ami»", "s"),
    ("role_arn", "arn:aws:iam::«~acct»:role/deploy", "s"),
    ("kms_key_id", "arn:aws:kms:eu-west-1:«~acct»:key/«~uuid»", "s"),
    ("uid", "«~uuid»", "s"),
    ("client_id", "«~uuid»", "s"),
    ("tenant_id", "«~uuid»", "s"),
    ("subscription_id", "«~uuid»", "s"),
    ("access_key_id", "«~uuid»", "s"),
    ("key_id", "«~kid»", "s"),
    ("kid", "«~kid»", "s"),
    ("secret_id", "«~uuid»", "s"),
    ("token_id", "«~ulid»", "s"),
    ("product_id", "«~b64id»", "s"),
    ("x_request_id", "«~reqid»", "s"),
    ("session_id_cookie_name", "sessionid", "s"),
    ("api_key_id", "«~ulid»", "s"),
    ("app_id", "«~num»", "s"),
    # public keys and certificates
    ("public_key", "ssh-ed25519 «~ed» deploy@ci", "s"),
    ("ssh_public_key", "ssh-rsa «~rsa» admin@bastion", "s"),
    ("public_key", "«~pubec»", "s"),
    ("certificate", "-----BEGIN CERTIFICATE-----\\n«~cert»\\n-----END CERTIFICATE-----", "s"),
    ("ca_cert", "«~cert»", "s"),
    ("fingerprint", "«~fp»", "s"),
    ("host_key_fingerprint", "«~fp256»", "s"),
    ("gpg_key_id", "«~gpg»", "s"),
    ("publishable_key", "pk_test_«~an24»", "s"),
    ("signing_key_id", "«~gpg»", "s"),
    # base64 of non-secret data
    ("icon", "data:image/png;base64,«~png»", "s"),
    ("font", "data:font/woff2;base64,«~woff»", "s"),
    ("logo_base64", "«~png»", "s"),
    ("data", "«~b64txt»", "s"),
    # versions, labels, words, schemas, paths, URLs
    ("version", "«~ver»", "s"),
    ("token_version", "v2", "s"),
    ("password_label", "Password", "s"),
    ("token_type", "Bearer", "s"),
    ("auth", "required", "s"),
    ("secret_type", "kubernetes.io/dockerconfigjson", "s"),
    ("password_policy", "strong", "s"),
    ("api_key_header", "X-API-Key", "s"),
    ("password", "string", "s"),
    ("token", "null", "c"),
    ("secret", "true", "c"),
    ("api_key", "", "s"),
    ("private_key_path", "/etc/ssl/private/server.key", "s"),
    ("key_file", "~/.ssh/id_ed25519", "s"),
    ("credentials_file", "${HOME}/.aws/credentials", "s"),
    ("token_url", "https://oauth2.googleapis.com/token", "s"),
    ("database_url", "postgres://db.internal:5432/app", "s"),
    ("auth_url", "https://login.microsoftonline.com/«~uuid»/oauth2/v2.0/token", "s"),
    ("secret_key_base_env", "SECRET_KEY_BASE", "s"),
    ("password_min_length", "12", "c"),
    ("token_ttl", "3600", "c"),
]

# whole lines: schemas, type definitions, labels, logs, CLI, headers
NEGL = [
    ("ts", "interface Credentials { apiKey: string; secretKey?: string; token: string | null }"),
    ("go", "type Config struct {\n\tAPIKey    string `json:\"api_key\" env:\"API_KEY\"`\n\tPassword  string `json:\"password\"`\n}"),
    ("rust", "pub struct Auth { pub token: Option<String>, pub password: SecretString }"),
    ("py", "class Settings(BaseSettings):\n    api_key: SecretStr\n    db_password: str = Field(..., env=\"DB_PASSWORD\")"),
    ("java", "@Value(\"${stripe.api-key}\")\nprivate String stripeApiKey;"),
    ("kotlin", "val apiKey: String = BuildConfig.API_KEY"),
    ("csharp", "public string ClientSecret { get; set; } = string.Empty;"),
    ("jsonschema", "\"password\": {\"type\": \"string\", \"minLength\": 12, \"format\": \"password\", \"writeOnly\": true}"),
    ("openapi", "securitySchemes:\n  ApiKeyAuth:\n    type: apiKey\n    in: header\n    name: X-API-Key"),
    ("graphql", "type Mutation { resetPassword(token: String!, newPassword: String!): Boolean }"),
    ("sql", "CREATE TABLE api_keys (id uuid PRIMARY KEY, key_hash char(64) NOT NULL, prefix varchar(8));"),
    ("proto", "message LoginRequest { string username = 1; string password = 2; }"),
    ("k8s", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-credentials\n        key: password"),
    ("k8s", "metadata:\n  name: api\n  uid: «~uuid»\n  resourceVersion: \"48213\""),
    ("helm", "apiKey: {{ required \"apiKey is required\" .Values.apiKey | quote }}"),
    ("gha", "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  GITHUB_TOKEN: ${{ github.token }}"),
    ("terraform", "password = var.db_password\nsecret_string = data.aws_secretsmanager_secret_version.db.secret_string"),
    ("terraform", "resource \"random_password\" \"db\" {\n  length  = 32\n  special = true\n}"),
    ("ansible", "db_password: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=secret/data/db:password') }}\""),
    ("ansible", "api_token: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  «~sha256»"),
    ("compose", "secrets:\n  db_password:\n    file: ./secrets/db_password.txt"),
    ("docker", "RUN --mount=type=secret,id=npm_token NPM_TOKEN=$(cat /run/secrets/npm_token) npm ci"),
    ("cli", "aws secretsmanager get-secret-value --secret-id prod/db/password --query SecretString --output text"),
    ("cli", "kubectl create secret generic db-credentials --from-literal=password=\"$DB_PASSWORD\""),
    ("cli", "vault kv get -field=password secret/prod/db"),
    ("cli", "gh secret set NPM_TOKEN < token.txt"),
    ("cli", "openssl dgst -sha256 release.tar.gz\nSHA2-256(release.tar.gz)= «~sha256»"),
    ("cli", "git log --oneline -1\n«~short» fix: rotate API token handling"),
    ("cli", "docker pull redis@sha256:«~sha256»"),
    ("cli", "ssh-keygen -lf ~/.ssh/id_ed25519.pub\n256 «~fp256» deploy@ci (ED25519)"),
    ("cli", "mysql -u root -p\"$MYSQL_ROOT_PASSWORD\" -h 127.0.0.1"),
    ("cli", "psql \"postgresql://app@db.internal:5432/app?sslmode=require\""),
    ("header", "Authorization: Bearer ${ACCESS_TOKEN}"),
    ("header", "X-Request-Id: «~uuid»"),
    ("header", "ETag: W/\"«~etag»\""),
    ("header", "Content-Security-Policy: script-src 'self' 'nonce-«~nonce»'"),
    ("header", "WWW-Authenticate: Bearer realm=\"api\", error=\"invalid_token\""),
    ("header", "Authorization: Basic <base64(user:password)>"),
    ("header", "X-Amz-Content-Sha256: «~sha256»"),
    ("header", "Set-Cookie: csrftoken=; Max-Age=0; Path=/"),
    ("log", "2026-03-01T10:02:11Z INFO auth: token validated for user_id=«~num» request_id=«~uuid»"),
    ("log", "2026-03-01T10:02:12Z WARN api key missing for tenant «~uuid»; falling back to anonymous"),
    ("log", "level=error msg=\"invalid password\" user=alice attempts=3"),
    ("log", "[INFO] Loaded secret 'prod/db-password' version «~uuid» from Secrets Manager"),
    ("log", "DEBUG token refresh scheduled in 3540s (kid=«~kid»)"),
    ("log", "Uploading artifact sha256=«~sha256» size=18234112"),
    ("log", "GET /api/v1/keys/«~ulid» 200 12ms"),
    ("log", "ERROR: password authentication failed for user \"postgres\""),
    ("html", "<script src=\"https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.min.js\" integrity=\"«~sri384»\" crossorigin=\"anonymous\"></script>"),
    ("html", "<img alt=\"logo\" src=\"data:image/png;base64,«~png»\">"),
    ("css", "@font-face { font-family: Inter; src: url(data:font/woff2;base64,«~woff») format('woff2'); }"),
    ("css", ".api-key-input { letter-spacing: 0.2em; } .token-badge--expired { color: var(--red-600); }"),
    ("i18n", "\"apiKeyHint\": \"Find your API key under Settings › Developers\","),
    ("i18n", "\"passwordTooShort\": \"Das Passwort muss mindestens 12 Zeichen lang sein\","),
    ("i18n", "token.expired=Votre jeton a expiré, veuillez vous reconnecter"),
    ("i18n", "\"secret_key_label\": \"Clave secreta\","),
    ("lock", "\"node_modules/lodash\": {\n  \"version\": \"4.17.21\",\n  \"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz\",\n  \"integrity\": \"«~sha512»\"\n}"),
    ("lock", "[[package]]\nname = \"serde\"\nversion = \"1.0.203\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"«~sha256»\""),
    ("lock", "golang.org/x/crypto v0.23.0 h1:«~kid»="),
    ("lock", "requests==2.32.3 \\\n    --hash=sha256:«~sha256»"),
    ("lock", "github.com/stretchr/testify v1.9.0/go.mod h1:«~kid»="),
    ("gomod", "require github.com/acme/tokenizer v0.0.0-20260301120000-«~short»«~short»"),
    ("py", "api_key = None  # set via ACME_API_KEY"),
    ("py", "if not password:\n    raise ValueError(\"password is required\")"),
    ("py", "token = jwt.encode(payload, settings.JWT_SECRET, algorithm=\"HS256\")"),
    ("py", "hashed = hashlib.sha256(api_key.encode()).hexdigest()"),
    ("js", "const token = req.headers.authorization?.split(' ')[1];"),
    ("js", "const apiKey = useSecret('stripe-api-key');"),
    ("js", "expect(redact('password=hunter2')).toBe('password=[REDACTED]');"),
    ("go", "token, err := os.ReadFile(\"/var/run/secrets/kubernetes.io/serviceaccount/token\")"),
    ("go", "secret := mustEnv(\"WEBHOOK_SECRET\")"),
    ("java", "String password = new String(console.readPassword(\"Password: \"));"),
    ("ruby", "Rails.application.credentials.dig(:aws, :secret_access_key)"),
    ("php", "$apiKey = getenv('MAILGUN_API_KEY') ?: throw new RuntimeException('missing key');"),
    ("rust", "let token = std::env::var(\"GITHUB_TOKEN\").expect(\"GITHUB_TOKEN not set\");"),
    ("csharp", "var connStr = builder.Configuration.GetConnectionString(\"Default\");"),
    ("shell", "read -rs -p 'Password: ' PASSWORD"),
    ("shell", "export API_KEY=$(op read \"op://Private/Acme/api key\")"),
    ("shell", "TOKEN=\"$(cat ~/.config/acme/token)\""),
    ("ini", "[database]\nhost = db.internal\nuser = app\npassword =\nport = 5432"),
    ("env", "# API_KEY=\n# SECRET_KEY=<generate with: openssl rand -hex 32>"),
    ("env", "STRIPE_SECRET_KEY=sk_test_...\nSTRIPE_WEBHOOK_SECRET=whsec_..."),
    ("toml", "[auth]\nprovider = \"github\"\nclient_id = \"Iv1.«~gpg»\"\nscopes = [\"read:user\"]"),
    ("yaml", "tls:\n  certFile: /etc/tls/tls.crt\n  keyFile: /etc/tls/tls.key\n  caFile: /etc/tls/ca.crt"),
    ("yaml", "auth:\n  type: oauth2\n  tokenUrl: https://auth.acme.io/oauth/token\n  scopes: [read, write]"),
    ("json", "{\"alg\": \"RS256\", \"kid\": \"«~kid»\", \"use\": \"sig\", \"e\": \"AQAB\"}"),
    ("json", "{\"error\": \"invalid_client\", \"error_description\": \"Client authentication failed\"}"),
    ("json", "{\"token_type\": \"Bearer\", \"expires_in\": 3600, \"scope\": \"repo read:org\"}"),
    ("md", "Set `OPENAI_API_KEY` to your key from https://platform.openai.com/api-keys (it starts with `sk-`)."),
    ("md", "| Variable | Description |\n| `DB_PASSWORD` | Password of the app database user |"),
    ("prose", "Rotate the deploy token every 90 days; the old token stops working an hour after the new one is issued."),
    ("prose", "The key id «~gpg» belongs to the release signing key; verify with gpg --verify."),
    ("xml", "<add key=\"ApiKey\" value=\"\" />\n<add key=\"ApiKeySource\" value=\"KeyVault\" />"),
    ("xml", "<password>${env.MAVEN_PASSWORD}</password>"),
    ("xml", "<DigestValue>«~b64txt»</DigestValue>"),
    ("gradle", "password = project.findProperty(\"ossrhPassword\") ?: System.getenv(\"OSSRH_PASSWORD\")"),
]


# scanners' own negatives: a vendor's prefix on a value of the wrong
# length or alphabet, a vendor's name beside its public ids, and long
# values made of words, names, dates and paths
G.update({
    "~an14": lambda: mixed(AL, 14),
    "~an16": lambda: mixed(AL, 16),
    "~slackid": lambda: "U0" + rs(UP + DG, 8),
    "~gcid": lambda: str(R.randint(10**11, 10**12)) + "-" + rs(LO + DG, 32) + ".apps.googleusercontent.com",
    "~mbpk": lambda: "pk.eyJ1IjoiYWNtZSIsImEiOiJ" + rs(AL, 20) + "In0." + rs(US, 22),
    "~ip": lambda: "10.%d.%d.%d" % (R.randint(0, 255), R.randint(0, 255), R.randint(1, 254)),
})
NEGV2 = [
    ("github_token", "ghp_" + "abcdEFGH1234"),
    ("aws_access_key_id", "AKIA" + "abcdefghijklmnop"),
    ("slack_token", "xoxb-not-a-real-token"),
    ("stripe_key", "sk_live_12345"),
    ("gitlab_token", "glpat-short"),
    ("npm_token", "npm_TOKEN_PLACEHOLDER"),
    ("openai_api_key", "sk-proj-...."),
    ("github_sha", "«~sha1»"),
    ("sentry_release", "«~sha1»"),
    ("datadog_trace_id", "«~md5»"),
    ("stripe_customer", "cus_«~an14»"),
    ("stripe_price_id", "price_«~an24»"),
    ("stripe_account", "acct_«~an16»"),
    ("stripe_publishable_key", "pk_live_«~an24»"),
    ("slack_user_id", "«~slackid»"),
    ("google_client_id", "«~gcid»"),
    ("mapbox_public_token", "«~mbpk»"),
    ("twilio_phone_number", "+14155550123"),
    ("secret_key", "ThisIsMyFavoriteVariableName"),
    ("password_field", "user_password_confirmation"),
    ("api_key", "STRIPE_SECRET_KEY_PRODUCTION"),
    ("token_file", "service-account-prod-2026.json"),
    ("auth_class", "com.acme.security.ApiKeyAuthenticationFilter"),
    ("token_expiry", "2026-12-31T23:59:59Z"),
    ("secret_name", "tls-acme-prod-2026"),
    ("password_reset_path", "/account/password/reset"),
    ("api_key_env", "ACME_API_KEY"),
    ("token_audience", "https://api.acme.io/"),
    ("secret_backend", "AWSSecretsManager"),
    ("db_host", "«~ip»"),
    ("access_token_cookie", "__Host-access_token"),
    ("client_secret_setting", "SOCIAL_AUTH_GITHUB_SECRET"),
    ("private_key_id", "«~sha1»"),
    ("api_key", "abcdefghijklmnopqrstuvwxyz"),
    ("secret", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
    ("password", "P@ssw0rd"),
    ("token", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"),
    ("apiKey", "YOUR-API-KEY-GOES-HERE-0000000000"),
    ("jwt_public_key", "«~pubec»"),
    ("webhook_url", "https://hooks.acme.io/services/incoming"),
]

# secrets: (key name, generator)
POSV = [
    ("api_key", "an32"), ("password", "pw"), ("client_secret", "us43"), ("secret_key", "an50"),
    ("auth_token", "hex40"), ("token", "an40"), ("db_password", "pw"), ("access_token", "us64"),
    ("private_key", "an64"), ("webhook_secret", "whsec"), ("stripe_secret_key", "sklive"),
    ("github_token", "ghp"), ("gitlab_token", "glpat"), ("slack_bot_token", "xoxb"),
    ("aws_secret_access_key", "awssec"), ("aws_access_key_id", "akia"), ("openai_api_key", "oai"),
    ("anthropic_api_key", "ant"), ("sendgrid_api_key", "sg"), ("npm_token", "npm"),
    ("huggingface_token", "hf"), ("twilio_api_secret", "an32"), ("datadog_api_key", "hex32"),
    ("mailgun_api_key", "mgkey"), ("shopify_access_token", "shpat"), ("google_api_key", "aiza"),
    ("digitalocean_token", "dop"), ("vault_token", "hvs"), ("pypi_token", "pypi"),
    ("jwt_secret", "an64"), ("session_secret", "hex64"), ("encryption_key", "azkey"),
    ("signing_secret", "hex32"), ("api_secret", "an40"), ("app_password", "pw"),
    ("smtp_password", "pw"), ("redis_password", "an24"), ("admin_token", "lo26"),
    ("cloudflare_api_token", "us40"), ("sentry_auth_token", "sntryu"), ("linear_api_key", "lin"),
    ("doppler_token", "dppt"), ("groq_api_key", "gsk"), ("postman_api_key", "pmak"),
    ("grafana_token", "glsa"), ("databricks_token", "dapi"), ("telegram_bot_token", "tg"),
    ("notion_token", "ntn"), ("supabase_service_key", "jwt"), ("basic_auth", "basic"),
]

# syntaxes for a key and value: {K} UPPER_SNAKE, {k} snake, {c} camel,
# {C} Pascal, {d} kebab, {H} header name; {v} the value
SYN_S = [
    ("env", "{K}={v}"),
    ("env", "export {K}=\"{v}\""),
    ("yaml", "{k}: {v}"),
    ("yaml", "app:\n  {c}: \"{v}\"\n  region: eu-west-1"),
    ("json", "{{\"{k}\": \"{v}\", \"enabled\": true}}"),
    ("toml", "[service]\n{k} = \"{v}\""),
    ("py", "{K} = \"{v}\""),
    ("js", "const {c} = \"{v}\";"),
    ("go", "{c} := \"{v}\""),
    ("java", "private static final String {K} = \"{v}\";"),
    ("ruby", "config.{k} = '{v}'"),
    ("php", "'{k}' => '{v}',"),
    ("rust", "let {k} = \"{v}\";"),
    ("csharp", "var {c} = \"{v}\";"),
    ("cli", "acmectl deploy --{d} {v} --region eu-west-1"),
    ("cli", "acmectl deploy --{d}=\"{v}\""),
    ("header", "curl -H \"{H}: {v}\" https://api.acme.io/v1/status"),
    ("log", "2026-03-01T10:00:00Z INFO config loaded {k}={v} env=prod"),
    ("xml", "<add key=\"{C}\" value=\"{v}\" />"),
    ("ini", "[default]\n{k} = {v}"),
    ("properties", "acme.{d}={v}"),
    ("docker", "ENV {K}={v}"),
]
SYN_C = [
    ("py", "{k} = {v}"),
    ("js", "const {c} = {v};"),
    ("go", "{c} := {v}"),
    ("java", "String {c} = {v};"),
    ("ruby", "{k} = {v}"),
    ("rust", "let {k} = {v};"),
    ("csharp", "var {c} = {v};"),
    ("php", "${c} = {v};"),
    ("yaml", "{k}: {v}"),
]


def forms(k):
    parts = k.split("_")
    c = parts[0] + "".join(p.capitalize() for p in parts[1:])
    return {"k": k, "K": k.upper(), "c": c, "C": c[0].upper() + c[1:], "d": k.replace("_", "-"),
            "H": "X-" + "-".join(p.capitalize() for p in parts)}


def render(tmpl, key, v):
    f = forms(key)
    return tmpl.replace("{v}", "\0").format(**f).replace("\0", v)


def main():
    R.seed(2404)
    neg, pos = [], []
    for i, (k, v, mode) in enumerate(NEGV):
        syn = SYN_S if mode == "s" else SYN_C
        for j in (i * 5, i * 5 + 11):
            kind, t = syn[j % len(syn)]
            if mode == "s" and kind in ("json", "js", "java", "go", "rust", "csharp", "py", "header", "toml") and "\"" in v and "\\\"" not in v:
                kind, t = SYN_S[3]
            neg.append((kind, render(t, k, v)))
    # a third of the key/value negatives is enough beside the whole lines
    neg = neg[::2] + [x for x in NEGL]
    for i, (k, v) in enumerate(NEGV2):
        for j in (i * 3, i * 3 + 8):
            kind, t = SYN_S[j % len(SYN_S)]
            neg.append((kind, render(t, k, v)))
    for i, (k, g) in enumerate(POSV):
        for j in (i * 3, i * 3 + 7, i * 3 + 14):
            kind, t = SYN_S[j % len(SYN_S)]
            pos.append((kind, render(t, k, "«" + g + "»")))
    h.write_interleaved(pos, neg)


if __name__ == "__main__":
    main()
