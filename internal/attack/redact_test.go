package attack

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// fakeGitHubToken is a GitHub personal access token in shape (ghp_ and 36
// letters and digits), made at run time so that no key sits in the tree.
func fakeGitHubToken(seed uint64) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rng := rand.New(rand.NewPCG(seed, seed))
	b := []byte("ghp_aZ9")
	for len(b) < 40 {
		b = append(b, alnum[rng.IntN(len(alnum))])
	}
	return string(b)
}

// repeatTo repeats unit to n bytes.
func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// plant puts secret, between blanks, in the middle of text.
func plant(text, secret string) string {
	mid := len(text) / 2
	return text[:mid] + " " + secret + " " + text[mid:]
}

// nested builds args depth levels deep; each level holds a keyword-named
// string of adversarial text, and the deepest one the secret too.
func nested(depth int, leaf, secret string) map[string]any {
	m := map[string]any{"api_key": plant(leaf, secret)}
	for range depth - 1 {
		m = map[string]any{"password": leaf, "next": m}
	}
	return m
}

// TestRedactionCannotBurnTheCPU: text shaped to make the redaction step
// slow (issue 10: api_key= repeated over 22.5 KB took 6.7 s of CPU,
// password= over 180 KB took 47 s, with 64 ingest workers and no bound),
// sent with the agent credential through a real node, is answered within
// the request timeout, at sizes where the old redaction would have run for
// hours. The secrets planted in it never reach the log, and the node
// still stores the next ordinary event.
func TestRedactionCannotBurnTheCPU(t *testing.T) {
	tg := startTarget(t)
	nc := tg.dial(t, natsutil.RoleAgent)
	const conv = "redact-burn"
	const mb = 1 << 20
	cases := []struct {
		name   string
		secret string
		ev     func(id, secret string) events.Event
	}{
		{"api_key= repeated, in a bash command", fakeGitHubToken(1), func(id, secret string) events.Event {
			return action(id, conv, plant(repeatTo("api_key=", mb), secret))
		}},
		{"password= repeated, in a message", fakeGitHubToken(2), func(id, secret string) events.Event {
			return message(id, conv, plant(repeatTo("password=", mb), secret))
		}},
		{"names that pass the assignment filter, in a message", fakeGitHubToken(3), func(id, secret string) events.Event {
			return message(id, conv, plant(repeatTo("secret_access_key = '", mb), secret))
		}},
		{"credential chains and unfinished tokens, as a list of strings", fakeGitHubToken(4), func(id, secret string) events.Event {
			ev := message(id, conv, "")
			ev.Data["content"] = []any{
				repeatTo("authorization=aB3", mb/4),
				plant(repeatTo("ey", mb/4), secret),
				repeatTo("Bearer bearer:", mb/4),
				repeatTo("az=/curl/", mb/4),
			}
			return ev
		}},
		{"deeply nested strings", fakeGitHubToken(5), func(id, secret string) events.Event {
			ev := action(id, conv, "true")
			ev.Data["args"] = nested(50, repeatTo("token=aB3", 8<<10), secret)
			return ev
		}},
	}
	for i, c := range cases {
		id := "burn-" + string(rune('a'+i))
		body, err := json.Marshal(c.ev(id, c.secret))
		if err != nil {
			t.Fatal(err)
		}
		m := &nats.Msg{Subject: events.IngestAgentSubject(conv), Data: body, Header: nats.Header{}}
		m.Header.Set(ingest.HeaderContentType, ingest.ContentTypeJSON)
		start := time.Now()
		resp, err := nc.RequestMsg(m, 10*time.Second)
		if err != nil {
			t.Fatalf("%s (%d KB): no reply within 10 s: %v", c.name, len(body)>>10, err)
		}
		r := ingestReply(t, resp.Data)
		t.Logf("%s: %d KB answered in %v (error %q)", c.name, len(body)>>10, time.Since(start).Round(time.Millisecond), r.Error)
	}

	normal := action("burn-after", conv, "ls -la")
	body, err := json.Marshal(normal)
	if err != nil {
		t.Fatal(err)
	}
	m := &nats.Msg{Subject: events.IngestAgentSubject(conv), Data: body, Header: nats.Header{}}
	m.Header.Set(ingest.HeaderContentType, ingest.ContentTypeJSON)
	resp, err := nc.RequestMsg(m, 10*time.Second)
	if err != nil {
		t.Fatalf("an ordinary event after the attack: %v", err)
	}
	if r := ingestReply(t, resp.Data); r.Error != "" || len(r.Results) != 1 {
		t.Fatalf("an ordinary event after the attack was not stored: %+v", r)
	}

	stored := map[string]events.Event{}
	for _, rec := range tg.streamRecords(t, events.StreamLog) {
		for _, c := range cases {
			if bytes.Contains(rec.Data, []byte(c.secret)) {
				t.Errorf("VIGIL_LOG seq %d holds the secret planted in %q", rec.Seq, c.name)
			}
		}
		if ev, err := events.DecodeMsgpack(rec.Data); err == nil {
			stored[ev.ID] = ev
		}
	}
	if got, ok := stored["burn-after"]; !ok || got.Data["args"].(map[string]any)["command"] != "ls -la" {
		t.Errorf("the ordinary event is not in the log as sent: %+v", got)
	}
	for i, c := range cases {
		ev, ok := stored["burn-"+string(rune('a'+i))]
		if !ok {
			continue // refused: nothing stored, nothing leaked
		}
		if len(ev.Redactions) == 0 {
			t.Errorf("%s: stored without a redaction", c.name)
		}
	}
}

