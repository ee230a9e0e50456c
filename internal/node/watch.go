package node

// Stream watch: a node notices when the streams it runs on are deleted,
// replaced or cut short, at start and while it runs.
//
// # What a node remembers
//
// DATA/streams.json records, for VIGIL_LOG and VIGIL_DERIVED, the stream's
// creation time (StreamInfo.Created: JetStream assigns it when the stream
// is created, and it is the same on every node of a cluster) and the last
// sequence the node saw. It is rewritten while the node runs (at most once
// per watch interval, when the log moved) and when it stops, and only while
// the node is healthy: a node that found its log replaced never records the
// replacement, so the next start finds it too.
//
// # At start (openStreams)
//
// Before the streams are created, VIGIL_LOG is compared with the record.
// If it is missing, was created at another time (deleted and recreated), or
// ends before the last sequence the node saw, or if the driver's durable
// consumer (its checkpoint) is past the log's end, Start stores an alert in
// VIGIL_DERIVED and refuses with an error wrapping ErrStreamChanged. It never
// creates an empty VIGIL_LOG in place of a missing one. Config.AcceptNewLog
// is the operator's explicit "serve the log as it is now": the node then
// starts, alerts that the change was accepted, and re-folds from the log's
// start when its checkpoint is past the log's end (the read models rebuild
// themselves: projections.Open compares the same creation time). A missing
// or replaced VIGIL_DERIVED only raises an alert: its contents are derived,
// though its old checkpoints and alerts are gone with it.
//
// # While running (watch)
//
// Every Config.StreamWatchInterval (default 1 s), and at once on any
// JetStream advisory about the two streams ($JS.EVENT.ADVISORY.STREAM.>),
// the node reads both streams' info. Deleted (confirmed by a second look),
// replaced (another creation time), or VIGIL_LOG losing records (its first
// sequence moving up, its last going back, interior deletes, or records
// the server reports lost) is fatal: the node stores a critical alert in
// VIGIL_DERIVED when it can (it always logs the alert at error level), marks
// itself unhealthy (Healthy), stops taking events (ingest) and stops the
// driver, so no decision is made from a log that is not the one it folded,
// and sends the error (wrapping ErrStreamChanged) on Err: `vigil serve` then
// exits non-zero with the error. A change of a stream's config that bears
// on integrity (subjects, limits, retention, discard, deny delete/purge,
// rollups, message TTLs, mirrors, sources, republish, persistence) raises an
// alert and is reverted to Vigil's definition; if it cannot be reverted (a
// sealed stream) the node fails as above. Records lost from VIGIL_DERIVED
// raise an alert without stopping the node.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// ErrStreamChanged means a stream the node runs on is not the one it was
// running on: VIGIL_LOG or VIGIL_DERIVED was deleted or replaced, or
// VIGIL_LOG lost records. Start returns it (VIGIL_LOG only) unless
// Config.AcceptNewLog is set; a running node sends it on Err and stops.
var ErrStreamChanged = errors.New("node: a stream changed under the node")

// A node records the streams it runs on in datadir.Layout.Streams (see
// the package's stream watch notes in watch.go and docs/durability.md).

// DefaultStreamWatchInterval is how often a running node reads its
// streams' info when no advisory arrives first.
const DefaultStreamWatchInterval = time.Second

// watchedStreams are the streams whose loss stops the node.
var watchedStreams = []string{events.StreamLog, events.StreamDerived}

// streamSnap is one look at a stream.
type streamSnap struct {
	created time.Time
	state   jetstream.StreamState
	cfg     jetstream.StreamConfig
}

func snapOf(info *jetstream.StreamInfo) streamSnap {
	return streamSnap{created: info.Created, state: info.State, cfg: info.Config}
}

// watchState is the Server's part for the stream watch, health and the
// continuity check.
type watchState struct {
	mu        sync.Mutex
	failed    error // first failure; nil while healthy
	closed    bool
	base      map[string]streamSnap // as the node started with them (the identity)
	last      map[string]streamSnap // last look
	recorded  uint64                // VIGIL_LOG last seq last written to streams.json
	ingOnce   sync.Once
	ingErr    error
	contDone  chan struct{}
	contRep   integrity.Report
	contErr   error
	alertedDr map[string]bool // VIGIL_DERIVED losses already alerted
	infoErrs  int             // consecutive stream info failures
}

