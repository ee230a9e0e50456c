package events

import "testing"

// TestDerivedKind: every derived kind, as the processors encode it, is
// read back without decoding; what is not a derived event's envelope is
// left to the decoder.
func TestDerivedKind(t *testing.T) {
	for name, d := range benchDerived() {
		for _, k := range []Kind{KindRiskAssessed, KindGateRequested, KindGateDecided, KindAuditCheckpoint, KindAlert, KindStats, KindDeadLetter} {
			d.Kind = k
			d.Data = map[string]any{"nested": []any{map[string]any{"kind": "gate.decided"}, int64(-3), 1.5, nil, true}, "s": "x"}
			b, err := d.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := DerivedKind(b); !ok || got != k {
				t.Errorf("%s as %s: DerivedKind = %q, %v", name, k, got, ok)
			}
			if got, ok := DerivedID(b); !ok || string(got) != d.ID {
				t.Errorf("%s as %s: DerivedID = %q, %v", name, k, got, ok)
			}
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"not a map", []byte{0x91, 0xa1, 'x'}},
		{"no kind", []byte{0x81, 0xa1, 'v', 0x01}},
		{"a kind not derived", append([]byte{0x81, 0xa4, 'k', 'i', 'n', 'd', 0xa6}, "action"...)},
		{"kind as bin", append([]byte{0x81, 0xa4, 'k', 'i', 'n', 'd', 0xc4, 0x05}, "alert"...)},
		{"truncated", []byte{0x82, 0xa4, 'k', 'i', 'n', 'd', 0xa5, 'a', 'l', 'e', 'r', 't', 0xa1}},
		{"an item count past the body", []byte{0x81, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff}},
	} {
		if got, ok := DerivedKind(tc.b); ok {
			t.Errorf("%s: DerivedKind = %q, true; want false", tc.name, got)
		}
		if got, ok := DerivedID(tc.b); ok && tc.name != "a kind not derived" && tc.name != "kind as bin" {
			t.Errorf("%s: DerivedID = %q, true; want false", tc.name, got)
		}
	}
}

// FuzzDerivedKind: DerivedKind and DerivedID never contradict
// DecodeDerived.
func FuzzDerivedKind(f *testing.F) {
	for _, d := range benchDerived() {
		if b, err := d.Marshal(); err == nil {
			f.Add(b)
		}
	}
	for _, s := range derivedJSONSeeds {
		if d, err := DecodeDerivedJSON([]byte(s)); err == nil {
			if b, err := d.Marshal(); err == nil {
				f.Add(b)
			}
		}
	}
	for _, b := range hostileMsgpack {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, ok := DerivedKind(b)
		d, err := DecodeDerived(b)
		if err == nil && ok && k != d.Kind {
			t.Fatalf("% x: DerivedKind %q, DecodeDerived %q", clip(b), k, d.Kind)
		}
		if id, ok := DerivedID(b); err == nil && ok && string(id) != d.ID {
			t.Fatalf("% x: DerivedID %q, DecodeDerived %q", clip(b), id, d.ID)
		}
	})
}
