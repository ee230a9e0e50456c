package redact

import (
	"math/rand/v2"
	"regexp/syntax"
	"strings"
	"testing"
)

// False positives on the peer suites' clean samples, by class (issue 11,
// docs/risk.md "Secrets: agreement with peer suites"): each rule with
// texts where a secret must still be removed and texts where nothing may
// be. Values are fake and built at run time.

var (
	fp      = rand.New(rand.NewPCG(11, 23))
	fpTok   = randMixed(fp, alnum, 32)
	fpPw    = "Qz7#" + randMixed(fp, alnum, 10)
	fpAzure = randMixed(fp, alnum, 3) + "8Q~" + randMixed(fp, alnum, 34)
)

func TestFalsePositiveClassesStillRemoveSecrets(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range []secretCase{
		// A bounded format keeps its bound (azure-ad-client-secret's {31,34}),
		// with a sentence's full stop after it.
		{"azure secret at its longest", `client_secret: "` + fpAzure + `"`, []string{fpAzure}, "azure-ad-client-secret"},
		{"azure secret then a full stop", "the secret is " + fpAzure + ".", []string{fpAzure}, "azure-ad-client-secret"},
		// A format that ends with its secret still removes a longer run whole.
		{"slack workflow webhook, long", "https://hooks.slack.com/workflows/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" + randMixed(fp, alnum, 40), []string{"/442660231806210747/"}, "slack-webhook-url"},
		// Dotted names that are not Maven groups, and coordinates with a blank.
		{"spring property with colon", "spring.datasource.password: " + fpPw, []string{fpPw}, "password-assignment"},
		{"reverse-dns property with =", "com.acme.db.password=" + fpPw, []string{fpPw}, "password-assignment"},
		{"reverse-dns yaml key", "io.acme.api_token: " + fpTok, []string{fpTok}, "secret-assignment"},
		// Bare values that are literals: shell, env and config lines; quoted
		// values in statements.
		{"shell assignment with semicolon", "export DB_PASSWORD=" + fpPw + "; ./run", []string{fpPw}, "password-assignment"},
		{"config line with blanks", "password = " + fpPw, []string{fpPw}, "password-assignment"},
		{"statement with a quoted literal", `password = "` + fpPw + `";`, []string{fpPw}, "password-assignment"},
		{"arrow with a quoted literal", `'api_key' => '` + fpTok + `',`, []string{fpTok}, "secret-assignment"},
		{"go composite literal", `Password: "` + fpPw + `",`, []string{fpPw}, "password-assignment"},
		// A passphrase of words joined by underscores is a password, though
		// it reads like a field name (a rule that kept it was reverted).
		{"passphrase of words", `password: "correct_horse_battery_staple"`, []string{"correct_horse_battery_staple"}, "password-assignment"},
	} {
		t.Run(c.name, func(t *testing.T) { checkSecretCase(t, r, c) })
	}
}

func TestFalsePositiveClassesDoNotFire(t *testing.T) {
	r := newTestRedactor(t)
	for _, c := range []string{
		// Longer than a bounded format allows, before its delimiter: a
		// Freenet USK key is not an Azure client secret.
		`<Trust Identity="USK@` + randMixed(fp, urlsafe, 43) + `,` + randMixed(fp, alnum, 3) + "8Q~" + randMixed(fp, alnum, 37) + `,AQACAAE/WebOfTrust/2" Value="100"/>`,
		// Maven, Gradle and Ivy coordinates whose group ends in a secret word.
		`notes = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"`,
		"implementation 'io.jsonwebtoken:jjwt-api:0.11.5'",
		"[INFO] +- io.jsonwebtoken:jjwt-impl:jar:0.11.5:runtime",
		"<dependency>com.example.secret:secret-manager-client:2.1.0</dependency>",
		// C-family statements and => maps whose bare value is code.
		"passwd = DEFAULT_PASSWORD_" + randMixed(fp, digits, 4) + ";",
		"private_key = m{{h}o)p${e]n" + randMixed(fp, alnum, 8) + "(x[y>-_$#z}};",
		"secret[] = m{{h}o)p${e]n" + randMixed(fp, alnum, 8) + "(x[y>-_$#z}};  // fixture",
		"password => m{{h}o)p${e]n" + randMixed(fp, alnum, 8) + "(x[y>-_$#z}}",
		"'password' => $request->input('pw'),",
	} {
		out, fs := r.RedactString(c)
		if len(fs) > 0 {
			t.Errorf("clean text redacted\n  text: %q\n  out:  %q\n  findings: %v", c, out, fs)
		}
	}
}

