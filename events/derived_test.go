package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func riskDerived() Derived {
	return Derived{
		V: 1, ID: "risk:4", Kind: KindRiskAssessed, Conversation: "c-42", Seq: 4, Time: "2026-11-22T10:00:02.5Z",
		Data: RiskAssessed{ActionID: "01M81B5KP4KN9DZNWV9NV456V1", LogSeq: 4, ConfigVersion: 3, Level: RiskHigh,
			Reasons: []Reason{{Analyzer: "rules", Rule: "recursive-delete", Level: RiskHigh, Span: []int{0, 6}}}},
	}
}

// A derived event encodes to the same bytes whether Data is typed or the
// generic map a decoder returns: replay compares bytes.
func TestDerivedCanonical(t *testing.T) {
	t.Parallel()
	d := riskDerived()
	typed, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeDerived(typed)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Data.(map[string]any); !ok {
		t.Fatalf("decoded Data is %T, want a map", back.Data)
	}
	generic, err := back.Marshal()
	if err != nil || !bytes.Equal(typed, generic) {
		t.Fatalf("typed and generic Data encode differently (%v):\n%x\n%x", err, typed, generic)
	}
	checkDerivedCanonical(t, back)
	for name, v := range map[string]any{"value": d, "pointer": &d} {
		if b, err := msgpack.Marshal(v); err != nil || !bytes.Equal(b, typed) {
			t.Errorf("msgpack.Marshal(%s) is not canonical: %v", name, err)
		}
	}
	var viaLib Derived
	if err := msgpack.Unmarshal(typed, &viaLib); err != nil || !reflect.DeepEqual(viaLib, back) {
		t.Errorf("msgpack.Unmarshal: %v", err)
	}
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var viaJSON Derived
	if err := json.Unmarshal(js, &viaJSON); err != nil || !reflect.DeepEqual(viaJSON, back) {
		t.Errorf("json round trip: %v\n%#v\n%#v", err, viaJSON, back)
	}
	if !strings.HasPrefix(string(js), `{"conversation":"c-42","data":{"action_id":`) {
		t.Errorf("JSON keys are not sorted: %s", js)
	}
	ra, err := DerivedDataAs[RiskAssessed](&back)
	if err != nil || !reflect.DeepEqual(ra, d.Data) {
		t.Errorf("DerivedDataAs = %#v, %v; want %#v", ra, err, d.Data)
	}
	// Marshal does not change the caller's data.
	m := map[string]any{"log_seq": 1, "counts": map[string]any{"a": 1}}
	s := Derived{V: 1, ID: "stats:1", Kind: KindStats, Seq: 1, Time: "2026-11-22T10:00:00Z", Data: m}
	if _, err := s.Marshal(); err != nil {
		t.Fatal(err)
	}
	if _, isInt := m["log_seq"].(int); !isInt {
		t.Errorf("Marshal normalised the caller's map: %#v", m)
	}
}

func TestDerivedValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(d *Derived)
		field string
	}{
		{"valid", func(d *Derived) {}, ""},
		{"valid, generic data", func(d *Derived) {
			d.Data = map[string]any{"action_id": "a", "log_seq": 4, "config_version": 3, "level": "LOW", "reasons": nil}
		}, ""},
		{"no conversation", func(d *Derived) { d.Conversation = "" }, ""},
		{"v 0", func(d *Derived) { d.V = 0 }, "v"},
		{"bad id", func(d *Derived) { d.ID = "risk 4" }, "id"},
		{"agent kind", func(d *Derived) { d.Kind = KindAction }, "kind"},
		{"bad conversation", func(d *Derived) { d.Conversation = "c.42" }, "conversation"},
		{"bad time", func(d *Derived) { d.Time = "yesterday" }, "time"},
		{"no time", func(d *Derived) { d.Time = "" }, "time"},
		{"nil data", func(d *Derived) { d.Data = nil }, "data"},
		{"data not an object", func(d *Derived) { d.Data = []any{1} }, "data"},
		{"bad level", func(d *Derived) { d.Data = RiskAssessed{ActionID: "a", Level: "SEVERE"} }, "data.level"},
		{"lower-case level", func(d *Derived) { d.Data = RiskAssessed{ActionID: "a", Level: "high"} }, "data.level"},
		{"no action id", func(d *Derived) { d.Data = RiskAssessed{Level: RiskLow} }, "data.action_id"},
		{"reason without a rule", func(d *Derived) {
			d.Data = RiskAssessed{ActionID: "a", Level: RiskLow, Reasons: []Reason{{Analyzer: "rules"}}}
		}, "data.reasons[0].rule"},
		{"span of three", func(d *Derived) {
			d.Data = RiskAssessed{ActionID: "a", Level: RiskLow, Reasons: []Reason{{Analyzer: "rules", Rule: "r", Span: []int{1, 2, 3}}}}
		}, "data.reasons[0].span"},
		{"negative span", func(d *Derived) {
			d.Data = RiskAssessed{ActionID: "a", Level: RiskLow, Reasons: []Reason{{Analyzer: "rules", Rule: "r", Span: []int{-1, 2}}}}
		}, "data.reasons[0].span[0]"},
		{"gate decided", func(d *Derived) {
			d.Kind, d.Data = KindGateDecided, GateDecided{ActionID: "a", LogSeq: 4, Outcome: OutcomeDeny, By: ByTimeout, Level: RiskHigh, DecisionSeq: 9}
		}, ""},
		{"gate decided by nobody", func(d *Derived) {
			d.Kind, d.Data = KindGateDecided, GateDecided{ActionID: "a", Outcome: OutcomeDeny, Level: RiskHigh}
		}, "data.by"},
		{"dead letter", func(d *Derived) {
			d.Kind, d.Data = KindDeadLetter, DeadLetter{Reason: "r", Subject: "vigil.ingest.agent.c", Digest: "sha256:" + strings.Repeat("0", 64), Time: "2026-11-22T10:00:00Z"}
		}, ""},
		{"dead letter with a short digest", func(d *Derived) {
			d.Kind, d.Data = KindDeadLetter, DeadLetter{Reason: "r", Digest: "sha256:00", Time: "2026-11-22T10:00:00Z"}
		}, "data.digest"},
		{"stats", func(d *Derived) {
			d.Kind, d.Data = KindStats, Stats{Conversation: "c", Events: 3, ByKind: map[string]uint64{"message": 3}, LastSeq: 3}
		}, ""},
		{"alert", func(d *Derived) { d.Kind, d.Data = KindAlert, Alert{Severity: "critical", Reason: "r"} }, ""},
		{"checkpoint", func(d *Derived) {
			d.Kind, d.Data = KindAuditCheckpoint, AuditCheckpoint{TreeSize: 1, RootHash: "aGFzaA==", Note: "n"}
		}, ""},
		{"gate requested", func(d *Derived) {
			d.Kind, d.Data = KindGateRequested, GateRequested{ActionID: "a", LogSeq: 1, Level: RiskMedium}
		}, ""},
		{"gate requested with a claimed backend and a digest", func(d *Derived) {
			d.Kind, d.Data = KindGateRequested, GateRequested{ActionID: "a", LogSeq: 1, Level: RiskMedium, Backend: "local", BackendClaimed: "docker", Digest: Digest([]byte("a"))}
		}, ""},
		{"gate requested with a short digest", func(d *Derived) {
			d.Kind, d.Data = KindGateRequested, GateRequested{ActionID: "a", LogSeq: 1, Level: RiskMedium, Digest: "sha256:00"}
		}, "data.digest"},
		{"gate decided by client", func(d *Derived) {
			d.Kind, d.Data = KindGateDecided, GateDecided{ActionID: "a", LogSeq: 4, Outcome: OutcomeAllow, By: ByClient, Level: RiskHigh, DecisionSeq: 9,
				Verdict: VerdictOnce, Approver: "client:unknown", Digest: Digest([]byte("a"))}
		}, ""},
		{"gate decided with a digest that is no digest", func(d *Derived) {
			d.Kind, d.Data = KindGateDecided, GateDecided{ActionID: "a", LogSeq: 4, Outcome: OutcomeAllow, By: ByMode, Level: RiskLow, DecisionSeq: 4, Digest: "md5:00"}
		}, "data.digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := riskDerived()
			tt.edit(&d)
			err := d.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				// Valid typed data survives the wire and reads back.
				b, err := d.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				back, err := DecodeDerived(b)
				if err != nil {
					t.Fatal(err)
				}
				if err := back.Validate(); err != nil {
					t.Fatalf("after a round trip: %v", err)
				}
				if _, err := derivedViews[back.Kind](&back); err != nil {
					t.Fatalf("typed view: %v", err)
				}
				return
			}
			checkValidationError(t, err, tt.field)
		})
	}
}

func TestDecodeDerivedErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   []byte
		reason string
	}{
		{"empty", nil, "truncated"},
		{"array", []byte{0x91, 0x01}, "want a map"},
		{"v string", msgpackOf(t, map[string]any{"v": "1"}), `"v"`},
		{"v null", []byte{0x81, 0xa1, 'v', 0xc0}, `"v"`},
		{"id number", msgpackOf(t, map[string]any{"id": 1}), `"id"`},
		{"kind null", []byte{0x81, 0xa4, 'k', 'i', 'n', 'd', 0xc0}, `"kind"`},
		{"seq negative", msgpackOf(t, map[string]any{"seq": -1}), `"seq"`},
		{"seq string", msgpackOf(t, map[string]any{"seq": "4"}), `"seq"`},
		{"seq null", []byte{0x81, 0xa3, 's', 'e', 'q', 0xc0}, `"seq"`},
		{"time number", msgpackOf(t, map[string]any{"time": 4}), `"time"`},
		{"trailing data", []byte{0x80, 0x80}, "trailing"},
		{"hostile length", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, "declares"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeDerived(tt.body)
			if err == nil {
				t.Fatal("decoded")
			}
			checkDecodeError(t, err, tt.body)
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
		})
	}
	if _, err := DecodeDerivedJSON([]byte(`{"seq":1.5}`)); !errors.Is(err, ErrDecode) {
		t.Errorf("DecodeDerivedJSON(seq 1.5) = %v", err)
	}
	if _, err := DecodeDerivedJSON([]byte(`[]`)); !errors.Is(err, ErrDecode) {
		t.Errorf("DecodeDerivedJSON([]) = %v", err)
	}
}

// The largest sequence survives both formats.
func TestDerivedMaxSeq(t *testing.T) {
	t.Parallel()
	d := riskDerived()
	d.Seq = 1<<64 - 1
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeDerived(b)
	if err != nil || back.Seq != d.Seq {
		t.Fatalf("seq %d, %v", back.Seq, err)
	}
	checkDerivedCanonical(t, back)
}

func TestDigest(t *testing.T) {
	t.Parallel()
	// sha256("abc"), FIPS 180-2 appendix B.1.
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := Digest([]byte("abc")); got != want {
		t.Fatalf("Digest(abc) = %s, want %s", got, want)
	}
	if !digestPattern.MatchString(Digest(nil)) {
		t.Fatalf("Digest(nil) = %s does not match %s", Digest(nil), digestPattern)
	}
}
