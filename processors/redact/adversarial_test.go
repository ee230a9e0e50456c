package redact

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/events"
)

// adversarialShape builds about n bytes of one shape of text that could
// make a scanner slow: keywords repeated with nothing between them to end a
// value, many near-matches of one rule family, huge single tokens, runs
// without a delimiter. Every generator is deterministic.
type adversarialShape struct {
	name string
	gen  func(n int) string
}

// repeatTo repeats unit to exactly n bytes (cutting the last copy).
func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

func repeated(unit string) func(int) string {
	return func(n int) string { return repeatTo(unit, n) }
}

// randomText returns n bytes from alphabet, the same for the same seed: a
// random block of 4 KB, repeated, so that the set of rules whose keywords
// occur by chance does not grow with n.
func randomText(seed uint64, alphabet string, n int) string {
	return repeatTo(randFrom(rand.New(rand.NewPCG(seed, seed)), alphabet, 4<<10), n)
}

func adversarialShapes() []adversarialShape {
	return []adversarialShape{
		// Issue 10: 22.5 KB took 6.7 s of CPU, 180 KB took 47 s.
		{"api-key-assign", repeated("api_key=")},
		{"password-assign", repeated("password=")},
		// Repeated keywords and names, each passing the assignment filter.
		{"secret-names", repeated("secret_access_key = '")},
		{"keyword-soup", repeated("key=token;password:secret,auth ")},
		{"quoted-names", repeated(`aws_secret_key="`)},
		{"long-identifier", repeated("apikeysecrettokenpassword_")},
		// Unbounded anchored rules whose match never completes.
		{"jwt-no-dots", repeated("ey")},
		{"jwt-no-signature", repeated("eyJhbGciOiJIUzI1NiJ9.")},
		{"slack-prefix", repeated("xoxe-")},
		// The peer-suite rules (issue 11): values beside a name, compared
		// with it, on the next line, in Kubernetes data blocks, dotted tokens.
		{"beside-quote", repeated(`password "`)},
		{"compared-literal", repeated(`"x" == password `)},
		{"next-line-value", repeated("api_token:\n  ")},
		{"k8s-data", repeated("kind: Secret\ndata:\n a: YWJjZGVmZ2g=\n")},
		{"discord-dots", repeated("MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.")},
		// Near-matches of one rule family.
		{"aws-near", repeated("AKIA" + strings.Repeat("Q", 15) + " ")},
		{"github-near", repeated("ghp_" + strings.Repeat("aB3", 11) + "x ")},
		{"anthropic-near", repeated("sk-ant-api03-")},
		// Detectors: credentials, command words, URLs, .netrc, PEM.
		{"authorization-chain", repeated("authorization=aB3")},
		{"bearer-chain", repeated("Bearer bearer:")},
		{"cli-words", repeated("az=")},
		{"cli-paths", repeated("/curl/mysql")},
		{"url-authority", repeated("https://a:b@c/ ://@@ ")},
		{"netrc", repeated("machine h login u password ")},
		{"pem-begin-no-end", repeated("-----BEGIN RSA PRIVATE KEY-----\nshort\n")},
		{"pem-escaped-newlines", repeated(`-----BEGIN PRIVATE KEY-----\nMIIE`)},
		{"escaped-json", repeated(`{\"password\": \"` + "\\\\\"" + `, "token": "`)},
		{"curl-lines", repeated("curl -u a:b -H 'Authorization: Bearer x' \\\n")},
		// Huge single tokens.
		{"base64-blob", func(n int) string { return randomText(1, b64chars, n) }},
		{"long-value", func(n int) string { return "api_key=" + randomText(2, alnum, n-8) }},
		{"long-password", func(n int) string { return "PASSWORD=" + randomText(3, alnum+"-_.", n-9) }},
		{"long-bearer", func(n int) string { return "Authorization: Bearer " + randomText(4, alnum, n-22) }},
		// Many short lines, each with keywords; each with a candidate that
		// every filter and allowlist of generic-api-key reads.
		{"short-lines", repeated("token=abc123xyz\n")},
		{"dense-candidates", func(n int) string {
			rng := rand.New(rand.NewPCG(5, 5))
			var b strings.Builder
			for b.Len() < 4<<10 {
				b.WriteString("api_key=" + randMixed(rng, alnum, 16) + "\n")
			}
			return repeatTo(b.String(), n)
		}},
	}
}

// keywordShapes repeats each rule keyword of r with each of a few
// suffixes: a sweep over every rule's prefilter.
func keywordShapes(r *Redactor, suffixes []string) []adversarialShape {
	var kws []string
	for _, ru := range r.rules {
		kws = append(kws, ru.keywords...)
	}
	slices.Sort(kws)
	var out []adversarialShape
	for _, k := range slices.Compact(kws) {
		for _, suf := range suffixes {
			out = append(out, adversarialShape{name: k + suf, gen: repeated(k + suf)})
		}
	}
	return out
}

