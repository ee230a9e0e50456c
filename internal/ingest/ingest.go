// Package ingest is Vigil's ingest service: the only way into VIGIL_LOG.
//
// It answers NATS requests on vigil.ingest.agent.<conversation> and
// vigil.ingest.control.<conversation> in a queue group, so any number of
// instances may run. For each request it decodes (msgpack, or JSON lines
// when the Content-Type header says so) and validates every event, refuses
// control kinds sent on an agent subject and bodies it cannot decode (a
// reply with the reason, a VIGIL_DLQ record holding only the reason and a
// digest, and an alert for the former), redacts each event in memory,
// publishes it to VIGIL_LOG with Nats-Msg-Id = the event id, waits for the
// stream's acknowledgement, and only then replies with the log sequences.
// Raw events exist only in this process's memory.
//
// A request holding several events (a msgpack array or JSON lines) is
// validated whole before anything is stored, and stored in order.
//
// What a producer claims about redaction is not kept: the redactions list
// it sent is discarded and the redaction step writes the only one stored.
// Each producer credential (agent, runtime) is held to caps on its live
// conversations and its actions per second (Limits, limits.go); a request
// over a cap is refused whole with the reason, and an alert is raised.
package ingest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// Content types a producer may set in the Content-Type header
// (transport's: the wire protocol is public, the client sends them).
const (
	ContentTypeMsgpack = transport.ContentTypeMsgpack
	ContentTypeJSON    = transport.ContentTypeJSON
	ContentTypeJSONL   = transport.ContentTypeJSONL
	HeaderContentType  = transport.HeaderContentType
	// QueueGroup is the queue group every ingest instance joins.
	QueueGroup = "vigil-ingest"
)

// Redactor removes secrets from an event before it is stored. It returns a
// redacted copy; it must not keep or log the original.
type Redactor interface {
	RedactEvent(ev *events.Event) (events.Event, bool)
}

// Config configures the service.
type Config struct {
	Conn *nats.Conn
	JS   jetstream.JetStream
	// Redactor is the redaction step. New refuses a nil one unless
	// UnsafeNoRedaction is set.
	Redactor Redactor
	// UnsafeNoRedaction lets a nil Redactor store events as they arrive,
	// secrets included (tests of other steps).
	UnsafeNoRedaction bool
	// NewRedactor, when set, rebuilds the redaction step from the redaction
	// settings of each global config event stored in the log (by any ingest
	// instance: each announces the configs it stores on
	// events.SubjectConfigStored), so extra rules, allowed values and the
	// entropy threshold follow the config in force. A config whose
	// settings do not build keeps the previous step (the config check
	// refuses such configs before they are stored).
	NewRedactor func(events.RedactionSettings) (Redactor, error)
	// CheckConfig checks every config event as a whole (the analyzers
	// compile under it, its redaction settings build) before it is
	// stored, whatever path it came by; a config it refuses is never
	// stored. events.Event.Validate runs first either way. New refuses a
	// nil one unless UnsafeNoConfigCheck is set.
	CheckConfig func(events.Config) error
	// UnsafeNoConfigCheck lets a nil CheckConfig store config events
	// that only events.Event.Validate has checked (tests of other steps).
	UnsafeNoConfigCheck bool
	Logger              *slog.Logger
	// MaxBatch bounds the events of one request; zero (and anything over
	// it) means natsutil.MaxBatchMessages, the most one atomic batch holds.
	MaxBatch int
	// AckTimeout bounds the wait for VIGIL_LOG's acknowledgement.
	AckTimeout time.Duration
	// Now and NewID are injected for tests; they default to the clock and ULIDs.
	Now   func() time.Time
	NewID func() string
	// Workers is the number of requests handled at once; zero means 64.
	Workers int
	// StopGrace is how long Stop lets the requests in flight finish
	// before it gives up their publishes (a producer that got no answer
	// retries with the same ids); zero means 2 s. A publish still
	// retrying then is waiting out an election or a dead server, and a
	// stop must not wait AckTimeout for it.
	StopGrace time.Duration
	// IndexDir, when set, holds the service's id index (idindex.go): every
	// id stored in VIGIL_LOG, so a retry is recognised for DedupWindow
	// while JetStream's own duplicate window stays short. Empty relies on
	// JetStream's window alone.
	IndexDir string
	// DedupWindow is how long the id index recognises a stored id; zero
	// means natsutil.DefaultDedupWindow.
	DedupWindow time.Duration
	// Limits caps the live conversations and the actions per second of
	// each producer credential (limits.go); the zero value gives the
	// defaults.
	Limits Limits
	// SyncEveryWrite says the server fsyncs every write
	// (natsutil.DurabilityFsync). A request of natsutil.DefaultMinAtomicBatch
	// events or more then goes as one atomic batch even to a
	// single-replica VIGIL_LOG: the server writes a batch with one fsync,
	// a chain with one a message (and a batch's own file store costs about
	// what 30 fsyncs do).
	SyncEveryWrite bool
}

