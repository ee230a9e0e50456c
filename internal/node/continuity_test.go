package node

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

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node/integrity"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/audit"
)

// auditedConfig is a node running the audit processor with the data
// directory's key, whose continuity check trusts that key.
func auditedConfig(t *testing.T, dir string) Config {
	t.Helper()
	signer, vkey, err := auditkey.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := audit.NewVerifiers(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
		Processors: func() ([]processors.Processor, error) {
			a, err := audit.New(audit.Config{Signer: signer})
			return []processors.Processor{a}, err
		},
		AuditVerifiers: vs, NoExpiry: true,
	}
}

func startCfg(t *testing.T, cfg Config) *Node {
	t.Helper()
	s, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// appendN appends n actions in batches and returns the log's last seq.
func appendN(t *testing.T, s *Node, prefix string, n int) uint64 {
	t.Helper()
	c, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var last uint64
	for i := 0; i < n; i += 100 {
		var evs []events.Event
		for j := i; j < min(n, i+100); j++ {
			evs = append(evs, action(fmt.Sprintf("%s-%04d", prefix, j), "c-cont", fmt.Sprintf("ls -la /srv/project/%d", j)))
		}
		rs, err := c.AppendBatch(t.Context(), evs)
		if err != nil {
			t.Fatal(err)
		}
		last = rs[len(rs)-1].Seq
	}
	return last
}

// waitCheckpoint waits until a checkpoint covers seq (the node's sealer
// appends an audit.seal that forces one).
func waitCheckpoint(t *testing.T, s *Node, seq uint64) {
	t.Helper()
	st, err := s.JetStream().Stream(t.Context(), events.StreamDerived)
	if err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 20*time.Second, func() string {
		if m, err := st.GetLastMsgForSubject(t.Context(), events.SubjectCheckpoint); err == nil {
			d, err := events.DecodeDerived(m.Data)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := events.DerivedDataAs[events.AuditCheckpoint](&d)
			if err != nil {
				t.Fatal(err)
			}
			if cp.TreeSize >= seq {
				return ""
			}
		}
		return fmt.Sprintf("no checkpoint covers seq %d", seq)
	})
}

