package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditlog"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/projections"
)

// ReadModels are the read models the API answers from; *projections.Store
// implements it.
type ReadModels interface {
	Pending() ([]projections.PendingApproval, error)
	ByConversation(conversation string, from uint64, limit int) ([]events.Record, error)
	RiskOf(actionID string) (events.RiskAssessed, error)
	Decision(actionID string) (events.GateDecided, error)
	Allowlist() ([]projections.AllowEntry, error)
	ConfigFor(conversation string) (projections.ConfigState, string, error)
	AskSecurityRisk(conversation string) (projections.SecurityRiskHint, error)
	EventAt(seq uint64) (events.Record, error)
	Stats(conversation string) (projections.Stats, error)
	Status() projections.Status
	// WaitPosition waits until the read models hold log record seq, or ctx
	// ends, and reports whether they do.
	WaitPosition(ctx context.Context, seq uint64) bool
}

// Config configures the API.
type Config struct {
	// Tokens are the bearer tokens of the roles (natsutil.EnsureTokens).
	// Required; a role with no token cannot use the API.
	Tokens map[natsutil.Role]string
	// Connect returns a client with a role's NATS credentials. New calls
	// it once for each role of Tokens, and Close closes the clients.
	// Required.
	Connect func(ctx context.Context, role natsutil.Role) (*client.Client, error)
	// JetStream is the node's own JetStream context: it feeds the live
	// stream of pending actions and decisions, and the metrics. Nil serves
	// neither (GET /v1/stream answers 503).
	JetStream jetstream.JetStream
	// Reads are the read models; nil lists pending actions from
	// VIGIL_DERIVED and answers 503 on the routes that need them.
	Reads ReadModels
	// Healthy returns nil while the node serves (GET /healthz).
	Healthy func() error
	// Ready returns nil once the node is live and caught up (GET /readyz).
	Ready func() error
	// Checkpointed returns the driver's checkpoint, for the driver lag
	// metric; nil leaves the metric out.
	Checkpointed func() uint64
	// CheckConfig is the whole-config check PUT /v1/config runs before it
	// appends (the ingest service runs it again); nil checks only the
	// event's own validation.
	CheckConfig func(events.Config) error
	// PairingKey keys the hashes of device pairing (pairinglog.LoadOrCreateKey);
	// nil turns the /pair routes off (503).
	PairingKey []byte
	// Hosts are the names this API serves beyond the address a request
	// arrives on (and localhost, on a loopback address): a reverse
	// proxy's name, a DNS name of the host. NAME matches with any port,
	// NAME:PORT only that port. A request with another Host gets 421, and
	// a browser's Origin must name one of them (host.go).
	Hosts  []string
	Logger *slog.Logger
	Limits Limits
}

// Limits bound what one request may cost. Zero fields take the defaults.
type Limits struct {
	// MaxEventBody bounds POST /v1/events and /v1/gate bodies; default 4 MiB.
	MaxEventBody int64
	// MaxConfigBody bounds PUT /v1/config bodies; default 1 MiB.
	MaxConfigBody int64
	// MaxSmallBody bounds every other body; default 64 KiB.
	MaxSmallBody int64
	// MaxBatch bounds the events of one POST /v1/events; default 1000.
	MaxBatch int
	// DefaultGateWait is how long POST /v1/gate waits for a decision when
	// the request does not say; default 30s. MaxGateWait bounds what it
	// may ask; default ingest.MaxDecisionWait.
	DefaultGateWait, MaxGateWait time.Duration
	// MaxWaits bounds the gate waits held at once; default 1024.
	MaxWaits int
	// MaxStreams bounds the live streams open at once; default 64.
	MaxStreams int
	// ReadHeaderTimeout and ReadTimeout bound how long a client may take
	// to send its headers and its whole request; defaults 10s and 60s.
	ReadHeaderTimeout, ReadTimeout time.Duration
	// WriteTimeout bounds writing a response (beyond a route's own wait);
	// default 60s. IdleTimeout bounds an idle keep-alive connection;
	// default 120s.
	WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds request headers; default 64 KiB.
	MaxHeaderBytes int
}

// ensureDefaults fills the zero fields.
func (l *Limits) ensureDefaults() {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxEventBody, 4<<20)
	def(&l.MaxConfigBody, 1<<20)
	def(&l.MaxSmallBody, 64<<10)
	defInt(&l.MaxBatch, 1000)
	defDur(&l.DefaultGateWait, 30*time.Second)
	defDur(&l.MaxGateWait, ingest.MaxDecisionWait)
	defInt(&l.MaxWaits, 1024)
	defInt(&l.MaxStreams, 64)
	defDur(&l.ReadHeaderTimeout, 10*time.Second)
	defDur(&l.ReadTimeout, 60*time.Second)
	defDur(&l.WriteTimeout, 60*time.Second)
	defDur(&l.IdleTimeout, 120*time.Second)
	defInt(&l.MaxHeaderBytes, 64<<10)
}

// Server is the API. Handler serves it; Start also listens.
type Server struct {
	cfg     Config
	log     *slog.Logger
	tokens  *tokenSet
	clients map[natsutil.Role]*client.Client
	handler http.Handler
	metrics *metrics
	hub     *hub
	// verdicts are the actions this server recorded a verdict for.
	verdicts *verdictBook
	// pairing serves device pairing (pairing.go); nil when off.
	pairing *pairingService
	// hosts are the names served beyond the connection's address (host.go).
	hosts hostSet
	// sessions are the browser sessions (session.go).
	sessions *sessionStore
	// prover answers the audit routes from its cache of the log's tree
	// (audit.go); nil without cfg.JetStream.
	prover *auditlog.Prover
	// ctx is every request's base context: Close cancels it, which ends
	// the gate waits and live streams so that Shutdown can drain.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts the followers of the streams; *From is where each resumes
	// (owned by its follower).
	wg                         sync.WaitGroup
	gateFrom, logFrom, dlqFrom uint64
	waits                      chan struct{}
	streams                    chan struct{}

	srv       *http.Server
	ln        net.Listener
	url       string
	served    chan error
	closeOnce sync.Once
	closeErr  error
}

