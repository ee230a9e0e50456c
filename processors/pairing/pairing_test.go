package pairing_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/pairing"
)

var key = bytes.Repeat([]byte{7}, pairing.KeyLen)

// clock is a fake log clock: each step says how long after the start it
// happens, so every limit is tested at, just before and just after its edge.
var t0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// step is one pairing event at a log time, and what folding it must do.
type step struct {
	at     time.Duration
	kind   events.Kind
	data   events.Pairing
	origin events.Origin // default admin
	conv   string        // default pairing.Conversation
	want   string        // the Outcome's Result
	reason string        // if set, the Outcome's Reason contains it
}

func req(id, code, client string) events.Pairing {
	return events.Pairing{User: id, Platform: pairing.PlatformWeb, CodeHash: pairing.HashCode(key, code),
		ClaimHash: pairing.HashClaim(key, "secret-"+id), Client: pairing.HashClient(key, client)}
}

func try(code, name string) events.Pairing {
	return events.Pairing{User: "unmatched", Platform: pairing.PlatformWeb, CodeHash: pairing.HashCode(key, code), Name: name, By: "cli:alice"}
}

func user(u string) events.Pairing { return events.Pairing{User: u, Platform: pairing.PlatformWeb} }

const (
	codeA = "ABCDEFGH"
	codeB = "JKLMNPQR"
	codeC = "STUVWXYZ"
	codeD = "23456789"
	wrong = "HGFEDCBA"
)

func record(seq uint64, s step) events.Record {
	origin, conv := s.origin, s.conv
	if origin == "" {
		origin = events.OriginAdmin
	}
	if conv == "" {
		conv = pairing.Conversation
	}
	data := map[string]any{"user": s.data.User}
	for k, v := range map[string]string{"platform": s.data.Platform, "code_hash": s.data.CodeHash, "claim_hash": s.data.ClaimHash,
		"client": s.data.Client, "name": s.data.Name, "by": s.data.By, "reason": s.data.Reason} {
		if v != "" {
			data[k] = v
		}
	}
	return events.Record{Seq: seq, Subject: events.LogSubject(conv), Event: events.Event{
		V: 1, ID: fmt.Sprintf("ev-%d", seq), Kind: s.kind, Conversation: conv, Origin: origin,
		Time: t0.Add(s.at), Data: data,
	}}
}

func run(t *testing.T, f *pairing.Fold, steps []step) {
	t.Helper()
	for i, s := range steps {
		o := f.Apply(new(record(uint64(i+1), s)))
		if o.Result != s.want || s.reason != "" && !strings.Contains(o.Reason, s.reason) {
			t.Fatalf("step %d (%s at +%s): %+v, want result %q reason %q", i+1, s.kind, s.at, o, s.want, s.reason)
		}
	}
}

const (
	kReq     = events.KindPairingRequested
	kApprove = events.KindPairingApproved
	kDeny    = events.KindPairingDenied
	kExpire  = events.KindPairingExpired
	kRevoke  = events.KindPairingRevoked
)

