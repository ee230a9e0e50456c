package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
)

// Vigil's own rules: what gitleaks' file lacks for agent traffic. Each is
// listed, with what it covers, in docs/redaction.md. Regex rules here share
// the engine of the gitleaks rules (keyword prefilter, windows, entropy);
// detectors are Go functions for what a regex says badly (assignments with
// code-aware value parsing, URLs, headers, PEM blocks with escaped newlines).

type vigilRegex struct {
	id, desc string
	prio     int
	keywords []string
	re       string
	entropy  float64
	// ctxValue: the secret is picked by context, so apply the full
	// placeholder policy (isPlaceholderValue), not just isMasked.
	ctxValue bool
	// shape: the secret is known by its shape alone, which may begin like
	// a variable reference ($2b$…): the mask check (isMasked) is skipped.
	shape bool
	check func(secret string) bool
}

var vigilRegexes = []vigilRegex{
	// LLM and AI providers.
	{id: "anthropic-token", desc: "Anthropic API key, admin key or Claude OAuth access/refresh token (sk-ant-api03-, sk-ant-admin01-, sk-ant-oat01-, sk-ant-ort01-).",
		keywords: []string{"sk-ant-"}, re: `\b(sk-ant-[a-z]{2,6}\d{2}-[A-Za-z0-9_-]{20,300})`, entropy: 3},
	{id: "openai-api-key-v2", desc: "OpenAI project, service-account and admin keys, with or without the T3BlbkFJ marker gitleaks requires.",
		keywords: []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-none-"}, re: `\b(sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,300})`, entropy: 3.5},
	{id: "sk-api-key", desc: "Keys of the common sk-<random> shape (OpenAI legacy, DeepSeek, Moonshot, DashScope, Langfuse and others).",
		prio: prioContext, keywords: []string{"sk-"}, re: `\b(sk-[A-Za-z0-9][A-Za-z0-9_-]{30,300})`, entropy: 3.5,
		check: func(s string) bool { return hasDigit(s) }},
	{id: "openrouter-api-key", desc: "OpenRouter API key (sk-or-v1-).",
		keywords: []string{"sk-or-v1-"}, re: `\b(sk-or-v1-[a-f0-9]{64})\b`},
	{id: "groq-api-key", desc: "Groq API key (gsk_).",
		keywords: []string{"gsk_"}, re: `\b(gsk_[A-Za-z0-9]{48,56})\b`, entropy: 3.5},
	{id: "xai-api-key", desc: "xAI (Grok) API key (xai-).",
		keywords: []string{"xai-"}, re: `\b(xai-[A-Za-z0-9]{60,100})\b`, entropy: 3.5},
	{id: "replicate-api-token", desc: "Replicate API token (r8_).",
		keywords: []string{"r8_"}, re: `\b(r8_[A-Za-z0-9]{37})\b`, entropy: 3.5},
	{id: "huggingface-token", desc: "Hugging Face token (hf_) with digits, which gitleaks' letters-only rule misses.",
		keywords: []string{"hf_"}, re: `\b(hf_[A-Za-z0-9]{30,40})\b`, entropy: 3},
	{id: "langsmith-api-key", desc: "LangSmith API key (lsv2_pt_, lsv2_sk_).",
		keywords: []string{"lsv2_"}, re: `\b(lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})\b`},
	{id: "tavily-api-key", desc: "Tavily search API key (tvly-).",
		keywords: []string{"tvly-"}, re: `\b(tvly-(?:dev-|prod-)?[A-Za-z0-9]{32})\b`, entropy: 3.5},
	{id: "fireworks-api-key", desc: "Fireworks AI API key (fw_).",
		keywords: []string{"fw_"}, re: `\b(fw_[A-Za-z0-9]{24,})\b`, entropy: 3.5},
	{id: "nvidia-api-key", desc: "NVIDIA NIM / build.nvidia.com API key (nvapi-).",
		keywords: []string{"nvapi-"}, re: `\b(nvapi-[A-Za-z0-9_-]{64})`, entropy: 3.5},
	{id: "cerebras-api-key", desc: "Cerebras API key (csk-).",
		keywords: []string{"csk-"}, re: `\b(csk-[a-z0-9]{48})\b`, entropy: 3.5},

	// Vendor formats gitleaks' file gets too narrow.
	{id: "stripe-secret-key", desc: "Stripe secret and restricted keys (sk_live_, rk_live_, sk_test_ …) of any documented length (up to 255), wherever they end.",
		keywords: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"}, re: `\b((?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{16,247})\b`, entropy: 3},
	{id: "newrelic-api-key", desc: "New Relic user and admin API keys (NRAK-, NRAA-) without the product name gitleaks requires next to them.",
		keywords: []string{"nrak-", "nraa-"}, re: `\b(NRA[AK]-[A-Z0-9]{27})\b`, entropy: 3},
	{id: "azure-client-secret", desc: "Azure AD / Entra ID client secret (…Q~…) between any punctuation (gitleaks' rule accepts only some).",
		keywords: []string{"q~"}, re: `(?:^|[^A-Za-z0-9_~.-])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|$)`, entropy: 3},
	{id: "pypi-token", desc: "PyPI and TestPyPI API tokens (pypi-AgE… macaroons) for any index, not only pypi.org.",
		keywords: []string{"pypi-age"}, re: `\b(pypi-AgE[A-Za-z0-9_-]{50,})`, entropy: 3},
	{id: "supabase-token", desc: "Supabase personal access token (sbp_ and 40 hex digits).",
		keywords: []string{"sbp_"}, re: `\b(sbp_[a-f0-9]{40})\b`, entropy: 3},
	{id: "figma-token", desc: "Figma personal access token (figd_).",
		keywords: []string{"figd_"}, re: `\b(figd_[A-Za-z0-9_-]{40,})`, entropy: 3.5},
	{id: "stripe-webhook-secret", desc: "Stripe webhook signing secret (whsec_).",
		keywords: []string{"whsec_"}, re: `\b(whsec_[A-Za-z0-9+/=]{32,})`, entropy: 3.5},
	{id: "mapbox-secret-token", desc: "Mapbox secret access token (sk.eyJ1Ijoi…, a base64 JSON payload naming the user), without the word mapbox gitleaks requires next to it.",
		keywords: []string{"sk.eyj1ijoi"}, re: `\b(sk\.eyJ1Ijoi[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,})`, entropy: 3.5},
	{id: "telegram-bot-token", desc: "Telegram bot token (<bot id>:AA…), also inside api.telegram.org/bot<token>/ URLs.",
		keywords: []string{":aa"}, re: `(?:\bbot|\b)(\d{6,12}:AA[0-9A-Za-z_-]{33})(?:[^0-9A-Za-z_-]|$)`, entropy: 3},

	// Vendor formats with a fixed prefix or shape that gitleaks' file lacks.
	{id: "okta-api-token", desc: "Okta API token after the SSWS scheme (00 and 40 base64url characters), in or out of an Authorization header.",
		keywords: []string{"ssws"}, re: `\bSSWS\s{1,4}(00[A-Za-z0-9_-]{40})\b`, entropy: 3},
	{id: "dependency-track-api-key", desc: "OWASP Dependency-Track API key (odt_, optionally with its key prefix and an underscore).",
		keywords: []string{"odt_"}, re: `\b(odt_[A-Za-z0-9]{8,64}(?:_[A-Za-z0-9]{16,64})?)\b`, entropy: 3, check: hasDigit},
	{id: "newrelic-key", desc: "New Relic Insights query keys (NRIQ-), Synthetics keys (NRSP-) and license keys (36 hex digits then NRAL).",
		keywords: []string{"nriq-", "nrsp-", "nral"}, re: `\b(NR(?:IQ|SP)-[A-Za-z0-9_-]{32}|[a-f0-9]{36}NRAL)\b`, entropy: 3},
	{id: "tailscale-key", desc: "Tailscale auth, API, OAuth client and webhook keys (tskey-auth-…, tskey-api-…).",
		keywords: []string{"tskey-"}, re: `\b(tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,32}-[A-Za-z0-9]{16,64})\b`, entropy: 3},
	{id: "pinecone-api-key", desc: "Pinecone API key (pcsk_).",
		keywords: []string{"pcsk_"}, re: `\b(pcsk_[A-Za-z0-9]{4,16}_[A-Za-z0-9]{40,80})\b`, entropy: 3.5},
	{id: "e2b-api-key", desc: "E2B sandbox API key (e2b_ and 40 hex digits).",
		keywords: []string{"e2b_"}, re: `\b(e2b_[a-f0-9]{40})\b`, entropy: 3},
	{id: "firecrawl-api-key", desc: "Firecrawl API key (fc- and 32 hex digits).",
		keywords: []string{"fc-"}, re: `\b(fc-[a-f0-9]{32})\b`, entropy: 3},
	{id: "elevenlabs-api-key", desc: "ElevenLabs API key (sk_ and 48 hex digits).",
		keywords: []string{"sk_"}, re: `\b(sk_[a-f0-9]{48})\b`, entropy: 3},
	{id: "sonarqube-token", desc: "SonarQube / SonarCloud user, project and global analysis tokens (squ_, sqp_, sqa_ and 40 hex digits), without the word sonar gitleaks requires.",
		keywords: []string{"squ_", "sqp_", "sqa_"}, re: `\b(sq[upa]_[a-f0-9]{40})\b`, entropy: 3},
	{id: "neon-api-key", desc: "Neon API key (napi_).",
		keywords: []string{"napi_"}, re: `\b(napi_[a-z0-9]{64})\b`, entropy: 3.5},
	{id: "render-api-key", desc: "Render API key (rnd_).",
		keywords: []string{"rnd_"}, re: `\b(rnd_[A-Za-z0-9]{32})\b`, entropy: 3.5},
	{id: "circleci-token", desc: "CircleCI personal and project API tokens (CCIPAT_, CCIPRJ_).",
		keywords: []string{"ccipat_", "cciprj_"}, re: `\b(CCIP(?:AT|RJ)_[A-Za-z0-9]{20,24}_[a-f0-9]{40})\b`, entropy: 3},
	{id: "nuget-api-key", desc: "NuGet.org API key (oy2 and 43 lower-case letters and digits).",
		keywords: []string{"oy2"}, re: `\b(oy2[a-z0-9]{43})\b`, entropy: 3.5, check: hasDigit},
	{id: "azure-devops-pat", desc: "Azure DevOps personal access token of the identifiable 84-character shape (AZDO at characters 77-80).",
		keywords: []string{"azdo"}, re: `\b([A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})\b`, entropy: 3.5},
	{id: "bitbucket-app-password", desc: "Bitbucket app password and Atlassian cloud admin token (ATBB, ATCTT3xFfG).",
		keywords: []string{"atbb", "atctt3xffg"}, re: `\b((?:ATBB|ATCTT3xFfG)[A-Za-z0-9_=.-]{28,})`, entropy: 3.5},
	{id: "salesforce-access-token", desc: "Salesforce session / OAuth access token (the 00D organisation id, !, then the session part).",
		keywords: []string{"00d"}, re: `\b(00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{80,120})`, entropy: 3.5},
	{id: "notion-integration-secret", desc: "Notion internal integration secret of the older shape (secret_ and 43 letters and digits).",
		keywords: []string{"secret_"}, re: `\b(secret_[A-Za-z0-9]{43})\b`, entropy: 3.5, check: hasDigit},
	{id: "supabase-secret-key", desc: "Supabase secret API key (sb_secret_).",
		keywords: []string{"sb_secret_"}, re: `\b(sb_secret_[A-Za-z0-9_-]{24,})`, entropy: 3.5},
	{id: "browserbase-api-key", desc: "Browserbase API key (bb_live_).",
		keywords: []string{"bb_live_"}, re: `\b(bb_live_[A-Za-z0-9_-]{20,})`, entropy: 3.5},
	{id: "netlify-pat", desc: "Netlify personal access token (nfp_), without the word netlify gitleaks requires.",
		keywords: []string{"nfp_"}, re: `\b(nfp_[A-Za-z0-9]{36,40})\b`, entropy: 3.5},
	{id: "contentful-pat", desc: "Contentful personal access token (CFPAT-).",
		keywords: []string{"cfpat-"}, re: `\b(CFPAT-[A-Za-z0-9_-]{43})`, entropy: 3.5},
	{id: "doppler-token", desc: "Doppler personal, service, service-account, CLI, SCIM and audit tokens (dp.pt., dp.st.[config.], dp.sa., dp.ct., dp.scim., dp.audit.); gitleaks' rule knows only dp.pt.",
		keywords: []string{"dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."}, re: `\b(dp\.(?:st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44})\b`, entropy: 3.5},
	{id: "posthog-personal-api-key", desc: "PostHog personal API key (phx_); the project key (phc_) is public.",
		keywords: []string{"phx_"}, re: `\b(phx_[A-Za-z0-9]{43})\b`, entropy: 3.5},
	{id: "square-oauth-secret", desc: "Square application OAuth secret (sq0csp- and 43 base64url characters).",
		keywords: []string{"sq0csp-"}, re: `\b(sq0csp-[A-Za-z0-9_-]{43})`, entropy: 3.5},
	{id: "meta-access-token", desc: "Meta (Facebook, Instagram, WhatsApp Business) user, page and system-user access tokens (EAA and 100 or more letters and digits), without the word facebook.",
		keywords: []string{"eaa"}, re: `\b(EAA[A-Za-z0-9]{100,400})\b`, entropy: 4, check: hasDigit},
	{id: "plaid-access-token", desc: "Plaid access token (access-sandbox-, access-development-, access-production- and a UUID), without the word plaid.",
		keywords: []string{"access-sandbox-", "access-development-", "access-production-"}, re: `\b(access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b`},
	{id: "putty-private-key", desc: "The private lines of a PuTTY private key file (.ppk, versions 2 and 3).",
		keywords: []string{"private-lines:"}, re: `(?s)Private-Lines:[ \t]*\d{1,3}\r?\n((?:[A-Za-z0-9+/=]+\r?\n){0,40}[A-Za-z0-9+/=]{4,64})(?:\r?\n|$)`},
	{id: "sql-password", desc: "The password of SQL's IDENTIFIED BY '…' (MySQL, MariaDB, Oracle CREATE/ALTER USER and GRANT).",
		prio: prioContext, keywords: []string{"identified"}, ctxValue: true,
		re: `(?i)\bIDENTIFIED\s+(?:WITH\s+['"]?\w+['"]?\s+)?BY\s+(?:PASSWORD\s+)?(?:'([^'\r\n]{3,128})'|"([^"\r\n]{3,128})"|([A-Za-z0-9_#$!@%^&*+=-]{3,128}))`},
	{id: "ldap-password-hash", desc: "An LDAP userPassword hash with its scheme ({SSHA}…, {SHA}, {SMD5}, {CRYPT}$6$…, {PBKDF2-SHA512}…, {ARGON2}…): offline guessing recovers weak passwords from it.",
		keywords: []string{"{ssha", "{sha", "{smd5}", "{md5}", "{crypt}", "{pbkdf2", "{argon2}"}, shape: true, entropy: 3,
		re: `(?i)\{(?:SSHA(?:256|384|512)?|SHA(?:256|384|512)?|SMD5|MD5|CRYPT|PBKDF2(?:-SHA(?:1|256|512))?|ARGON2)\}([A-Za-z0-9+/=$.,:-]{16,512})`},
	{id: "segment-api-token", desc: "Segment public API token (sgp_ and 64 letters and digits; Sourcegraph's sgp_ tokens have another shape).",
		keywords: []string{"sgp_"}, re: `\b(sgp_[A-Za-z0-9]{64})\b`, entropy: 3.5},
	{id: "presigned-url-signature", desc: "The signature of a signed URL or request: S3 (X-Amz-Signature), Google Cloud Storage (X-Goog-Signature), CloudFront and other signed URLs (Signature=, signature=) and AWS SigV4 Authorization headers (…, Signature=); a signed URL grants access to what it names until it expires.",
		keywords: []string{"signature="}, re: `(?i)(?:[?&;,]|\s|^)(?:X-(?:Amz|Goog)-)?Signature=([A-Za-z0-9%~_+/=-]{24,1000})`, entropy: 3, ctxValue: true,
		check: func(s string) bool { return hasDigit(s) && charClasses(s) >= 2 }},
	{id: "office-connector-webhook", desc: "A Microsoft Teams / Office 365 connector incoming-webhook URL in the older outlook.office.com and office.com forms (gitleaks' rule knows webhook.office.com/webhookb2).",
		keywords: []string{"incomingwebhook"},
		re:       `(?i)https://(?:[a-z0-9-]+\.)?(?:outlook\.)?office(?:365)?\.com/webhook(?:b2)?/([0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/[A-Za-z0-9]{32}/[0-9a-f-]{36})`},
	{id: "openvpn-static-key", desc: "An OpenVPN static key (tls-auth, tls-crypt, secret): the hex lines between -----BEGIN OpenVPN Static key V1----- and its END line.",
		keywords: []string{"begin openvpn static key"}, shape: true,
		re: `(?s)-----BEGIN OpenVPN Static key V1-----\r?\n((?:[0-9a-fA-F]+\r?\n){1,16})-----END OpenVPN Static key`},
	{id: "ssh2-private-key", desc: "A private key in the SSH2 (RFC 4716, ssh.com and PuTTYgen export) format: ---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ---- to its END line.",
		keywords: []string{"begin ssh2 encrypted private key", "begin ssh2 private key"}, shape: true,
		re: `(?s)---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----\r?\n((?:[^\r\n]*\r?\n){1,100}?)---- END SSH2`},
	{id: "webhook-url-token", desc: "The key in the path of an incoming-webhook URL (Mattermost, Rocket.Chat and others: https://host/hooks/<key>[/<token>]): whoever has it can post.",
		prio: prioContext, keywords: []string{"/hooks/", "/hook/", "/with/key/"}, ctxValue: true,
		re: `(?i)\bhttps?://[A-Za-z0-9.-]{1,253}(?::\d{1,5})?(?:/[\w.-]{1,64}){0,4}/(?:hooks?|with/key)/([A-Za-z0-9-]{16,64}(?:/[A-Za-z0-9_-]{20,80})?)(?:[^A-Za-z0-9/_-]|$)`,
		check: func(s string) bool {
			return hasDigit(s) && looksRandomToken(strings.NewReplacer("/", "", "-", "").Replace(s), 20, 3.5)
		}},
	{id: "split-vendor-token", desc: "A vendor token written as its prefix's literal joined to the rest ('sk_live_' + '…', \"ghp_\" \"…\", [\"AKIA\", \"…\"]), whatever name holds it: the rest is removed.",
		keywords: splitPrefixKeywords(), re: `(?s)(?:^|[^A-Za-z0-9_])["'\x60](?:sk_live_|rk_live_|sk-proj-|sk-ant-api03-|ghp_|gho_|ghs_|github_pat_|glpat-|xoxb-|xoxp-|AKIA|ASIA|npm_|AIza|hf_|pypi-)["'\x60]\s{0,8}(?:\+|\.|\.\.|,)?\s{0,8}(?:\\?\r?\n\s{0,40})?["'\x60]([A-Za-z0-9_-]{12,300})["'\x60]`,
		entropy: 3, check: func(s string) bool { return hasDigit(s) && looksRandomToken(s, 12, 3) }},
	{id: "twitch-stream-key", desc: "A Twitch stream key (live_<user id>_<30 letters and digits>), also at the end of an rtmp:// ingest URL.",
		keywords: []string{"live_"}, re: `\b(live_\d{6,12}_[A-Za-z0-9]{24,40})\b`, entropy: 3},
	{id: "redis-config-password", desc: "The password of redis.conf / valkey.conf requirepass and masterauth lines.",
		prio: prioContext, keywords: []string{"requirepass", "masterauth"}, ctxValue: true,
		re: `(?im)^[ \t]*(?:requirepass|masterauth)[ \t]+(?:"([^"\r\n]{3,256})"|([^\s"]{3,256}))[ \t]*$`},
	{id: "sasl-passwd-password", desc: "The password of a Postfix sasl_passwd line ([relay]:port user:password).",
		prio: prioContext, keywords: []string{"]:"}, ctxValue: true,
		re: `(?m)^[ \t]*\[[A-Za-z0-9.-]{1,253}\](?::\d{1,5})?[ \t]+[^\s:]{1,128}:([^\s]{3,256})[ \t]*$`},
	{id: "password-hash", desc: "Crypt(3) password hashes as /etc/shadow and htpasswd store them: bcrypt ($2a$, $2b$, $2y$), md5crypt and Apache apr1 ($1$, $apr1$), sha256crypt and sha512crypt ($5$, $6$) and yescrypt ($y$); offline guessing recovers weak passwords from them.",
		keywords: []string{"$2a$", "$2b$", "$2y$", "$1$", "$apr1$", "$5$", "$6$", "$y$"}, shape: true,
		re: `(\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}|\$(?:1|apr1)\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|\$[56]\$(?:rounds=\d{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}|\$y\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{1,86}\$[./A-Za-z0-9]{43})`},

	// Cloud credentials, metadata services, registries.
	{id: "aws-secret-access-key", desc: "AWS secret access key assigned to its usual names (env, credentials file, JSON from STS or the instance metadata service).",
		keywords: []string{"secret_access_key", "secretaccesskey", "secret-access-key", "aws_secret_key", "awssecretkey"},
		re:       `(?i)(?:secret_?access_?key|secret-access-key|aws_?secret_?key)["']?\s{0,4}(?::|=|=>|:=)\s{0,4}["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`, entropy: 3},
	{id: "aws-session-token", desc: "AWS temporary session token (aws_session_token, SessionToken, X-Amz-Security-Token).",
		keywords: []string{"session_token", "sessiontoken", "security-token", "securitytoken"},
		re:       `(?i)(?:session_?token|security-?token)["']?\s{0,4}(?::|=|=>|:=)\s{0,4}["']?([A-Za-z0-9/+=%]{100,1000})`, entropy: 3},
	{id: "google-oauth-access-token", desc: "Google OAuth access token (ya29.), as returned by the GCE metadata server and gcloud.",
		keywords: []string{"ya29."}, re: `\b(ya29\.[0-9A-Za-z_-]{30,})`, entropy: 3},
	{id: "google-oauth-refresh-token", desc: "Google OAuth refresh token (1//0).",
		keywords: []string{"1//0"}, re: `(1//0[0-9A-Za-z_-]{40,512})`, entropy: 3},
	{id: "google-oauth-client-secret", desc: "Google OAuth client secret (GOCSPX-).",
		keywords: []string{"gocspx-"}, re: `\b(GOCSPX-[A-Za-z0-9_-]{28})`, entropy: 3},
	{id: "azure-storage-account-key", desc: "Azure storage account key in a connection string (AccountKey=).",
		keywords: []string{"accountkey"}, re: `(?i)AccountKey\s{0,2}=\s{0,2}([A-Za-z0-9+/]{86}==)`},
	{id: "azure-sas-signature", desc: "Signature of an Azure shared access signature (SAS) URL or token (sig=).",
		keywords: []string{"sig="}, re: `[?&;]sig=([A-Za-z0-9%+/]{40,}(?:=|%3[dD]){0,2})`, entropy: 3},
	{id: "dockerhub-pat", desc: "Docker Hub personal or organisation access token (dckr_pat_, dckr_oat_).",
		keywords: []string{"dckr_pat_", "dckr_oat_"}, re: `\b(dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,})`, entropy: 3},
	{id: "discord-webhook-url", desc: "Discord webhook URL (id and token).",
		keywords: []string{"discord"}, re: `(?i)https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/(\d{5,30}/[A-Za-z0-9_-]{50,100})`},
	{id: "signed-note-private-key", desc: "Private key of Go's signed-note format (golang.org/x/mod/sumdb/note), as used for Vigil's audit checkpoints: PRIVATE+KEY+<name>+<hash>+<key>.",
		keywords: []string{"private+key+"}, re: `(PRIVATE\+KEY\+[^+\s]{1,128}\+[0-9a-f]{8}\+[A-Za-z0-9+/]{40,}={0,2})`},
	{id: "base64-private-key", desc: "A base64-encoded PEM private key (kubeconfig client-key-data, CI variables).",
		keywords: []string{"ls0tls1crudjti"}, re: `(LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2})`,
		check: func(s string) bool { return strings.Contains(decodeB64Prefix(s, 120), "PRIVATE KEY") }},
	{id: "json-web-token", desc: "JSON Web Token (header.payload.signature, base64url, both parts starting eyJ), signed or not (header.payload), whose header decodes to a JSON object.",
		keywords: []string{"eyj"}, re: `\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?)`, entropy: 3,
		check: jwtHeaderIsJSON},
	{id: "powershell-plaintext-password", desc: "The literal of PowerShell's ConvertTo-SecureString … -AsPlainText, a password written into a script.",
		prio: prioContext, keywords: []string{"convertto-securestring"}, ctxValue: true,
		re: `(?i)ConvertTo-SecureString\s+(?:-String\s+)?["']([^"'\r\n]{4,128})["']\s+-AsPlainText`},
	{id: "windows-net-user-password", desc: "The password of Windows' net user NAME PASSWORD (/add, /domain).",
		prio: prioContext, keywords: []string{"net user"}, ctxValue: true,
		re:    `(?i)\bnet\s+user\s+(?:"[^"\r\n]{1,64}"|[^\s"/]{1,64})\s+("[^"\r\n*]{4,128}"|[^\s"*/]{4,128})(?:\s+/|\s*$)`,
		check: func(s string) bool { return !isPlaceholderValue(strings.Trim(s, `"`)) }},
	{id: "windows-net-use-password", desc: "The password of Windows' net use \\\\SERVER\\SHARE PASSWORD /user:NAME (or /user:NAME PASSWORD).",
		prio: prioContext, keywords: []string{"net use"}, ctxValue: true,
		re:    `(?i)\bnet\s+use\s+(?:[A-Z]:\s+)?\S+\s+(?:("[^"\r\n*]{3,128}"|[^\s"*/]{3,128})\s+/u(?:ser)?:|/u(?:ser)?:\S+\s+("[^"\r\n*]{3,128}"|[^\s"*/]{3,128})(?:\s|$))`,
		check: func(s string) bool { return !isPlaceholderValue(strings.Trim(s, `"`)) }},
	{id: "smb-user-password", desc: "The password of a Samba client's -U USER%PASSWORD (smbclient, rpcclient, smbmap, smbcacls, nxc/crackmapexec).",
		prio: prioContext, keywords: []string{"smbclient", "rpcclient", "smbmap", "smbcacls", "crackmapexec", "nxc"}, ctxValue: true,
		re: `\b(?:smbclient|rpcclient|smbmap|smbcacls|crackmapexec|nxc)\b[^\n|;&]{0,200}?\s(?:-U|--user(?:name)?=?)\s*['"]?[^%\s'"]{1,64}%([^\s'"]{3,128})`},
	{id: "sqlplus-password", desc: "The password of Oracle's sqlplus / rman / expdp / impdp USER/PASSWORD@DB, and of a JDBC thin or OCI URL (jdbc:oracle:thin:USER/PASSWORD@…).",
		prio: prioContext, keywords: []string{"sqlplus", "rman", "expdp", "impdp", "sqlldr", "oracle:thin:", "oracle:oci:"}, ctxValue: true,
		re: `(?:\b(?:sqlplus|rman\s+target|expdp|impdp|sqlldr)\s+(?:-\w+\s+)*['"]?|\boracle:(?:thin|oci8?):)[A-Za-z][A-Za-z0-9_$#]{0,63}/([^@\s/'"]{3,128})@`},
	{id: "piped-password", desc: "A literal echoed into a program that reads a password, token or secret from its input: echo SECRET | sudo -S …, … | docker login --password-stdin, … | gh auth login --with-token, … | az devops login, and secret stores' writes (… | wrangler secret put NAME, … | gh secret set NAME, … | docker secret create NAME -, … | vercel env add NAME, … | gcloud secrets versions add NAME --data-file=-).",
		prio: prioContext, keywords: []string{"sudo", "password-stdin", "with-token", "devops login", "secret put", "secret set", "secrets set", "secret create", "env add", "data-file"}, ctxValue: true,
		re: `\b(?:echo|printf)\s+(?:-[ne]{1,2}\s+)?(?:"([^"\r\n$\x60]{3,128})"|'([^'\r\n]{3,128})'|([^\s'"|;&$\x60]{3,128}))\s*\|\s*(?:sudo\s+(?:-[A-Za-z]+\s+)*-S\b|[^|\n]{0,160}(?:--password-stdin|--with-token\b|\bdevops\s{1,4}login\b|\bsecrets?\s{1,4}(?:put|set|create)\s|\benv\s{1,4}add\s|--data-file[= ]-(?:\s|$)))`},
	{id: "hashicorp-vault-token", desc: "HashiCorp Vault service, batch and recovery tokens (hvs., hvb., hvr.) of any length from 24 characters; gitleaks' rule wants 90 or more.",
		keywords: []string{"hvs.", "hvb.", "hvr."}, re: `\b(hv[sbr]\.[A-Za-z0-9_-]{24,400})\b`, entropy: 3.5, check: hasDigit},
	{id: "honeycomb-api-key", desc: "Honeycomb ingest and management keys (hcaik_, hcxik_, hcamk_, hcxmk_).",
		keywords: []string{"hcaik_", "hcxik_", "hcamk_", "hcxmk_"}, re: `\b(hc[ax][im]k_[a-z0-9]{56,64})\b`, entropy: 3.5, check: hasDigit},
	{id: "terraform-variable-default", desc: "The default of a Terraform variable named like a secret (variable \"db_password\" { default = \"…\" }): the value is committed with the module.",
		prio: prioContext, keywords: []string{"variable"}, ctxValue: true,
		re: `(?i)(?s)\bvariable\s{1,4}"[\w-]{0,40}(?:password|passwd|secret|token|api_?key|access_?key|private_?key|credentials?)[\w-]{0,40}"\s{0,4}\{[^}]{0,300}?\bdefault\s{0,4}=\s{0,4}"([^"\r\n]{6,256})"`},
	{id: "client-constructor-key", desc: "A generated literal passed as the first argument of an API client's constructor (cohere.Client(\"…\"), new AcmeClient('…'), SDK(\"…\")): a client takes its key there.",
		prio: prioContext, keywords: []string{"client(\"", "client('", "api(\"", "api('", "sdk(\"", "sdk('"}, ctxValue: true,
		re:    `\b[A-Za-z_][\w.]{0,40}(?:Client|Api|API|SDK|Sdk)\(\s{0,4}["']([A-Za-z0-9_.+/=-]{20,200})["']`,
		check: func(s string) bool { return looksRandomToken(s, 20, 3.5) && hasDigit(s) }},
	{id: "pat-assignment", desc: "A generated value assigned to a name that ends in PAT (GITLAB_PAT, AZURE_DEVOPS_EXT_PAT, github_pat: …): a personal access token.",
		prio: prioContext, keywords: []string{"_pat=", "_pat:", "_pat\"", "_pat'", "_pat ", "-pat=", "-pat:"}, ctxValue: true,
		re:    `(?i)\b[A-Za-z0-9]{1,40}(?:[_-][A-Za-z0-9]{1,40}){0,6}[_-]PAT["']?\s{0,2}[:=]\s{0,2}["']?([A-Za-z0-9_-]{20,200})(?:[^A-Za-z0-9_-]|$)`,
		check: func(s string) bool { return looksRandomToken(s, 20, 3.5) && hasDigit(s) }},
	{id: "pgpass-password", desc: "The password of a .pgpass line (host:port:database:user:password) for PostgreSQL's port or any port (*).",
		prio: prioContext, keywords: []string{":5432:", ":*:"}, ctxValue: true,
		re: `(?m)^[ \t]*[A-Za-z0-9_.*-]{1,253}:(?:5432|\*):[^:\s]{1,63}:[^:\s]{1,63}:([^\s]{3,128})[ \t]*$`},
	{id: "base64-encoded-token", desc: "A vendor token (ghp_, github_pat_, glpat-, sk-proj-, sk-ant-, sk_live_, xoxb-, AKIA, npm_, AIza …) hidden as base64 (base64.b64decode(\"Z2hwX…\"), atob('…'), a CI variable): the literal starts with the encoding of the prefix and decodes to a key of random characters.",
		keywords: b64PrefixKeywords(), re: `(?:^|[^A-Za-z0-9+/])((?:` + strings.Join(b64PrefixKeywords(), "|") + `)[A-Za-z0-9+/]{16,600}={0,2})`,
		check: isB64VendorToken},
	{id: "positional-password-argument", desc: "A literal password passed by position to a call that takes one: the third argument of new PDO / PDO->__construct, mysqli_connect, new mysqli, DriverManager.getConnection, ldap_bind, ftp_login (also as PHP stack traces print them); the second of NetworkCredential, UsernamePasswordCredentials, HTTPBasicAuth, HTTPDigestAuth, BasicAuth, SetBasicAuth, PasswordAuthentication, requests' auth=(user, password) and a client's .login(user, password).",
		prio: prioContext, keywords: []string{"pdo(", "__construct(", "mysqli_connect(", "mysqli(", "getconnection(", "ldap_bind(", "ftp_login(", "credential(", "credentials(", "basicauth(", "digestauth(", "passwordauthentication(", ".login(", "auth=(", "auth = ("}, ctxValue: true,
		re:    `(?:\b(?:PDO|PDO->__construct|PDO::__construct|mysqli_connect|mysqli|getConnection|ldap_bind|ftp_login)\(\s*(?:'[^'\r\n]{0,200}'|"[^"\r\n]{0,200}"|[$\w.\->\[\]]{1,80})\s*,\s*(?:'[^'\r\n]{0,200}'|"[^"\r\n]{0,200}"|[$\w.\->\[\]]{1,80})\s*,\s*(?:'([^'\r\n]{3,128})'|"([^"\r\n]{3,128})")\s*[,)]|\b(?:NetworkCredential|UsernamePasswordCredentials|HTTPBasicAuth|HTTPDigestAuth|BasicAuth|SetBasicAuth|PasswordAuthentication|\.login|auth\s?=\s?)\(\s*(?:'[^'\r\n]{0,200}'|"[^"\r\n]{0,200}"|[$\w.\->\[\]]{1,80})\s*,\s*(?:'([^'\r\n]{3,128})'|"([^"\r\n]{3,128})")\s*[,)])`,
		check: func(s string) bool { return assignedSecret(s, namePassword, true, 0) }},
	{id: "basic-auth-credentials", desc: "Base64 user:password after the word Basic, outside an Authorization header too; kept only if it decodes to user:password.",
		prio: prioContext, keywords: []string{"basic"}, re: `(?i)\bbasic\s{1,4}([A-Za-z0-9+/]{8,512}={0,2})(?:[^A-Za-z0-9+/=]|$)`,
		check: isBasicCredential},
}

// gitleaksChecks adds a structural check to vendored gitleaks rules, by id:
// a candidate the check rejects is not reported.
var gitleaksChecks = map[string]func(string) bool{
	"jwt": jwtHeaderIsJSON,
}

// jwtHeaderIsJSON reports whether the first part of a JWT decodes
// (base64url, padded or not) to a JSON object, as every JWT header does.
func jwtHeaderIsJSON(tok string) bool {
	h, _, _ := strings.Cut(tok, ".")
	h = strings.TrimRight(h, "=")
	d, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return false
	}
	d = bytes.TrimSpace(d)
	return len(d) > 1 && d[0] == '{' && json.Valid(d)
}

// isBasicCredential reports whether b64 decodes to printable "user:password".
func isBasicCredential(b64 string) bool {
	d := decodeB64Prefix(b64, len(b64))
	i := strings.IndexByte(d, ':')
	if i < 0 || i == len(d)-1 || len(d) < 3 {
		return false
	}
	for j := 0; j < len(d); j++ {
		if d[j] < 0x20 || d[j] == 0x7f {
			return false
		}
	}
	return !isPlaceholderValue(d[i+1:])
}

// decodeB64Prefix decodes up to n characters of standard base64, ignoring
// what does not decode, and returns the bytes as a string.
func decodeB64Prefix(s string, n int) string {
	s = s[:min(len(s), n)]
	s = strings.TrimRight(s, "=")
	s = s[:len(s)/4*4]
	d, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return ""
	}
	return string(d)
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// b64Prefixes are the vendor prefixes whose base64 encoding
// base64-encoded-token looks for.
var b64Prefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "glrt-", "sk-proj-", "sk-ant-", "sk-svcacct-",
	"sk_live_", "rk_live_", "xoxb-", "xoxp-", "xoxa-", "xoxe-", "AKIA", "ASIA", "npm_", "AIza", "pypi-AgE", "dop_v1_", "shpat_", "hvs.", "dckr_pat_"}

