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
package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// Content types a producer may set in the Content-Type header.
const (
	ContentTypeMsgpack = "application/msgpack"
	ContentTypeJSON    = "application/json"
	ContentTypeJSONL   = "application/jsonl"
	HeaderContentType  = "Content-Type"
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
	// Redactor is the redaction step; nil stores events as they are (tests).
	Redactor Redactor
	// NewRedactor, when set, rebuilds the redaction step from the redaction
	// settings of each global config event stored in the log (by any ingest
	// instance: each announces the configs it stores on
	// events.SubjectConfigStored), so extra rules, allowed values and the
	// entropy threshold follow the config in force. A config whose
	// settings do not build keeps the previous step (the config check
	// refuses such configs before they are stored).
	NewRedactor func(events.RedactionSettings) (Redactor, error)
	// CheckConfig, when set, checks every config event as a whole (the
	// analyzers compile under it, its redaction settings build) before it
	// is stored, whatever path it came by; a config it refuses is never
	// stored. events.Event.Validate runs first either way.
	CheckConfig func(events.Config) error
	Logger      *slog.Logger
	// MaxBatch bounds the events of one request; zero means 10,000.
	MaxBatch int
	// AckTimeout bounds the wait for VIGIL_LOG's acknowledgement.
	AckTimeout time.Duration
	// Now and NewID are injected for tests; they default to the clock and ULIDs.
	Now   func() time.Time
	NewID func() string
	// Workers is the number of requests handled at once; zero means 64.
	Workers int
}

// Service is a running ingest service.
type Service struct {
	cfg      Config
	pub      *natsutil.Publisher
	redactor atomic.Pointer[redactorBox]
	subs     []*nats.Subscription
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	ctx      context.Context
	stop     context.CancelFunc
}

// Reply is the JSON answer to an ingest request.
type Reply struct {
	// Results has one entry per event, in request order, once all are stored.
	Results []Result `json:"results,omitempty"`
	// Error is set when the request was refused; nothing of it was stored.
	Error string `json:"error,omitempty"`
	// Index is the 0-based position of the event the error is about, or -1.
	Index int `json:"index,omitempty"`
}

// Result is where one event was stored.
type Result struct {
	ID  string `json:"id"`
	Seq uint64 `json:"seq"`
	// Duplicate is true when the id was already stored (a retry).
	Duplicate bool `json:"duplicate,omitempty"`
}