func TestLimits(t *testing.T) {
	t.Parallel()
	m := time.Minute
	fails := func(from time.Duration, n int) []step {
		var out []step
		for i := range n {
			out = append(out, step{at: from + time.Duration(i)*time.Second, kind: kApprove, data: try(wrong, ""), want: pairing.ResultFailed})
		}
		return out
	}
	cases := []struct {
		name  string
		steps []step
		check func(t *testing.T, f *pairing.Fold)
	}{
		{"approve by code names the device", []step{
			{kind: kReq, data: req("web-1", codeA, "10.0.0.1"), want: pairing.ResultAccepted},
			{at: 5 * m, kind: kApprove, data: try(codeA, "alice-phone"), want: pairing.ResultApproved},
			// A code is good once.
			{at: 6 * m, kind: kApprove, data: try(codeA, "again"), want: pairing.ResultFailed},
		}, func(t *testing.T, f *pairing.Fold) {
			r, ok := f.FindDevice("alice-phone")
			if !ok || r.ID != "web-1" || r.By != "cli:alice" || r.CodeHash != "" {
				t.Errorf("device = %+v, %v", r, ok)
			}
		}},
		{"deny by code", []step{
			{kind: kReq, data: req("web-1", codeA, "10.0.0.1"), want: pairing.ResultAccepted},
			{at: m, kind: kDeny, data: try(codeA, ""), want: pairing.ResultDenied},
			{at: 2 * m, kind: kApprove, data: try(codeA, ""), want: pairing.ResultFailed},
		}, nil},
		{"a code approves until just before one hour, not at one hour", []step{
			{kind: kReq, data: req("web-1", codeA, "10.0.0.1"), want: pairing.ResultAccepted},
			{kind: kReq, at: 11 * m, data: req("web-2", codeB, "10.0.0.2"), want: pairing.ResultAccepted},
			{at: 60*m - time.Nanosecond, kind: kApprove, data: try(codeA, ""), want: pairing.ResultApproved},
			// web-2 was stored at +11m: at +71m its code is one hour old.
			{at: 71 * m, kind: kApprove, data: try(codeB, ""), want: pairing.ResultFailed},
		}, nil},
		{"the timer's expiry closes a code", []step{
			{kind: kReq, data: req("web-1", codeA, "10.0.0.1"), want: pairing.ResultAccepted},
			{at: 60 * m, kind: kExpire, data: user("web-1"), want: pairing.ResultExpired},
			{at: 60 * m, kind: kExpire, data: user("web-1"), want: pairing.ResultIgnored},
			{at: 61 * m, kind: kApprove, data: try(codeA, ""), want: pairing.ResultFailed},
		}, func(t *testing.T, f *pairing.Fold) {
			if r, _ := f.Get("web-1"); r.State != pairing.StateExpired {
				t.Errorf("web-1 = %+v", r)
			}
		}},
		{"an expiry after the approval changes nothing", []step{
			{kind: kReq, data: req("web-1", codeA, "10.0.0.1"), want: pairing.ResultAccepted},
			{at: m, kind: kApprove, data: try(codeA, ""), want: pairing.ResultApproved},
			{at: 60 * m, kind: kExpire, data: user("web-1"), want: pairing.ResultIgnored},
		}, func(t *testing.T, f *pairing.Fold) {
			if r, _ := f.Get("web-1"); r.State != pairing.StateApproved {
				t.Errorf("web-1 = %+v", r)
			}
		}},
		{"one request per client per ten minutes", []step{
			{kind: kReq, data: req("web-1", codeA, "10.0.0.1"), want: pairing.ResultAccepted},
			{at: 10*m - time.Nanosecond, kind: kReq, data: req("web-2", codeB, "10.0.0.1"), want: pairing.ResultRefused, reason: pairing.ReasonRateLimited},
			{at: 10*m - time.Nanosecond, kind: kReq, data: req("web-3", codeC, "10.0.0.9"), want: pairing.ResultAccepted},
			{at: 10 * m, kind: kReq, data: req("web-4", codeD, "10.0.0.1"), want: pairing.ResultAccepted},
		}, func(t *testing.T, f *pairing.Fold) {
			if r, _ := f.Get("web-2"); r.State != pairing.StateRefused || r.CodeHash != "" {
				t.Errorf("web-2 = %+v", r)
			}
		}},
		{"at most three pending", []step{
			{kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted},
			{kind: kReq, data: req("web-2", codeB, "b"), want: pairing.ResultAccepted},
			{kind: kReq, data: req("web-3", codeC, "c"), want: pairing.ResultAccepted},
			{at: m, kind: kReq, data: req("web-4", codeD, "d"), want: pairing.ResultRefused, reason: pairing.ReasonTooMany},
			// One decided frees a place.
			{at: 2 * m, kind: kDeny, data: try(codeB, ""), want: pairing.ResultDenied},
			{at: 3 * m, kind: kReq, data: req("web-5", codeD, "d"), want: pairing.ResultAccepted},
			{at: 4 * m, kind: kReq, data: req("web-6", "QQQQQQQQ", "e"), want: pairing.ResultRefused, reason: pairing.ReasonTooMany},
			// A code past its hour no longer holds a place, even before the timer's event.
			{at: 60 * m, kind: kReq, data: req("web-7", "RRRRRRRR", "f"), want: pairing.ResultAccepted},
		}, func(t *testing.T, f *pairing.Fold) {
			if n := len(f.Pending()); n != 4 {
				t.Errorf("%d pending (three past their hour and not yet expired, one open), want 4", n)
			}
		}},
		{"five failures lock out; the sixth attempt is not even looked at", append(append([]step{
			{kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted}},
			fails(m, 4)...),
			step{at: 2 * m, kind: kDeny, data: try(wrong, ""), want: pairing.ResultLocked, reason: "5 failed attempts"},
			step{at: 3 * m, kind: kApprove, data: try(codeA, ""), want: pairing.ResultLocked, reason: pairing.ReasonLocked},
			step{at: 4 * m, kind: kReq, data: req("web-2", codeB, "b"), want: pairing.ResultRefused, reason: pairing.ReasonLocked},
			// Log time alone never ends a lockout...
			step{at: 5 * time.Hour, kind: kApprove, data: try(codeA, ""), want: pairing.ResultLocked},
			// ...the timer's event does, and only the one naming this lockout.
			step{at: 5 * time.Hour, kind: kExpire, data: user(pairing.UnlockID(99)), want: pairing.ResultIgnored},
			step{at: 5 * time.Hour, kind: kExpire, data: user(pairing.UnlockID(6)), want: pairing.ResultUnlocked},
			step{at: 5*time.Hour + m, kind: kReq, data: req("web-3", codeC, "c"), want: pairing.ResultAccepted},
			step{at: 5*time.Hour + 2*m, kind: kApprove, data: try(codeC, ""), want: pairing.ResultApproved},
		), func(t *testing.T, f *pairing.Fold) {
			if l := f.Lock(); l.Locked || len(l.Failures) != 0 {
				t.Errorf("lock after unlock = %+v", l)
			}
		}},
		{"failures older than an hour are forgotten", append(append(fails(0, 4),
			step{at: 60 * m, kind: kApprove, data: try(wrong, ""), want: pairing.ResultFailed}),
			fails(61*m, 3)...), func(t *testing.T, f *pairing.Fold) {
			if l := f.Lock(); l.Locked || len(l.Failures) != 4 {
				t.Errorf("lock = %+v, want 4 failures counted and no lockout", l)
			}
		}},
		{"the lockout begins at the fifth failure within the hour", append(fails(0, 4),
			step{at: 60*m - time.Nanosecond, kind: kApprove, data: try(wrong, ""), want: pairing.ResultLocked}), func(t *testing.T, f *pairing.Fold) {
			if l := f.Lock(); !l.Locked || !l.Until.Equal(t0.Add(2*60*m-time.Nanosecond)) {
				t.Errorf("lock = %+v", l)
			}
		}},
		{"a code of another platform fails", []step{
			{kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted},
			{kind: kApprove, data: events.Pairing{User: "x", Platform: "telegram", CodeHash: pairing.HashCode(key, codeA)}, want: pairing.ResultFailed},
		}, nil},
		{"a code hashed under another key fails", []step{
			{kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted},
			{kind: kApprove, data: events.Pairing{User: "x", Platform: "web", CodeHash: pairing.HashCode(bytes.Repeat([]byte{8}, 32), codeA)}, want: pairing.ResultFailed},
		}, nil},
		{"revoke a device and cancel a request", []step{
			{kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted},
			{kind: kReq, data: req("web-2", codeB, "b"), want: pairing.ResultAccepted},
			{at: m, kind: kApprove, data: try(codeA, "phone"), want: pairing.ResultApproved},
			{at: 2 * m, kind: kRevoke, data: user("web-1"), want: pairing.ResultRevoked},
			{at: 2 * m, kind: kRevoke, data: user("web-2"), want: pairing.ResultRevoked},
			{at: 3 * m, kind: kRevoke, data: user("web-2"), want: pairing.ResultIgnored},
			{at: 3 * m, kind: kApprove, data: try(codeB, ""), want: pairing.ResultFailed},
		}, func(t *testing.T, f *pairing.Fold) {
			if _, ok := f.FindDevice("phone"); ok {
				t.Error("a revoked device is still found")
			}
		}},
		{"a request with a used id is refused", []step{
			{kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted},
			{at: 20 * m, kind: kReq, data: req("web-1", codeB, "b"), want: pairing.ResultRefused, reason: pairing.ReasonDuplicate},
		}, nil},
		{"a request without its hashes is refused", []step{
			{kind: kReq, data: user("web-1"), want: pairing.ResultRefused},
		}, nil},
		{"pairing events from an agent or elsewhere count for nothing", []step{
			{kind: kReq, data: req("web-1", codeA, "a"), origin: events.OriginAgent, want: pairing.ResultIgnored},
			{kind: kReq, data: req("web-1", codeA, "a"), origin: events.OriginApprover, want: pairing.ResultIgnored},
			{kind: kReq, data: req("web-1", codeA, "a"), conv: "c-42", want: pairing.ResultIgnored},
			{kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted},
			{kind: kApprove, data: try(codeA, ""), origin: events.OriginAgent, want: pairing.ResultIgnored},
			{kind: kApprove, data: try(wrong, ""), origin: events.OriginAgent, want: pairing.ResultIgnored},
		}, func(t *testing.T, f *pairing.Fold) {
			if r, _ := f.Get("web-1"); r.State != pairing.StatePending || len(f.Lock().Failures) != 0 {
				t.Errorf("web-1 = %+v, lock %+v", r, f.Lock())
			}
		}},
		{"a bad or missing name gets the default", []step{
			{kind: kReq, data: req("web-4f1c2a9e0b7d3c55", codeA, "a"), want: pairing.ResultAccepted},
			{kind: kApprove, data: try(codeA, "bad\x00name"), want: pairing.ResultApproved},
		}, func(t *testing.T, f *pairing.Fold) {
			if r, _ := f.Get("web-4f1c2a9e0b7d3c55"); r.Name != "device-4f1c2a9e" {
				t.Errorf("name = %q", r.Name)
			}
		}},
		{"log time never goes back: an event stamped earlier is judged at the latest time", []step{
			{at: 2 * time.Hour, kind: kReq, data: req("web-1", codeA, "a"), want: pairing.ResultAccepted},
			{at: 0, kind: kReq, data: req("web-2", codeB, "a"), want: pairing.ResultRefused, reason: pairing.ReasonRateLimited},
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := pairing.New()
			run(t, f, c.steps)
			if c.check != nil {
				c.check(t, f)
			}
			// The snapshot restores the same state: folding on from it
			// gives the same bytes.
			snap, err := f.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			g := pairing.New()
			if err := g.Restore(snap); err != nil {
				t.Fatal(err)
			}
			snap2, err := g.Snapshot()
			if err != nil || !bytes.Equal(snap, snap2) {
				t.Fatalf("snapshot does not round trip: %v", err)
			}
		})
	}
}

