package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vigil-dev/vigil/events"
)

// Metrics (GET /metrics, Prometheus text format). Counters read from the
// read models (events, decisions) count the whole log, so they survive
// restarts; the others count from the server's start.
//
//	vigil_events_total{kind}                   events in the log, by kind (read models)
//	vigil_redacted_events_total                events the ingest service removed secrets from
//	vigil_redaction_findings_total{rule}       secrets removed, by redaction rule (read models)
//	vigil_gate_requests_total                  actions that waited for a person
//	vigil_gate_decisions_total{outcome,by}     gate decisions
//	vigil_pending_approvals                    actions waiting for a person now
//	vigil_gate_decision_seconds{by}            from an action stored in VIGIL_LOG to its decision stored in VIGIL_DERIVED
//	vigil_ingest_refusals_total{reason}        requests the ingest service refused (VIGIL_DLQ), by class of reason
//	vigil_dlq_records                          records in VIGIL_DLQ
//	vigil_log_last_seq                         last sequence of VIGIL_LOG
//	vigil_driver_lag_records                   records stored but not yet checkpointed by the driver
//	vigil_read_models_lag_records              records stored but not yet in the read models
//	vigil_healthy                              1 while the node serves
//	vigil_http_requests_total{route,code}      HTTP requests
//	vigil_http_refusals_total{reason}          HTTP requests refused (auth, bounds, bad input)
//	vigil_http_events_appended_total           events stored through the HTTP API
//	vigil_notify_deliveries_total{webhook,result}        notifications sent, or failed after every attempt (internal/notify)
//	vigil_notify_attempt_failures_total{webhook,reason}  failed webhook attempts
//	vigil_notify_inflight                                webhook deliveries under way

// maxLogTimes bounds the log times kept for the latency metric.
const maxLogTimes = 1 << 16

type metrics struct {
	s   *Server
	reg *prometheus.Registry

	requests       *prometheus.CounterVec
	httpRefusals   *prometheus.CounterVec
	appendedTotal  prometheus.Counter
	ingestRefusals *prometheus.CounterVec
	latency        *prometheus.HistogramVec

	mu       sync.Mutex
	logTimes map[uint64]time.Time
	maxSeq   uint64
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		s:   s,
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_http_requests_total", Help: "HTTP requests, by route and status code.",
		}, []string{"route", "code"}),
		httpRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_http_refusals_total", Help: "HTTP requests refused, by reason (unauthenticated, forbidden, body_too_large, bad_request, busy ...).",
		}, []string{"reason"}),
		appendedTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigil_http_events_appended_total", Help: "Events stored through the HTTP API.",
		}),
		ingestRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_ingest_refusals_total", Help: "Requests the ingest service refused (records in VIGIL_DLQ), by class of reason.",
		}, []string{"reason"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vigil_gate_decision_seconds",
			Help:    "Time from an action stored in VIGIL_LOG to the gate's decision stored in VIGIL_DERIVED, by who decided (a person's time included).",
			Buckets: []float64{.0002, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"by"}),
		logTimes: map[uint64]time.Time{},
	}
	m.reg.MustRegister(m.requests, m.httpRefusals, m.appendedTotal, m.ingestRefusals, m.latency, (*nodeCollector)(m))
	return m
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	return nil
}

func (m *metrics) request(route string, code int, _ time.Duration) {
	m.requests.WithLabelValues(route, statusLabel(code)).Inc()
}

func (m *metrics) refused(reason string) { m.httpRefusals.WithLabelValues(reason).Inc() }

func (m *metrics) appended(n int) { m.appendedTotal.Add(float64(n)) }

func (m *metrics) ingestRefused(class string) { m.ingestRefusals.WithLabelValues(class).Inc() }

// logged records when log record seq was stored.
func (m *metrics) logged(seq uint64, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logTimes[seq] = at
	m.maxSeq = max(m.maxSeq, seq)
	if len(m.logTimes) > 2*maxLogTimes {
		// Actions decided long after (by a person, by expiry) are looked
		// up in the stream instead.
		for s := range m.logTimes {
			if s+maxLogTimes < m.maxSeq {
				delete(m.logTimes, s)
			}
		}
	}
}

// decided observes the latency of a decision stored at at.
func (m *metrics) decided(ctx context.Context, gd events.GateDecided, at time.Time) {
	m.mu.Lock()
	stored, ok := m.logTimes[gd.LogSeq]
	delete(m.logTimes, gd.LogSeq)
	m.mu.Unlock()
	if !ok {
		st, err := m.s.cfg.JetStream.Stream(ctx, events.StreamLog)
		if err != nil {
			return
		}
		gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		msg, err := st.GetMsg(gctx, gd.LogSeq)
		if err != nil {
			return
		}
		stored = msg.Time
	}
	m.latency.WithLabelValues(byLabel(gd.By)).Observe(max(at.Sub(stored), 0).Seconds())
}

// byLabel keeps the label's values to the known ones.
func byLabel(by events.DecidedBy) string {
	switch by {
	case events.ByRule, events.ByHuman, events.ByAllowlist, events.BySandbox, events.ByTimeout,
		events.ByMode, events.BySession, events.ByClient:
		return string(by)
	}
	return "other"
}

