package events

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// mustDecodeJSON decodes s or fails the test.
func mustDecodeJSON(t testing.TB, s string) Event {
	t.Helper()
	ev, err := DecodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("DecodeJSON(%s): %v", s, err)
	}
	return ev
}

// mustMsgpack encodes ev or fails the test.
func mustMsgpack(t testing.TB, ev Event) []byte {
	t.Helper()
	b, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatalf("MarshalMsgpack(%s): %v", ev.ID, err)
	}
	return b
}

// mustJSON encodes ev or fails the test.
func mustJSON(t testing.TB, ev Event) []byte {
	t.Helper()
	b, err := ev.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON(%s): %v", ev.ID, err)
	}
	return b
}

// checkCanonical asserts the codec's properties for an event a decoder
// returned: encoding never fails; decode→encode→decode is stable (same
// bytes, same event); and the JSON and msgpack spellings agree (either one,
// decoded, encodes to the same msgpack bytes).
func checkCanonical(t testing.TB, ev Event) {
	t.Helper()
	mp1, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatalf("a decoded event must encode: %v", err)
	}
	js1, err := ev.MarshalJSON()
	if err != nil {
		t.Fatalf("a decoded event must encode as JSON: %v", err)
	}
	ev2, err := DecodeMsgpack(mp1)
	if err != nil {
		t.Fatalf("canonical msgpack must decode: %v\n%x", err, mp1)
	}
	if mp2 := mustMsgpack(t, ev2); !bytes.Equal(mp1, mp2) {
		t.Fatalf("msgpack decode→encode is not stable:\n%x\n%x", mp1, mp2)
	}
	ev3, err := DecodeJSON(js1)
	if err != nil {
		t.Fatalf("canonical JSON must decode: %v\n%s", err, js1)
	}
	if mp3 := mustMsgpack(t, ev3); !bytes.Equal(mp1, mp3) {
		t.Fatalf("JSON and msgpack disagree:\nfrom msgpack %x\nfrom JSON    %x\nJSON %s", mp1, mp3, js1)
	}
	if js2 := mustJSON(t, ev2); !bytes.Equal(js1, js2) {
		t.Fatalf("JSON decode→encode is not stable:\n%s\n%s", js1, js2)
	}
	if !reflect.DeepEqual(ev2, ev3) {
		t.Fatalf("the event decoded from msgpack and from JSON differ:\n%#v\n%#v", ev2, ev3)
	}
	// Canonical values: what a second decode returns is what the first
	// returned, so folds see the same event live and on replay.
	if !reflect.DeepEqual(normalizedCopy(t, ev), ev2) {
		t.Fatalf("re-decoding changed the event:\n%#v\n%#v", ev, ev2)
	}
}

// normalizedCopy is ev as a decoder would return it.
func normalizedCopy(t testing.TB, ev Event) Event {
	t.Helper()
	c := ev.Clone()
	if c.Data == nil {
		c.Data = map[string]any{}
	}
	return c
}

// checkDerivedCanonical is checkCanonical for derived events.
func checkDerivedCanonical(t testing.TB, d Derived) {
	t.Helper()
	mp1, err := d.Marshal()
	if err != nil {
		t.Fatalf("a decoded derived event must encode: %v", err)
	}
	js1, err := d.MarshalJSON()
	if err != nil {
		t.Fatalf("a decoded derived event must encode as JSON: %v", err)
	}
	d2, err := DecodeDerived(mp1)
	if err != nil {
		t.Fatalf("canonical msgpack must decode: %v\n%x", err, mp1)
	}
	mp2, err := d2.Marshal()
	if err != nil || !bytes.Equal(mp1, mp2) {
		t.Fatalf("msgpack decode→encode is not stable (%v):\n%x\n%x", err, mp1, mp2)
	}
	d3, err := DecodeDerivedJSON(js1)
	if err != nil {
		t.Fatalf("canonical JSON must decode: %v\n%s", err, js1)
	}
	mp3, err := d3.Marshal()
	if err != nil || !bytes.Equal(mp1, mp3) {
		t.Fatalf("JSON and msgpack disagree (%v):\n%x\n%x", err, mp1, mp3)
	}
	if !reflect.DeepEqual(d2, d3) {
		t.Fatalf("decoded from msgpack and from JSON differ:\n%#v\n%#v", d2, d3)
	}
}

// checkDecodeError asserts err is a typed decode error that does not echo
// the body it refused.
func checkDecodeError(t testing.TB, err error, body []byte) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
	}
	if !errors.Is(err, ErrDecode) {
		t.Fatalf("errors.Is(%v, ErrDecode) = false", err)
	}
	if de.Format != "json" && de.Format != "msgpack" {
		t.Fatalf("DecodeError.Format = %q", de.Format)
	}
	if len(de.Reason) > 300 {
		t.Fatalf("DecodeError.Reason is %d bytes long; it must stay short", len(de.Reason))
	}
	// A refused body may hold a secret: the reason must not carry it.
	if len(body) >= 32 && strings.Contains(err.Error(), string(body)) {
		t.Fatalf("the error quotes the refused body: %v", err)
	}
}

// checkValidationError asserts err is a *ValidationError for field.
func checkValidationError(t testing.TB, err error, field string) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("errors.Is(%v, ErrInvalid) = false", err)
	}
	if ve.Field != field {
		t.Fatalf("error names field %q, want %q: %v", ve.Field, field, err)
	}
}

func hexLine(b []byte) string { return hex.EncodeToString(b) + "\n" }

// runtimeMem samples the bytes allocated so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}

// views is every kind's typed view, for tests that must cover all kinds.
var eventViews = map[Kind]func(*Event) (any, error){
	KindConversationStarted: eventView[ConversationStarted],
	KindAction:              eventView[Action],
	KindObservation:         eventView[Observation],
	KindMessage:             eventView[Message],
	KindContextLoaded:       eventView[ContextLoaded],
	KindConfig:              eventView[Config],
	KindApprovalDecision:    eventView[ApprovalDecision],
	KindAllowlistChanged:    eventView[AllowlistChanged],
	KindApprovalExpired:     eventView[ApprovalExpired],
	KindPairingRequested:    eventView[Pairing],
	KindPairingApproved:     eventView[Pairing],
	KindPairingRevoked:      eventView[Pairing],
	KindPairingDenied:       eventView[Pairing],
	KindPairingExpired:      eventView[Pairing],
	KindAuditSeal:           eventView[AuditSeal],
	KindTokenCreated:        eventView[TokenCreated],
	KindTokenRevoked:        eventView[TokenRevoked],
}

var derivedViews = map[Kind]func(*Derived) (any, error){
	KindRiskAssessed:    derivedView[RiskAssessed],
	KindGateRequested:   derivedView[GateRequested],
	KindGateDecided:     derivedView[GateDecided],
	KindAuditCheckpoint: derivedView[AuditCheckpoint],
	KindAlert:           derivedView[Alert],
	KindStats:           derivedView[Stats],
	KindDeadLetter:      derivedView[DeadLetter],
}

func eventView[T any](e *Event) (any, error)     { return DataAs[T](e) }
func derivedView[T any](d *Derived) (any, error) { return DerivedDataAs[T](d) }
