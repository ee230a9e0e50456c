package allowlistlog

import (
	"errors"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

func TestRevokeEvent(t *testing.T) {
	cases := []struct {
		name    string
		r       Revoke
		wantErr bool
		want    events.AllowlistChanged
		via     string
	}{
		{name: "with a reason", r: Revoke{EntryID: "01JENTRY", By: "alice", Reason: "too broad"},
			want: events.AllowlistChanged{Op: events.AllowlistRevoke, EntryID: "01JENTRY", By: "alice", Reason: "too broad"}},
		{name: "from the HTTP API", r: Revoke{EntryID: "01JENTRY", By: "bob", Via: map[string]any{"via": "http", "credential": "approver"}},
			want: events.AllowlistChanged{Op: events.AllowlistRevoke, EntryID: "01JENTRY", By: "bob"}, via: "http"},
		{name: "via may not override", r: Revoke{EntryID: "01JENTRY", By: "bob", Via: map[string]any{"op": "add", "entry_id": "other", "by": "mallory", "reason": "x"}},
			want: events.AllowlistChanged{Op: events.AllowlistRevoke, EntryID: "01JENTRY", By: "bob"}},
		{name: "no entry", r: Revoke{By: "alice"}, wantErr: true},
		{name: "bad entry id", r: Revoke{EntryID: "a b", By: "alice"}, wantErr: true},
		{name: "nobody", r: Revoke{EntryID: "01JENTRY"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := RevokeEvent(tc.r)
			if tc.wantErr {
				if !errors.Is(err, ErrBadRevoke) {
					t.Fatalf("error %v, want ErrBadRevoke", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ev.Validate(); err != nil {
				t.Fatalf("the event does not validate: %v", err)
			}
			got, err := events.DataAs[events.AllowlistChanged](&ev)
			if err != nil || got != tc.want || ev.Kind != events.KindAllowlistChanged || ev.Agent != tc.r.By {
				t.Fatalf("%v: %+v (agent %q), want %+v", err, got, ev.Agent, tc.want)
			}
			if v, _ := ev.Data["via"].(string); v != tc.via {
				t.Fatalf("via %q, want %q", v, tc.via)
			}
		})
	}
}
