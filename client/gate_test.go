package client

import (
	"testing"
)

// TestDecodeGateReply: a gate's inbox gets the stored reply and then wait
// replies; a repeated request adds its own stored reply among them. Each
// is told apart by its fields.
func TestDecodeGateReply(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		stored     bool
		check      func(t *testing.T, seq uint64, refused string, requested, decided bool, waitErr string)
	}{
		{name: "stored", data: `{"results":[{"id":"a1","seq":7}]}`, stored: true,
			check: func(t *testing.T, seq uint64, _ string, _, _ bool, _ string) {
				if seq != 7 {
					t.Errorf("seq %d", seq)
				}
			}},
		{name: "stored again", data: `{"results":[{"id":"a1","seq":7,"duplicate":true}]}`, stored: true},
		{name: "refused", data: `{"error":"not stored: x","index":-1}`, stored: true,
			check: func(t *testing.T, _ uint64, refused string, _, _ bool, _ string) {
				if refused != "not stored: x" {
					t.Errorf("refusal %q", refused)
				}
			}},
		{name: "requested", data: `{"requested":{"action_id":"a1","log_seq":7}}`,
			check: func(t *testing.T, _ uint64, _ string, requested, _ bool, _ string) {
				if !requested {
					t.Error("no request")
				}
			}},
		{name: "decided", data: `{"decided":{"action_id":"a1","log_seq":7,"outcome":"allow"}}`,
			check: func(t *testing.T, _ uint64, _ string, _, decided bool, _ string) {
				if !decided {
					t.Error("no decision")
				}
			}},
		{name: "wait error", data: `{"wait_error":"no decision within 1s"}`,
			check: func(t *testing.T, _ uint64, _ string, _, _ bool, waitErr string) {
				if waitErr == "" {
					t.Error("no wait error")
				}
			}},
		{name: "not JSON", data: `{`},
		{name: "empty object", data: `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, wr, stored := decodeGateReply([]byte(tc.data))
			if stored != tc.stored {
				t.Fatalf("stored = %v, want %v", stored, tc.stored)
			}
			if tc.check == nil {
				return
			}
			var seq uint64
			if len(r.Results) > 0 {
				seq = r.Results[0].Seq
			}
			tc.check(t, seq, r.Error, wr.Requested != nil, wr.Decided != nil, wr.WaitError)
		})
	}
}