// message is a user message in conversation conv.
func message(id, conv, content string) events.Event {
	return events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindMessage, Conversation: conv,
		Agent: "attacker", Time: time.Now().UTC(),
		Data: map[string]any{"role": "user", "content": content}}
}

// TestWrappedJSONSecretNeverStored: an injected agent hides a password
// from the redactor by pretty-printing the JSON that holds it, the value
// alone on the line after its name and followed by a comma or a closing
// brace, in a tool's output it reports; sent with the agent credential,
// no stored record of VIGIL_LOG holds the password.
func TestWrappedJSONSecretNeverStored(t *testing.T) {
	tg := startTarget(t)
	agent := tg.clientAs(t, natsutil.RoleAgent)
	const pw = "Zq7pL2xW9vKm4Rt8"
	for i, body := range []string{
		"{\"password\":\n    \"" + pw + "\",\n  \"user\": \"app\"}",
		"{\"db\": {\"password\":\n  \"" + pw + "\"}}",
	} {
		ev := message("wrapped-"+itoa3(i), "c-wrapped", body)
		appendAs(t, agent, ev)
	}
	for _, r := range tg.streamRecords(t, events.StreamLog) {
		if strings.Contains(string(r.Data), pw) {
			t.Fatalf("VIGIL_LOG seq %d holds the password", r.Seq)
		}
	}
}

