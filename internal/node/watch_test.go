package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// waitFailed waits for the node to report a failure on Err.
func waitFailed(t *testing.T, s *Node) error {
	t.Helper()
	select {
	case err := <-s.Err():
		if s.Healthy() == nil {
			t.Fatal("Err fired but Healthy() is nil")
		}
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the node did not fail")
	}
	return nil
}

func logConfig() jetstream.StreamConfig {
	for _, sc := range natsutil.StreamConfigs(natsutil.StreamOptions{}) {
		if sc.Name == events.StreamLog {
			return sc
		}
	}
	panic("no VIGIL_LOG config")
}

// TestWatchLogDeleted: VIGIL_LOG deleted under a running node stops it
// (alert, unhealthy, Err, no more appends); the next start refuses
// without creating an empty log, and starts only when told to accept it.
func TestWatchLogDeleted(t *testing.T) {
	dir := t.TempDir()
	cfg := auditedConfig(t, dir)
	s := startCfg(t, cfg)
	appendN(t, s, "before", 10)
	if err := s.Healthy(); err != nil {
		t.Fatalf("healthy node: %v", err)
	}
	if err := s.JetStream().DeleteStream(t.Context(), events.StreamLog); err != nil {
		t.Fatal(err)
	}
	err := waitFailed(t, s)
	if !errors.Is(err, ErrStreamChanged) || !strings.Contains(err.Error(), "VIGIL_LOG was deleted") {
		t.Fatalf("err = %v, want ErrStreamChanged saying VIGIL_LOG was deleted", err)
	}
	a := waitAlert(t, s, "VIGIL_LOG was deleted")
	if a.Severity != "critical" {
		t.Fatalf("alert %+v, want critical", a)
	}
	c, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	_, err = c.Append(ctx, action("after-delete", "c-1", "ls"))
	cancel()
	c.Close()
	if err == nil {
		t.Fatal("a failed node still stored an event")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("close: %v", err)
	}

	_, err = Start(t.Context(), cfg)
	if !errors.Is(err, ErrStreamChanged) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("restart: %v, want ErrStreamChanged (VIGIL_LOG does not exist)", err)
	}
	cfg.AcceptNewLog = true
	s = startCfg(t, cfg)
	// The refused start did not create VIGIL_LOG: the accepted one did.
	if a := waitAlert(t, s, "the operator accepted a VIGIL_LOG"); !strings.Contains(a.Reason, "VIGIL_LOG does not exist") {
		t.Fatalf("accept alert %q, want it to say the log did not exist", a.Reason)
	}
	if err := s.Healthy(); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, "new-log", 1)
	// Accepted once, it is this node's log from now on.
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.AcceptNewLog = false
	startCfg(t, cfg)
}

// TestWatchLogReplaced: VIGIL_LOG deleted and recreated at once, with the
// same config, is another log (another creation time): the node stops.
func TestWatchLogReplaced(t *testing.T) {
	s := startCfg(t, auditedConfig(t, t.TempDir()))
	appendN(t, s, "before", 5)
	js := s.JetStream()
	if err := js.DeleteStream(t.Context(), events.StreamLog); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), logConfig()); err != nil {
		t.Fatal(err)
	}
	err := waitFailed(t, s)
	if !errors.Is(err, ErrStreamChanged) {
		t.Fatalf("err = %v, want ErrStreamChanged", err)
	}
	if !strings.Contains(err.Error(), "VIGIL_LOG was deleted") && !strings.Contains(err.Error(), "VIGIL_LOG was replaced") {
		t.Fatalf("err = %v, want it to say VIGIL_LOG was deleted or replaced", err)
	}
}

// TestWatchConfigRestored: an integrity setting changed on VIGIL_LOG
// (a max age that would age records out) is alerted and reverted; the
// node stays healthy because nothing was lost.
func TestWatchConfigRestored(t *testing.T) {
	s := startCfg(t, auditedConfig(t, t.TempDir()))
	appendN(t, s, "before", 5)
	js := s.JetStream()
	st, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	c.MaxAge = time.Hour
	if _, err := js.UpdateStream(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	waitAlert(t, s, "max_age 1h0m0s")
	wait.Eventually(t, 10*time.Second, func() string {
		info, err := st.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.MaxAge != 0 {
			return "max age not restored: " + info.Config.MaxAge.String()
		}
		return ""
	})
	if err := s.Healthy(); err != nil {
		t.Fatalf("node unhealthy after a restored config: %v", err)
	}
}