// Service is a running ingest service.
type Service struct {
	cfg      Config
	pub      *natsutil.Publisher
	redactor atomic.Pointer[redactorBox]
	subs     []*nats.Subscription
	// sem holds a slot for every request being handled (at most
	// cfg.Workers); wg counts them.
	sem chan struct{}
	wg  sync.WaitGroup
	// work hands a request to an idle worker. Workers are started as
	// requests need them, up to cfg.Workers, and stay until the service
	// stops: a goroutine per request would grow a fresh stack for the
	// decoder, the redactor and Pebble's iterators every time.
	work     chan *nats.Msg
	workers  atomic.Int32
	workerWG sync.WaitGroup
	mu       sync.Mutex
	// redactionSeq is the log seq of the config whose redaction settings
	// are in force (guarded by mu; 0: the defaults or the start config).
	redactionSeq uint64
	ctx          context.Context
	stop         context.CancelFunc
	// decisions feeds waits for decisions (HeaderWaitDecision); waitCtx
	// ends them all when the service stops.
	decisions *decisionWatcher
	waitCtx   context.Context
	stopWaits context.CancelFunc
	// idx is the id index (nil without Config.IndexDir).
	idx *idIndex
	// lim holds each producer credential's load (Config.Limits).
	lim *limiter
	// chain: VIGIL_LOG has one replica, and a request's events are sent
	// as one chain rather than one atomic batch (see store).
	chain bool
	// logSt is VIGIL_LOG (logStream).
	logSt atomic.Pointer[jetstream.Stream]
	// repeats: requests in flight that a producer's repeats join
	// (repeats.go).
	repeats *repeats
}

// Reply is the JSON answer to an ingest request (events.IngestReply).
type Reply = events.IngestReply

// Result is where one event was stored (events.IngestResult).
type Result = events.IngestResult