// TestStepAlerts: the processor tells operators about a paired device, a
// lockout and a pairing event it ignored.
func TestStepAlerts(t *testing.T) {
	t.Parallel()
	f := pairing.New()
	steps := []step{
		{kind: kReq, data: req("web-1", codeA, "a")},
		{kind: kApprove, data: try(codeA, "phone")},
		{kind: kReq, data: req("web-2", codeB, "b"), origin: events.OriginAgent},
	}
	for range pairing.MaxFailures {
		steps = append(steps, step{kind: kApprove, data: try(wrong, "")})
	}
	var alerts []string
	for i, s := range steps {
		rec := record(uint64(i+1), s)
		for _, o := range processors.FeedRecord(f, rec, nil) {
			if o.Event.Kind != events.KindAlert || o.Subject != events.SubjectAlert {
				t.Fatalf("output %+v", o)
			}
			a := o.Event.Data.(events.Alert)
			alerts = append(alerts, fmt.Sprintf("%d %s %s", rec.Seq, a.Severity, a.Reason))
		}
	}
	want := []string{"2 medium pairing: device \"phone\"", "3 medium pairing event \"ev-3\"", "8 high pairing locked out"}
	if len(alerts) != len(want) {
		t.Fatalf("alerts %q", alerts)
	}
	for i := range want {
		if !strings.HasPrefix(alerts[i], want[i]) {
			t.Errorf("alert %d = %q, want prefix %q", i, alerts[i], want[i])
		}
	}
}

