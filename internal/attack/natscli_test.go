package attack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// natscli returns the path of the nats CLI (github.com/nats-io/natscli),
// which .ci/run installs. Without it the test is skipped, unless
// VIGIL_REQUIRE_NATSCLI is set (as CI sets it), when it fails.
func natscli(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("nats")
	if err != nil {
		if os.Getenv("VIGIL_REQUIRE_NATSCLI") != "" {
			t.Fatalf("the nats CLI is not on PATH: go install github.com/nats-io/natscli/nats@v0.5.0")
		}
		t.Skip("the nats CLI is not on PATH (go install github.com/nats-io/natscli/nats@v0.5.0)")
	}
	return p
}

// runNats runs the nats CLI as the agent would, with the agent's nkey.
func runNats(t *testing.T, bin string, tg *target, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	base := []string{"--server", tg.url, "--nkey", datadir.New(tg.dir).Creds().Seed(natsutil.RoleAgent), "--timeout", "3s"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no saved contexts
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestNatsCLIAgent tries the agent's boundaries with the stock NATS CLI,
// as an injected agent with a shell would.
func TestNatsCLIAgent(t *testing.T) {
	bin := natscli(t)
	tg := startTarget(t)
	tok := natsutil.NewInboxToken()
	own := []string{"--user", tok, "--inbox-prefix", natsutil.InboxRoot + "." + tok}
	event := `{"v":1,"id":"cli-1","kind":"message","conversation":"c-cli","data":{"role":"user","content":"hi"}}`

	// The legitimate path: a request with its own inbox is stored.
	out, err := runNats(t, bin, tg, append(own, "request", events.IngestAgentSubject("c-cli"), event, "-H", "Content-Type:application/json")...)
	if err != nil || !strings.Contains(out, `"seq":1`) {
		t.Fatalf("nats request: %v\n%s", err, out)
	}
	// The default inbox (_INBOX.<nuid>) is not the connection's own: the
	// CLI cannot even subscribe to receive its reply.
	out, err = runNats(t, bin, tg, "request", events.IngestAgentSubject("c-cli"), event, "-H", "Content-Type:application/json")
	if err == nil && strings.Contains(out, `"seq"`) {
		t.Errorf("a request with the default inbox got a reply:\n%s", out)
	}
	// Subscribing to every inbox, or the gate subjects, is refused.
	for _, subj := range []string{"_INBOX.>", "vigil.gate.>", ">"} {
		out, _ = runNats(t, bin, tg, append(own, "sub", subj, "--count", "1")...)
		if !strings.Contains(strings.ToLower(out), "permissions violation") {
			t.Errorf("nats sub %s was not refused:\n%s", subj, out)
		}
	}
	// A reply aimed at the log stores nothing.
	redirect := `{"v":1,"id":"cli-2","kind":"message","conversation":"c-cli","data":{"role":"user","content":"x"}}`
	if out, err := runNats(t, bin, tg, append(own, "pub", events.IngestAgentSubject("c-cli"), redirect, "--reply", events.LogSubject("c-cli"), "-H", "Content-Type:application/json")...); err != nil {
		t.Fatalf("nats pub: %v\n%s", err, out)
	}
	// Publishing into the log directly is refused.
	out, _ = runNats(t, bin, tg, append(own, "pub", events.LogSubject("c-cli"), "forged")...)
	if !strings.Contains(strings.ToLower(out), "permissions violation") {
		t.Errorf("nats pub into the log was not refused:\n%s", out)
	}
	// The redirected request was refused, not stored: its alert (named
	// by the body's digest) is the barrier after which a store would
	// have shown.
	sum := sha256.Sum256([]byte(redirect))
	alert := "ingest:sha256:" + hex.EncodeToString(sum[:])
	waitFor(t, "the alert on the redirected reply", 20*time.Second, func() bool {
		for _, d := range tg.derived(t) {
			if d.Kind == events.KindAlert && d.ID == alert {
				return true
			}
		}
		return false
	})
	recs := tg.streamRecords(t, events.StreamLog)
	if len(recs) != 1 {
		t.Errorf("the log holds %d records, want only the legitimate one", len(recs))
	}
}