// New validates cfg and returns a service; call Start to subscribe.
func New(cfg Config) (*Service, error) {
	if cfg.Conn == nil || cfg.JS == nil {
		return nil, errors.New("ingest: Conn and JS are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBatch <= 0 || cfg.MaxBatch > natsutil.MaxBatchMessages {
		cfg.MaxBatch = natsutil.MaxBatchMessages
	}
	if cfg.AckTimeout == 0 {
		cfg.AckTimeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		var mu sync.Mutex
		entropy := ulid.Monotonic(rand.Reader, 0)
		cfg.NewID = func() string {
			mu.Lock()
			defer mu.Unlock()
			return ulid.MustNew(ulid.Timestamp(time.Now()), entropy).String()
		}
	}
	if cfg.Redactor == nil && !cfg.UnsafeNoRedaction {
		return nil, errors.New("ingest: Config.Redactor is nil: give the redaction step (processors/redact), or set UnsafeNoRedaction to store events as they arrive")
	}
	if cfg.CheckConfig == nil && !cfg.UnsafeNoConfigCheck {
		return nil, errors.New("ingest: Config.CheckConfig is nil: give the config check (node.CheckConfig), or set UnsafeNoConfigCheck to store config events unchecked")
	}
	if cfg.Workers == 0 {
		cfg.Workers = 64
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 2 * time.Second
	}
	if cfg.DedupWindow <= 0 {
		cfg.DedupWindow = natsutil.DefaultDedupWindow
	}
	cfg.Limits.EnsureDefaults()
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	pub := &natsutil.Publisher{JS: cfg.JS, Logger: cfg.Logger}
	svc := &Service{cfg: cfg, pub: pub, sem: make(chan struct{}, cfg.Workers), work: make(chan *nats.Msg), ctx: ctx, stop: cancel, repeats: newRepeats()}
	svc.waitCtx, svc.stopWaits = context.WithCancel(ctx)
	svc.lim = newLimiter(cfg.Limits)
	if cfg.Redactor != nil {
		svc.redactor.Store(&redactorBox{cfg.Redactor})
	}
	return svc, nil
}

// redactorBox lets an interface value live in an atomic.Pointer.
type redactorBox struct{ r Redactor }

// SetRedactionSettings rebuilds the redaction step (see Config.NewRedactor)
// from the settings of the config in force when the service starts.
func (s *Service) SetRedactionSettings(rs events.RedactionSettings) error {
	return s.applyRedaction(rs, 0)
}

// applyRedaction rebuilds the redaction step from the settings of the
// config stored at log seq, unless a later config's are in force already
// (announcements of configs may arrive out of order).
func (s *Service) applyRedaction(rs events.RedactionSettings, seq uint64) error {
	if s.cfg.NewRedactor == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq != 0 && seq <= s.redactionSeq {
		return nil
	}
	r, err := s.cfg.NewRedactor(rs)
	if err != nil {
		return err
	}
	s.redactor.Store(&redactorBox{r})
	s.redactionSeq = seq
	return nil
}

// followConfig applies the redaction settings of a global config stored
// at seq (raw: its stored bytes).
func (s *Service) followConfig(raw []byte, seq uint64) {
	ev, err := events.DecodeMsgpack(raw)
	if err != nil {
		return
	}
	cfg, err := events.DataAs[events.Config](&ev)
	if err != nil || (cfg.Scope != "" && cfg.Scope != events.ScopeGlobal) {
		return
	}
	if err := s.applyRedaction(cfg.Redaction, seq); err != nil {
		s.cfg.Logger.Warn("ingest: redaction settings of config not applied; keeping the previous ones", "seq", seq, "err", err)
		return
	}
	s.cfg.Logger.Info("ingest: redaction settings follow config", "seq", seq, "version", cfg.Version)
}

// headerLogSeq carries the log seq of an announced config.
const headerLogSeq = "Vigil-Log-Seq"

// onConfigStored follows config events stored by any ingest instance
// (announced on events.SubjectConfigStored).
func (s *Service) onConfigStored(m *nats.Msg) {
	seq, err := strconv.ParseUint(m.Header.Get(headerLogSeq), 10, 64)
	if err != nil || seq == 0 {
		return
	}
	s.followConfig(m.Data, seq)
}

// Start subscribes to the ingest subjects (StartContext without a bound).
func (s *Service) Start() error { return s.StartContext(context.Background()) }

// StartContext subscribes to the ingest subjects. With Config.IndexDir it
// first opens the id index and reads what the log grew by since the
// index's frontier (the whole log, the first time), so nothing is answered
// before the index knows every id stored; ctx bounds that read.
func (s *Service) StartContext(ctx context.Context) error {
	if s.cfg.IndexDir != "" && s.idx == nil {
		ictx, cancel := context.WithCancel(ctx)
		defer cancel()
		stopOnStop := context.AfterFunc(s.ctx, cancel)
		defer stopOnStop()
		idx, err := openIndex(ictx, s.cfg.IndexDir, s.cfg.JS, s.cfg.DedupWindow, s.cfg.Logger)
		if err != nil {
			return err
		}
		s.idx = idx
	}
	// On a single-replica VIGIL_LOG nats-server stages every atomic batch
	// in a file store of its own, created and removed per batch: a
	// request's events go as one chain there (store).
	if st, err := s.cfg.JS.Stream(ctx, events.StreamLog); err == nil && st.CachedInfo().Config.Replicas <= 1 {
		s.chain = true
	}
	w, err := newDecisionWatcher(s.cfg.Conn, readDecisions(s.cfg.JS))
	if err != nil {
		return fmt.Errorf("ingest: follow the gate's decisions: %w", err)
	}
	s.decisions = w
	if s.cfg.NewRedactor != nil {
		sub, err := s.cfg.Conn.Subscribe(events.SubjectConfigStored, s.onConfigStored)
		if err != nil {
			return fmt.Errorf("ingest: follow config events: %w", err)
		}
		s.subs = append(s.subs, sub)
	}
	for _, c := range subjectClasses {
		subj := c.prefix + "*"
		sub, err := s.cfg.Conn.QueueSubscribe(subj, QueueGroup, s.onMsg)
		if err != nil {
			s.Stop(context.Background())
			return fmt.Errorf("ingest: subscribe %s: %w", subj, err)
		}
		if err := sub.SetPendingLimits(1<<20, 1<<30); err != nil {
			return err
		}
		s.subs = append(s.subs, sub)
	}
	return s.cfg.Conn.Flush()
}

// Stop drains the subscriptions and waits for requests in flight, so every
// event that was acknowledged to a producer is stored. Requests still
// running after Config.StopGrace are given up (their producers get no
// answer, and retry); Stop returns when they have ended or ctx is done.
func (s *Service) Stop(ctx context.Context) error {
	s.stopWaits() // every wait for a decision answers "no decision" now
	if s.decisions != nil {
		s.decisions.stop()
	}
	var first error
	// Draining asks the server; with the connection down nobody answers,
	// so the subscriptions are dropped at once and only the handlers
	// already running are waited for (their publishes are given up when
	// the connection is lost).
	connected := s.cfg.Conn.IsConnected()
	for _, sub := range s.subs {
		stop := sub.Drain
		if !connected {
			stop = sub.Unsubscribe
		}
		if err := stop(); err != nil && first == nil && !errors.Is(err, nats.ErrConnectionClosed) && connected {
			first = err
		}
	}
	done := make(chan struct{})
	go func() {
		for _, sub := range s.subs {
			for connected && sub.IsValid() {
				select {
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}
		s.wg.Wait()
		close(done)
	}()
	grace := time.NewTimer(s.cfg.StopGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
	case <-ctx.Done():
	}
	s.stop() // the handlers' publishes still retrying end now
	select {
	case <-done:
	case <-ctx.Done():
		if first == nil {
			first = ctx.Err()
		}
	}
	workersDone := make(chan struct{})
	go func() { s.workerWG.Wait(); close(workersDone) }()
	select {
	case <-workersDone:
	case <-ctx.Done():
		if first == nil {
			first = ctx.Err()
		}
	}
	if s.idx != nil {
		s.wg.Wait()
		s.idx.close()
	}
	return first
}

func (s *Service) onMsg(m *nats.Msg) {
	if class := classOf(m.Subject); class != nil && validReply(m.Reply, class) && s.repeats.join(m) {
		return // a repeat of a request in flight: answered with it
	}
	select {
	case s.sem <- struct{}{}:
	case <-s.ctx.Done():
		s.repeats.finish(m, s.publishReply)
		return
	}
	s.wg.Add(1)
	select {
	case s.work <- m: // an idle worker
		return
	default:
	}
	if s.workers.Add(1) <= int32(s.cfg.Workers) {
		s.workerWG.Add(1)
		go s.worker(m)
		return
	}
	s.workers.Add(-1)
	// Every worker is busy or on its way back for more (the slot taken
	// above means one is): wait for it.
	select {
	case s.work <- m:
	case <-s.ctx.Done():
		s.done(m)
	}
}

// worker handles m, then every request handed to it, until the service
// stops.
func (s *Service) worker(m *nats.Msg) {
	defer s.workerWG.Done()
	for {
		s.handleOne(m)
		select {
		case m = <-s.work:
		case <-s.ctx.Done():
			return
		}
	}
}

func (s *Service) handleOne(m *nats.Msg) {
	defer s.done(m)
	s.handle(m)
}

// done ends the handling of m: its repeats are answered and its slot
// freed.
func (s *Service) done(m *nats.Msg) {
	s.repeats.finish(m, s.publishReply)
	<-s.sem
	s.wg.Done()
}

// publishReply sends a reply b to a repeat's reply subject.
func (s *Service) publishReply(subject string, b []byte) {
	if err := s.cfg.Conn.Publish(subject, b); err != nil {
		s.cfg.Logger.Warn("ingest: reply to a repeat failed", "err", err)
	}
}

// refusal is a request refused before anything was stored.
type refusal struct {
	reason  string
	index   int
	eventID string
	// tainted are values the producer chose that the reason may quote:
	// what Vigil stores and logs shows their digests instead.
	tainted []string
	alert   bool // a control kind on an agent subject: operators must see it
	// noReply: the reply subject itself is the attack; do not answer.
	noReply bool
}

// subjectClass is one family of ingest subjects: who may send on it (NATS
// permissions enforce that), the origin stamped on what arrives there,
// and which kinds it takes.
type subjectClass struct {
	prefix string
	origin events.Origin
	// allows reports whether kind k may arrive on this class.
	allows func(k events.Kind) bool
	// ownInbox: replies must go to an inbox of the Vigil form
	// (natsutil.ValidInboxToken), as every agent or runtime connection has.
	ownInbox bool
}

var subjectClasses = []subjectClass{
	{events.IngestAgentPrefix, events.OriginAgent, events.Kind.IsAgent, true},
	{events.IngestRuntimePrefix, events.OriginRuntime, events.Kind.IsAgent, true},
	{events.IngestApprovalPrefix, events.OriginApprover, events.Kind.IsVerdict, false},
	{events.IngestControlPrefix, events.OriginAdmin, func(events.Kind) bool { return true }, false},
}

func classOf(subject string) *subjectClass {
	for i := range subjectClasses {
		if strings.HasPrefix(subject, subjectClasses[i].prefix) {
			return &subjectClasses[i]
		}
	}
	return nil
}

func (s *Service) handle(m *nats.Msg) {
	class := classOf(m.Subject)
	if class == nil {
		return
	}
	if m.Reply != "" && !validReply(m.Reply, class) {
		// Never answer on a subject the requester does not own: the reply
		// would be published with the service's rights (into the log, the
		// derived stream, another client's inbox). Nothing is stored.
		s.refuse(m, &refusal{reason: "the reply subject is not a reply inbox of the requester's own (" + natsutil.InboxRoot + ".<token>.…); nothing was stored", index: -1, alert: true, noReply: true})
		return
	}
	token := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	evs, ref := s.decode(m, token, class)
	if ref != nil {
		s.refuse(m, ref)
		return
	}
	wait, waitAsked, err := parseWait(m)
	switch {
	case err != nil:
		s.refuse(m, &refusal{reason: err.Error(), index: -1})
		return
	case waitAsked && (len(evs) != 1 || evs[0].Kind != events.KindAction || m.Reply == ""):
		s.refuse(m, &refusal{reason: "header " + HeaderWaitDecision + " needs a request with exactly one action and a reply inbox", index: -1})
		return
	}
	if lr := s.admit(class, token, evs); lr != nil {
		s.refuseOverCap(m, class, lr)
		return
	}
	handed := false
	if waitAsked {
		// Gate outputs are remembered from before the action is stored
		// (its decision may be folded before the wait registers) until
		// awaitDecision ends; released here if it never starts.
		s.decisions.interest.Add(1)
		defer func() {
			if !handed {
				s.decisions.interest.Add(-1)
			}
		}()
	}
	results, err := s.store(evs)
	if err != nil {
		var conflict *idConflictError
		if errors.As(err, &conflict) {
			s.refuse(m, &refusal{reason: conflict.Error(), index: conflict.index, eventID: evs[conflict.index].ID, alert: true})
			return
		}
		var big *tooLargeError
		if errors.As(err, &big) {
			s.refuse(m, &refusal{reason: big.Error(), index: big.index, eventID: evs[big.index].ID})
			return
		}
		s.cfg.Logger.Warn("ingest: store failed", "subject", m.Subject, "events", len(evs), "err", err)
		var partial *natsutil.PartialError
		if errors.As(err, &partial) {
			s.reply(m, Reply{Error: fmt.Sprintf("partly stored: the first %d of the %d events to store are stored, in order, the rest not: %v; retry the request with the same ids (nothing is stored twice)", len(partial.Acks), partial.Total, partial.Err), Index: -1})
			return
		}
		s.reply(m, Reply{Error: "not stored: " + err.Error() + "; retry with the same ids", Index: -1})
		return
	}
	s.reply(m, Reply{Results: results})
	if waitAsked {
		handed = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.awaitDecision(m, &evs[0], results[0].Seq, results[0].Duplicate, wait)
		}()
	}
}

// validReply reports whether a request's reply subject may be answered:
// an inbox (natsutil.IsInbox), of the Vigil form on agent and runtime
// subjects, whose connections all have one.
func validReply(reply string, class *subjectClass) bool {
	if !natsutil.IsInbox(reply) {
		return false
	}
	if class.ownInbox {
		tok, _, _ := strings.Cut(strings.TrimPrefix(reply, natsutil.InboxRoot+"."), ".")
		return natsutil.ValidInboxToken(tok)
	}
	return true
}

// decode decodes and checks a request's events.
func (s *Service) decode(m *nats.Msg, token string, class *subjectClass) (evs []events.Event, _ *refusal) {
	if len(m.Data) == 0 {
		return nil, &refusal{reason: "empty body: send one event, a msgpack array or JSON lines", index: -1}
	}
	ct := ""
	if m.Header != nil {
		ct = strings.ToLower(strings.TrimSpace(m.Header.Get(HeaderContentType)))
	}
	var err error
	switch {
	case strings.HasPrefix(ct, ContentTypeJSON), strings.HasPrefix(ct, ContentTypeJSONL),
		strings.HasPrefix(ct, "application/x-ndjson"):
		evs, err = decodeJSONLines(m.Data)
	case ct == "" || strings.HasPrefix(ct, ContentTypeMsgpack) || strings.HasPrefix(ct, "application/x-msgpack"):
		if isMsgpackArray(m.Data[0]) {
			evs, err = events.DecodeMsgpackArray(m.Data)
		} else {
			var ev events.Event
			ev, err = events.DecodeMsgpack(m.Data)
			evs = []events.Event{ev}
		}
	default:
		return nil, &refusal{reason: fmt.Sprintf("content type %q: use %s, %s or %s", ct, ContentTypeMsgpack, ContentTypeJSON, ContentTypeJSONL), index: -1}
	}
	if err != nil {
		return nil, &refusal{reason: err.Error(), index: -1}
	}
	if len(evs) == 0 {
		return nil, &refusal{reason: "empty batch", index: -1}
	}
	if len(evs) > s.cfg.MaxBatch {
		return nil, &refusal{reason: fmt.Sprintf("batch of %d events is over the limit of %d; split it", len(evs), s.cfg.MaxBatch), index: -1}
	}
	now := s.cfg.Now().UTC()
	origin := class.origin
	for i := range evs {
		ev := &evs[i]
		if !class.allows(ev.Kind) && ev.Kind.Loggable() {
			what := fmt.Sprintf("kind %q may not be sent on %s<conversation>", ev.Kind, class.prefix)
			if ev.Kind.IsControl() && !class.origin.Trusted() {
				what = fmt.Sprintf("kind %q is a control kind and agents may not send it", ev.Kind)
			}
			return nil, &refusal{
				reason:  fmt.Sprintf("event %d: %s; send it on %s<conversation> with %s credentials", i, what, ingestPrefixFor(ev.Kind), rolesFor(ev.Kind)),
				index:   i,
				eventID: ev.ID,
				tainted: taint(ev),
				alert:   ev.Kind.IsControl() || class.origin == events.OriginApprover,
			}
		}
		if token != events.GlobalScope {
			if ev.Conversation == "" {
				ev.Conversation = token
			} else if ev.Conversation != token {
				return nil, &refusal{reason: fmt.Sprintf("event %d: conversation %q does not match the subject's %q", i, ev.Conversation, token), index: i, eventID: ev.ID, tainted: taint(ev)}
			}
		}
		// What was redacted is the service's to say: a producer's own
		// redactions list is a claim (it could forge "this was redacted",
		// hold a secret, or name a hundred thousand rules that become
		// metric series), so it is discarded and the redaction step
		// writes the only one stored.
		ev.Redactions = nil
		if ev.ID == "" {
			ev.ID = s.cfg.NewID()
		}
		if ev.Time.IsZero() {
			ev.Time = now
		}
		ev.Origin = origin
		if err := ev.Validate(); err != nil {
			return nil, &refusal{reason: fmt.Sprintf("event %d (%s): %v", i, ev.ID, err), index: i, eventID: ev.ID, tainted: taint(ev)}
		}
		if ev.Kind == events.KindConfig && s.cfg.CheckConfig != nil {
			cfg, err := events.DataAs[events.Config](ev)
			if err == nil {
				err = s.cfg.CheckConfig(cfg)
			}
			if err != nil {
				return nil, &refusal{reason: fmt.Sprintf("event %d (%s): config refused, nothing stored: %v", i, ev.ID, err), index: i, eventID: ev.ID, tainted: taint(ev)}
			}
		}
	}
	return evs, nil
}

func isMsgpackArray(b byte) bool { return b&0xf0 == 0x90 || b == 0xdc || b == 0xdd }

func decodeJSONLines(b []byte) ([]events.Event, error) {
	var out []events.Event
	lineNo := 0
	for len(b) > 0 {
		lineNo++
		i := strings.IndexByte(string(b), '\n')
		var line []byte
		if i < 0 {
			line, b = b, nil
		} else {
			line, b = b[:i], b[i+1:]
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		ev, err := events.DecodeJSON(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// store redacts and publishes evs in order and waits for every ack,
// retrying through cluster hiccups (the ids make retries idempotent).
func (s *Service) store(evs []events.Event) ([]Result, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.AckTimeout)
	defer cancel()
	msgs := make([]*nats.Msg, len(evs))
	for i := range evs {
		body, err := s.encode(&evs[i])
		if err != nil {
			return nil, err
		}
		msg := &nats.Msg{Subject: events.LogSubject(evs[i].Conversation), Data: body, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, evs[i].ID)
		msgs[i] = msg
	}
	// Refused whole if any event is too big once redacted; stored in
	// order otherwise: as one chain on a single-replica VIGIL_LOG (one
	// round trip; a failure midway leaves a prefix stored, which the reply
	// says and a retry with the same ids completes), as one atomic batch
	// on a replicated one (all or nothing).
	if err := natsutil.CheckBatch(msgs, s.cfg.Conn.MaxPayload()); err != nil {
		var big *natsutil.MessageTooLargeError
		if errors.As(err, &big) {
			return nil, &tooLargeError{index: big.Index, size: big.Size, limit: big.Limit}
		}
		return nil, err
	}
	results := make([]Result, len(evs))
	pos, at, err := s.known(ctx, evs, msgs, results)
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 {
		return results, nil
	}
	send := make([]*nats.Msg, len(pos))
	for j, i := range pos {
		send[j] = msgs[i]
	}
	if s.idx != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, at)
		defer cancel()
	}
	publish := s.pub.PublishBatch
	if s.chain && (!s.cfg.SyncEveryWrite || len(send) < natsutil.DefaultMinAtomicBatch) {
		publish = s.pub.PublishChain
	}
	acks, err := publish(ctx, send)
	if err != nil {
		return nil, err
	}
	for j, ack := range acks {
		i := pos[j]
		if ack.Duplicate {
			if err := s.checkSame(ctx, &evs[i], msgs[i].Data, ack.Sequence); err != nil {
				var conflict *idConflictError
				if errors.As(err, &conflict) {
					// JetStream answers a duplicate inside an atomic
					// batch by storing the batch's other events: say so.
					conflict.index, conflict.others = i, len(send)-1
				}
				return nil, err
			}
		}
		results[i] = Result{ID: evs[i].ID, Seq: ack.Sequence, Duplicate: ack.Duplicate}
		if evs[i].Kind == events.KindConfig && !ack.Duplicate {
			// This instance follows it before it answers, so the
			// producer's next event is redacted under it; every other
			// instance follows the announcement (best-effort).
			s.followConfig(msgs[i].Data, ack.Sequence)
			ann := &nats.Msg{Subject: events.SubjectConfigStored, Data: msgs[i].Data, Header: nats.Header{}}
			ann.Header.Set(headerLogSeq, strconv.FormatUint(ack.Sequence, 10))
			if err := s.cfg.Conn.PublishMsg(ann); err != nil {
				s.cfg.Logger.Warn("ingest: config change not announced", "config", evs[i].ID, "err", err)
			}
		}
	}
	return results, nil
}

// known answers, from the id index, the events of a request already stored
// within the dedup window (results[i] set, Duplicate) and returns the
// positions of the events still to publish, in order, and the time by
// which their publish must reach JetStream (see idindex.go). Without an
// index every event is to publish. An id the index knows with other
// content is refused with nothing of the request stored.
func (s *Service) known(ctx context.Context, evs []events.Event, msgs []*nats.Msg, results []Result) ([]int, time.Time, error) {
	pos := make([]int, 0, len(msgs))
	if s.idx == nil {
		for i := range msgs {
			pos = append(pos, i)
		}
		return pos, time.Time{}, nil
	}
	at, err := s.idx.publishDeadline(ctx)
	if err != nil {
		return nil, at, err
	}
	now := time.Now()
	for i := range evs {
		seq, ok, err := s.idx.lookup(msgs[i].Subject, evs[i].ID, now)
		if err != nil {
			return nil, at, err
		}
		if !ok {
			pos = append(pos, i)
			continue
		}
		if err := s.checkSame(ctx, &evs[i], msgs[i].Data, seq); err != nil {
			var conflict *idConflictError
			if errors.As(err, &conflict) {
				conflict.index = i
			}
			return nil, at, err
		}
		results[i] = Result{ID: evs[i].ID, Seq: seq, Duplicate: true}
	}
	return pos, at, nil
}

// tooLargeError: an event of a request is over the payload limit once
// redacted and encoded; nothing of the request was stored.
type tooLargeError struct {
	index int
	size  int
	limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("event %d takes %d bytes as stored, over the limit of %d: nothing of the request was stored; truncate its large fields (an observation's output) and send it again", e.index, e.size, e.limit)
}

// encode redacts ev and encodes it as it is stored.
func (s *Service) encode(ev *events.Event) ([]byte, error) {
	red := *ev
	if box := s.redactor.Load(); box != nil && box.r != nil {
		red, _ = box.r.RedactEvent(ev)
	}
	return red.MarshalMsgpack()
}

// idConflictError: an event's id is already stored with other content.
type idConflictError struct {
	id    string
	seq   uint64
	index int
	// others is how many other events of the request were stored (or
	// found stored) all the same.
	others int
}

func (e *idConflictError) Error() string {
	msg := fmt.Sprintf("event %d: its id is already stored with different content (an id names one event; retries must resend the same event): give this event a new id; nothing of it was stored", e.index)
	if e.others > 0 {
		msg += fmt.Sprintf("; the request's %d other events are stored (send them again with the same ids to learn their seqs: nothing is stored twice)", e.others)
	}
	return msg
}

// checkSame checks that a duplicate (an id JetStream already holds) is the
// same event as the one stored at seq: an id is the producer's claim, and
// a retry is the only honest reason to send one twice. The time is not
// compared (a retry may be rebuilt with a new one, or the service stamped
// it): the stored event's time stands.
func (s *Service) checkSame(ctx context.Context, ev *events.Event, body []byte, seq uint64) error {
	stored, err := s.storedAt(ctx, seq)
	if err != nil {
		return fmt.Errorf("event %s: check the stored copy at log seq %d: %w", ev.ID, seq, err)
	}
	if bytes.Equal(body, stored) {
		return nil
	}
	prev, err := events.DecodeMsgpack(stored)
	if err != nil {
		return &idConflictError{id: ev.ID, seq: seq}
	}
	again := *ev
	again.Time = prev.Time
	if body, err = s.encode(&again); err != nil {
		return err
	}
	if !bytes.Equal(body, stored) {
		return &idConflictError{id: ev.ID, seq: seq}
	}
	return nil
}

// storedAt returns the stored bytes of the VIGIL_LOG record at seq.
func (s *Service) storedAt(ctx context.Context, seq uint64) ([]byte, error) {
	st, err := s.logStream(ctx)
	if err != nil {
		return nil, err
	}
	m, err := st.GetMsg(ctx, seq)
	if err != nil {
		return nil, err
	}
	return m.Data, nil
}

// logStream returns a handle on VIGIL_LOG, looked up once: a handle
// names the stream, so it stays good if the stream is replaced.
func (s *Service) logStream(ctx context.Context) (jetstream.Stream, error) {
	if st := s.logSt.Load(); st != nil {
		return *st, nil
	}
	st, err := s.cfg.JS.Stream(ctx, events.StreamLog)
	if err != nil {
		return nil, err
	}
	s.logSt.Store(&st)
	return st, nil
}

// ingestPrefixFor names the subject family an event of kind k belongs on.
func ingestPrefixFor(k events.Kind) string {
	return strings.TrimSuffix(events.IngestSubjectFor(k, "x"), "x")
}

// taint lists the values of ev a producer chose that a reason may quote.
func taint(ev *events.Event) []string {
	return []string{ev.ID, string(ev.Kind), ev.Conversation, ev.Agent}
}

// rolesFor names the roles that may send kind k.
func rolesFor(k events.Kind) string {
	switch {
	case !k.IsControl():
		return "agent, runtime or admin"
	case k.IsVerdict():
		return "approver or admin"
	}
	return "admin"
}

// maxRecordedReason bounds a refusal reason as stored and logged.
const maxRecordedReason = 1024

// scrub makes a refusal reason fit to store and log: every value the
// producer chose (tainted) is replaced by its digest, the rest goes
// through the redaction step, and the result is bounded.
func (s *Service) scrub(text string, tainted ...string) string {
	for _, t := range tainted {
		if len(t) >= 3 && !events.Kind(t).IsKnown() {
			text = strings.ReplaceAll(text, t, digestOf(t))
		}
	}
	if box := s.redactor.Load(); box != nil && box.r != nil {
		ev := events.Event{Data: map[string]any{"reason": text}}
		if red, _ := box.r.RedactEvent(&ev); red.Data != nil {
			if r, ok := red.Data["reason"].(string); ok {
				text = r
			}
		}
	}
	if len(text) > maxRecordedReason {
		text = fmt.Sprintf("%s…[truncated: %d bytes in all]", strings.ToValidUTF8(text[:maxRecordedReason], ""), len(text))
	}
	return text
}

// ValueDigest is how a value a producer chose (an id, a conversation) stands
// in what the ingest service records about a refusal: "<sha256:12 hex>".
func ValueDigest(v string) string { return digestOf(v) }

// digestOf stands for a producer-chosen value in what Vigil records.
func digestOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "<sha256:" + hex.EncodeToString(sum[:6]) + ">"
}

func (s *Service) refuse(m *nats.Msg, r *refusal) {
	sum := sha256.Sum256(m.Data)
	token := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	ct := ""
	if m.Header != nil {
		ct = m.Header.Get(HeaderContentType)
	}
	recorded := s.scrub(r.reason, append([]string{r.eventID, token, ct}, r.tainted...)...)
	subject := strings.TrimSuffix(m.Subject, token) + digestOf(token)
	eventID := ""
	if r.eventID != "" {
		eventID = digestOf(r.eventID)
	}
	dl := events.DeadLetter{
		Reason:  recorded,
		Subject: subject,
		Digest:  "sha256:" + hex.EncodeToString(sum[:]),
		Size:    len(m.Data),
		EventID: eventID,
		Time:    s.cfg.Now().UTC().Format(time.RFC3339Nano),
	}
	s.cfg.Logger.Warn("ingest: refused", "subject", subject, "reason", recorded, "digest", dl.Digest, "size", dl.Size)
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.AckTimeout)
	defer cancel()
	id := "dlq:" + dl.Digest
	d := events.Derived{V: events.CurrentVersion, ID: id, Kind: events.KindDeadLetter, Time: dl.Time, Data: dl}
	if body, err := d.Marshal(); err == nil {
		msg := &nats.Msg{Subject: events.SubjectDLQ, Data: body, Header: nats.Header{}}
		if _, err := s.cfg.JS.PublishMsg(ctx, msg); err != nil {
			s.cfg.Logger.Error("ingest: DLQ record not stored", "digest", dl.Digest, "err", err)
		}
	}
	if r.alert {
		a := events.Alert{Severity: events.SeverityHigh, Reason: recorded, EventID: eventID, Subject: subject}
		d := events.Derived{V: events.CurrentVersion, ID: "ingest:" + dl.Digest, Kind: events.KindAlert, Time: dl.Time, Data: a}
		if body, err := d.Marshal(); err == nil {
			msg := &nats.Msg{Subject: events.SubjectAlert, Data: body, Header: nats.Header{}}
			msg.Header.Set(jetstream.MsgIDHeader, d.ID)
			if _, err := s.cfg.JS.PublishMsg(ctx, msg); err != nil {
				s.cfg.Logger.Error("ingest: alert not stored", "digest", dl.Digest, "err", err)
			}
		}
	}
	if !r.noReply {
		s.reply(m, Reply{Error: r.reason, Index: r.index})
	}
}

// admit holds a request to its credential's limits (limits.go).
func (s *Service) admit(class *subjectClass, token string, evs []events.Event) *limitRefusal {
	conv := token
	if token == events.GlobalScope {
		conv = ""
	}
	actions := 0
	for i := range evs {
		if evs[i].Kind == events.KindAction {
			actions++
		}
	}
	return s.lim.admit(class.origin, conv, actions, s.cfg.Now())
}

// refuseOverCap answers a request over a cap of its credential: the reply
// says which cap and what to do; nothing is stored, not even in VIGIL_DLQ,
// and an alert is raised when one is due (at most once a minute a cap).
func (s *Service) refuseOverCap(m *nats.Msg, class *subjectClass, lr *limitRefusal) {
	s.reply(m, Reply{Error: "refused: " + lr.reason, Index: -1})
	if !lr.alert {
		return
	}
	now := s.cfg.Now().UTC()
	s.cfg.Logger.Warn("ingest: a producer credential is over its cap", "credential", string(class.origin), "cap", lr.cap)
	a := events.Alert{Severity: events.SeverityHigh, Reason: "ingest: " + lr.reason, Subject: class.prefix + "*"}
	id := fmt.Sprintf("ingest:cap:%s:%s:%d", class.origin, lr.cap, now.Unix()/int64(alertEvery/time.Second))
	d := events.Derived{V: events.CurrentVersion, ID: id, Kind: events.KindAlert, Time: now.Format(time.RFC3339Nano), Data: a}
	body, err := d.Marshal()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.AckTimeout)
	defer cancel()
	msg := &nats.Msg{Subject: events.SubjectAlert, Data: body, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, d.ID)
	if _, err := s.cfg.JS.PublishMsg(ctx, msg); err != nil {
		s.cfg.Logger.Error("ingest: cap alert not stored", "cap", lr.cap, "err", err)
	}
}

func (s *Service) reply(m *nats.Msg, r Reply) {
	if m.Reply == "" {
		return // a plain publish is best-effort: nobody to tell
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	s.repeats.answered(m, b)
	if err := m.Respond(b); err != nil {
		s.cfg.Logger.Warn("ingest: reply failed", "subject", m.Subject, "err", err)
	}
}