func TestFinishedAreBounded(t *testing.T) {
	t.Parallel()
	f := pairing.New()
	var steps []step
	for i := range 3 * pairing.MaxFinished {
		// Refused: the same client asks again at once.
		steps = append(steps, step{kind: kReq, data: req(fmt.Sprintf("web-%d", i), codeA, "a")})
	}
	for i, s := range steps {
		f.Apply(new(record(uint64(i+1), s)))
	}
	if n := len(f.Requests()); n != pairing.MaxFinished+1 {
		t.Errorf("%d requests kept, want %d finished and the pending one", n, pairing.MaxFinished+1)
	}
	if _, ok := f.Get("web-0"); !ok {
		t.Error("the pending request was forgotten")
	}
}

func TestNormalizeCode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"ABCD-EFGH", "ABCDEFGH"}, {"abcd efgh", "ABCDEFGH"}, {" 2345-6789 ", "23456789"},
		{"ABCDEFG0", ""}, {"ABCDEFGO", ""}, {"ABCDEFG1", ""}, {"ABCDEFGI", ""}, {"ABCDEFG", ""}, {"ABCDEFGHJ", ""}, {"ÄBCDEFGH", ""},
	} {
		got, err := pairing.NormalizeCode(c.in)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("NormalizeCode(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if len(pairing.Alphabet) != 32 || strings.ContainsAny(pairing.Alphabet, "0O1I") {
		t.Errorf("alphabet %q", pairing.Alphabet)
	}
}

