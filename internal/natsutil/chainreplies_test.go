package natsutil

import (
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestParseAck(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want jetstream.PubAck
		ok   bool
	}{
		{`{"stream":"VIGIL_LOG","seq":42}`, jetstream.PubAck{Stream: "VIGIL_LOG", Sequence: 42}, true},
		{`{"stream":"VIGIL_LOG","seq":42,"duplicate": true}`, jetstream.PubAck{Stream: "VIGIL_LOG", Sequence: 42, Duplicate: true}, true},
		{`{"stream":"S","domain":"hub","seq":7}`, jetstream.PubAck{Stream: "S", Domain: "hub", Sequence: 7}, true},
		// Shapes the fast path does not take, read by encoding/json.
		{`{"stream":"S","seq":3,"batch":"b","count":2}`, jetstream.PubAck{Stream: "S", Sequence: 3}, true},
		{`{ "seq":9, "stream":"S" }`, jetstream.PubAck{Stream: "S", Sequence: 9}, true},
		{`{"stream":"S\u0041","seq":1}`, jetstream.PubAck{Stream: "SA", Sequence: 1}, true},
		// Refusals.
		{`{"error":{"code":400,"err_code":10071,"description":"wrong last msg ID: x"},"stream":"S","seq":0}`, jetstream.PubAck{}, false},
		{`{"stream":"","seq":1}`, jetstream.PubAck{}, false},
		{`{"seq":1}`, jetstream.PubAck{}, false},
		{``, jetstream.PubAck{}, false},
		{`{"stream":"S","seq":18446744073709551616}`, jetstream.PubAck{}, false},
		{`{"stream":"S","seq":1}x`, jetstream.PubAck{}, false},
	} {
		got, ok := parseAck([]byte(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseAck(%s) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzFastAck checks that whatever the fast path accepts, encoding/json
// reads the same way.
func FuzzFastAck(f *testing.F) {
	for _, s := range []string{
		`{"stream":"VIGIL_LOG","seq":42}`,
		`{"stream":"VIGIL_LOG","seq":42,"duplicate": true}`,
		`{"stream":"S","domain":"hub","seq":7}`,
		`{"stream":"S","seq":007}`,
		`{"stream":"S\"","seq":1}`,
		"{\"stream\":\"\xff\",\"seq\":0}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := fastAck(b)
		if !ok {
			return
		}
		var slow jetstream.PubAck
		if err := json.Unmarshal(b, &slow); err != nil {
			// Leading zeros are not JSON; the fast path must refuse them.
			t.Fatalf("fastAck accepted %q, which is not JSON: %v", b, err)
		}
		if fast != slow {
			t.Fatalf("fastAck(%q) = %+v, encoding/json %+v", b, fast, slow)
		}
	})
}