// New validates cfg and returns a service; call Start to subscribe.
func New(cfg Config) (*Service, error) {
	if cfg.Conn == nil || cfg.JS == nil {
		return nil, errors.New("ingest: Conn and JS are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = 10000
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
	if cfg.Workers == 0 {
		cfg.Workers = 64
	}
	ctx, cancel := context.WithCancel(context.Background())
	pub := &natsutil.Publisher{JS: cfg.JS, Logger: cfg.Logger}
	svc := &Service{cfg: cfg, pub: pub, sem: make(chan struct{}, cfg.Workers), ctx: ctx, stop: cancel}
	if cfg.Redactor != nil {
		svc.redactor.Store(&redactorBox{cfg.Redactor})
	}
	return svc, nil
}

// redactorBox lets an interface value live in an atomic.Pointer.
type redactorBox struct{ r Redactor }

// SetRedactionSettings rebuilds the redaction step (see Config.NewRedactor).
func (s *Service) SetRedactionSettings(rs events.RedactionSettings) error {
	if s.cfg.NewRedactor == nil {
		return nil
	}
	r, err := s.cfg.NewRedactor(rs)
	if err != nil {
		return err
	}
	s.redactor.Store(&redactorBox{r})
	return nil
}

// onConfigStored follows config events stored by any ingest instance
// (announced on events.SubjectConfigStored).
func (s *Service) onConfigStored(m *nats.Msg) {
	ev, err := events.DecodeMsgpack(m.Data)
	if err != nil {
		return
	}
	cfg, err := events.DataAs[events.Config](&ev)
	if err != nil || (cfg.Scope != "" && cfg.Scope != events.ScopeGlobal) {
		return
	}
	if err := s.SetRedactionSettings(cfg.Redaction); err != nil {
		s.cfg.Logger.Warn("ingest: redaction settings of config not applied; keeping the previous ones", "config", ev.ID, "err", err)
		return
	}
	s.cfg.Logger.Info("ingest: redaction settings follow config", "config", ev.ID, "version", cfg.Version)
}

// Start subscribes to the ingest subjects.
func (s *Service) Start() error {
	if s.cfg.NewRedactor != nil {
		sub, err := s.cfg.Conn.Subscribe(events.SubjectConfigStored, s.onConfigStored)
		if err != nil {
			return fmt.Errorf("ingest: follow config events: %w", err)
		}
		s.subs = append(s.subs, sub)
	}
	for _, subj := range []string{events.IngestAgentPrefix + "*", events.IngestControlPrefix + "*"} {
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
// event that was acknowledged to a producer is stored.
func (s *Service) Stop(ctx context.Context) error {
	var first error
	for _, sub := range s.subs {
		if err := sub.Drain(); err != nil && first == nil && !errors.Is(err, nats.ErrConnectionClosed) {
			first = err
		}
	}
	done := make(chan struct{})
	go func() {
		for _, sub := range s.subs {
			for sub.IsValid() {
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
	select {
	case <-done:
	case <-ctx.Done():
		s.stop()
		if first == nil {
			first = ctx.Err()
		}
	}
	s.stop()
	return first
}

func (s *Service) onMsg(m *nats.Msg) {
	select {
	case s.sem <- struct{}{}:
	case <-s.ctx.Done():
		return
	}
	s.wg.Add(1)
	go func() {
		defer func() { <-s.sem; s.wg.Done() }()
		s.handle(m)
	}()
}

// refusal is a request refused before anything was stored.
type refusal struct {
	reason  string
	index   int
	eventID string
	alert   bool // a control kind on an agent subject: operators must see it
}

func (s *Service) handle(m *nats.Msg) {
	control := strings.HasPrefix(m.Subject, events.IngestControlPrefix)
	token := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	evs, ref := s.decode(m, token, control)
	if ref != nil {
		s.refuse(m, ref)
		return
	}
	results, err := s.store(evs)
	if err != nil {
		s.cfg.Logger.Warn("ingest: store failed", "subject", m.Subject, "events", len(evs), "err", err)
		s.reply(m, Reply{Error: "not stored: " + err.Error() + "; retry with the same ids", Index: -1})
		return
	}
	s.reply(m, Reply{Results: results})
}

func (s *Service) decode(m *nats.Msg, token string, control bool) ([]events.Event, *refusal) {
	if len(m.Data) == 0 {
		return nil, &refusal{reason: "empty body: send one event, a msgpack array or JSON lines", index: -1}
	}
	ct := ""
	if m.Header != nil {
		ct = strings.ToLower(strings.TrimSpace(m.Header.Get(HeaderContentType)))
	}
	var evs []events.Event
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
	origin := events.OriginAgent
	if control {
		origin = events.OriginAdmin
	}
	for i := range evs {
		ev := &evs[i]
		if ev.Kind.IsControl() && !control {
			return nil, &refusal{
				reason:  fmt.Sprintf("event %d: kind %q is a control kind and agents may not send it; send it on %s<conversation> with approver or admin credentials", i, ev.Kind, events.IngestControlPrefix),
				index:   i,
				eventID: ev.ID,
				alert:   true,
			}
		}
		if token != events.GlobalScope {
			if ev.Conversation == "" {
				ev.Conversation = token
			} else if ev.Conversation != token {
				return nil, &refusal{reason: fmt.Sprintf("event %d: conversation %q does not match the subject's %q", i, ev.Conversation, token), index: i, eventID: ev.ID}
			}
		}
		if ev.ID == "" {
			ev.ID = s.cfg.NewID()
		}
		if ev.Time.IsZero() {
			ev.Time = now
		}
		ev.Origin = origin
		if err := ev.Validate(); err != nil {
			return nil, &refusal{reason: fmt.Sprintf("event %d (%s): %v", i, ev.ID, err), index: i, eventID: ev.ID}
		}
		if ev.Kind == events.KindConfig && s.cfg.CheckConfig != nil {
			cfg, err := events.DataAs[events.Config](ev)
			if err == nil {
				err = s.cfg.CheckConfig(cfg)
			}
			if err != nil {
				return nil, &refusal{reason: fmt.Sprintf("event %d (%s): config refused, nothing stored: %v", i, ev.ID, err), index: i, eventID: ev.ID}
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
		ev := evs[i]
		if box := s.redactor.Load(); box != nil && box.r != nil {
			ev, _ = box.r.RedactEvent(&evs[i])
		}
		body, err := ev.MarshalMsgpack()
		if err != nil {
			return nil, err
		}
		msg := &nats.Msg{Subject: events.LogSubject(ev.Conversation), Data: body, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, ev.ID)
		msgs[i] = msg
	}
	var acks []*jetstream.PubAck
	if len(msgs) == 1 {
		ack, err := s.pub.Publish(ctx, msgs[0])
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", evs[0].ID, err)
		}
		acks = []*jetstream.PubAck{ack}
	} else {
		var err error
		if acks, err = s.pub.PublishAll(ctx, msgs); err != nil {
			return nil, err
		}
	}
	results := make([]Result, len(evs))
	for i, ack := range acks {
		results[i] = Result{ID: evs[i].ID, Seq: ack.Sequence, Duplicate: ack.Duplicate}
		if evs[i].Kind == events.KindConfig {
			// Tell every ingest instance (best-effort, like the watch it
			// feeds): their redaction follows the config in force.
			if err := s.cfg.Conn.Publish(events.SubjectConfigStored, msgs[i].Data); err != nil {
				s.cfg.Logger.Warn("ingest: config change not announced", "config", evs[i].ID, "err", err)
			}
		}
	}
	return results, nil
}

func (s *Service) refuse(m *nats.Msg, r *refusal) {
	sum := sha256.Sum256(m.Data)
	dl := events.DeadLetter{
		Reason:  r.reason,
		Subject: m.Subject,
		Digest:  "sha256:" + hex.EncodeToString(sum[:]),
		Size:    len(m.Data),
		EventID: r.eventID,
		Time:    s.cfg.Now().UTC().Format(time.RFC3339Nano),
	}
	s.cfg.Logger.Warn("ingest: refused", "subject", m.Subject, "reason", r.reason, "digest", dl.Digest, "size", dl.Size)
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
		a := events.Alert{Severity: "high", Reason: r.reason, EventID: r.eventID, Subject: m.Subject}
		d := events.Derived{V: events.CurrentVersion, ID: "ingest:" + dl.Digest, Kind: events.KindAlert, Time: dl.Time, Data: a}
		if body, err := d.Marshal(); err == nil {
			msg := &nats.Msg{Subject: events.SubjectAlert, Data: body, Header: nats.Header{}}
			msg.Header.Set(jetstream.MsgIDHeader, d.ID)
			if _, err := s.cfg.JS.PublishMsg(ctx, msg); err != nil {
				s.cfg.Logger.Error("ingest: alert not stored", "digest", dl.Digest, "err", err)
			}
		}
	}
	s.reply(m, Reply{Error: r.reason, Index: r.index})
}

func (s *Service) reply(m *nats.Msg, r Reply) {
	if m.Reply == "" {
		return // a plain publish is best-effort: nobody to tell
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	if err := m.Respond(b); err != nil {
		s.cfg.Logger.Warn("ingest: reply failed", "subject", m.Subject, "err", err)
	}
}