// Healthy returns nil while the node serves, or why it does not: the
// failure that stopped it (a stream deleted or replaced, wrapping
// ErrStreamChanged, or the driver's error), or that it was closed.
func (s *Node) Healthy() error {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	if s.watch.failed != nil {
		return s.watch.failed
	}
	if s.watch.closed {
		return errors.New("node: closed")
	}
	return nil
}

// fail records err as the node's failure and reports it on Err. Only the
// first failure is reported; it returns whether err was the first.
func (s *Node) fail(err error) bool {
	s.watch.mu.Lock()
	first := s.watch.failed == nil
	if first {
		s.watch.failed = err
	}
	s.watch.mu.Unlock()
	if first {
		select {
		case s.drvErr <- err:
		default:
		}
	}
	return first
}

// stopIngest stops the ingest service once (the failure path and Close
// may both ask).
func (s *Node) stopIngest(ctx context.Context) error {
	if s.ing == nil {
		return nil
	}
	s.watch.ingOnce.Do(func() { s.watch.ingErr = s.ing.Stop(ctx) })
	return s.watch.ingErr
}

// streamInfo reads a stream's info; a missing stream gives an error
// wrapping jetstream.ErrStreamNotFound.
func streamInfo(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamInfo, error) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	return st.CachedInfo(), nil
}

