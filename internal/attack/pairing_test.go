package attack

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/pairinglog"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// Device pairing makes approvers, so it is what an agent most wants. It
// holds the agent's credential (NATS seed and HTTP token) and tries to
// request, approve and complete a pairing every way it can reach.

// pairingRecords are the records of the pairing conversation's log subject.
func (tg *target) pairingRecords(t *testing.T) []events.Event {
	t.Helper()
	var out []events.Event
	for _, r := range tg.streamRecords(t, events.StreamLog) {
		if r.Subject != events.LogSubject(pairing.Conversation) {
			continue
		}
		ev, err := events.DecodeMsgpack(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// TestAgentCannotSendPairingEvents: every pairing kind, sent by an agent or
// runtime credential on every subject it may publish on, is refused before
// anything is stored, and raises an alert; the control and approval
// subjects are closed to it by NATS permissions.
func TestAgentCannotSendPairingEvents(t *testing.T) {
	tg := startTarget(t)
	key := make([]byte, pairing.KeyLen) // the attacker guesses the key: all zeroes
	forged := []events.Event{
		pairinglog.RequestEvent(key, "web-0000000000000001", "ABCDEFGH", "s", "10.0.0.1", "agent"),
		pairinglog.AttemptEvent(events.KindPairingApproved, key, pairing.PlatformWeb, "ABCDEFGH", "", "agent-device", "agent", ""),
		pairinglog.AttemptEvent(events.KindPairingDenied, key, pairing.PlatformWeb, "ABCDEFGH", "", "", "agent", ""),
		pairinglog.RevokeEvent("web-0000000000000001", "agent", ""),
		pairinglog.ExpiredEvent("web-0000000000000001"),
		pairinglog.UnlockEvent(1),
	}
	for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleRuntime} {
		nc := tg.dial(t, role)
		for _, conv := range []string{pairing.Conversation, "c-agent"} {
			for _, ev := range forged {
				ev.Conversation = conv
				body, err := json.Marshal(ev)
				if err != nil {
					t.Fatal(err)
				}
				subj := events.IngestAgentSubject(conv)
				if role == natsutil.RoleRuntime {
					subj = events.IngestRuntimeSubject(conv)
				}
				msg := &nats.Msg{Subject: subj, Data: body, Header: nats.Header{"Content-Type": []string{"application/json"}}}
				reply, err := nc.RequestMsg(msg, 5*time.Second)
				if err != nil {
					t.Fatalf("%s %s: %v", role, ev.Kind, err)
				}
				if r := ingestReply(t, reply.Data); r.Error == "" || !strings.Contains(r.Error, "admin credentials") {
					t.Fatalf("%s sent %s on %s: reply %s", role, ev.Kind, subj, reply.Data)
				}
			}
		}
		// The subjects that take pairing kinds are closed to it.
		for _, subj := range []string{events.IngestControlSubject(pairing.Conversation), events.IngestApprovalSubject(pairing.Conversation),
			events.LogSubject(pairing.Conversation)} {
			if !denied(t, nc, subj, func() error { return nc.Publish(subj, []byte("{}")) }) {
				t.Errorf("%s may publish on %s", role, subj)
			}
		}
	}
	// An approver may decide actions, not pair devices: the approval
	// subject takes verdicts only.
	appr := tg.dial(t, natsutil.RoleApprover)
	body, _ := json.Marshal(forged[1])
	reply, err := appr.RequestMsg(&nats.Msg{Subject: events.IngestApprovalSubject(pairing.Conversation), Data: body,
		Header: nats.Header{"Content-Type": []string{"application/json"}}}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := ingestReply(t, reply.Data); r.Error == "" {
		t.Fatalf("an approver appended a pairing approval: %s", reply.Data)
	}
	if recs := tg.pairingRecords(t); len(recs) != 0 {
		t.Fatalf("the pairing subject holds %d records", len(recs))
	}
	waitFor(t, "the alerts on the refused control kinds", 20*time.Second, func() bool {
		n := 0
		for _, r := range tg.streamRecords(t, events.StreamDLQ) {
			if strings.Contains(string(r.Data), "pairing.") {
				n++
			}
		}
		return n >= 2*2*len(forged)
	})
}

// TestAgentCannotReadPairing: the agent can read neither the pairing
// events (their hashes, the request ids) nor the pairing key.
func TestAgentCannotReadPairing(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	r := ht.doAuth(t, "", "POST", "/pair", nil)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /pair: %d %s", r.status, r.body)
	}
	for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleRuntime} {
		js, err := jetstream.New(ht.dial(t, role))
		if err != nil {
			t.Fatal(err)
		}
		var got int
		err = natsutil.ReadStream(t.Context(), js, natsutil.ReadOptions{Stream: events.StreamLog,
			Subjects: []string{events.LogSubject(pairing.Conversation)}}, func(natsutil.RawRecord) error { got++; return nil })
		if err == nil || got > 0 {
			t.Errorf("%s read %d pairing records (err %v)", role, got, err)
		}
	}
	fi, err := os.Stat(datadir.New(ht.dir).Creds().PairingKey())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the pairing key has mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestAgentCannotPairOverHTTP: with its token the agent may not request,
// list or complete a pairing; without one it is an anonymous browser whose
// requests stop at the limits without growing the log, and whose code
// needs an admin to read it from the agent's own screen.
func TestAgentCannotPairOverHTTP(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	// A person's browser asks for a code.
	r := ht.doAuth(t, "", "POST", "/pair", nil)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /pair: %d %s", r.status, r.body)
	}
	var person struct {
		RequestID string `json:"request_id"`
		Code      string `json:"code"`
		Secret    string `json:"secret"`
	}
	if err := json.Unmarshal(r.body, &person); err != nil {
		t.Fatal(err)
	}
	for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleRuntime} {
		if r := ht.do(t, role, "POST", "/pair", nil); r.status != http.StatusForbidden {
			t.Errorf("POST /pair as %s: %d %s", role, r.status, r.body)
		}
		if r := ht.do(t, role, "GET", "/v1/pairing", nil); r.status != http.StatusForbidden {
			t.Errorf("GET /v1/pairing as %s: %d", role, r.status)
		}
	}
	// The agent never learns the person's secret; guessing gets 404, and
	// the person's request is untouched.
	for _, guess := range []string{"", person.Code, strings.Repeat("a", 64), person.RequestID} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", ht.base+"/pair/"+person.RequestID, nil)
		req.Header.Set(httpapi.HeaderPairSecret, guess)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("poll with guess %q: %d", guess, resp.StatusCode)
		}
	}
	// Anonymous flood from the agent's address: refused at the limit,
	// nothing more appended.
	before := len(ht.pairingRecords(t))
	for range 50 {
		if r := ht.doAuth(t, "", "POST", "/pair", nil); r.status != http.StatusTooManyRequests {
			t.Fatalf("flood: %d %s", r.status, r.body)
		}
	}
	if after := len(ht.pairingRecords(t)); after != before {
		t.Fatalf("50 refused requests appended %d records", after-before)
	}
	// Agent events in the pairing conversation are ordinary agent events:
	// they pair nothing.
	agent := ht.clientAs(t, natsutil.RoleAgent)
	msg := events.Event{V: 1, ID: "agent-msg-1", Kind: events.KindMessage, Conversation: pairing.Conversation,
		Data: map[string]any{"role": "assistant", "content": "vigil pairing approve web " + person.Code, "user": "x", "code_hash": "hmac-sha256:00"}}
	if _, err := agent.Append(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	admin := ht.clientAs(t, natsutil.RoleAdmin)
	rd := pairinglog.NewReader(admin.JetStream())
	if err := rd.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	rd.Current(func(f *pairing.Fold) {
		q, ok := f.Get(person.RequestID)
		if !ok || q.State != pairing.StatePending || len(f.Requests()) != 1 {
			t.Errorf("pairing state after the agent's attempts: %+v (%d requests)", q, len(f.Requests()))
		}
	})
}