// refusalClass sorts an ingest refusal's reason into a few classes, so
// the label stays bounded whatever producers send.
func refusalClass(reason string) string {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "reply subject"):
		return "reply_subject"
	case strings.Contains(r, "control kind"), strings.Contains(r, "may not be sent on"):
		return "kind_not_allowed"
	case strings.Contains(r, "already stored with different content"):
		return "id_conflict"
	case strings.Contains(r, "over the limit"):
		return "too_large"
	case strings.Contains(r, "config refused"):
		return "config_refused"
	case strings.Contains(r, "does not match the subject"):
		return "conversation_mismatch"
	case strings.Contains(r, "cannot decode"), strings.Contains(r, "content type"), strings.Contains(r, "empty body"), strings.Contains(r, "empty batch"):
		return "undecodable"
	case strings.Contains(r, "header "):
		return "bad_header"
	case strings.HasPrefix(r, "event "):
		return "invalid_event"
	}
	return "other"
}

// nodeCollector reads the node's state at each scrape.
type nodeCollector metrics

var (
	descEvents       = prometheus.NewDesc("vigil_events_total", "Events in the log, by kind (read models).", []string{"kind"}, nil)
	descRedacted     = prometheus.NewDesc("vigil_redacted_events_total", "Events from which the ingest service removed secrets (read models).", nil, nil)
	descFindings     = prometheus.NewDesc("vigil_redaction_findings_total", "Secrets the ingest service removed, by redaction rule (read models).", []string{"rule"}, nil)
	descRequested    = prometheus.NewDesc("vigil_gate_requests_total", "Actions that waited for a person (read models).", nil, nil)
	descDecisions    = prometheus.NewDesc("vigil_gate_decisions_total", "Gate decisions, by outcome and by whom (read models).", []string{"outcome", "by"}, nil)
	descPending      = prometheus.NewDesc("vigil_pending_approvals", "Actions waiting for a person now.", nil, nil)
	descDLQ          = prometheus.NewDesc("vigil_dlq_records", "Records in VIGIL_DLQ.", nil, nil)
	descLastSeq      = prometheus.NewDesc("vigil_log_last_seq", "Last sequence of VIGIL_LOG.", nil, nil)
	descDriverLag    = prometheus.NewDesc("vigil_driver_lag_records", "Log records stored but not yet checkpointed by the processors' driver.", nil, nil)
	descReadModelLag = prometheus.NewDesc("vigil_read_models_lag_records", "Log records stored but not yet in the read models.", nil, nil)
	descHealthy      = prometheus.NewDesc("vigil_healthy", "1 while the node serves, 0 once it failed.", nil, nil)
)

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEvents, descRedacted, descFindings, descRequested, descDecisions, descPending,
		descDLQ, descLastSeq, descDriverLag, descReadModelLag, descHealthy} {
		ch <- d
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	healthy := 1.0
	if s.cfg.Healthy() != nil {
		healthy = 0
	}
	ch <- prometheus.MustNewConstMetric(descHealthy, prometheus.GaugeValue, healthy)
	if rm := s.cfg.Reads; rm != nil {
		if st, err := rm.Stats(""); err == nil {
			for k, n := range st.ByKind {
				if events.Kind(k).IsKnown() {
					ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(n), k)
				}
			}
			ch <- prometheus.MustNewConstMetric(descRedacted, prometheus.CounterValue, float64(st.Redacted))
			for rule, n := range st.Findings {
				ch <- prometheus.MustNewConstMetric(descFindings, prometheus.CounterValue, float64(n), rule)
			}
			ch <- prometheus.MustNewConstMetric(descRequested, prometheus.CounterValue, float64(st.Requested))
			for k, n := range st.Decided {
				outcome, by, _ := strings.Cut(k, "/")
				ch <- prometheus.MustNewConstMetric(descDecisions, prometheus.CounterValue, float64(n), outcome, byLabel(events.DecidedBy(by)))
			}
		}
		if ps, err := rm.Pending(); err == nil {
			ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(len(ps)))
		}
	}
	if s.cfg.JetStream == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
	defer cancel()
	if st, err := s.cfg.JetStream.Stream(ctx, events.StreamDLQ); err == nil {
		if info, err := st.Info(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(descDLQ, prometheus.GaugeValue, float64(info.State.Msgs))
		}
	}
	st, err := s.cfg.JetStream.Stream(ctx, events.StreamLog)
	if err != nil {
		return
	}
	info, err := st.Info(ctx)
	if err != nil {
		return
	}
	last := info.State.LastSeq
	ch <- prometheus.MustNewConstMetric(descLastSeq, prometheus.GaugeValue, float64(last))
	lag := func(pos uint64) float64 {
		if pos >= last {
			return 0
		}
		return float64(last - pos)
	}
	if s.cfg.Checkpointed != nil {
		ch <- prometheus.MustNewConstMetric(descDriverLag, prometheus.GaugeValue, lag(s.cfg.Checkpointed()))
	}
	if s.cfg.Reads != nil {
		ch <- prometheus.MustNewConstMetric(descReadModelLag, prometheus.GaugeValue, lag(s.cfg.Reads.Status().Position))
	}
}

// RegisterCollector adds c's metrics to GET /metrics (the node's
// notifier, say, which runs apart from the API).
func (s *Server) RegisterCollector(c prometheus.Collector) error {
	if err := s.metrics.reg.Register(c); err != nil {
		return fmt.Errorf("httpapi: metrics: %w", err)
	}
	return nil
}
