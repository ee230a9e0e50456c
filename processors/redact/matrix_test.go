package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Every vendor format must be removed in every common context: alone, in
// env files, JSON, YAML, code, headers, prose, URLs, markup, escaped JSON.
var formatContexts = []string{
	"%s",
	"export TOKEN=%s",
	`API_KEY="%s"`,
	`{"api_key": "%s", "other": 1}`,
	"key: %s\nnext: 1",
	`curl -H "Authorization: Bearer %s" https://api.example.com`,
	`client = Client(api_key='%s')`,
	"here is the key %s, use it.",
	"[%s]",
	"token=%s&page=2",
	`{\"value\": \"%s\"}`,
	"\t%s\n",
	"prefix text\n%s\nsuffix",
	"(%s)",
	"`%s`",
	"echo %s | gh auth login --with-token",
	"<value>%s</value>",
	"%s.",
	`"%s"`,
	"Use %s; then retry",
}

func TestFormatsInContexts(t *testing.T) {
	r := newTestRedactor(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for _, k := range fakeKinds {
		for i := range 3 {
			secret := k.gen(rng)
			for _, ctx := range formatContexts {
				if strings.Contains(secret, "\n") && strings.Contains(ctx, `\"`) {
					continue // a real newline cannot sit in escaped JSON
				}
				text := fmt.Sprintf(ctx, secret)
				out, fs := r.RedactString(text)
				if strings.Contains(out, secret) {
					t.Errorf("%s #%d in %q: not removed\n  out: %q\n  findings: %v", k.name, i, ctx, out, fs)
				}
			}
		}
	}
}

func newTestRedactor(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