// workOf is the work redacting s costs, without a budget.
func workOf(r *Redactor, s string) int64 {
	_, w, ok := r.find(s, 1<<62)
	if !ok {
		panic("no budget, yet over it")
	}
	return w
}

// Bounds the linearity tests hold the engine to. Work is in the units of
// charge (about one byte examined once, more for a regexp with a large
// program). maxWorkPerByte is half of DefaultWorkPerByte: no shape here
// comes near the budget.
const (
	maxWorkPerByte = 128
	// growth is the most work may grow when the input grows 8 times
	// (8 if exactly linear; the rest covers fixed costs that differ).
	growth = 10
)

// checkLinear fails t when redacting 8n bytes of a shape costs more than
// growth times n bytes, or more than maxWorkPerByte per byte.
func checkLinear(t *testing.T, r *Redactor, sh adversarialShape, n int) {
	t.Helper()
	w1, w8 := workOf(r, sh.gen(n)), workOf(r, sh.gen(8*n))
	if w8 > growth*w1 {
		t.Errorf("%s: work grows %.1f times for 8 times the input (%d -> %d units): not linear", sh.name, float64(w8)/float64(w1), w1, w8)
	}
	if per := float64(w8) / float64(8*n); per > maxWorkPerByte {
		t.Errorf("%s: %.1f units of work per byte, want at most %d", sh.name, per, maxWorkPerByte)
	}
}

// TestWorkIsLinear checks, with the engine's work counter (never the
// clock: the test machine is shared), that redaction work grows linearly
// with the input on every adversarial shape: 8 times the input, about 8
// times the work, not 64. n is past tailCap and anchorCap, so both sizes
// take the same paths.
func TestWorkIsLinear(t *testing.T) {
	r := newTestRedactor(t)
	for _, sh := range adversarialShapes() {
		checkLinear(t, r, sh, 16<<10)
	}
}

// TestKeywordShapesLinear repeats every keyword of every rule with a few
// operators after it, the shape that made generic-api-key quadratic, and
// holds each to the same bounds on smaller inputs.
func TestKeywordShapesLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep over every keyword")
	}
	r := newTestRedactor(t)
	for _, sh := range keywordShapes(r, []string{"=", `: "`, "-"}) {
		checkLinear(t, r, sh, 1<<10)
	}
}

// TestTypicalWorkPerByte shows the margin between typical text and the
// budget: a few units per byte against DefaultWorkPerByte.
func TestTypicalWorkPerByte(t *testing.T) {
	r := newTestRedactor(t)
	var total, n int64
	for _, c := range typicalChunks() {
		total += workOf(r, c)
		n += int64(len(c))
	}
	per := float64(total) / float64(n)
	t.Logf("typical text: %.1f units of work per byte (budget %d per byte)", per, DefaultWorkPerByte)
	if per > maxWorkPerByte {
		t.Errorf("typical text costs %.1f units per byte, want at most %d", per, maxWorkPerByte)
	}
}

// TestIssueShapesRedacted checks what the two shapes of issue 10 now give:
// a value made of api_key= repeated is one long value assigned to a
// secret-like name, and is removed whole; every byte after the first name
// is gone.
func TestIssueShapesRedacted(t *testing.T) {
	r := newTestRedactor(t)
	for _, unit := range []string{"api_key=", "password="} {
		in := repeatTo(unit, 180<<10)
		out, fs := r.RedactString(in)
		if len(out) > 64 || len(fs) == 0 {
			t.Errorf("%q x %d: %d bytes left, findings %v", unit, len(in)/len(unit), len(out), fs)
		}
		if again, fs2 := r.RedactString(out); again != out || len(fs2) > 0 {
			t.Errorf("%q: not idempotent: %q -> %q", unit, out, again)
		}
	}
}

// TestLongValueFailsClosed plants a secret inside a long value (past
// tailCap) assigned to a secret-like name, and in a value read again by
// many hits inside it: neither is judged byte by byte any more, and both
// are removed whole.
func TestLongValueFailsClosed(t *testing.T) {
	r := newTestRedactor(t)
	rng := rand.New(rand.NewPCG(7, 7))
	secret := randMixed(rng, alnum, 40)
	for name, in := range map[string]string{
		"long":   "api_key=" + strings.Repeat("a", 8<<10) + "api_key=" + secret + " tail",
		"nested": "api_key=" + strings.Repeat("x.token=", 200) + secret + " tail",
		"auth":   "Authorization:" + strings.Repeat("x:Authorization:", 300) + secret + " tail",
	} {
		out, fs := r.RedactString(in)
		if strings.Contains(out, secret) || !strings.HasSuffix(out, " tail") {
			t.Errorf("%s: %q (findings %v)", name, out[:min(len(out), 200)], fs)
		}
	}
}

