package node

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
)

// A fleet's log must say what an operator must act on, once, and not
// drown it in what is normal. Two sources did:
//
//   - Every node publishes every derived output, so two nodes often
//     publish the same id at the same moment and JetStream answers the
//     later one "duplicate message id is in process"; the publisher
//     retries and the output is stored once. ~2,500 warnings a run, none
//     of them anything to do.
//   - nats-server retries the route to a dead peer every second and logs
//     each failure at error level.
//
// quietHandler wraps the node's handler: the first duplicate-in-process
// retry is logged once as what it is, later ones are counted and summed
// up at most every dupSummaryEvery; the first failure of a route is logged
// with what to do, then again every routeRepeatEvery while it lasts, and
// its recovery once. Everything else passes through unchanged.
type quietHandler struct {
	inner slog.Handler
	st    *quietState
}

const (
	dupSummaryEvery  = 10 * time.Minute
	routeRepeatEvery = 5 * time.Minute
)

type quietState struct {
	mu  sync.Mutex
	now func() time.Time
	// duplicate-in-process retries: logged once, then counted.
	dupSeen    bool
	dupCount   int
	dupSummary time.Time
	// routes down, by address.
	routes map[string]*routeDown
}

type routeDown struct {
	since, logged time.Time
	attempts      int
	lastErr       string
}

func newQuietHandler(inner slog.Handler, now func() time.Time) *quietHandler {
	if now == nil {
		now = time.Now
	}
	return &quietHandler{inner: inner, st: &quietState{now: now, routes: map[string]*routeDown{}}}
}

// Enabled implements slog.Handler.
func (h *quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

// WithAttrs implements slog.Handler.
func (h *quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &quietHandler{inner: h.inner.WithAttrs(as), st: h.st}
}

// WithGroup implements slog.Handler.
func (h *quietHandler) WithGroup(name string) slog.Handler {
	return &quietHandler{inner: h.inner.WithGroup(name), st: h.st}
}

// The route messages' expressions are compiled on first use: compiled at
// initialisation they cost every command of the vigil binary its start-up
// (`vigil hook` included), though only a fleet node's log reads them.
var (
	routeErrRE   = lazyRegexp(`^Error trying to connect to route(?: \(attempt (\d+)\))?: (.*)$`)
	routeAddrRE  = lazyRegexp(`dial tcp ([^ ]+?): `)
	routeUpRE    = lazyRegexp(`^([^ ]+) - rid:\d+ - Route connection created`)
	dupInProcess = "duplicate message id is in process"
)

// lazyRegexp returns expr, compiled (as regexp.MustCompile) on first use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Handle implements slog.Handler.
func (h *quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasSuffix(r.Message, "not acknowledged yet; retrying") && strings.Contains(attrString(r, "err"), dupInProcess) {
		return h.duplicate(ctx, r)
	}
	if m := routeErrRE().FindStringSubmatch(r.Message); m != nil {
		return h.routeFailed(ctx, r, m[2])
	}
	if m := routeUpRE().FindStringSubmatch(r.Message); m != nil {
		h.routeUp(ctx, r, m[1])
	}
	return h.inner.Handle(ctx, r)
}

func (h *quietHandler) duplicate(ctx context.Context, r slog.Record) error {
	st := h.st
	st.mu.Lock()
	now := st.now()
	first := !st.dupSeen
	st.dupSeen = true
	st.dupCount++
	var n int
	if !first && now.Sub(st.dupSummary) >= dupSummaryEvery {
		n, st.dupCount = st.dupCount, 0
	}
	if first || n > 0 {
		st.dupSummary = now
	}
	if first {
		st.dupCount = 0
	}
	st.mu.Unlock()
	switch {
	case first:
		out := slog.NewRecord(now, slog.LevelInfo, "another node published the same output at the same moment; it is stored once "+
			"(normal in a fleet, nothing to do; later ones are counted, summed up every "+dupSummaryEvery.String()+")", r.PC)
		out.AddAttrs(slog.String("id", attrString(r, "id")))
		return h.inner.Handle(ctx, out)
	case n > 0:
		out := slog.NewRecord(now, slog.LevelInfo, fmt.Sprintf("%d outputs met another node's identical publish in flight since the last summary; each is stored once (nothing to do)", n), r.PC)
		return h.inner.Handle(ctx, out)
	}
	return nil
}

func (h *quietHandler) routeFailed(ctx context.Context, r slog.Record, errText string) error {
	addr := errText
	if m := routeAddrRE().FindStringSubmatch(errText); m != nil {
		addr = m[1]
	}
	st := h.st
	st.mu.Lock()
	now := st.now()
	d, ok := st.routes[addr]
	if !ok {
		d = &routeDown{since: now}
		st.routes[addr] = d
	}
	d.attempts++
	d.lastErr = errText
	log := !ok || now.Sub(d.logged) >= routeRepeatEvery
	if log {
		d.logged = now
	}
	attempts, since := d.attempts, d.since
	st.mu.Unlock()
	if !log {
		return nil
	}
	var msg string
	if !ok {
		msg = "cannot reach the cluster peer at " + addr + ": if that node is down, bring it back (this node retries every second " +
			"and says so again every " + routeRepeatEvery.String() + " while it lasts); if it left the fleet for good, take it out of --routes"
	} else {
		msg = fmt.Sprintf("the cluster peer at %s is still unreachable after %s (%d attempts): bring it back, or take it out of --routes",
			addr, now.Sub(since).Round(time.Second), attempts)
	}
	out := slog.NewRecord(now, slog.LevelWarn, msg, r.PC)
	out.AddAttrs(slog.String("err", errText))
	return h.inner.Handle(ctx, out)
}

func (h *quietHandler) routeUp(ctx context.Context, r slog.Record, addr string) {
	st := h.st
	st.mu.Lock()
	d, ok := st.routes[addr]
	delete(st.routes, addr)
	now := st.now()
	st.mu.Unlock()
	if !ok {
		return
	}
	out := slog.NewRecord(now, slog.LevelInfo, fmt.Sprintf("the cluster peer at %s is reachable again, after %s (%d failed attempts)",
		addr, now.Sub(d.since).Round(time.Second), d.attempts), r.PC)
	h.inner.Handle(ctx, out)
}

// attrString is the string value of the record's attribute key ("" when
// absent).
func attrString(r slog.Record, key string) string {
	v := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}