func TestSecretWidth(t *testing.T) {
	for _, c := range []struct {
		src  string
		g    int
		want int
	}{
		{`(?:^|[\s,])([a-z0-9]{3}\dQ~[a-z0-9_~.-]{31,34})(?:$|[\s,])`, 0, 40},
		{`(?:^|[\s,])([a-z0-9]{3}\dQ~[a-z0-9_~.-]{31,34})(?:$|[\s,])`, 1, 40},
		{`hooks.slack.com/(?:services|workflows)/[A-Za-z0-9+/]{43,56}`, 0, -1}, // nothing follows
		{`key=([a-f0-9]{32})`, 0, -1},                                          // the group ends the regex
		{`(a)(b{1,40})x`, 0, -1},                                               // two groups: decided per match
		{`(a)(b{1,40})x`, 2, 40},
		{`([a-z]+)x`, 0, -1}, // unbounded
	} {
		p, err := syntax.Parse(c.src, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := secretWidth(p, c.g); got != c.want {
			t.Errorf("secretWidth(%q, %d) = %d, want %d", c.src, c.g, got, c.want)
		}
	}
}

func TestIsCoordinate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"io.jsonwebtoken:jjwt-api:0.11.5", true},
		{"org.acme.token:acme-token-client", true},
		{"io.jsonwebtoken: jjwt", false},     // a blank after the colon: YAML
		{"spring.security.token:abc", false}, // not a reverse-DNS root
		{"io.Acme.Token:abc", false},         // upper case: not a group id
		{"com.acme.password=x", false},       // no colon
		{"io:x", false},                      // no dotted group
		{"io.jsonwebtoken:\"x\"", false},     // a quoted value
	} {
		ne := strings.IndexAny(c.in, ":=")
		if got := isCoordinate(c.in, 0, ne); got != c.want {
			t.Errorf("isCoordinate(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestBareStatement(t *testing.T) {
	for _, c := range []struct {
		in, value string
		want      bool
	}{
		{"passwd = SOME_CONST;", "SOME_CONST", true},
		{"passwd = SOME_CONST; // note", "SOME_CONST", true},
		{"password => hunter", "hunter", true},
		{"password=>hunter", "hunter", true},
		{"PASSWORD=hunter2x;", "hunter2x", false},  // shell: no blank around =
		{"password = hunter2x", "hunter2x", false}, // config line
		{"password = hunter2x; next", "hunter2x", false},
		{"password: hunter2x;", "hunter2x", false},
	} {
		vs := strings.Index(c.in, c.value)
		if got := bareStatement(c.in, vs, vs+len(c.value)); got != c.want {
			t.Errorf("bareStatement(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestPlainLiteral(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`hal\+9ooo_da!sY`, "hal+9ooo_da!sY", true},
		{`33f!!lloppa`, "33f!!lloppa", true},
		{`AIzaSyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY`, "AIzaSyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY", true},
		{`^\%\S.*\%$`, "", false},
		{`(?i)secret`, "", false},
		{`--mount=type=secret,`, "--mount=type=secret,", true},
	} {
		got, ok := plainLiteral(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("plainLiteral(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestPublishedValuesAreKept(t *testing.T) {
	r := newTestRedactor(t)
	gf, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range gf.published {
		for _, text := range []string{
			`const algolia = {apiKey: "` + v + `", indexName: "npm-search"}`,
			`<add key="ClearTextPassword" value="` + v + `" />`,
		} {
			if out, fs := r.RedactString(text); len(fs) > 0 {
				t.Errorf("published value %q redacted: %q", v, out)
			}
		}
	}
	if len(gf.published) < 3 {
		t.Fatalf("the rule file names %d published values: %q", len(gf.published), gf.published)
	}
	// Another key in the same place is still removed.
	k := randFrom(fp, hexLower, 32)
	if out, _ := r.RedactString(`const algolia = {apiKey: "` + k + `", indexName: "npm-search"}`); strings.Contains(out, k) {
		t.Errorf("a key beside the published one's name survived: %q", out)
	}
	pw := "Qz7#" + randMixed(fp, alnum, 12)
	if out, _ := r.RedactString(`<add key="ClearTextPassword" value="` + pw + `" />`); strings.Contains(out, pw) {
		t.Errorf("a password beside the published ones survived: %q", out)
	}
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"6fe4476ee5a1832882e326b506d14126", true},
		{"abcdefghijklmnopqrstuvwxyz", false}, // a word list entry, no digit
		{"000000", false},
		{"1234567890123456789012", false},  // no letter
		{"aws_secret_access_key_1", false}, // not only letters and digits
	} {
		if got := isKeyShaped(c.in); got != c.want {
			t.Errorf("isKeyShaped(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