// b64PrefixKeywords returns, for each prefix, the base64 characters that
// encode it whatever follows: a literal that starts with the encoding of
// ghp_ starts with Z2hwX.
func b64PrefixKeywords() []string {
	out := make([]string, 0, len(b64Prefixes))
	for _, p := range b64Prefixes {
		e := base64.StdEncoding.EncodeToString([]byte(p))
		out = append(out, e[:len(p)*8/6])
	}
	return out
}

// isB64VendorToken reports whether s decodes to a vendor prefix and a
// random rest of letters, digits, - and _.
func isB64VendorToken(s string) bool {
	d := decodeB64Prefix(s, len(s))
	for _, p := range b64Prefixes {
		if rest, ok := strings.CutPrefix(d, p); ok {
			for i := 0; i < len(rest); i++ {
				if c := rest[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
					return false
				}
			}
			return looksRandomToken(rest, 16, 3) && hasDigit(rest)
		}
	}
	return false
}

// splitPrefixKeywords are the vendor prefixes of split-vendor-token as
// closed literals ('ghp_', "ghp_").
func splitPrefixKeywords() []string {
	var out []string
	for _, p := range []string{"sk_live_", "rk_live_", "sk-proj-", "sk-ant-api03-", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "AKIA", "ASIA", "npm_", "AIza", "hf_", "pypi-"} {
		out = append(out, p+"'", p+`"`, p+"`")
	}
	return out
}

