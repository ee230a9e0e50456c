package integrity

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func logConfig() jetstream.StreamConfig {
	for _, sc := range natsutil.StreamConfigs(natsutil.StreamOptions{}) {
		if sc.Name == events.StreamLog {
			return sc
		}
	}
	panic("no VIGIL_LOG config")
}

func TestRecordsLost(t *testing.T) {
	st := func(first, last, msgs, deleted uint64) jetstream.StreamState {
		return jetstream.StreamState{FirstSeq: first, LastSeq: last, Msgs: msgs, NumDeleted: int(deleted)}
	}
	cases := []struct {
		name      string
		prev, cur jetstream.StreamState
		want      string // substring; "" = nothing lost
	}{
		{"empty to empty", st(0, 0, 0, 0), st(0, 0, 0, 0), ""},
		{"appended to an empty stream", st(0, 0, 0, 0), st(1, 20, 20, 0), ""},
		{"appended", st(1, 20, 20, 0), st(1, 30, 30, 0), ""},
		{"first records dropped from an empty baseline", st(0, 0, 0, 0), st(19, 20, 2, 0), "seqs 1..18 are gone"},
		{"first records dropped", st(1, 20, 20, 0), st(19, 20, 2, 0), "seqs 1..18 are gone"},
		{"all purged", st(1, 20, 20, 0), st(21, 20, 0, 0), "20 records are missing"},
		{"last went back", st(1, 20, 20, 0), st(1, 10, 10, 0), "went back from 20 to 10"},
		{"interior delete", st(1, 20, 20, 0), st(1, 20, 19, 1), "1 records were deleted"},
		{"lost on disk", st(1, 20, 20, 0), jetstream.StreamState{FirstSeq: 1, LastSeq: 20, Msgs: 19, Lost: &jetstream.LostStreamData{Msgs: []uint64{7}}}, "first seq 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RecordsLost(tc.prev, tc.cur)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("RecordsLost = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConfigDrift(t *testing.T) {
	want := logConfig()
	got := want
	got.MaxMsgs, got.MaxBytes, got.MaxMsgsPerSubject = -1, -1, -1            // how the server reports "no limit"
	got.Duplicates, got.Replicas, got.Description = time.Minute, 3, "edited" // left to operators
	if d := ConfigDrift(want, got); len(d) > 0 {
		t.Fatalf("drift %q, want none", d)
	}
	got.Subjects = []string{"vigil.log.x"}
	got.MaxAge = time.Hour
	got.RePublish = &jetstream.RePublish{Source: ">", Destination: "leak.>"}
	d := strings.Join(ConfigDrift(want, got), "; ")
	for _, f := range []string{"subjects", "max_age", "republish"} {
		if !strings.Contains(d, f) {
			t.Errorf("drift %q does not name %s", d, f)
		}
	}
}
