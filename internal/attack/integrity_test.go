package attack

// Integrity of the log itself: what an admin credential (or a damaged
// disk) can do to VIGIL_LOG and VIGIL_DERIVED, and what the node does
// about it (internal/node watch.go and internal/node/integrity; docs/durability.md).
// Every attack here goes through the admin role over TCP, as natscli would.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// integrityDeadline is generous: the node notices at once (advisory) or
// within its 1 s poll; the deadline only bounds a broken build.
const integrityDeadline = 20 * time.Second

// startAt starts a node on an existing data directory (a restart), shut
// down when the test ends.
func startAt(t *testing.T, dir string, mod ...func(*node.Config)) (*target, error) {
	t.Helper()
	cfg := node.Config{DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval}
	for _, m := range mod {
		m(&cfg)
	}
	n, err := node.Start(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := n.Close(ctx); err != nil {
			t.Errorf("close node: %v", err)
		}
	})
	return &target{Node: n, dir: dir, url: n.Info().NATSURL}, nil
}

func closeTarget(t *testing.T, tg *target) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tg.Close(ctx); err != nil {
		t.Fatalf("close node: %v", err)
	}
}

// appendActions appends n agent actions and returns the last seq.
func appendActions(t *testing.T, tg *target, prefix string, n int) uint64 {
	t.Helper()
	c := tg.clientAs(t, natsutil.RoleAgent)
	var last uint64
	for i := 0; i < n; i += 100 {
		var evs []events.Event
		for j := i; j < min(n, i+100); j++ {
			evs = append(evs, action(fmt.Sprintf("%s-%04d", prefix, j), "c-integrity", fmt.Sprintf("ls -la /work/%d", j)))
		}
		rs, err := c.AppendBatch(t.Context(), evs)
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		last = rs[len(rs)-1].Seq
	}
	return last
}

// alerts returns the alerts stored in VIGIL_DERIVED.
func (tg *target) alerts(t *testing.T) []events.Alert {
	t.Helper()
	var out []events.Alert
	for _, d := range tg.derived(t) {
		if d.Kind != events.KindAlert {
			continue
		}
		a, err := events.DerivedDataAs[events.Alert](&d)
		if err != nil {
			t.Fatalf("alert %s: %v", d.ID, err)
		}
		out = append(out, a)
	}
	return out
}