// startInfo reads a stream's info at start, retrying while a cluster
// elects the stream's leader; "not found" is returned at once.
func startInfo(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamInfo, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := streamInfo(ctx, js, name)
		if err == nil || errors.Is(err, jetstream.ErrStreamNotFound) || time.Now().After(deadline) || ctx.Err() != nil {
			return info, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// startConsumer looks the node's durable consumer up, asking again for
// up to 30 s while it does not answer: after a restart in a fleet, the
// consumer's leader may be being elected, and one unanswered request
// must not stop the node from starting.
func startConsumer(ctx context.Context, st jetstream.Stream, name string) (jetstream.Consumer, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := st.Consumer(rctx, name)
		cancel()
		transient := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders)
		if !transient || time.Now().After(deadline) || ctx.Err() != nil {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitJetStream waits until JetStream answers for the account (a new
// cluster first elects its meta leader), so "stream not found" is an answer.
func waitJetStream(ctx context.Context, js jetstream.JetStream) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := js.AccountInfo(ctx)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("node: JetStream does not answer: %w", err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// recordStreams writes streams.json from the last look, if the node is
// healthy.
func (s *Node) recordStreams() error {
	s.watch.mu.Lock()
	if s.watch.failed != nil {
		s.watch.mu.Unlock()
		return nil
	}
	st := integrity.Streams{Node: s.cfg.NodeName, Updated: time.Now().UTC(), Streams: map[string]integrity.StreamRecord{}}
	for name, sn := range s.watch.last {
		st.Streams[name] = integrity.StreamRecord{Created: sn.created.UTC(), LastSeq: sn.state.LastSeq}
	}
	s.watch.recorded = s.watch.last[events.StreamLog].state.LastSeq
	s.watch.mu.Unlock()
	if r, ok := st.Streams[events.StreamLog]; ok && s.drv != nil {
		// The driver may have folded records appended after the last look.
		r.LastSeq = max(r.LastSeq, s.drv.Checkpointed())
		st.Streams[events.StreamLog] = r
	}
	return integrity.WriteStreams(datadir.New(s.cfg.DataDir).Streams(), st)
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// openStreams checks VIGIL_LOG against what this node last ran on, creates
// or updates the streams, and takes the watch's baseline.
func (s *Node) openStreams(ctx context.Context) error {
	opts := s.cfg.streamOptions()
	prior, err := integrity.ReadStreams(datadir.New(s.cfg.DataDir).Streams())
	if err != nil {
		return err
	}
	pre := map[string]*jetstream.StreamInfo{}
	preMissing := map[string]bool{}
	if len(prior.Streams) > 0 {
		if err := waitJetStream(ctx, s.js); err != nil {
			return err
		}
		for name := range prior.Streams {
			info, err := startInfo(ctx, s.js, name)
			switch {
			case errors.Is(err, jetstream.ErrStreamNotFound):
				preMissing[name] = true
			case err != nil:
				return fmt.Errorf("node: stream %s: %w", name, err)
			default:
				pre[name] = info
			}
		}
	}

	// VIGIL_LOG: the one this node folded, or refuse.
	var problem string
	if rec, ok := prior.Streams[events.StreamLog]; ok {
		info := pre[events.StreamLog]
		switch {
		case preMissing[events.StreamLog]:
			problem = fmt.Sprintf("VIGIL_LOG does not exist, but this node ran on one (created %s, records up to seq %d); it was deleted while the node was down",
				fmtTime(rec.Created), rec.LastSeq)
		case !info.Created.Equal(rec.Created):
			problem = fmt.Sprintf("VIGIL_LOG was replaced while the node was down: it was created %s (%d records), but this node ran on the one created %s (records up to seq %d)",
				fmtTime(info.Created), info.State.Msgs, fmtTime(rec.Created), rec.LastSeq)
		case info.State.LastSeq < rec.LastSeq:
			problem = fmt.Sprintf("VIGIL_LOG ends at seq %d, but it held records up to seq %d when this node last ran: seqs %d..%d are gone (lost on disk, or restored from an older copy)",
				info.State.LastSeq, rec.LastSeq, info.State.LastSeq+1, rec.LastSeq)
		}
	}
	if problem != "" && !s.cfg.AcceptNewLog {
		return s.refuseLog(ctx, opts, problem)
	}
	if err := ensureStreams(ctx, s.js, opts); err != nil {
		return err
	}
	logInfo, err := startInfo(ctx, s.js, events.StreamLog)
	if err != nil {
		return fmt.Errorf("node: stream %s: %w", events.StreamLog, err)
	}

	// The driver's checkpoint must not be past the log's end: new events
	// would reuse sequences it already folded, and it would skip them.
	var resetConsumer bool
	if s.cfg.Processors != nil {
		durable := "vigil-" + s.cfg.NodeName
		st, err := s.js.Stream(ctx, events.StreamLog)
		if err != nil {
			return fmt.Errorf("node: stream %s: %w", events.StreamLog, err)
		}
		c, err := startConsumer(ctx, st, durable)
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound):
		case err != nil:
			return fmt.Errorf("node: consumer %s: %w", durable, err)
		default:
			ci := c.CachedInfo()
			if floor := ci.AckFloor.Stream; floor > logInfo.State.LastSeq {
				p := fmt.Sprintf("the driver's checkpoint (consumer %s) is at seq %d, but VIGIL_LOG ends at seq %d: records the node folded are gone, and new events would reuse their sequences",
					durable, floor, logInfo.State.LastSeq)
				problem = strings.TrimPrefix(problem+"; "+p, "; ")
				if !s.cfg.AcceptNewLog {
					return s.refuseLog(ctx, opts, problem)
				}
				resetConsumer = true
			}
		}
		if resetConsumer {
			if err := st.DeleteConsumer(ctx, durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return fmt.Errorf("node: reset consumer %s: %w", durable, err)
			}
		}
	}
	if problem != "" {
		reason := "the operator accepted a VIGIL_LOG that is not the one this node ran on (AcceptNewLog): " + problem +
			"; the node folds it as it is now, and its read models are rebuilt from it"
		if resetConsumer {
			reason += "; the driver re-folds it from its first record"
		}
		s.cfg.Logger.Error("vigil: "+reason, "stream", events.StreamLog)
		s.publishAlert(ctx, fmt.Sprintf("serve:%s:log-accepted:%d:%d", s.cfg.NodeName, logInfo.Created.UnixNano(), logInfo.State.LastSeq),
			events.Alert{Severity: events.SeverityCritical, Reason: reason, Subject: events.StreamLog})
	}

	// VIGIL_DERIVED: derived, so an alert is enough.
	if rec, ok := prior.Streams[events.StreamDerived]; ok {
		var what string
		if preMissing[events.StreamDerived] {
			what = fmt.Sprintf("VIGIL_DERIVED was deleted while the node was down (it was created %s, records up to seq %d) and has been created empty", fmtTime(rec.Created), rec.LastSeq)
		} else if info := pre[events.StreamDerived]; info != nil && !info.Created.Equal(rec.Created) {
			what = fmt.Sprintf("VIGIL_DERIVED was replaced while the node was down: it was created %s, this node ran on the one created %s (records up to seq %d)",
				fmtTime(info.Created), fmtTime(rec.Created), rec.LastSeq)
		}
		if what != "" {
			reason := what + ": earlier risk assessments, gate decisions, alerts and signed audit checkpoints are gone (re-derive them with vigil replay; keep exported checkpoints as witnesses)"
			s.cfg.Logger.Error("vigil: "+reason, "stream", events.StreamDerived)
			s.publishAlert(ctx, fmt.Sprintf("serve:%s:derived-replaced:%d", s.cfg.NodeName, rec.Created.UnixNano()),
				events.Alert{Severity: events.SeverityCritical, Reason: reason, Subject: events.StreamDerived})
		}
	}

	// Baseline.
	s.watch.base = map[string]streamSnap{}
	s.watch.last = map[string]streamSnap{}
	for _, name := range watchedStreams {
		info, err := startInfo(ctx, s.js, name)
		if err != nil {
			return fmt.Errorf("node: stream %s: %w", name, err)
		}
		s.watch.base[name] = snapOf(info)
		s.watch.last[name] = snapOf(info)
	}
	return s.recordStreams()
}

// refuseLog stores an alert (creating VIGIL_DERIVED if need be, never
// VIGIL_LOG) and returns the refusal.
func (s *Node) refuseLog(ctx context.Context, opts natsutil.StreamOptions, problem string) error {
	for _, sc := range natsutil.StreamConfigs(opts) {
		if sc.Name != events.StreamDerived {
			continue
		}
		if _, err := s.js.CreateOrUpdateStream(ctx, sc); err != nil {
			s.cfg.Logger.Error("node: cannot create VIGIL_DERIVED to store the alert", "err", err)
		}
	}
	reason := "node refused to start: " + problem
	s.cfg.Logger.Error("vigil: "+reason, "stream", events.StreamLog)
	s.publishAlert(ctx, fmt.Sprintf("serve:%s:log-refused:%x", s.cfg.NodeName, digest(problem)),
		events.Alert{Severity: events.SeverityCritical, Reason: reason, Subject: events.StreamLog})
	return fmt.Errorf("%w: %s. Vigil does not serve decisions from a log that is not the one it folded: "+
		"restore VIGIL_LOG (and this data directory) from a backup, or accept the log as it is now explicitly "+
		"(AcceptNewLog; the read models are then rebuilt from it). See docs/durability.md", ErrStreamChanged, problem)
}

// digest is a short stable digest for alert ids.
func digest(s string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// maxAlertReason bounds an alert's reason (alerts are bounded like every output).
const maxAlertReason = 2000

// publishAlert stores an alert in VIGIL_DERIVED (id is its Nats-Msg-Id).
// When the stream cannot take it, the alert still goes out on the core
// subject, for live subscribers. The caller logs the alert.
func (s *Node) publishAlert(ctx context.Context, id string, a events.Alert) {
	if len(a.Reason) > maxAlertReason {
		a.Reason = a.Reason[:maxAlertReason] + fmt.Sprintf("… [%d bytes cut]", len(a.Reason)-maxAlertReason)
	}
	d := events.Derived{V: events.CurrentVersion, ID: id, Kind: events.KindAlert, Seq: a.LogSeq,
		Time: time.Now().UTC().Format(time.RFC3339Nano), Data: a}
	body, err := d.Marshal()
	if err != nil {
		s.cfg.Logger.Error("node: alert does not encode", "id", id, "err", err)
		return
	}
	msg := &nats.Msg{Subject: events.SubjectAlert, Data: body, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if _, err := s.js.PublishMsg(pctx, msg); err != nil {
		s.cfg.Logger.Error("node: alert not stored in VIGIL_DERIVED; sent to live subscribers only", "id", id, "err", err)
		if err := s.nc.PublishMsg(&nats.Msg{Subject: events.SubjectAlert, Data: body}); err != nil {
			s.cfg.Logger.Error("node: alert not sent", "id", id, "err", err)
		}
	}
}

// startWatch starts the stream watch (and the continuity check) under ctx.
func (s *Node) startWatch(ctx context.Context) {
	interval := s.cfg.StreamWatchInterval
	if interval <= 0 {
		interval = DefaultStreamWatchInterval
	}
	advisories := make(chan *nats.Msg, 64)
	sub, err := s.nc.ChanSubscribe("$JS.EVENT.ADVISORY.STREAM.>", advisories)
	if err != nil {
		s.cfg.Logger.Warn("stream watch: no advisories; polling only", "err", err)
		sub = nil
	}
	s.core.Go("stream watch", func(context.Context) {
		if sub != nil {
			defer sub.Unsubscribe()
		}
		s.watchLoop(ctx, interval, advisories)
	})
}

func (s *Node) watchLoop(ctx context.Context, interval time.Duration, advisories <-chan *nats.Msg) {
	t := time.NewTicker(interval)
	defer t.Stop()
	defer func() {
		// The last look before stopping, so the next start knows how far
		// the log went (only while healthy; recordStreams checks).
		// (Not asked with the connection down: nobody would answer.)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if !s.nc.IsConnected() {
			cancel()
		} else if info, err := streamInfo(fctx, s.js, events.StreamLog); err == nil && s.sameStream(events.StreamLog, info) {
			s.watch.mu.Lock()
			if sn := snapOf(info); sn.state.LastSeq >= s.watch.last[events.StreamLog].state.LastSeq {
				s.watch.last[events.StreamLog] = sn
			}
			s.watch.mu.Unlock()
		}
		if err := s.recordStreams(); err != nil {
			s.cfg.Logger.Warn("stream watch: cannot record the streams", "err", err)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case m := <-advisories:
			tok := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
			if !slices.Contains(watchedStreams, tok) {
				continue
			}
		}
		if err := s.checkStreams(ctx); err != nil {
			s.failStreams(ctx, err)
			return
		}
	}
}

func (s *Node) sameStream(name string, info *jetstream.StreamInfo) bool {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return info.Created.Equal(s.watch.base[name].created)
}

// failStreams is the fatal path: alert, unhealthy, stop taking events and
// deciding, report on Err.
func (s *Node) failStreams(ctx context.Context, err error) {
	if !s.fail(err) {
		return
	}
	s.cfg.Logger.Error("vigil: the node stops serving: "+err.Error(), "alert", true)
	s.publishAlert(ctx, fmt.Sprintf("serve:%s:stream-changed:%d", s.cfg.NodeName, time.Now().UnixNano()),
		events.Alert{Severity: events.SeverityCritical, Reason: err.Error()})
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.stopIngest(sctx); err != nil {
		s.cfg.Logger.Warn("stream watch: ingest did not stop cleanly", "err", err)
	}
	s.core.cancel() // the driver, the sealer, the continuity check and this watch
}

// checkStreams looks at both streams once; it returns a fatal error
// (wrapping ErrStreamChanged) or nil.
func (s *Node) checkStreams(ctx context.Context) error {
	moved := false
	for _, name := range watchedStreams {
		info, err := streamInfo(ctx, s.js, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			// Confirm: a cluster electing leaders must not look like a deletion.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
			info, err = streamInfo(ctx, s.js, name)
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				s.watch.mu.Lock()
				last := s.watch.last[name]
				s.watch.mu.Unlock()
				seen := last.state.LastSeq
				if name == events.StreamLog && s.drv != nil {
					seen = max(seen, s.drv.Checkpointed())
				}
				return fmt.Errorf("%w: %s was deleted while the node ran (it was created %s and held records up to seq %d at least); %s",
					ErrStreamChanged, name, fmtTime(last.created), seen, whatToDo(name))
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				s.watch.mu.Lock()
				s.watch.infoErrs++
				n := s.watch.infoErrs
				s.watch.mu.Unlock()
				if n == 10 {
					s.cfg.Logger.Warn("stream watch: the streams' info cannot be read; a deleted or replaced stream is noticed when it can again", "stream", name, "err", err)
				} else {
					s.cfg.Logger.Debug("stream watch: stream info", "stream", name, "err", err)
				}
			}
			continue
		}
		s.watch.mu.Lock()
		base, last := s.watch.base[name], s.watch.last[name]
		s.watch.mu.Unlock()
		if !info.Created.Equal(base.created) {
			return fmt.Errorf("%w: %s was replaced while the node ran: it is now a stream created %s (%d records), not the one created %s (records up to seq %d); %s",
				ErrStreamChanged, name, fmtTime(info.Created), info.State.Msgs, fmtTime(base.created), last.state.LastSeq, whatToDo(name))
		}
		lost := integrity.RecordsLost(last.state, info.State)
		if lost != "" && s.cfg.Replicas > 1 {
			info, lost = s.confirmLoss(ctx, name, last.state, info, lost)
		}
		if lost != "" {
			if name == events.StreamLog {
				return fmt.Errorf("%w: %s lost records while the node ran: %s; %s", ErrStreamChanged, name, lost, whatToDo(name))
			}
			s.derivedLoss(ctx, lost)
		}
		if drift := integrity.ConfigDrift(s.expectedConfig(name), info.Config); len(drift) > 0 {
			if err := s.restoreConfig(ctx, name, info.Config, drift); err != nil {
				return err
			}
		}
		s.watch.mu.Lock()
		s.watch.infoErrs = 0
		if name == events.StreamLog && info.State.LastSeq != s.watch.recorded {
			moved = true
		}
		s.watch.last[name] = snapOf(info)
		s.watch.mu.Unlock()
	}
	if moved {
		if err := s.recordStreams(); err != nil {
			s.cfg.Logger.Warn("stream watch: cannot record the streams", "err", err)
		}
	}
	return nil
}

// lossConfirm is how long a replicated stream that looks shorter than
// before is read again before the node calls its records lost.
const lossConfirm = 5 * time.Second

// confirmLoss reads a replicated stream's info again, every 250 ms for
// lossConfirm, while it looks as if it lost records against prev: a
// leader just elected answers with what it has applied, which may lag
// the records the old leader reported for a moment (they were committed,
// so the new leader holds them and applies them). It returns the newest
// info and what is lost in it, "" once a reading shows nothing lost.
func (s *Node) confirmLoss(ctx context.Context, name string, prev jetstream.StreamState, info *jetstream.StreamInfo, lost string) (*jetstream.StreamInfo, string) {
	deadline := time.Now().Add(lossConfirm)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return info, ""
		case <-time.After(250 * time.Millisecond):
		}
		again, err := streamInfo(ctx, s.js, name)
		if err != nil || !again.Created.Equal(info.Created) {
			continue // the other checks judge a replaced stream
		}
		info = again
		if lost = integrity.RecordsLost(prev, info.State); lost == "" {
			s.cfg.Logger.Info("stream watch: a stream looked shorter for a moment (a leader catching up)", "stream", name)
			return info, ""
		}
	}
	return info, lost
}

func whatToDo(name string) string {
	if name == events.StreamDerived {
		return "the node stops rather than publish decisions nobody stores; find out who changed it (an admin credential), then restart vigil serve (VIGIL_DERIVED is re-created; its earlier contents can be re-derived with vigil replay)"
	}
	return "the node stops rather than decide from a log it did not fold; find out who changed it (an admin credential), restore VIGIL_LOG from a backup if you can, then restart vigil serve (it refuses a log that is not the one it folded unless told to accept it; see docs/durability.md)"
}

func (s *Node) derivedLoss(ctx context.Context, lost string) {
	s.watch.mu.Lock()
	if s.watch.alertedDr == nil {
		s.watch.alertedDr = map[string]bool{}
	}
	seen := s.watch.alertedDr[lost]
	s.watch.alertedDr[lost] = true
	s.watch.mu.Unlock()
	if seen {
		return
	}
	reason := "VIGIL_DERIVED lost records while the node ran: " + lost + " (risk assessments, decisions, alerts or signed checkpoints are gone; they can be re-derived from VIGIL_LOG with vigil replay)"
	s.cfg.Logger.Error("vigil: "+reason, "stream", events.StreamDerived)
	s.publishAlert(ctx, fmt.Sprintf("serve:%s:derived-loss:%x", s.cfg.NodeName, digest(lost)),
		events.Alert{Severity: events.SeverityHigh, Reason: reason, Subject: events.StreamDerived})
}

func (s *Node) expectedConfig(name string) jetstream.StreamConfig {
	for _, sc := range natsutil.StreamConfigs(s.cfg.streamOptions()) {
		if sc.Name == name {
			return sc
		}
	}
	return jetstream.StreamConfig{Name: name}
}

// restoreConfig alerts about a changed config and puts Vigil's integrity
// settings back; it returns a fatal error if they cannot be restored.
func (s *Node) restoreConfig(ctx context.Context, name string, got jetstream.StreamConfig, drift []string) error {
	want := s.expectedConfig(name)
	_, err := s.js.UpdateStream(ctx, integrity.Restored(got, want))
	what := fmt.Sprintf("%s's configuration was changed while the node ran: %s", name, strings.Join(drift, ", "))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%w: %s, and it cannot be restored (%v); %s", ErrStreamChanged, what, err, whatToDo(name))
	}
	reason := what + "; Vigil's settings were restored (an admin credential did this; the records kept are checked separately)"
	s.cfg.Logger.Error("vigil: "+reason, "stream", name)
	s.publishAlert(ctx, fmt.Sprintf("serve:%s:config-restored:%d", s.cfg.NodeName, time.Now().UnixNano()),
		events.Alert{Severity: events.SeverityHigh, Reason: reason, Subject: name})
	return nil
}
