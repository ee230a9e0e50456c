package redact

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/events"
)

// FuzzRedact checks, for any text:
//   - redaction never panics (the inner function is called, without the
//     fail-closed recover of RedactString);
//   - findings are sorted, disjoint, within the text, and the output is
//     exactly the text with each finding replaced by its marker;
//   - valid UTF-8 in gives valid UTF-8 out, and an event holding the text
//     encodes to valid JSON;
//   - redacting the output again finds nothing (idempotence);
//   - a secret planted at a random position, between blanks, is removed.
func FuzzRedact(f *testing.F) {
	r := newTestRedactor(f)
	rng := rand.New(rand.NewPCG(42, 42))
	planted := make([]string, len(fakeKinds))
	for i, k := range fakeKinds {
		planted[i] = k.gen(rng)
	}
	for _, s := range typicalLines {
		f.Add(s, uint16(0), uint8(0))
	}
	for i, s := range cleanCases {
		f.Add(s, uint16(i*7), uint8(i))
	}
	for i, c := range secretCases() {
		f.Add(c.text, uint16(i*3), uint8(i))
	}
	f.Add("", uint16(0), uint8(0))
	f.Add("\xff\xfe password=\xc3", uint16(3), uint8(5))
	f.Add("-----BEGIN RSA PRIVATE KEY-----\\nMIIE", uint16(10), uint8(40))
	f.Add("https://u:p@h/ ://@ :// a:@b", uint16(5), uint8(9))
	// The shapes of the rules added for the peer suites (peers_rules_test.go).
	f.Add(`if ("x" == password) { "" != token "`, uint16(4), uint8(2))
	f.Add("== password\n\"\" !== secret", uint16(0), uint8(1))
	f.Add("token:\n  \"a\"\n<apiToken>\n \n</apiToken>\nkey: |\n", uint16(9), uint8(3))
	f.Add("password {)x\npassword \"a\"b\npasswd x\n@\"", uint16(2), uint8(4))
	f.Add("M"+strings.Repeat("a", 23)+".abcdef."+strings.Repeat("b", 27)+".x.y", uint16(6), uint8(6))
	f.Add("a.ico-0123.png ]."+strings.Repeat("x", 10)+".ab", uint16(1), uint8(7))
	f.Add("kind: Secret\ndata:\n a: |\n\n---\ndata: {\"data\": {\"k\": \"dmFsdWUx\", stringData:\n  x: y", uint16(8), uint8(8))
	// The false-positive classes of issue 11 (peers_fp_test.go).
	f.Add("io.jsonwebtoken:jjwt-api:0.11.5 com.a.token: x io.b.secret:\"y\"", uint16(3), uint8(9))
	f.Add("passwd = A1b2C3d4;\nsecret[] = m{{h}o)p$;  // x\npassword => m{{x)y\npassword = z;", uint16(11), uint8(10))
	f.Add(",abcd8Q~"+strings.Repeat("a1B2", 10)+", x 8Q~"+strings.Repeat("Z", 34)+".", uint16(12), uint8(11))
	f.Add(`password: "a_b_c" password: "a__b" password: "_a_b"`, uint16(13), uint8(12))
	// The shapes of heldout_secrets5's rules (rules5_test.go): concatenations,
	// cookie headers, JWK objects, property lists, YAML blocks, CLI flags.
	f.Add("token = (\"a\"\n \"b\" + 'c' . \"d\" .. \"e\" || \"f\"\nk = [\"\", ''].join('') \"\".join([\"x\"]) strings.Join([]string{\"\"}, \"\")", uint16(14), uint8(13))
	f.Add("Cookie: a=b; sid=; ;= session=x;JSESSIONID=\ndocument.cookie = \"", uint16(15), uint8(14))
	f.Add("{\"kty\":\"d\":\"\", \"d\" : \"x\"} {\"kty\" { } \"k\":", uint16(16), uint8(15))
	f.Add("<key>token</key><string></string><key>apiKey</key>\n<string>", uint16(17), uint8(16))
	f.Add("  encryptedData:\n\n    password: Ag\n  x:\n   token: y", uint16(18), uint8(17))
	f.Add("x -u a -p\n y -l -p b -P --password= -pw 'c", uint16(19), uint8(18))

	f.Fuzz(func(t *testing.T, text string, pos uint16, which uint8) {
		out, fs := r.redactString(text)
		checkFindings(t, text, out, fs)
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 in, invalid out: %q -> %q", text, out)
		}
		if again, fs2 := r.redactString(out); len(fs2) > 0 {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", text, out, again, fs2)
		}

		ev := events.Event{V: 1, ID: "fuzz", Kind: events.KindObservation, Conversation: "c", Time: time.Unix(0, 0),
			Data: map[string]any{"content": text, "args": map[string]any{"command": text}}}
		red, _ := r.RedactEvent(&ev)
		b, err := json.Marshal(red)
		if err != nil || !json.Valid(b) || !utf8.Valid(b) {
			t.Fatalf("event does not encode to valid UTF-8 JSON: %v", err)
		}

		secret := planted[int(which)%len(planted)]
		p := int(pos) % (len(text) + 1)
		for p > 0 && p < len(text) && !utf8.RuneStart(text[p]) {
			p--
		}
		withSecret := text[:p] + " " + secret + " " + text[p:]
		out, fs = r.redactString(withSecret)
		checkFindings(t, withSecret, out, fs)
		if strings.Contains(out, secret) {
			t.Fatalf("planted %s not removed from %q: %q", fakeKinds[int(which)%len(fakeKinds)].name, withSecret, out)
		}
	})
}

func checkFindings(t *testing.T, in, out string, fs []Finding) {
	t.Helper()
	prev := 0
	for i, f := range fs {
		if f.Start < prev || f.End <= f.Start || f.End > len(in) {
			t.Fatalf("finding %d %v out of order or range (len %d, prev end %d)", i, f, len(in), prev)
		}
		prev = f.End
	}
	if want := apply(in, fs); len(fs) > 0 && want != out {
		t.Fatalf("output is not the text with findings replaced:\n got %q\nwant %q", out, want)
	}
	if len(fs) == 0 && out != in {
		t.Fatalf("no findings but output differs")
	}
}
