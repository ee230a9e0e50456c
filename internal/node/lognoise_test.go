package node

import (
	"bytes"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestQuietHandler: a run's duplicate-in-process retries become one line
// (and a summary per interval), a dead peer's route failures one line
// with what to do (and one per interval, and one when it is back), and
// everything else passes unchanged.
func TestQuietHandler(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newQuietHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), func() time.Time { return now })
	log := slog.New(h).With("component", "driver")
	nsrv := slog.New(h).With("component", "nats-server")
	dup := errors.New("nats: nats: API error: code=409 err_code=10158 description=duplicate message id is in process")
	for i := range 2500 {
		log.Warn("publish not acknowledged yet; retrying", "id", "risk:1", "attempt", 2, "err", dup)
		if i == 1000 {
			now = now.Add(dupSummaryEvery) // one summary
		}
	}
	log.Warn("publish not acknowledged yet; retrying", "id", "risk:2", "err", errors.New("nats: no response from stream"))
	for i := 1; i <= 400; i++ {
		nsrv.Error("Error trying to connect to route (attempt " + strconv.Itoa(i) + "): dial tcp 127.0.0.1:6222: connect: connection refused")
		now = now.Add(time.Second)
	}
	nsrv.Info("127.0.0.1:6222 - rid:9 - Route connection created")
	nsrv.Info("127.0.0.1:6223 - rid:10 - Route connection created")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	count := func(sub string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, sub) {
				n++
			}
		}
		return n
	}
	checks := []struct {
		what string
		sub  string
		want int
	}{
		{"duplicate retries: one explanation", "stored once (normal in a fleet", 1},
		{"duplicate retries: one summary after the interval", "1001 outputs met another node's identical publish", 1},
		{"duplicate retries themselves", "duplicate message id is in process", 0},
		{"another retry passes", "no response from stream", 1},
		{"route down: once, with what to do", "cannot reach the cluster peer at 127.0.0.1:6222: if that node is down, bring it back", 1},
		{"route down: again after the interval", "still unreachable after 5m0s (301 attempts)", 1},
		{"route failures themselves", "Error trying to connect to route", 0},
		{"route back", "reachable again, after 6m40s (400 failed attempts)", 1},
		{"route connections pass", "Route connection created", 2},
	}
	for _, c := range checks {
		if got := count(c.sub); got != c.want {
			t.Errorf("%s: %d lines with %q, want %d", c.what, got, c.sub, c.want)
		}
	}
	if len(lines) != 8 {
		t.Errorf("%d lines, want 8:\n%s", len(lines), buf.String())
	}
	if count("component=nats-server") != 5 || count("component=driver") != 3 {
		t.Errorf("attributes of the logger lost:\n%s", buf.String())
	}
}