// vigilDetectors are the rules written as Go functions.
var vigilDetectors = []struct {
	id, desc string
	prio     int
	keywords []string
	detect   func(sc *scan, hits []ruleHit)
}{
	{"mailchimp-key", "Mailchimp API key (32 hex digits, -us and the data-center number) without the word mailchimp gitleaks requires next to it.",
		prioSpecific, []string{"-us"}, detectMailchimp},
	{"slack-token", "Slack tokens (xoxa-, xoxb-, xoxe-, xoxo-, xoxp-, xoxr-, xoxs-) in the legacy and short shapes gitleaks' rules leave out: digit groups, then a random part of 8 or more letters and digits that mixes both.",
		prioSpecific, []string{"xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-"}, detectSlackToken},
	{"discord-bot-token", "Discord bot token: base64 of the bot's numeric user id (24-26 characters, starting M, N or O), a 6-character timestamp and a 27-38 character HMAC, joined by dots.",
		prioSpecific, nil, detectDiscordToken},
	{"kubernetes-secret-data", "Values of the data: and stringData: blocks of a Kubernetes Secret manifest (kind: Secret), in YAML or JSON as kubectl prints them, whatever their keys are named; base64 values that decode to a placeholder are kept.",
		prioSpecific, []string{"data:", "data\":"}, detectK8sSecretData},
	{"private-key-block", "PEM private keys (RSA, EC, DSA, OpenSSH, PKCS#8, encrypted, PGP) spanning lines, with real or JSON-escaped (\\n) newlines, and truncated ones without an END line.",
		prioSpecific, []string{"-----begin"}, detectPEM},
	{"cli-password", "Passwords given on a command line: curl -u user:pass, mysql/mariadb -pSECRET, redis-cli -a, sshpass -p, docker/podman/helm/az/oc … login -p, sqlcmd -P, ldap* -w, mongo* -p, openssl -pass pass:…, aws configure set aws_secret_access_key ….",
		prioContext, cliKeywords(), detectCLIPassword},
	{"session-cookie", "The value of a session or authentication cookie (session, sessionid, sid, PHPSESSID, JSESSIONID, connect.sid, auth_token, jwt, remember, logged_in …) in a Cookie or Set-Cookie header, a cookie jar or flag (curl -b, --cookie, document.cookie), every such pair of the header, and after the names of the common session cookies anywhere: it logs in whoever sends it.",
		prioContext, cookieKeywords, detectSessionCookies},
	{"jwk-private-key", "The private members of a JSON Web Key (d, p, q, dp, dq, qi of an RSA, EC or OKP key; k of a symmetric one) in the object that names its kty; the public members (n, e, x, y) are kept.",
		prioSpecific, []string{"\"kty\""}, detectJWKPrivate},
	{"cli-user-password", "Open-world: on the command line of a program without its own entry above, a -p / -P / --password VALUE beside a user flag (-u NAME, --username NAME, -l NAME), when VALUE reads like a password (a letter and a digit or symbol; no path, file name, variable or port).",
		prioContext, userPassKeywords, detectUserPassFlags},
	{"netrc-password", ".netrc / _netrc credentials (machine … login … password …), on one line or several.",
		prioContext, []string{"machine", "default"}, detectNetrc},
	{"url-credentials", "The password (or bare token) of user:password@ in any scheme://… URL: http(s), git, postgres, mysql, mongodb(+srv), redis, amqp, ftp, jdbc:… .",
		prioContext, []string{"://"}, detectURLCredentials},
	{"authorization-header", "Credentials of Authorization / Proxy-Authorization headers (Basic, Bearer, Token, Bot, Api-Key … schemes) in curl flags, HTTP dumps, code and JSON; and 'Bearer <token>' wherever it appears.",
		prioContext, []string{"authorization", "bearer"}, detectAuthorization},
	{"vendor-name-value", "A generated value (or a UUID) given to the name of an API vendor whose keys carry no prefix (about 300: amplitude = \"…\", \"rollbar\": \"…\", Deepgram VALUE, new Hunter(\"…\")), by an operator, after blanks or as its constructor's argument.",
		prioContext, apiVendorNames, detectVendorName},
	{"password-assignment", "A value assigned to a password-like name (password, passwd, pwd, pass, passphrase, psk, PGPASSWORD, --password, db_pw, and, spelt in ASCII, Passwort, Kennwort, contrasena, senha, wachtwoord, haslo, salasana, losenord …) in shell, env files, YAML, JSON, TOML, INI, XML, code and connection strings.",
		prioContext, []string{"pass", "pwd", "_pw", "-pw", ".pw", "psk", "kennwort", "contrasena", "senha", "wachtwoord", "haslo", "salasana", "losenord", "bindpw", "rootpw", "authtok"}, detectPasswordAssignment},
	{"secret-assignment", "A high-entropy value assigned to a secret-like name (secret, token, api key, access key, private key, auth, credentials …), in the same syntaxes.",
		prioContext, []string{"secret", "token", "key", "auth", "cred"}, detectSecretAssignment},
}

func compileVigilRules() ([]*rule, error) {
	var out []*rule
	for _, v := range vigilRegexes {
		re, err := regexp.Compile(v.re)
		if err != nil {
			return nil, err
		}
		out = append(out, &rule{
			id: v.id, description: v.desc, source: sourceVigil, prio: v.prio,
			keywords: lowerAll(v.keywords), re: re, entropy: v.entropy,
			ctxValue: v.ctxValue, check: v.check, shape: v.shape,
		})
	}
	for _, d := range vigilDetectors {
		out = append(out, &rule{
			id: d.id, description: d.desc, source: sourceVigil, prio: d.prio,
			keywords: lowerAll(d.keywords), detect: d.detect,
		})
	}
	return out, nil
}
