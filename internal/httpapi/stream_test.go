package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// TestStreamCoalescesDecisions: a flood of actions allowed by the mode
// (no person waits on them) reaches the live stream as decided-summary
// counts, never one "decided" each, while an action that waits still
// comes as "pending"; ?snapshot=none sends only the count of the queue.
func TestStreamCoalescesDecisions(t *testing.T) {
	a := startAPI(t)
	st := a.openStream(t, natsutil.RoleApprover, "?snapshot=none")
	st.next(t, "ready", `"pending":0`)
	const n = 300
	appendMany(t, a.Info().DataDir, n, 2, func(i int) events.Event {
		return bashAction("c-coalesce", fmt.Sprintf("ls -la /tmp/%d", i))
	})
	high := bashAction("c-coalesce", "rm -rf /")
	appendMany(t, a.Info().DataDir, 1, 1, func(int) events.Event { return high })
	decided, pendingSeen := 0, false
	timeout := time.After(time.Minute)
	for decided < n || !pendingSeen {
		var ev [2]string
		select {
		case ev = <-st.events:
		case <-timeout:
			t.Fatalf("after a minute the summaries count %d of %d decisions; pending seen: %v", decided, n, pendingSeen)
		}
		switch ev[0] {
		case "decided":
			t.Fatalf("a decision no person waited on was sent alone: %s", ev[1])
		case "decided-summary":
			var s struct{ Decided, Allow, Deny int }
			if err := json.Unmarshal([]byte(ev[1]), &s); err != nil || s.Decided != s.Allow+s.Deny {
				t.Fatalf("summary %s: %v", ev[1], err)
			}
			decided += s.Decided
		case "pending":
			if !strings.Contains(ev[1], high.ID) {
				t.Fatalf("pending %s", ev[1])
			}
			pendingSeen = true
		case "gap":
			t.Fatalf("a reader keeping up got a gap: %s", ev[1])
		}
	}
	if decided != n {
		t.Fatalf("the summaries count %d decisions, want %d", decided, n)
	}
}