// New checks cfg, connects a client for each role with a token, and
// starts the followers of the streams. It does not listen: serve Handler,
// or call Start.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.Connect == nil {
		return nil, errors.New("httpapi: Config.Connect is required")
	}
	tokens, err := newTokenSet(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	hosts, err := newHostSet(cfg.Hosts)
	if err != nil {
		return nil, fmt.Errorf("httpapi: Config.Hosts: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Healthy == nil {
		cfg.Healthy = func() error { return nil }
	}
	if cfg.Ready == nil {
		cfg.Ready = cfg.Healthy
	}
	cfg.Limits.ensureDefaults()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{
		cfg: cfg, log: cfg.Logger, tokens: tokens, hosts: hosts, clients: map[natsutil.Role]*client.Client{},
		ctx: runCtx, cancel: cancel,
		waits: make(chan struct{}, cfg.Limits.MaxWaits), streams: make(chan struct{}, cfg.Limits.MaxStreams),
	}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	for _, r := range natsutil.TokenRoles {
		if _, ok := cfg.Tokens[r]; !ok {
			continue
		}
		c, err := cfg.Connect(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("httpapi: connect as %s: %w", r, err)
		}
		s.clients[r] = c
	}
	s.metrics = newMetrics(s)
	s.hub = newHub()
	s.verdicts = newVerdictBook()
	if cfg.Reads != nil {
		// The actions waiting now: their decisions are a person's to see.
		if pas, err := cfg.Reads.Pending(); err == nil {
			keys := make([]waitKey, len(pas))
			for i, pa := range pas {
				keys[i] = waitKey{pa.Request.ActionID, pa.Request.LogSeq}
			}
			s.hub.seedWaiting(keys)
		}
	}
	if cfg.JetStream != nil {
		s.prover = auditlog.NewProver(cfg.JetStream, nil, 0)
		// Follow from what is stored after now, decided here rather than
		// when each follower's consumer is made: nothing stored after New
		// returns is missed.
		for _, f := range []struct {
			stream string
			from   *uint64
		}{{events.StreamDerived, &s.gateFrom}, {events.StreamLog, &s.logFrom}} {
			// A stream that cannot be read now (deleted under a starting
			// node, which then fails on its own) is followed from what is
			// stored once it can be.
			if st, err := cfg.JetStream.Stream(ctx, f.stream); err == nil {
				if info, err := st.Info(ctx); err == nil {
					*f.from = info.State.LastSeq + 1
				}
			}
		}
		s.follow("gate outputs", s.followGate)
		s.follow("log times", s.followLog)
		s.follow("dead letters", s.followDLQ)
		s.startPairing()
	}
	s.handler = s.routes()
	s.cfg.Tokens = nil // only their digests are kept (tokenSet)
	return s, nil
}

// Start is New, then listening on addr (host:port; port 0 picks one) and
// serving in the background until Close.
func Start(ctx context.Context, cfg Config, addr string) (*Server, error) {
	s, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("httpapi: listen on %s: %w", addr, err)
	}
	s.serve(ln)
	return s, nil
}

// StartOn is New, then serving on ln (bound by the caller, so that it
// could publish the URL first) until Close, which closes ln. On error ln
// is closed.
func StartOn(ctx context.Context, cfg Config, ln net.Listener) (*Server, error) {
	s, err := New(ctx, cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.serve(ln)
	return s, nil
}

func (s *Server) serve(ln net.Listener) {
	l := s.cfg.Limits
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.served = make(chan error, 1)
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.served <- err
	}()
}

// Handler serves the API.
func (s *Server) Handler() http.Handler { return s.handler }

// URL is the base URL the API listens on ("" before Start).
func (s *Server) URL() string { return s.url }

// Close ends the gate waits and live streams, stops taking requests and
// drains those in flight within ctx, stops the followers and closes the
// role clients. It is idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.cancel()
		var errs []error
		if s.srv != nil {
			if err := s.srv.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("httpapi: shutdown: %w", err))
				s.srv.Close()
			}
			if err := <-s.served; err != nil {
				errs = append(errs, err)
			}
		}
		s.stop()
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// stop ends the followers and closes the clients.
func (s *Server) stop() {
	s.cancel()
	s.wg.Wait()
	for _, c := range s.clients {
		c.Close()
	}
}

// follow runs fn until the server closes, restarting it (after a pause)
// when it fails: a stream deleted or a connection lost must not end the
// live stream or the metrics for good.
func (s *Server) follow(what string, fn func(context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		backoff := 100 * time.Millisecond
		for {
			err := fn(s.ctx)
			if s.ctx.Err() != nil {
				return
			}
			s.log.Warn("httpapi: follower stopped; restarting", "follower", what, "err", err)
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}()
}

// clientFor returns the client of a role.
func (s *Server) clientFor(r natsutil.Role) (*client.Client, *apiError) {
	c, ok := s.clients[r]
	if !ok {
		return nil, &apiError{Status: http.StatusServiceUnavailable, Message: "no NATS client for role " + string(r), reason: "unavailable"}
	}
	return c, nil
}