// waitAlert waits for a stored alert whose reason contains substr.
func (tg *target) waitAlert(t *testing.T, substr string) events.Alert {
	t.Helper()
	var found events.Alert
	waitFor(t, "an alert containing "+substr, integrityDeadline, func() bool {
		for _, a := range tg.alerts(t) {
			if strings.Contains(a.Reason, substr) {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

// waitStopped waits until the node reports that it stopped serving: not
// healthy, and ErrStreamChanged on Err.
func (tg *target) waitStopped(t *testing.T) error {
	t.Helper()
	waitFor(t, "the node to mark itself unhealthy", integrityDeadline, func() bool { return tg.Healthy() != nil })
	select {
	case err := <-tg.Err():
		if !errors.Is(err, node.ErrStreamChanged) {
			t.Fatalf("node error %v, want ErrStreamChanged", err)
		}
		return err
	case <-time.After(integrityDeadline):
		t.Fatal("the node is unhealthy but reported nothing on Err")
	}
	return nil
}

// refusesAppends checks a stopped node stores nothing more.
func (tg *target) refusesAppends(t *testing.T) {
	t.Helper()
	c := tg.clientAs(t, natsutil.RoleAgent)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if r, err := c.Append(ctx, action("after-stop", "c-integrity", "rm -rf /")); err == nil {
		t.Fatalf("a stopped node stored an event at seq %d", r.Seq)
	}
}

func logStreamConfig() jetstream.StreamConfig {
	for _, sc := range natsutil.StreamConfigs(natsutil.StreamOptions{}) {
		if sc.Name == events.StreamLog {
			return sc
		}
	}
	panic("no VIGIL_LOG definition")
}

// TestAdminDeletesLogWhileServing: the case. Deleting VIGIL_LOG
// under a running node used to leave it running with a warning every
// 0.5 s. Now it alerts, stops taking events and deciding, and fails; a
// restart refuses the missing log instead of creating an empty one, until
// the operator accepts the new log explicitly.
func TestAdminDeletesLogWhileServing(t *testing.T) {
	tg := startTarget(t)
	appendActions(t, tg, "before", 20)
	if err := tg.admin(t).DeleteStream(t.Context(), events.StreamLog); err != nil {
		t.Fatalf("admin delete: %v", err)
	}
	err := tg.waitStopped(t)
	if !strings.Contains(err.Error(), "VIGIL_LOG was deleted while the node ran") {
		t.Fatalf("node error %q does not say what happened", err)
	}
	if a := tg.waitAlert(t, "VIGIL_LOG was deleted"); a.Severity != "critical" {
		t.Fatalf("alert %+v, want critical", a)
	}
	tg.refusesAppends(t)
	closeTarget(t, tg)

	if _, err := startAt(t, tg.dir); !errors.Is(err, node.ErrStreamChanged) {
		t.Fatalf("restart on a deleted log: %v, want ErrStreamChanged", err)
	}
	tg2, err := startAt(t, tg.dir, func(c *node.Config) { c.AcceptNewLog = true })
	if err != nil {
		t.Fatalf("restart accepting the new log: %v", err)
	}
	// The refused start stored its alert and did not create VIGIL_LOG.
	tg2.waitAlert(t, "node refused to start: VIGIL_LOG does not exist")
	tg2.waitAlert(t, "the operator accepted a VIGIL_LOG")
}

// TestAdminRecreatesLog: deleting VIGIL_LOG and recreating it at once with
// Vigil's own definition gives a log with the same name and config but
// another creation time: the node stops all the same.
func TestAdminRecreatesLog(t *testing.T) {
	tg := startTarget(t)
	appendActions(t, tg, "before", 20)
	js := tg.admin(t)
	if err := js.DeleteStream(t.Context(), events.StreamLog); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), logStreamConfig()); err != nil {
		t.Fatal(err)
	}
	err := tg.waitStopped(t)
	if !strings.Contains(err.Error(), "VIGIL_LOG was") {
		t.Fatalf("node error %q does not name VIGIL_LOG", err)
	}
	tg.waitAlert(t, "VIGIL_LOG was")
	tg.refusesAppends(t)
	closeTarget(t, tg)
	if _, err := startAt(t, tg.dir); !errors.Is(err, node.ErrStreamChanged) || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("restart on a replaced log: %v, want ErrStreamChanged (replaced)", err)
	}
}

// TestAdminDeletesDerived: without VIGIL_DERIVED no decision is stored;
// the node stops rather than decide into the void.
func TestAdminDeletesDerived(t *testing.T) {
	tg := startTarget(t)
	appendActions(t, tg, "before", 5)
	if err := tg.admin(t).DeleteStream(t.Context(), events.StreamDerived); err != nil {
		t.Fatal(err)
	}
	err := tg.waitStopped(t)
	if !strings.Contains(err.Error(), "VIGIL_DERIVED was deleted") {
		t.Fatalf("node error %q does not say VIGIL_DERIVED was deleted", err)
	}
}

// TestAdminCannotPurgeOrUnprotectLog: VIGIL_LOG denies purges and message
// deletes, and nats-server refuses to lift either setting; none of the
// attempts costs a record or stops the node.
func TestAdminCannotPurgeOrUnprotectLog(t *testing.T) {
	tg := startTarget(t)
	last := appendActions(t, tg, "before", 20)
	js := tg.admin(t)
	st, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(t.Context()); err == nil {
		t.Error("admin purged VIGIL_LOG")
	}
	if err := st.Purge(t.Context(), jetstream.WithPurgeSequence(5)); err == nil {
		t.Error("admin purged VIGIL_LOG up to seq 5")
	}
	if err := st.DeleteMsg(t.Context(), 3); err == nil {
		t.Error("admin deleted VIGIL_LOG seq 3")
	}
	if err := st.SecureDeleteMsg(t.Context(), 4); err == nil {
		t.Error("admin erased VIGIL_LOG seq 4")
	}
	for name, edit := range map[string]func(*jetstream.StreamConfig){
		"deny_purge off":  func(c *jetstream.StreamConfig) { c.DenyPurge = false },
		"deny_delete off": func(c *jetstream.StreamConfig) { c.DenyDelete = false },
		"rollups on":      func(c *jetstream.StreamConfig) { c.AllowRollup = true },
	} {
		c := st.CachedInfo().Config
		edit(&c)
		if _, err := js.UpdateStream(t.Context(), c); err == nil {
			t.Errorf("admin turned %s on VIGIL_LOG", name)
		}
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != last || info.State.FirstSeq != 1 {
		t.Fatalf("VIGIL_LOG holds %d records from seq %d, want %d from 1", info.State.Msgs, info.State.FirstSeq, last)
	}
	if err := tg.Healthy(); err != nil {
		t.Fatalf("node unhealthy after refused attempts: %v", err)
	}
}

// TestAdminShrinksLogLimits: limits that drop records are allowed by
// nats-server (max msgs with discard old). The records are gone at once,
// so the node alerts and stops; the setting is not silently accepted.
func TestAdminShrinksLogLimits(t *testing.T) {
	tg := startTarget(t)
	appendActions(t, tg, "before", 20)
	js := tg.admin(t)
	st, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	c.MaxMsgs, c.Discard = 2, jetstream.DiscardOld
	if _, err := js.UpdateStream(t.Context(), c); err != nil {
		t.Skipf("nats-server refuses the shrinking limit itself: %v", err)
	}
	err = tg.waitStopped(t)
	if !strings.Contains(err.Error(), "lost records") {
		t.Fatalf("node error %q, want it to say VIGIL_LOG lost records", err)
	}
	tg.waitAlert(t, "VIGIL_LOG lost records")
}

// TestAdminChangesLogConfig: settings that would leak or later drop
// records (republish every record to a subject agents could read, a max
// age) are alerted and reverted while nothing was lost; the node serves on.
func TestAdminChangesLogConfig(t *testing.T) {
	tg := startTarget(t)
	appendActions(t, tg, "before", 5)
	js := tg.admin(t)
	st, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	c.RePublish = &jetstream.RePublish{Source: events.LogPrefix + ">", Destination: "leak.>"}
	c.MaxAge = 24 * time.Hour
	if _, err := js.UpdateStream(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	a := tg.waitAlert(t, "configuration was changed")
	if !strings.Contains(a.Reason, "republish") || !strings.Contains(a.Reason, "max_age") {
		t.Fatalf("alert %q does not name both settings", a.Reason)
	}
	waitFor(t, "the settings to be restored", integrityDeadline, func() bool {
		info, err := st.Info(t.Context())
		return err == nil && info.Config.RePublish == nil && info.Config.MaxAge == 0
	})
	if err := tg.Healthy(); err != nil {
		t.Fatalf("node unhealthy after a restored config: %v", err)
	}
	appendActions(t, tg, "after", 1)
}

// TestAdminSealsLog: a sealed stream takes no more events and cannot be
// unsealed: the node cannot restore it, so it stops.
func TestAdminSealsLog(t *testing.T) {
	tg := startTarget(t)
	appendActions(t, tg, "before", 5)
	js := tg.admin(t)
	st, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	c.Sealed = true
	if _, err := js.UpdateStream(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	err = tg.waitStopped(t)
	if !strings.Contains(err.Error(), "sealed") || !strings.Contains(err.Error(), "cannot be restored") {
		t.Fatalf("node error %q, want it to say the sealed config cannot be restored", err)
	}
}

// corruptStore runs a node with a fast sealer, appends n events, waits
// for a signed checkpoint over all of them, stops the node, and returns
// its data directory and VIGIL_LOG's message directory.
func corruptStore(t *testing.T, n int) (dir, msgs string, last uint64) {
	t.Helper()
	tg := startTarget(t, func(c *node.Config) { c.SealInterval = 20 * time.Millisecond })
	last = appendActions(t, tg, "ev", n)
	waitFor(t, "a checkpoint over the log", integrityDeadline, func() bool {
		m, err := tg.admin(t).Stream(t.Context(), events.StreamDerived)
		if err != nil {
			return false
		}
		raw, err := m.GetLastMsgForSubject(t.Context(), events.SubjectCheckpoint)
		if err != nil {
			return false
		}
		d, err := events.DecodeDerived(raw.Data)
		if err != nil {
			return false
		}
		cp, err := events.DerivedDataAs[events.AuditCheckpoint](&d)
		return err == nil && cp.TreeSize >= last
	})
	closeTarget(t, tg)
	filepath.WalkDir(filepath.Join(tg.dir, "jetstream"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "msgs" && filepath.Base(filepath.Dir(p)) == events.StreamLog {
			msgs = p
		}
		return nil
	})
	if msgs == "" {
		t.Fatal("VIGIL_LOG's message directory not found")
	}
	return tg.dir, msgs, last
}

func continuity(t *testing.T, tg *target) integrity.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), integrityDeadline)
	defer cancel()
	rep, err := tg.WaitContinuity(ctx)
	if err != nil {
		t.Fatalf("continuity check: %v", err)
	}
	return rep
}

// TestRestartOnFlippedByte: the "flipped byte": JetStream skips
// the damaged record on read and still counts it, or (when it rebuilds the
// block) cuts the log there. Either way the start-time continuity check
// stores a critical alert naming the sequence; a cut log is first refused.
func TestRestartOnFlippedByte(t *testing.T) {
	dir, msgs, last := corruptStore(t, 300)
	blk := filepath.Join(msgs, "1.blk")
	b, err := os.ReadFile(blk)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x5a
	if err := os.WriteFile(blk, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tg, err := startAt(t, dir)
	if errors.Is(err, node.ErrStreamChanged) && strings.Contains(err.Error(), "are gone") {
		// JetStream took its other recovery path: it rebuilt the block
		// and cut the log at the damaged record (which one it takes
		// depends on what of its index survived the stop). The node
		// refuses a log shorter than the one it folded; accepted
		// explicitly, the same alert must name the damage.
		t.Logf("JetStream cut the log at the flipped byte; the node refused: %v", err)
		tg, err = startAt(t, dir, func(c *node.Config) { c.AcceptNewLog = true })
	}
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	rep := continuity(t, tg)
	if rep.OK() || rep.FirstBad == 0 || rep.FirstBad > last {
		t.Fatalf("continuity %+v, want a finding in 1..%d", rep, last)
	}
	a := tg.waitAlert(t, "continuity check at start")
	if a.LogSeq != rep.FirstBad || a.Severity != "critical" {
		t.Fatalf("alert %+v, want critical at log_seq %d", a, rep.FirstBad)
	}
}

// TestRestartOnLostMessageBlock: the stream's message block file is gone
// (every record with it). The node refuses to start on a log shorter than
// the one it folded; accepted explicitly, it alerts that the signed
// records are gone.
func TestRestartOnLostMessageBlock(t *testing.T) {
	dir, msgs, last := corruptStore(t, 100)
	for _, f := range []string{"1.blk", "index.db"} {
		if err := os.Remove(filepath.Join(msgs, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if _, err := startAt(t, dir); !errors.Is(err, node.ErrStreamChanged) {
		t.Fatalf("restart without the log's records: %v, want ErrStreamChanged", err)
	}
	tg, err := startAt(t, dir, func(c *node.Config) { c.AcceptNewLog = true })
	if err != nil {
		t.Fatalf("restart accepting the log: %v", err)
	}
	rep := continuity(t, tg)
	if rep.OK() || rep.FirstBad == 0 || rep.FirstBad > last {
		t.Fatalf("continuity %+v, want the lost records named", rep)
	}
	tg.waitAlert(t, "continuity check at start")
}
