package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLookalikeClasses holds, for each class of value that looks like a
// secret and is not (the negatives other scanners write for their rules),
// examples that must come out unchanged beside the nearest secrets, which
// must still be redacted: the class is judged by a shape no credential
// has, not by the name it stands under.
func TestLookalikeClasses(t *testing.T) {
	r := newTestRedactor(t)
	tr := rand.New(rand.NewPCG(24, 4))
	b64url := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	joseHeader := b64url(`{"alg":"HS256","typ":"JWT"}`)
	rsaSPKI := "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" // SEQUENCE { SEQUENCE { rsaEncryption …
	edSPKI := "MCowBQYDK2VwAyEA"                              // SEQUENCE { SEQUENCE { Ed25519 } BIT STRING
	rsaPKCS8 := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"
	edPKCS8 := "MC4CAQAwBQYDK2VwBCIEI"
	cert := "MIIDdzCCAl+gAwIBAgIE"
	hex64 := randFrom(tr, hexLower, 64)
	for _, tc := range []struct {
		class        string
		clean, dirty []string
	}{
		// A weak password spelt in leetspeak is a live one as often as an
		// example: removed, whatever other scanners list as negatives.
		{"leetspeak password",
			nil,
			[]string{`DB_PASSWORD=Passw0rd123!`, `admin_password = 'Ch4ngeMe!'`, `password: "P@ssw0rd-` + randMixed(tr, alnum, 8) + `"`, `DB_PASSWORD=Tr0ub4dor` + randMixed(tr, alnum, 6)}},
		{"path of words naming a stored secret",
			[]string{`X-Password: projects/acme-prod/secrets/db-password/versions/latest`, `password = "secret/data/prod/db"`, `token: kv/teams/platform/deploy`},
			[]string{`password = "` + randMixed(tr, alnum, 5) + "/" + randMixed(tr, alnum, 6) + "/" + randMixed(tr, alnum, 5) + `"`}},
		{"JOSE header alone",
			[]string{`token=` + joseHeader, `"access_token": "` + b64url(`{"typ":"JWT","alg":"RS256","kid":"k1"}`) + `"`},
			[]string{`token=` + joseHeader + "." + b64url(`{"sub":"1234","role":"admin","exp":1999999999}`) + "." + randMixed(tr, urlsafe, 43)}},
		{"vendor prefix on a body too short for a key",
			[]string{`stripe_key=sk_live_12345`, `api_key = "live_abc12"`, `token: glpat-short`},
			[]string{`stripe_key=sk_live_` + randMixed(tr, alnum, 24), `token: glpat-` + randMixed(tr, alnum, 20)}},
		{"DER public key or certificate",
			[]string{
				`jwt_verify_key: "` + rsaSPKI + randFrom(tr, b64chars, 80) + `"`,
				`signing_key = "` + edSPKI + randFrom(tr, b64chars, 43) + `="`,
				`"x5c_secret": "` + cert + randFrom(tr, b64chars, 80) + `"`,
			},
			[]string{
				`private_key = "` + rsaPKCS8 + randFrom(tr, b64chars, 80) + `"`,
				`signing_key = "` + edPKCS8 + randFrom(tr, b64chars, 27) + `"`,
			}},
		{"value typed along the alphabet and digits",
			[]string{`apikey=abc123def456ghi789`, `secret = "123456abcdefghij"`},
			[]string{`apikey=` + randMixed(tr, alnum, 24)}},
		{"name marking a digest",
			[]string{`token_sha256: ` + hex64, `api_key_hash = "` + hex64 + `"`, `"password_checksum": "` + randFrom(tr, hexLower, 40) + `"`},
			[]string{`api_token: ` + randMixed(tr, alnum, 40)}},
	} {
		for _, s := range tc.clean {
			if out, fs := r.RedactString(s); out != s {
				t.Errorf("%s: clean text changed\n  text: %q\n  out:  %q %v", tc.class, s, out, fs)
			}
		}
		for _, s := range tc.dirty {
			if out, _ := r.RedactString(s); !strings.Contains(out, "[REDACTED") {
				t.Errorf("%s: secret not redacted: %q", tc.class, s)
			}
		}
	}
}

// TestLookalikeHelpers pins the shape tests the classes rest on.
func TestLookalikeHelpers(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(string) bool
		yes  []string
		no   []string
	}{
		{"isWordPath", isWordPath,
			[]string{"projects/acme/secrets/db/versions/latest", "secret/data/prod/db", "/kv/app/token/"},
			[]string{"a/b", "Xk9q/Lm2Z/p7Rt", "https://host/a/b", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY"}},
		{"isJOSEHeader", isJOSEHeader,
			[]string{"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"},
			[]string{"eyJ1c2VyIjoiYWxpY2UifQ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "eyJnotbase64!"}},
		{"shortBody", shortBody,
			[]string{"sk_live_12345", "glpat-short", "key-abc"},
			[]string{"sk_live_4eC39HqLyjWD", "abcdef1234567", "Live_12345"}},
		{"isTypedSequence", isTypedSequence,
			[]string{"abc123def456ghi789", "0123456789abcdef", "ABC-123-DEF-456"},
			[]string{"abc123", "a8Kq2LmZ7pRt3xWv", "abc123def456ghi78X"}},
	} {
		for _, s := range tc.yes {
			if !tc.f(s) {
				t.Errorf("%s(%q) = false, want true", tc.name, s)
			}
		}
		for _, s := range tc.no {
			if tc.f(s) {
				t.Errorf("%s(%q) = true, want false", tc.name, s)
			}
		}
	}
}
