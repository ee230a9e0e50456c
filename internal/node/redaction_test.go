package node

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/redact"
	"github.com/vigil-dev/vigil/processors/stats"
)

// tenSecrets returns ten secrets of different kinds, freshly generated so
// no test fixture holds a real-looking key.
func tenSecrets(r *rand.Rand) map[string]string {
	pick := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64 := func(n int) string { return pick(alnum+"+/", n) }
	return map[string]string{
		"aws-access-key":  "AKIA" + pick(upper, 16),
		"github-pat":      "ghp_" + pick(alnum, 36),
		"openai":          "sk-proj-" + pick(alnum, 58) + "T3BlbkFJ" + pick(alnum, 58),
		"anthropic":       "sk-ant-api03-" + pick(alnum+"_-", 93) + "AA",
		"slack-bot":       "xoxb-" + pick("0123456789", 11) + "-" + pick("0123456789", 12) + "-" + pick(alnum, 24),
		"stripe":          "sk_live_" + pick(alnum, 24),
		"huggingface":     "hf_" + pick(alnum, 34),
		"jwt":             "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ" + pick(alnum, 24) + "In0." + pick(alnum+"-_", 43),
		"postgres-pass":   "Pq" + pick(alnum, 18) + "7x",
		"pem-private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + b64(60) + "\n" + b64(64) + "\n" + b64(64) + "\n-----END RSA PRIVATE KEY-----",
	}
}

func secretText(s map[string]string) string {
	return "export AWS_ACCESS_KEY_ID=" + s["aws-access-key"] + "\n" +
		"git clone https://" + s["github-pat"] + "@github.com/acme/app.git\n" +
		"OPENAI_API_KEY=" + s["openai"] + "\n" +
		`{"anthropic_key": "` + s["anthropic"] + `"}` + "\n" +
		"curl -H 'Authorization: Bearer " + s["slack-bot"] + "' https://slack.com/api/auth.test\n" +
		"stripe.api_key = \"" + s["stripe"] + "\"\n" +
		"HF_TOKEN=" + s["huggingface"] + "\n" +
		"token: " + s["jwt"] + "\n" +
		"DATABASE_URL=postgres://app:" + s["postgres-pass"] + "@db.internal:5432/app\n" +
		s["pem-private-key"] + "\n"
}

// TestSecretsNeverReachDisk sends an action and an observation holding ten
// kinds of secrets, plus a refused body holding them, through a real node
// with redaction on; then checks `tail`, the DLQ, the logs and every byte
// JetStream wrote to disk.
func TestSecretsNeverReachDisk(t *testing.T) {
	secrets := tenSecrets(rand.New(rand.NewPCG(1, 2)))
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	dir := t.TempDir()
	s, err := Start(t.Context(), Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityFsync,
		Redactor:   red,
		NoExpiry:   true,
		Processors: func() ([]processors.Processor, error) { return []processors.Processor{stats.New()}, nil },
		Logger:     slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	text := secretText(secrets)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	argsJSON, _ := json.Marshal(map[string]any{"command": text, "security_risk": "LOW"})
	evs := []events.Event{
		{V: 1, ID: "act-1", Kind: events.KindAction, Conversation: "c-sec", Time: now,
			Data: map[string]any{"tool": "bash", "args": map[string]any{"command": text, "env": map[string]any{"note": text}}}},
		{V: 1, ID: "obs-1", Kind: events.KindObservation, Conversation: "c-sec", Time: now,
			Data: map[string]any{"action_id": "act-1", "content": text, "exit_code": int64(0)}},
		// OpenHands puts arguments in a JSON string: nested JSON is redacted too.
		{V: 1, ID: "act-2", Kind: events.KindAction, Conversation: "c-sec", Time: now,
			Data: map[string]any{"tool": "execute_bash", "args": map[string]any{"raw_arguments": string(argsJSON)}}},
	}
	if _, err := agent.AppendBatch(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	// A refused body (not decodable) holding every secret goes to the DLQ.
	poison := &nats.Msg{Subject: events.IngestAgentSubject("c-sec"), Data: []byte(`{"kind":"action","data":"` + text), Header: nats.Header{}}
	poison.Header.Set(ingest.HeaderContentType, ingest.ContentTypeJSON)
	if resp, err := agent.Conn().RequestMsg(poison, 5*time.Second); err != nil {
		t.Fatal(err)
	} else if _, err := client.ParseReply(resp.Data, 1); err == nil {
		t.Fatal("poison body accepted")
	} else {
		assertNoSecret(t, "the refusal reply", []byte(err.Error()), secrets)
	}
	// A control kind holding secrets on an agent subject: refused, alerted.
	ctl := events.Event{V: 1, ID: "ctl-1", Kind: events.KindApprovalDecision, Conversation: "c-sec", Time: now,
		Data: map[string]any{"action_id": "act-1", "verdict": "once", "reason": text}}
	body, _ := ctl.MarshalMsgpack()
	if _, err := agent.Conn().Request(events.IngestAgentSubject("c-sec"), body, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	// vigil tail's view: redacted, with findings recorded.
	admin, err := s.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	var tailed bytes.Buffer
	var n int
	if err := admin.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		b, _ := json.Marshal(r.Event)
		tailed.Write(b)
		n++
		if len(r.Event.Redactions) < 10 {
			t.Errorf("event %s records %d redactions, want at least 10", r.Event.ID, len(r.Event.Redactions))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("log holds %d events, want 3", n)
	}
	if !strings.Contains(tailed.String(), "[REDACTED:") {
		t.Error("no redaction markers in the log")
	}
	assertNoSecret(t, "tail", tailed.Bytes(), secrets)
	for _, stream := range []string{events.StreamLog, events.StreamDerived, events.StreamDLQ} {
		var raw bytes.Buffer
		natsutil.ReadStream(t.Context(), admin.JetStream(), natsutil.ReadOptions{Stream: stream}, func(r natsutil.RawRecord) error {
			raw.Write(r.Data)
			return nil
		})
		assertNoSecret(t, stream, raw.Bytes(), secrets)
	}
	agent.Close()
	admin.Close()
	// Close flushes everything to disk; then read every file JetStream wrote.
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var files int
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		assertNoSecret(t, path, b, secrets)
		return nil
	})
	if files < 5 {
		t.Fatalf("walked only %d files under %s", files, dir)
	}
	assertNoSecret(t, "the server's logs", logs.Bytes(), secrets)
}

func assertNoSecret(t *testing.T, where string, b []byte, secrets map[string]string) {
	t.Helper()
	for kind, sec := range secrets {
		probe := sec
		if kind == "pem-private-key" {
			probe = strings.Split(sec, "\n")[1] // the key material, not the armour
		}
		if bytes.Contains(b, []byte(probe)) {
			t.Errorf("%s holds the %s secret", where, kind)
		}
	}
}
