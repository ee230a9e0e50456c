package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Fake credentials for tests, generated from a seed so that no literal key
// sits in the repository (and no scanner mistakes the tests for a leak).
// Each follows the documented shape of its vendor's keys.

const (
	upper    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower    = "abcdefghijklmnopqrstuvwxyz"
	digits   = "0123456789"
	alnum    = upper + lower + digits
	hexLower = "0123456789abcdef"
	b64chars = alnum + "+/"
	urlsafe  = alnum + "_-"
	base32   = upper + "234567"
	bech32   = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

func randFrom(r *rand.Rand, alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// randMixed is like randFrom but guarantees upper, lower and digit, as real
// generated keys nearly always have.
func randMixed(r *rand.Rand, alphabet string, n int) string {
	need := func(s, class string) bool {
		return !strings.ContainsAny(alphabet, class) || strings.ContainsAny(s, class)
	}
	for {
		s := randFrom(r, alphabet, n)
		if n < 8 || need(s, upper) && need(s, lower) && need(s, digits) {
			return s
		}
	}
}

type fakeKind struct {
	name string
	gen  func(r *rand.Rand) string
}

var fakeKinds = []fakeKind{
	{"aws-access-key-id", func(r *rand.Rand) string { return "AKIA" + randFrom(r, base32, 16) }},
	{"github-pat", func(r *rand.Rand) string { return "ghp_" + randMixed(r, alnum, 36) }},
	{"github-oauth", func(r *rand.Rand) string { return "gho_" + randMixed(r, alnum, 36) }},
	{"github-app", func(r *rand.Rand) string { return "ghs_" + randMixed(r, alnum, 36) }},
	{"github-fine-grained", func(r *rand.Rand) string { return "github_pat_" + randMixed(r, alnum+"_", 82) }},
	{"gitlab-pat", func(r *rand.Rand) string { return "glpat-" + randMixed(r, urlsafe, 20) }},
	{"slack-bot", func(r *rand.Rand) string {
		return "xoxb-" + randFrom(r, digits, 11) + "-" + randFrom(r, digits, 12) + "-" + randMixed(r, alnum, 24)
	}},
	{"slack-webhook", func(r *rand.Rand) string {
		return "https://hooks.slack.com/services/T" + randFrom(r, upper+digits, 8) + "/B" + randFrom(r, upper+digits, 10) + "/" + randMixed(r, alnum, 24)
	}},
	{"stripe-live", func(r *rand.Rand) string { return "sk_live_" + randMixed(r, alnum, 99) }},
	{"stripe-restricted", func(r *rand.Rand) string { return "rk_live_" + randMixed(r, alnum, 24) }},
	{"openai-project", func(r *rand.Rand) string {
		return "sk-proj-" + randMixed(r, urlsafe, 74) + "T3BlbkFJ" + randMixed(r, urlsafe, 74)
	}},
	{"openai-project-nomarker", func(r *rand.Rand) string { return "sk-proj-" + randMixed(r, urlsafe, 120) }},
	{"openai-legacy", func(r *rand.Rand) string { return "sk-" + randMixed(r, alnum, 48) }},
	{"anthropic-api", func(r *rand.Rand) string { return "sk-ant-api03-" + randMixed(r, urlsafe, 93) + "AA" }},
	{"anthropic-oauth", func(r *rand.Rand) string { return "sk-ant-oat01-" + randMixed(r, urlsafe, 95) }},
	{"openrouter", func(r *rand.Rand) string { return "sk-or-v1-" + randFrom(r, hexLower, 64) }},
	{"groq", func(r *rand.Rand) string { return "gsk_" + randMixed(r, alnum, 52) }},
	{"xai", func(r *rand.Rand) string { return "xai-" + randMixed(r, alnum, 80) }},
	{"huggingface", func(r *rand.Rand) string { return "hf_" + randMixed(r, upper+lower, 34) }},
	{"replicate", func(r *rand.Rand) string { return "r8_" + randMixed(r, alnum, 37) }},
	{"google-api-key", func(r *rand.Rand) string { return "AIza" + randMixed(r, urlsafe, 35) }},
	{"google-oauth-access", func(r *rand.Rand) string { return "ya29." + randMixed(r, urlsafe, 120) }},
	{"google-oauth-secret", func(r *rand.Rand) string { return "GOCSPX-" + randMixed(r, urlsafe, 28) }},
	{"npm", func(r *rand.Rand) string { return "npm_" + randMixed(r, alnum, 36) }},
	{"pypi", func(r *rand.Rand) string { return "pypi-AgEIcHlwaS5vcmc" + randMixed(r, urlsafe, 60) }},
	{"sendgrid", func(r *rand.Rand) string { return "SG." + randMixed(r, urlsafe, 22) + "." + randMixed(r, urlsafe, 43) }},
	{"twilio", func(r *rand.Rand) string { return "SK" + randFrom(r, hexLower, 32) }},
	{"age", func(r *rand.Rand) string { return "AGE-SECRET-KEY-1" + randFrom(r, bech32, 58) }},
	{"vault", func(r *rand.Rand) string { return "hvs." + randMixed(r, urlsafe, 95) }},
	{"digitalocean", func(r *rand.Rand) string { return "dop_v1_" + randFrom(r, hexLower, 64) }},
	{"databricks", func(r *rand.Rand) string { return "dapi" + randFrom(r, hexLower, 32) }},
	{"shopify", func(r *rand.Rand) string { return "shpat_" + randFrom(r, hexLower, 32) }},
	{"dockerhub", func(r *rand.Rand) string { return "dckr_pat_" + randMixed(r, urlsafe, 27) }},
	{"doppler", func(r *rand.Rand) string { return "dp.pt." + randMixed(r, alnum, 43) }},
	{"linear", func(r *rand.Rand) string { return "lin_api_" + randMixed(r, alnum, 40) }},
	{"grafana-sa", func(r *rand.Rand) string { return "glsa_" + randMixed(r, alnum, 32) + "_" + randFrom(r, hexLower, 8) }},
	{"telegram", func(r *rand.Rand) string { return randFrom(r, digits, 10) + ":AA" + randMixed(r, urlsafe, 33) }},
	{"azure-ad-client-secret", func(r *rand.Rand) string {
		return randMixed(r, alnum, 3) + randFrom(r, digits, 1) + "Q~" + randMixed(r, alnum+"_~.-", 34)
	}},
	{"heroku-v2", func(r *rand.Rand) string { return "HRKU-AA" + randMixed(r, urlsafe, 58) }},
	{"sentry-user", func(r *rand.Rand) string { return "sntryu_" + randFrom(r, hexLower, 64) }},
	{"perplexity", func(r *rand.Rand) string { return "pplx-" + randMixed(r, alnum, 48) }},
	{"newrelic-user", func(r *rand.Rand) string { return "NRAK-" + randFrom(r, upper+digits, 27) }},
	{"planetscale", func(r *rand.Rand) string { return "pscale_tkn_" + randMixed(r, urlsafe+".", 43) }},
	{"square", func(r *rand.Rand) string { return "sq0atp-" + randMixed(r, urlsafe, 22) }},
	{"pulumi", func(r *rand.Rand) string { return "pul-" + randFrom(r, hexLower, 40) }},
	{"postman", func(r *rand.Rand) string {
		return "PMAK-" + randFrom(r, hexLower, 24) + "-" + randFrom(r, hexLower, 34)
	}},
	{"slack-user", func(r *rand.Rand) string {
		return "xoxp-" + randFrom(r, digits, 11) + "-" + randFrom(r, digits, 11) + "-" + randFrom(r, digits, 12) + "-" + randFrom(r, hexLower, 32)
	}},
	{"discord-webhook", func(r *rand.Rand) string {
		return "https://discord.com/api/webhooks/" + randFrom(r, digits, 18) + "/" + randMixed(r, urlsafe, 68)
	}},
	{"openai-svcacct", func(r *rand.Rand) string {
		return "sk-svcacct-" + randMixed(r, urlsafe, 74) + "T3BlbkFJ" + randMixed(r, urlsafe, 74)
	}},
	{"mailgun-in-url", func(r *rand.Rand) string {
		return "https://api:key-" + randFrom(r, hexLower, 32) + "@api.mailgun.net/v3"
	}},
	{"jwt", func(r *rand.Rand) string {
		h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
		p := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"` + randFrom(r, digits, 9) + `","name":"` + randFrom(r, lower, 6) + `","iat":1716239022}`))
		return h + "." + p + "." + randMixed(r, urlsafe, 43)
	}},
	{"okta-ssws", func(r *rand.Rand) string { return "SSWS 00" + randMixed(r, urlsafe, 40) }},
	{"dependency-track", func(r *rand.Rand) string { return "odt_" + randMixed(r, alnum, 32) }},
	{"dependency-track-prefixed", func(r *rand.Rand) string {
		return "odt_" + randMixed(r, alnum, 8) + "_" + randMixed(r, alnum, 32)
	}},
	{"newrelic-query", func(r *rand.Rand) string { return "NRIQ-" + randMixed(r, urlsafe, 32) }},
	{"newrelic-license", func(r *rand.Rand) string { return randFrom(r, hexLower, 36) + "NRAL" }},
	{"tailscale", func(r *rand.Rand) string {
		return "tskey-auth-" + randMixed(r, alnum, 12) + "-" + randMixed(r, alnum, 33)
	}},
	{"pinecone", func(r *rand.Rand) string { return "pcsk_" + randMixed(r, alnum, 6) + "_" + randMixed(r, alnum, 63) }},
	{"e2b", func(r *rand.Rand) string { return "e2b_" + randFrom(r, hexLower, 40) }},
	{"firecrawl", func(r *rand.Rand) string { return "fc-" + randFrom(r, hexLower, 32) }},
	{"elevenlabs", func(r *rand.Rand) string { return "sk_" + randFrom(r, hexLower, 48) }},
	{"sonarqube", func(r *rand.Rand) string { return "squ_" + randFrom(r, hexLower, 40) }},
	{"neon", func(r *rand.Rand) string { return "napi_" + randFrom(r, lower+digits, 64) }},
	{"render", func(r *rand.Rand) string { return "rnd_" + randMixed(r, alnum, 32) }},
	{"circleci", func(r *rand.Rand) string {
		return "CCIPAT_" + randMixed(r, alnum, 22) + "_" + randFrom(r, hexLower, 40)
	}},
	{"nuget", func(r *rand.Rand) string { return "oy2" + randFrom(r, lower+digits, 43) }},
	{"azure-devops", func(r *rand.Rand) string { return randMixed(r, alnum, 76) + "AZDO" + randMixed(r, alnum, 4) }},
	{"bitbucket-app-password", func(r *rand.Rand) string { return "ATBB" + randMixed(r, alnum, 32) }},
	{"salesforce", func(r *rand.Rand) string {
		return "00D" + randMixed(r, alnum, 15) + "!" + randMixed(r, alnum+"._", 96)
	}},
	{"notion-legacy", func(r *rand.Rand) string { return "secret_" + randMixed(r, alnum, 43) }},
	{"supabase-secret", func(r *rand.Rand) string { return "sb_secret_" + randMixed(r, urlsafe, 31) }},
	{"browserbase", func(r *rand.Rand) string { return "bb_live_" + randMixed(r, urlsafe, 27) }},
	{"netlify", func(r *rand.Rand) string { return "nfp_" + randMixed(r, alnum, 36) }},
	{"contentful", func(r *rand.Rand) string { return "CFPAT-" + randMixed(r, urlsafe, 43) }},
	{"segment", func(r *rand.Rand) string { return "sgp_" + randMixed(r, alnum, 64) }},
	{"bcrypt", func(r *rand.Rand) string { return "$2b$12$" + randMixed(r, alnum+"./", 53) }},
	{"sha512crypt", func(r *rand.Rand) string {
		return "$6$" + randMixed(r, alnum, 16) + "$" + randMixed(r, alnum+"./", 86)
	}},
	{"md5crypt", func(r *rand.Rand) string {
		return "$apr1$" + randMixed(r, alnum, 8) + "$" + randMixed(r, alnum+"./", 22)
	}},
	{"private-key", func(r *rand.Rand) string { return fakePEM(r, "RSA PRIVATE KEY", "\n") }},
	{"openssh-key", func(r *rand.Rand) string { return fakePEM(r, "OPENSSH PRIVATE KEY", "\n") }},
}

// fakePEM builds a PEM block of random base64, lines joined by sep.
func fakePEM(r *rand.Rand, label, sep string) string {
	lines := []string{"-----BEGIN " + label + "-----"}
	for range 8 {
		lines = append(lines, randMixed(r, b64chars, 64))
	}
	lines = append(lines, randMixed(r, b64chars, 20)+"==", "-----END "+label+"-----")
	return strings.Join(lines, sep)
}