func TestHashesAreKeyedAndSeparated(t *testing.T) {
	t.Parallel()
	other := bytes.Repeat([]byte{8}, pairing.KeyLen)
	if pairing.HashCode(key, codeA) == pairing.HashCode(other, codeA) {
		t.Error("the code hash does not depend on the key")
	}
	if pairing.HashCode(key, codeA) == pairing.HashClaim(key, codeA) || pairing.HashCode(key, codeA) == pairing.HashClient(key, codeA) {
		t.Error("hashes of different purposes collide")
	}
	if h := pairing.HashCode(key, codeA); !strings.HasPrefix(h, pairing.HashPrefix) || strings.Contains(h, codeA) {
		t.Errorf("hash %q", h)
	}
}

func FuzzNormalizeCode(f *testing.F) {
	for _, s := range []string{"ABCD-EFGH", "abcd efgh", "0000", "ÄÖ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := pairing.NormalizeCode(s)
		if err != nil {
			return
		}
		if len(c) != pairing.CodeLen || strings.Trim(c, pairing.Alphabet) != "" {
			t.Fatalf("NormalizeCode(%q) = %q", s, c)
		}
		if again, err := pairing.NormalizeCode(c); err != nil || again != c {
			t.Fatalf("not idempotent: %q -> %q, %v", c, again, err)
		}
	})
}