// logMsgsDir finds VIGIL_LOG's message directory in the JetStream store.
func logMsgsDir(t *testing.T, dir string) string {
	t.Helper()
	var found string
	filepath.WalkDir(filepath.Join(dir, "jetstream"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "msgs" && filepath.Base(filepath.Dir(p)) == events.StreamLog {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatal("VIGIL_LOG's msgs directory not found")
	}
	return found
}

// flipByte flips one byte a third of the way into VIGIL_LOG's first block.
func flipByte(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(logMsgsDir(t, dir), "1.blk")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0xff
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// filledStore runs a node, appends n events, waits for a checkpoint over
// all of them and stops the node. It returns the config and the last seq.
func filledStore(t *testing.T, n int) (Config, uint64) {
	t.Helper()
	cfg := auditedConfig(t, t.TempDir())
	cfg.SealInterval = 20 * time.Millisecond
	s := startCfg(t, cfg)
	last := appendN(t, s, "ev", n)
	waitCheckpoint(t, s, last)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.SealInterval = 0
	return cfg, last
}

func alertsIn(t *testing.T, s *Node) []events.Alert {
	t.Helper()
	var out []events.Alert
	err := natsutil.ReadStream(t.Context(), s.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: []string{events.SubjectAlert}},
		func(r natsutil.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return err
			}
			a, err := events.DerivedDataAs[events.Alert](&d)
			if err != nil {
				return err
			}
			out = append(out, a)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitAlert waits for an alert whose reason contains substr.
func waitAlert(t *testing.T, s *Node, substr string) events.Alert {
	t.Helper()
	var found events.Alert
	wait.Eventually(t, 15*time.Second, func() string {
		alerts := alertsIn(t, s)
		for _, a := range alerts {
			if strings.Contains(a.Reason, substr) {
				found = a
				return ""
			}
		}
		return fmt.Sprintf("no alert containing %q; alerts: %+v", substr, alerts)
	})
	return found
}

func waitContinuity(t *testing.T, s *Node) integrity.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rep, err := s.WaitContinuity(ctx)
	if err != nil {
		t.Fatalf("continuity check: %v", err)
	}
	t.Logf("continuity: %d records read in %s (%.0f records/s); problems %q", rep.Read, rep.Elapsed, float64(rep.Read)/rep.Elapsed.Seconds(), rep.Problems)
	return rep
}

// TestContinuityCleanRestart: an undamaged store restarts with a
// continuous log whose root matches the newest checkpoint, and no alert.
func TestContinuityCleanRestart(t *testing.T) {
	cfg, last := filledStore(t, 300)
	s := startCfg(t, cfg)
	rep := waitContinuity(t, s)
	if !rep.OK() || !rep.RootChecked || rep.Checkpoint < last {
		t.Fatalf("report %+v, want a clean, root-checked report at checkpoint >= %d", rep, last)
	}
	for _, a := range alertsIn(t, s) {
		t.Errorf("unexpected alert: %s", a.Reason)
	}
}

// TestContinuityMissingIndex: deleting the stream's index file loses
// nothing (JetStream rebuilds it from the blocks), so no false alarm.
func TestContinuityMissingIndex(t *testing.T) {
	cfg, _ := filledStore(t, 300)
	if err := os.Remove(filepath.Join(logMsgsDir(t, cfg.DataDir), "index.db")); err != nil {
		t.Fatal(err)
	}
	s := startCfg(t, cfg)
	if rep := waitContinuity(t, s); !rep.OK() || !rep.RootChecked {
		t.Fatalf("report %+v, want clean and root-checked", rep)
	}
}

// TestContinuityFlippedByte: a byte flipped inside a message block makes
// JetStream either skip that record on read while its index still counts
// it, or cut the log there (the node then refuses until the operator
// accepts); either way the check names the missing sequence and alerts.
func TestContinuityFlippedByte(t *testing.T) {
	cfg, last := filledStore(t, 300)
	flipByte(t, cfg.DataDir)
	s, err := Start(t.Context(), cfg)
	if errors.Is(err, ErrStreamChanged) && strings.Contains(err.Error(), "are gone") {
		// JetStream took its other recovery path: it rebuilt the block and
		// cut the log at the damaged record (which one it takes depends on
		// what of its index survived the stop). The node refuses a log
		// shorter than the one it folded; accepted explicitly, the same
		// alert must name the damage.
		t.Logf("JetStream cut the log at the flipped byte; the node refused: %v", err)
		cfg.AcceptNewLog = true
		s, err = Start(t.Context(), cfg)
	}
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	rep := waitContinuity(t, s)
	if rep.OK() || rep.FirstBad == 0 || rep.FirstBad > last {
		t.Fatalf("report %+v, want a finding inside 1..%d", rep, last)
	}
	a := waitAlert(t, s, "continuity check at start")
	if a.LogSeq != rep.FirstBad || a.Severity != "critical" {
		t.Fatalf("alert %+v, want log_seq %d, critical", a, rep.FirstBad)
	}
}

// TestContinuityTruncatedLog: a flipped byte plus a lost index file make
// JetStream rebuild the stream up to the damage, dropping every later
// record (the "248 records lost"). The node refuses to start on a
// log shorter than the one it folded; accepted explicitly, it starts and
// the continuity check names the first lost sequence.
func TestContinuityTruncatedLog(t *testing.T) {
	cfg, last := filledStore(t, 300)
	flipByte(t, cfg.DataDir)
	if err := os.Remove(filepath.Join(logMsgsDir(t, cfg.DataDir), "index.db")); err != nil {
		t.Fatal(err)
	}
	_, err := Start(t.Context(), cfg)
	if !errors.Is(err, ErrStreamChanged) || !strings.Contains(err.Error(), "are gone") {
		t.Fatalf("start on a truncated log: %v, want ErrStreamChanged naming the lost seqs", err)
	}
	cfg.AcceptNewLog = true
	s := startCfg(t, cfg)
	waitAlert(t, s, "node refused to start")
	waitAlert(t, s, "the operator accepted")
	rep := waitContinuity(t, s)
	if rep.OK() || rep.FirstBad == 0 || rep.FirstBad > last || rep.Checkpoint < last {
		t.Fatalf("report %+v, want a finding inside 1..%d against checkpoint >= %d", rep, last, last)
	}
	if a := waitAlert(t, s, "continuity check at start"); a.LogSeq != rep.FirstBad {
		t.Fatalf("alert log_seq %d, want %d", a.LogSeq, rep.FirstBad)
	}
	// Accepted once, the node runs on: it gates new events again.
	if seq := appendN(t, s, "after", 1); seq <= rep.LogEnd {
		t.Fatalf("new event at seq %d, want after %d", seq, rep.LogEnd)
	}
}

// TestContinuityRootMismatch: a checkpoint signed by the node's key over
// another root (the log no longer holds what was signed, with no record
// missing) is a finding, named by the verifier of vigil audit verify.
func TestContinuityRootMismatch(t *testing.T) {
	cfg, last := filledStore(t, 50)
	signer, _, err := auditkey.LoadOrCreate(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	s := startCfg(t, cfg)
	waitContinuity(t, s)
	var wrong audit.Hash
	wrong[0] = 1
	signed, err := audit.SignCheckpoint(signer, signer.Name(), last, wrong)
	if err != nil {
		t.Fatal(err)
	}
	d := events.Derived{V: events.CurrentVersion, ID: "test:forged-root", Kind: events.KindAuditCheckpoint, Seq: last,
		Time: time.Now().UTC().Format(time.RFC3339Nano),
		Data: events.AuditCheckpoint{TreeSize: last, RootHash: wrong.String(), Note: signed}}
	body, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JetStream().Publish(t.Context(), events.SubjectCheckpoint, body); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = startCfg(t, cfg)
	rep := waitContinuity(t, s)
	if rep.OK() || !rep.RootChecked || rep.FirstBad == 0 || !strings.Contains(strings.Join(rep.Problems, " "), "Merkle root") {
		t.Fatalf("report %+v, want a root mismatch with a first bad seq", rep)
	}
}

// BenchmarkContinuityCheck measures the start-time continuity check over
// a log of 100,000 records with a checkpoint at its end (the figure in
// docs/durability.md): go test -run '^$' -bench ContinuityCheck ./internal/node
func BenchmarkContinuityCheck(b *testing.B) {
	dir := b.TempDir()
	signer, vkey, err := auditkey.LoadOrCreate(dir)
	if err != nil {
		b.Fatal(err)
	}
	vs, err := audit.NewVerifiers(vkey)
	if err != nil {
		b.Fatal(err)
	}
	s, err := Start(b.Context(), Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
		Processors: func() ([]processors.Processor, error) {
			a, err := audit.New(audit.Config{Signer: signer})
			return []processors.Processor{a}, err
		},
		AuditVerifiers: vs, SealInterval: 50 * time.Millisecond, NoContinuityCheck: true, NoExpiry: true,
		// A bulk load of 100,000 actions: the agent credential's rate cap off.
		IngestLimits: ingest.Limits{ActionsPerSecond: -1},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	c, err := s.Client(b.Context(), natsutil.RoleAgent)
	if err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	var last uint64
	for i := 0; i < n; i += 500 {
		evs := make([]events.Event, 0, 500)
		for j := i; j < i+500; j++ {
			evs = append(evs, action(fmt.Sprintf("bench-%06d", j), fmt.Sprintf("c-%d", j%50), fmt.Sprintf("ls -la /srv/project/%d && git status", j)))
		}
		rs, err := c.AppendBatch(b.Context(), evs)
		if err != nil {
			b.Fatal(err)
		}
		last = rs[len(rs)-1].Seq
	}
	c.Close()
	st, err := s.JetStream().Stream(b.Context(), events.StreamDerived)
	if err != nil {
		b.Fatal(err)
	}
	for {
		m, err := st.GetLastMsgForSubject(b.Context(), events.SubjectCheckpoint)
		if err == nil {
			d, _ := events.DecodeDerived(m.Data)
			if cp, _ := events.DerivedDataAs[events.AuditCheckpoint](&d); cp.TreeSize >= last {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.ResetTimer()
	var rep integrity.Report
	for range b.N {
		rep, err = s.checkContinuity(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if !rep.OK() || !rep.RootChecked {
			b.Fatalf("report %+v", rep)
		}
	}
	b.ReportMetric(float64(rep.Read)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// TestContinuityReadsOnlyWhatFollows: a clean check records the frontier
// it verified, and the next start reads only the records after it; a
// frontier file that is damaged, or gone, makes the check read the whole
// log again, and it stays clean.
func TestContinuityReadsOnlyWhatFollows(t *testing.T) {
	cfg, last := filledStore(t, 300)
	cfg.SealInterval = 20 * time.Millisecond // checkpoints follow appends
	s := startCfg(t, cfg)
	first := waitContinuity(t, s)
	if !first.OK() || !first.RootChecked || first.From != 0 || first.Read < last {
		t.Fatalf("first check %+v, want a full, clean, root-checked read", first)
	}
	more := appendN(t, s, "more", 120)
	waitCheckpoint(t, s, more)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	s = startCfg(t, cfg)
	second := waitContinuity(t, s)
	if !second.OK() || !second.RootChecked || second.From != first.Checkpoint || second.Read != second.LogEnd-second.From {
		t.Fatalf("second check %+v, want it to read only seqs %d..%d", second, first.Checkpoint+1, second.LogEnd)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	state := datadir.New(cfg.DataDir).Continuity()
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01 // a frontier or root that no longer matches
	if err := os.WriteFile(state, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s = startCfg(t, cfg)
	if rep := waitContinuity(t, s); !rep.OK() || !rep.RootChecked || rep.From != 0 || rep.Read != rep.LogEnd {
		t.Fatalf("check with a damaged frontier file %+v, want a full, clean read", rep)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	s = startCfg(t, cfg)
	if rep := waitContinuity(t, s); !rep.OK() || rep.From != 0 || rep.Read != rep.LogEnd {
		t.Fatalf("check with no frontier file %+v, want a full, clean read", rep)
	}
}

// TestFrontierMatchesTheFold: the frontier extended record by record, and
// restored from its hashes midway, gives the roots the audit tree does.
func TestFrontierMatchesTheFold(t *testing.T) {
	f := audit.NewFrontier()
	var raws [][]byte
	for seq := uint64(1); seq <= 40; seq++ {
		if seq == 17 {
			continue // a missing record
		}
		raw := []byte(fmt.Sprintf("record %d", seq))
		raws = append(raws, raw)
		if err := f.Append(seq, raw); err != nil {
			t.Fatal(err)
		}
		if seq == 25 {
			g, err := audit.ParseFrontier(f.Size(), f.Hashes())
			if err != nil {
				t.Fatal(err)
			}
			if g.Root() != f.Root() {
				t.Fatal("a restored frontier has another root")
			}
			f = g
		}
	}
	var tree audit.Tree
	for seq, i := uint64(1), 0; seq <= 40; seq++ {
		leaf := audit.MissingLeaf
		if seq != 17 {
			leaf = audit.LeafHash(raws[i])
			i++
		}
		if err := tree.Append(leaf); err != nil {
			t.Fatal(err)
		}
	}
	want, err := tree.Root(40)
	if err != nil {
		t.Fatal(err)
	}
	if f.Root() != want {
		t.Fatalf("frontier root %s, tree root %s", f.Root(), want)
	}
	if err := f.Append(40, []byte("again")); err == nil {
		t.Fatal("a seq at the frontier's size was appended")
	}
}