// TestVendorShapedSecretsNeverStored: an injected agent pastes
// credentials in the shapes the redactor learned from its held-out
// suites (a Vault token, a prefix-less vendor key under the vendor's bare
// name, a name in Markdown emphasis, a .pgpass line, a secret piped into
// a secret store's write, a presigned URL's signature, a vendor token
// split by string concatenation, a URL password holding @ and #),
// through a real node with the agent credential; none of them is in any
// record of VIGIL_LOG.
func TestVendorShapedSecretsNeverStored(t *testing.T) {
	tg := startTarget(t)
	agent := tg.clientAs(t, natsutil.RoleAgent)
	// Built, not written whole, so the file holds no literal key.
	vault := "hv" + "s." + "CAESIJq7Lw2x9Vk4Rt8Zp3M6nB5yQ1cD"
	rollbar := "7f3c" + "9a1e4b8d2f6a0c5e9b3d7a1f4c8e2b6d"
	emph := "Xk9" + "mQ2vL7pR4tZ8wN3sB6yH1cF5"
	pgpw := "Pg7" + "xLq2Vm9Kz4Rw"
	piped := "Wr8" + "nTq3Lx6Mz1Ks9Pv"
	sig := "9f2c4e7a1b3d5f6081a2c3e4f5061728" + "394a5b6c7d8e9f0a1b2c3d4e5f607182"
	split := "Qx7Lm2Vb9Nw4Kp1" + "Hs6Jd3Fg8Yc5"
	urlpw := "p@ss#w" + "0rd9Xq"
	secrets := []string{vault, rollbar, emph, pgpw, piped, sig, split, urlpw}
	for i, body := range []string{
		// a presigned URL's signature, a vendor token split by +, a URL
		// password holding both @ and #
		"GET https://reports.s3.amazonaws.com/q4.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261207T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=" + sig,
		`stripe.api_key = "sk_live_" + "` + split + `"`,
		"REDIS_URL=redis://:" + urlpw + "@cache.internal:6379/0",
		"export VAULT_TOKEN=" + vault,
		"config.json: {\"rollbar\": \"" + rollbar + "\", \"env\": \"prod\"}",
		"Use the **API token** `" + emph + "` for the staging tenant.",
		"~/.pgpass:\ndb.internal:5432:app:deploy:" + pgpw,
		"ran: echo " + piped + " | wrangler secret put STRIPE_KEY",
	} {
		appendAs(t, agent, message("vendor-"+itoa3(i), "c-vendor", body))
	}
	for _, r := range tg.streamRecords(t, events.StreamLog) {
		for _, s := range secrets {
			if strings.Contains(string(r.Data), s) {
				t.Errorf("VIGIL_LOG seq %d holds %q", r.Seq, s)
			}
		}
	}
}

// TestSecretsNeverStoredUnderADerivedRedactor: after a config event with
// an extra redaction rule, the ingest service redacts with a redactor
// derived from the default one (redact.(*Redactor).With: the built-in
// rules compiled once a process). An injected agent then pastes a secret
// of the extra rule's shape, built-in shapes this session added (an
// Authorization header with a scheme no rule names) and a weak password
// spelt in leetspeak, hoping one of them is kept as a look-alike; none is
// in any record of VIGIL_LOG, and an honest word path stays.
func TestSecretsNeverStoredUnderADerivedRedactor(t *testing.T) {
	tg := startTarget(t)
	cfg := events.DefaultConfig()
	cfg.Version = 1
	cfg.Redaction = events.RedactionSettings{ExtraRules: []events.RedactionRule{
		{Name: "acme-badge", Regex: `ACME-BADGE-[0-9]{6}`, Keywords: []string{"acme-badge"}},
	}}
	configAs(t, tg, "cfg-derived", cfg)
	agent := tg.clientAs(t, natsutil.RoleAgent)
	// Built, not written whole, so the file holds no literal key.
	badge := "ACME-BADGE-" + "482913"
	custom := "Qm7" + "xT2vL9pR4kZ8wN3sB6yH1cF5dJ0gW"
	weak := "P@ss" + "w0rd2024!"
	secrets := []string{badge, custom, weak}
	path := "projects/acme-prod/secrets/db-password/versions/latest"
	for i, body := range []string{
		"my badge is " + badge + ", use it at the door",
		"curl -H 'Authorization: Custom " + custom + "' https://api.internal.example/v1/jobs",
		"DB_PASSWORD=" + weak,
		"DB_PASSWORD_REF=" + path,
	} {
		appendAs(t, agent, message("derived-"+itoa3(i), "c-derived", body))
	}
	kept := false
	for _, r := range tg.streamRecords(t, events.StreamLog) {
		for _, s := range secrets {
			if strings.Contains(string(r.Data), s) {
				t.Errorf("VIGIL_LOG seq %d holds %q", r.Seq, s)
			}
		}
		kept = kept || strings.Contains(string(r.Data), path)
	}
	if !kept {
		t.Error("the secret manager's path (a reference, no secret) was redacted too")
	}
}