// TestBudgetFailsClosed runs a Redactor with a tiny budget: a string over
// it is replaced whole by [REDACTED:vigil.budget], never passed on, and the
// event records the rule at its path.
func TestBudgetFailsClosed(t *testing.T) {
	r, err := New(Config{Budget: Budget{PerByte: 2, Base: 64}})
	if err != nil {
		t.Fatal(err)
	}
	in := repeatTo("password=", 4<<10)
	out, fs := r.RedactString(in)
	want := Marker + RuleBudget + "]"
	if out != want || len(fs) != 1 || fs[0] != (Finding{Rule: RuleBudget, Start: 0, End: len(in)}) {
		t.Fatalf("over budget: got %q %v, want %q and one %s finding over the whole string", out, fs, want, RuleBudget)
	}

	ev := testEvent(map[string]any{
		"args":    map[string]any{"command": in},
		"argv":    []any{"mysql", "-p" + in},
		"content": "ls -la",
		in:        "a key over budget",
	})
	red, changed := r.RedactEvent(ev)
	if !changed {
		t.Fatal("RedactEvent reports nothing redacted")
	}
	b, err := red.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "password=password=") {
		t.Fatalf("text over budget was stored: %.300s", b)
	}
	if got := red.Data["content"]; got != "ls -la" {
		t.Errorf("a cheap string was touched: %v", got)
	}
	paths := map[string]bool{}
	for _, rd := range red.Redactions {
		if rd.Rule == RuleBudget {
			paths[rd.Path] = true
		}
	}
	for _, p := range []string{"data.args.command", "data.argv[0]", "data.argv[1]", `data["[REDACTED:vigil.budget]"]#key`} {
		if !paths[p] {
			t.Errorf("no %s redaction at %s (have %v)", RuleBudget, p, paths)
		}
	}
}

// TestEventBudget spends an event's budget on its first strings: the rest
// are replaced whole without being scanned.
func TestEventBudget(t *testing.T) {
	r, err := New(Config{Budget: Budget{Event: 4 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d"} {
		data[k] = strings.Repeat("x", 2<<10)
	}
	red, _ := r.RedactEvent(testEvent(data))
	over := 0
	for _, k := range []string{"a", "b", "c", "d"} {
		if red.Data[k] == Marker+RuleBudget+"]" {
			over++
		}
	}
	if over == 0 || over == 4 {
		t.Errorf("%d of 4 strings over the event budget; want the first within it and the last over", over)
	}
	if red.Data["d"] != Marker+RuleBudget+"]" {
		t.Errorf("the last string (in key order) was scanned past the event budget: %.40v", red.Data["d"])
	}
}

func TestBudgetValidation(t *testing.T) {
	_, err := New(Config{Budget: Budget{PerByte: -1, Event: -5}})
	if err == nil || !strings.Contains(err.Error(), "budget.per_byte") || !strings.Contains(err.Error(), "budget.event") {
		t.Fatalf("negative budget accepted or not named: %v", err)
	}
	if _, err := New(Config{Settings: events.RedactionSettings{ExtraRules: []events.RedactionRule{{Name: RuleBudget, Regex: "x+"}}}}); err == nil {
		t.Fatal("an extra rule may take the name of the budget rule")
	}
}

// FuzzRedactAdversarial repeats a fuzzed unit into long text (the shape
// the budget and the long-value paths exist for), plants a known secret
// between blanks, and checks that:
//   - the work is linear: four times the text (of 2 to 8 KB) costs at
//     most six times the work (quadratic work would cost sixteen times),
//     and stays within four times the default budget;
//   - findings are sorted, disjoint and within the text, and the output is
//     the text with each replaced by its marker, valid UTF-8 if the input
//     is;
//   - redacting the output again finds nothing;
//   - the planted secret is removed.
//
// Its seeds are the adversarial shapes; they run in every go test.
func FuzzRedactAdversarial(f *testing.F) {
	r := newTestRedactor(f)
	rng := rand.New(rand.NewPCG(11, 11))
	planted := make([]string, len(fakeKinds))
	for i, k := range fakeKinds {
		planted[i] = k.gen(rng)
	}
	for i, sh := range adversarialShapes() {
		f.Add(sh.gen(64), uint16(8<<10), uint8(i))
	}
	f.Add("api_key=api_key=\xff", uint16(5000), uint8(3))
	f.Add("ſK", uint16(3000), uint8(1))
	f.Fuzz(func(t *testing.T, unit string, n uint16, which uint8) {
		if unit == "" {
			return
		}
		size := 2<<10 + int(n)%(6<<10) + len(unit)
		text, long := repeatTo(unit, size), repeatTo(unit, 4*size)
		if utf8.ValidString(unit) {
			// drop a rune cut at the end
			text, long = strings.ToValidUTF8(text, ""), strings.ToValidUTF8(long, "")
		}
		w, w4 := workOf(r, text), workOf(r, long)
		if w4 > 6*w {
			t.Fatalf("%q repeated: work grows %.1f times for 4 times the text (%d -> %d units)", unit, float64(w4)/float64(w), w, w4)
		}
		if w4 > 4*DefaultWorkPerByte*int64(len(long))+DefaultWorkBase {
			t.Fatalf("%d units of work for %d bytes of %q repeated", w4, len(long), unit)
		}
		out, fs := r.redactString(text)
		checkFindings(t, text, out, fs)
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 in, invalid out")
		}
		if _, fs2 := r.redactString(out); len(fs2) > 0 {
			t.Fatalf("not idempotent on %q repeated: %v", unit, fs2)
		}
		secret := planted[int(which)%len(planted)]
		mid := len(text) / 2
		for mid > 0 && !utf8.RuneStart(text[mid]) {
			mid--
		}
		with := text[:mid] + " " + secret + " " + text[mid:]
		out, fs = r.redactString(with)
		checkFindings(t, with, out, fs)
		if strings.Contains(out, secret) {
			t.Fatalf("planted %s not removed from %q repeated", fakeKinds[int(which)%len(fakeKinds)].name, unit)
		}
	})
}

// TestManyKeysOneText: map keys that all redact to the same text are kept,
// numbered in key order (base, base#2, base#3 …, skipping a number another
// key already has), in time linear in their number: the numbering
// remembers where it stopped instead of counting up from 2 for each key.
func TestManyKeysOneText(t *testing.T) {
	r := newTestRedactor(t)
	const n = 3000
	rng := rand.New(rand.NewPCG(9, 9))
	data := map[string]any{}
	for range n {
		data["api_key="+randMixed(rng, alnum, 24)] = "v"
	}
	red, _ := r.RedactEvent(testEvent(data))
	if len(red.Data) != n {
		t.Fatalf("%d keys in, %d out", n, len(red.Data))
	}
	base, m := "", 0
	for k := range red.Data {
		if strings.HasPrefix(k, "api_key="+Marker) {
			m++
			if !strings.Contains(k, "#") {
				base = k
			}
		}
	}
	if m < n/2 || base == "" {
		t.Fatalf("%d of %d keys redacted (base %q)", m, n, base)
	}
	for i := 2; i <= m; i++ {
		if _, ok := red.Data[base+"#"+strconv.Itoa(i)]; !ok {
			t.Fatalf("no key %s#%d", base, i)
		}
	}

	out := map[string]any{"k": 1, "k#2": 1, "k#4": 1}
	next := map[string]int{}
	var got []string
	for range 3 {
		k := freeKey(out, "k", next)
		out[k] = 1
		got = append(got, k)
	}
	if want := []string{"k#3", "k#5", "k#6"}; !slices.Equal(got, want) {
		t.Errorf("freeKey gave %q, want %q", got, want)
	}
}

// TestDeepLongPaths nests strings 60 deep under 2 KB keys: the paths
// recorded with the redactions stay within maxPathLen (cut ones end with
// pathCut), instead of growing by a key at every level, and the secret at
// the bottom is still removed.
func TestDeepLongPaths(t *testing.T) {
	r := newTestRedactor(t)
	rng := rand.New(rand.NewPCG(3, 3))
	secret := fakeKinds[1].gen(rng)
	var v any = map[string]any{"token": "x " + secret + " y"}
	for i := range 60 {
		v = map[string]any{strings.Repeat(string(rune('a'+i%26)), 2<<10): v, "password": "hunter2-" + strconv.Itoa(i)}
	}
	red, _ := r.RedactEvent(testEvent(map[string]any{"args": v}))
	b, err := red.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatal("the secret at the bottom was stored")
	}
	cut := 0
	for _, rd := range red.Redactions {
		if len(rd.Path) > maxPathLen {
			t.Errorf("path of %d bytes recorded", len(rd.Path))
		}
		if strings.HasSuffix(rd.Path, pathCut) {
			cut++
		}
	}
	if len(red.Redactions) < 60 || cut == 0 {
		t.Errorf("%d redactions, %d with a cut path", len(red.Redactions), cut)
	}
}
