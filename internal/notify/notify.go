// Package notify announces new pending actions to webhooks: each
// gate.requested in VIGIL_DERIVED becomes a JSON POST, signed with
// HMAC-SHA256, to every webhook of the config in force (the config's
// notify section, events.Notify) whose levels include the action's.
//
// # What a receiver shows
//
// The body quotes the stored action's whole command (read from the log at
// the request's seq), not the gate's summary, and every field the agent
// wrote through internal/display, clipped head and tail. Its text is
// written in the webhook's format (events.Webhook.Format: Slack mrkdwn,
// Markdown or plain text), the level first, so that no text of the
// agent's can close a code span or block, or make a link, mention,
// heading, emphasis or line of its own in the receiver.
//
// # What it does not do
//
// It never stands between an action and its decision: it is a separate
// consumer of VIGIL_DERIVED (a durable pull consumer that the nodes of a
// fleet share, so each request is announced by one node), it reads the
// config from the read models, and it holds no lock the gate needs. A
// webhook that hangs or fails delays only its own deliveries, which are
// bounded (Options.AttemptTimeout, Attempts, MaxInFlight) and counted in
// the metrics. Delivery is at most once per attempt series: the request
// is acknowledged when it is taken, so a node that dies mid-delivery
// loses that notification (the pending queue and the live stream remain
// the source of truth).
//
// # Signature
//
// Each POST carries Vigil-Timestamp (Unix seconds) and Vigil-Signature:
// "v1=" and the hex HMAC-SHA256, keyed with the webhook's secret, of the
// timestamp, a dot, and the body. Verify checks one; a receiver should
// also refuse timestamps older than a few minutes (replays).
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
)

// Headers of a notification.
const (
	HeaderTimestamp = "Vigil-Timestamp"
	HeaderSignature = "Vigil-Signature"
	HeaderDelivery  = "Vigil-Delivery"
	HeaderEvent     = "Vigil-Event"
)

// DefaultDurable is the consumer the nodes share.
const DefaultDurable = "vigil-notify"

// maxAppliedWait bounds a request's wait for Options.Applied; past it the
// request is announced under the config the read models hold.
const maxAppliedWait = 5 * time.Second

// stalledAppliedWait bounds the wait while the read models are stalled.
const stalledAppliedWait = 100 * time.Millisecond

// ErrBadSignature is returned by Verify for a notification that is not
// signed with the secret, or is too old.
var ErrBadSignature = errors.New("notify: bad signature")

// Options configure a Notifier. Zero fields take the defaults.
type Options struct {
	// JetStream reads VIGIL_DERIVED. Required.
	JetStream jetstream.JetStream
	// Webhooks returns the webhooks of the config in force for a
	// conversation. Required.
	Webhooks func(conversation string) ([]events.Webhook, error)
	// Decided reports whether an action is already decided (a request
	// met late, after a restart); nil announces every request.
	Decided func(actionID string) bool
	// Applied waits until what Webhooks and Decided read holds the log
	// record at seq (the action a request is about, so the config in
	// force at it), bounded by ctx, and reports whether it does. A
	// request's output is stored before the read models apply its batch:
	// read at once, a config event just before the action may not be
	// there yet, and its webhooks would miss the request. Nil reads at
	// once.
	Applied func(ctx context.Context, seq uint64) bool
	// DataDir is where relative url_file and secret_file paths are.
	DataDir string
	// Getenv reads url_env and secret_env; default os.Getenv.
	Getenv func(string) string
	// Client sends the POSTs; default an http.Client with no redirects.
	Client *http.Client
	// Attempts is how many times a delivery is tried; default 5.
	Attempts int
	// Backoff is the pause before the first retry, doubled for each next
	// one up to MaxBackoff; defaults 1s and 30s.
	Backoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one POST; default 10s.
	AttemptTimeout time.Duration
	// MaxInFlight bounds the deliveries under way; default 64. When
	// full, taking new requests waits (gating does not).
	MaxInFlight int
	// Durable names the consumer; default DefaultDurable.
	Durable string
	// Since is where the consumer starts when it is first created: the
	// gate requests stored from then on are announced (a node passes the
	// time its start began, so a request stored while it started is not
	// missed). Zero starts from the requests stored after the creation.
	Since time.Time
	// Now is the clock of the signatures; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

func (o *Options) ensureDefaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Client == nil {
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 10 * time.Second
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 64
	}
	if o.Durable == "" {
		o.Durable = DefaultDurable
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Notifier delivers notifications; it is a prometheus.Collector of its
// counts.
type Notifier struct {
	o     Options
	slots chan struct{}
	wg    sync.WaitGroup

	// stalled: the last wait for the read models timed out (awaitApplied;
	// handle runs on Run's goroutine only).
	stalled bool

	deliveries *prometheus.CounterVec
	failures   *prometheus.CounterVec
	inflight   prometheus.Gauge
}

// New checks o and returns a Notifier; Run starts it.
func New(o Options) (*Notifier, error) {
	if o.JetStream == nil || o.Webhooks == nil {
		return nil, errors.New("notify: Options.JetStream and Options.Webhooks are required")
	}
	o.ensureDefaults()
	return &Notifier{
		o: o, slots: make(chan struct{}, o.MaxInFlight),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_notify_deliveries_total",
			Help: "Notifications of pending actions, by webhook and result (sent, failed: given up after every attempt).",
		}, []string{"webhook", "result"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigil_notify_attempt_failures_total",
			Help: "Failed webhook attempts, by webhook and reason (timeout, connect, status_4xx, status_5xx, config).",
		}, []string{"webhook", "reason"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vigil_notify_inflight", Help: "Webhook deliveries under way (retries included).",
		}),
	}, nil
}

// Describe implements prometheus.Collector.
func (n *Notifier) Describe(ch chan<- *prometheus.Desc) {
	n.deliveries.Describe(ch)
	n.failures.Describe(ch)
	n.inflight.Describe(ch)
}

// Collect implements prometheus.Collector.
func (n *Notifier) Collect(ch chan<- prometheus.Metric) {
	n.deliveries.Collect(ch)
	n.failures.Collect(ch)
	n.inflight.Collect(ch)
}

// Run consumes gate requests until ctx ends, then waits for the
// deliveries under way (which ctx also cancels).
func (n *Notifier) Run(ctx context.Context) error {
	defer n.wg.Wait()
	cons, err := n.consumer(ctx)
	if err != nil {
		return fmt.Errorf("notify: consumer %s: %w", n.o.Durable, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("notify: consume: %w", err)
	}
	go func() {
		<-ctx.Done()
		it.Stop()
	}()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("notify: next: %w", err)
		}
		m.Ack()
		n.handle(ctx, m.Data())
	}
}

// consumer returns the durable consumer the nodes share, creating it on
// the first start: from Options.Since, so a request stored while the node
// was starting, before this call, is announced too. An existing one is
// used as it is (its position is what was announced already; nats-server
// refuses to move a consumer's start).
func (n *Notifier) consumer(ctx context.Context) (jetstream.Consumer, error) {
	js := n.o.JetStream
	c, err := js.Consumer(ctx, events.StreamDerived, n.o.Durable)
	if err == nil || !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return c, err
	}
	cfg := jetstream.ConsumerConfig{
		Durable: n.o.Durable, FilterSubject: events.GatePrefix + ">",
		DeliverPolicy: jetstream.DeliverNewPolicy, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, MaxAckPending: 1024,
		Description: "vigil: announces new pending actions to the config's webhooks",
	}
	if !n.o.Since.IsZero() {
		since := n.o.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	c, err = js.CreateConsumer(ctx, events.StreamDerived, cfg)
	if errors.Is(err, jetstream.ErrConsumerExists) {
		return js.Consumer(ctx, events.StreamDerived, n.o.Durable) // another node made it first
	}
	return c, err
}

// awaitApplied waits for Options.Applied to hold req's action: up to
// maxAppliedWait, or stalledAppliedWait while the last wait timed out, so
// read models that stopped (rebuilding, failed) cost each request that
// much, not a flood of requests 5 s each. It warns once a stall begins.
func (n *Notifier) awaitApplied(ctx context.Context, req events.GateRequested) {
	bound := maxAppliedWait
	if n.stalled {
		bound = stalledAppliedWait
	}
	actx, cancel := context.WithTimeout(ctx, bound)
	ok := n.o.Applied(actx, req.LogSeq)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if !ok && !n.stalled {
		n.o.Logger.Warn("notify: the read models do not hold the action yet; announcing it and the next ones under the config they hold",
			"action", req.ActionID, "log_seq", req.LogSeq)
	}
	n.stalled = !ok
}

// handle announces one VIGIL_DERIVED record if it is a gate request.
func (n *Notifier) handle(ctx context.Context, data []byte) {
	if k, ok := events.DerivedKind(data); ok && k != events.KindGateRequested {
		return // known without decoding it
	}
	d, err := events.DecodeDerived(data)
	if err != nil || d.Kind != events.KindGateRequested {
		return
	}
	req, err := events.DerivedDataAs[events.GateRequested](&d)
	if err != nil {
		return
	}
	if n.o.Applied != nil {
		n.awaitApplied(ctx, req)
	}
	if n.o.Decided != nil && n.o.Decided(req.ActionID) {
		return
	}
	hooks, err := n.o.Webhooks(d.Conversation)
	if err != nil {
		n.o.Logger.Warn("notify: no config to announce an action with", "action", req.ActionID, "err", err)
		return
	}
	var (
		bodies = map[string][]byte{} // by format
		whole  string
		sent   events.Origin
		read   bool
	)
	for i, h := range hooks {
		if !h.Wants(req.Level) {
			continue
		}
		if !read {
			whole, sent = n.storedAction(ctx, req)
			read = true
		}
		body := bodies[h.Format]
		if body == nil {
			if body, err = json.Marshal(payloadOf(d, req, whole, sent, h.Format)); err != nil {
				return
			}
			bodies[h.Format] = body
		}
		select {
		case n.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n.wg.Add(1)
		n.inflight.Inc()
		go func(h events.Webhook, label string) {
			defer func() { <-n.slots; n.inflight.Dec(); n.wg.Done() }()
			n.deliver(ctx, h, label, d.ID, body)
		}(h, h.Label(i))
	}
}

// storedAction reads the requested action from the log: what it runs
// (the gate's summary in the request is cut at its end) and the credential
// it was sent with (agent for an action stored without one). When the log
// cannot be read or holds another action there: the summary, and "".
func (n *Notifier) storedAction(ctx context.Context, r events.GateRequested) (string, events.Origin) {
	ctx, cancel := context.WithTimeout(ctx, n.o.AttemptTimeout)
	defer cancel()
	st, err := n.o.JetStream.Stream(ctx, events.StreamLog)
	if err != nil {
		return r.Command, ""
	}
	m, err := st.GetMsg(ctx, r.LogSeq)
	if err != nil {
		return r.Command, ""
	}
	ev, err := events.DecodeMsgpack(m.Data)
	if err != nil || ev.ID != r.ActionID || ev.Kind != events.KindAction {
		return r.Command, ""
	}
	sent := ev.Origin
	if sent == "" {
		sent = events.OriginAgent
	}
	if c := display.Command(ev.Tool(), ev.Args()); c != "" {
		return c, sent
	}
	return r.Command, sent
}

// Payload is the JSON body of a notification.
type Payload struct {
	// Type is "gate.requested".
	Type string `json:"type"`
	// Text is a summary in the webhook's format (events.Webhook.Format):
	// Slack mrkdwn, Markdown or plain text.
	Text string `json:"text"`
	// Content is Text again for a Markdown webhook (Discord reads
	// content), with AllowedMentions set to none (Discord pings no one
	// whatever the text holds).
	Content         string           `json:"content,omitempty"`
	AllowedMentions *AllowedMentions `json:"allowed_mentions,omitempty"`
	ActionID        string           `json:"action_id"`
	Conversation    string           `json:"conversation"`
	LogSeq          uint64           `json:"log_seq"`
	Level           events.Risk      `json:"level"`
	Reasons         []events.Reason  `json:"reasons"`
	Tool            string           `json:"tool,omitempty"`
	// Command is the whole command of the stored action (clipped at
	// maxBodyField runes, head and tail), not the gate's summary;
	// CommandBytes is its length before any clip.
	Command      string `json:"command,omitempty"`
	CommandBytes int    `json:"command_bytes,omitempty"`
	Agent        string `json:"agent,omitempty"`
	Backend      string `json:"backend,omitempty"`
	Timeout      string `json:"timeout,omitempty"`
	Digest       string `json:"digest,omitempty"`
	Time         string `json:"time,omitempty"`
	// Credential is the class of credential the stored action was sent
	// with, as the log stamped it (agent: its conversation, agent and
	// backend are its claims); absent when the log could not be read.
	Credential events.Origin `json:"credential,omitempty"`
}

// AllowedMentions is Discord's allowed_mentions: Parse lists the mention
// kinds a message may ping; empty pings none.
type AllowedMentions struct {
	Parse []string `json:"parse"`
}

// Bounds of what a notification quotes: the command in Text, each other
// field in Text, the rules named in Text, and each field of the body.
// Longer text is cut in the middle (display.Clip: head, "… N bytes not
// shown …", tail), never at its end.
const (
	maxTextCommand = 1500
	maxTextField   = 120
	maxTextRules   = 5
	maxBodyField   = 8192
)

// textBounds bound, in runes, the command and each other field a text
// quotes.
type textBounds struct{ command, field int }

var (
	defaultBounds = textBounds{command: maxTextCommand, field: maxTextField}
	// markdownBounds keep a Markdown text within the 2,000 characters
	// of a Discord message, whatever the agent sends.
	markdownBounds = textBounds{command: 1000, field: 64}
)

// payloadOf builds the body of a notification for a webhook of format
// (events.Webhook.Format); command is the action's whole command, sent the
// credential it was sent with ("": not known). Every
// field the agent wrote (command, agent, conversation, tool, backend,
// reasons) goes through display: control characters, escape sequences,
// bidi and invisible characters become visible escapes; long text keeps
// its head and tail.
func payloadOf(d events.Derived, r events.GateRequested, command string, sent events.Origin, format string) Payload {
	field := func(s string) string {
		if s == "" {
			return ""
		}
		return display.Clip(s, maxBodyField)
	}
	if command == "" {
		command = r.Command
	}
	p := Payload{Type: string(events.KindGateRequested), ActionID: field(r.ActionID), Conversation: field(d.Conversation),
		LogSeq: r.LogSeq, Tool: field(r.Tool), Command: field(command), CommandBytes: len(command),
		Agent: field(r.Agent), Backend: field(r.Backend), Timeout: field(r.Timeout), Digest: field(r.Digest), Time: field(d.Time),
		Credential: events.Origin(field(string(sent)))}
	p.Level = events.Risk(field(string(r.Level)))
	p.Reasons = make([]events.Reason, len(r.Reasons))
	for i, x := range r.Reasons {
		x.Analyzer, x.Rule, x.Detail = field(x.Analyzer), field(x.Rule), field(x.Detail)
		x.Level = events.Risk(field(string(x.Level)))
		p.Reasons[i] = x
	}
	if command == "" {
		command = r.Tool
	}
	switch format {
	case events.FormatMarkdown:
		p.Text = summaryOf(d, r, command, sent, markdownBounds).render(markdown)
		p.Content = p.Text
		p.AllowedMentions = &AllowedMentions{Parse: []string{}}
	case events.FormatText:
		p.Text = summaryOf(d, r, command, sent, defaultBounds).plain()
	default:
		p.Text = summaryOf(d, r, command, sent, defaultBounds).render(slack)
	}
	return p
}

// summary is what a notification's text says, each agent field already
// through display: the level, the rules, where the action comes from and
// the command.
type summary struct {
	level, conversation, agent, action, timeout, command string
	// sent says, in Vigil's words, which credential sent the action.
	sent  string
	rules []string
	more  int // rules not named
}

func summaryOf(d events.Derived, r events.GateRequested, command string, sent events.Origin, b textBounds) summary {
	s := summary{level: display.Field(string(r.Level), 16, false), conversation: display.Field(d.Conversation, b.field, false),
		agent: display.Field(r.Agent, b.field, false), action: display.Field(r.ActionID, b.field, false),
		command: display.Field(command, b.command, false), sent: sentWith(sent)}
	if r.Timeout != "" {
		s.timeout = display.Field(r.Timeout, 32, false)
	}
	for i, x := range r.Reasons {
		if i == maxTextRules {
			s.more = len(r.Reasons) - i
			break
		}
		s.rules = append(s.rules, display.Field(x.Analyzer+"/"+x.Rule, b.field, false))
	}
	return s
}

// sentWith names the credential that sent an action, in Vigil's words.
func sentWith(o events.Origin) string {
	switch {
	case o == "":
		return "a credential the log could not tell"
	case o.Trusted():
		return "the " + display.Field(string(o), 16, false) + " credential"
	}
	return "the agent credential (conversation and agent are its claims)"
}

// markup writes a summary in one format: strong for Vigil's own
// conclusion (the level), code for an agent field inline, block for the
// command.
type markup struct {
	strong, code, block, text func(string) string
}

// render writes the summary: the level first, then the rules, then where
// the action comes from, then the command in a block of its own.
func (s summary) render(m markup) string {
	var b strings.Builder
	b.WriteString(m.strong(s.level) + " Vigil: an action waits for approval")
	if len(s.rules) > 0 {
		codes := make([]string, len(s.rules))
		for i, r := range s.rules {
			codes[i] = m.code(r)
		}
		b.WriteString(" (" + strings.Join(codes, ", "))
		if s.more > 0 {
			fmt.Fprintf(&b, " and %d more", s.more)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; conversation %s, agent %s, action %s, sent with %s", m.code(s.conversation), m.code(s.agent), m.code(s.action), m.text(s.sent))
	if s.timeout != "" {
		fmt.Fprintf(&b, ", denied in %s unless approved", m.code(s.timeout))
	}
	b.WriteString(":\n" + m.block(s.command))
	return b.String()
}

// slack is Slack mrkdwn. Nothing the agent wrote can leave its code span:
// each agent field is in inline code, the command in a ``` block, and
// inside them a backtick is shown as ˋ (U+02CB; Slack has no escape for
// it), @ as ＠ and &, <, > as Slack's entities, so no backtick can close
// the code, and no *bold*, _italic_, ~strike~, <link|label>, <!channel>
// or @channel is read from the agent's text.
var slack = markup{
	strong: func(s string) string { return "*" + slackEscape(s) + "*" },
	code:   func(s string) string { return "`" + slackQuote(s) + "`" },
	block:  func(s string) string { return "```\n" + slackQuote(s) + "\n```" },
	text:   slackEscape,
}

// slackQuote makes s safe inside a Slack code span or block: no
// backtick, and @ shown as ＠ (U+FF20), since Mattermost, which reads
// Slack's format, takes @channel and @all as mentions.
func slackQuote(s string) string {
	return strings.NewReplacer("`", "\u02cb", "@", "\uff20").Replace(slackEscape(s))
}

// slackEscape escapes what Slack reads as markup.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// markdown is CommonMark as Discord, Teams, Matrix and GitHub read it.
// Each agent field is in an inline code span and the command in a ```
// fenced block, on one line (display shows a line feed as \n); inside
// them nothing is markup (no emphasis, link, autolink, heading, HTML or
// entity), and:
//
//   - a backtick is shown as ˋ (U+02CB), so no run of backticks can close
//     the span or the fence (Discord closes a block at the next ``` of any
//     length, and a code span has no escape);
//   - @ is shown as ＠ (U+FF20), so no @everyone, @here, @room or
//     @user mention is read (Matrix's @room rule and GitHub's mentions
//     look at the raw text, code or not).
//
// The level, Vigil's own text, is escaped with backslashes.
var markdown = markup{
	strong: func(s string) string { return "**" + markdownEscape(s) + "**" },
	code:   func(s string) string { return "`" + markdownQuote(s) + "`" },
	block:  func(s string) string { return "```\n" + markdownQuote(s) + "\n```" },
	text:   markdownEscape,
}

// markdownQuote makes s safe inside a Markdown code span or block.
func markdownQuote(s string) string {
	return strings.NewReplacer("`", "\u02cb", "@", "\uff20").Replace(s)
}

// markdownEscape backslash-escapes every ASCII punctuation character of s
// (CommonMark escapes them all) and shows @ as ＠.
func markdownEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '@':
			b.WriteRune('\uff20')
		case r < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?[\\]^_`{|}~", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plain writes the summary as text with no markup, for receivers that
// show it as it is: Vigil's line (the level first), then one line per
// field, its label first and the agent's text after it to the end of the
// line (display shows a line feed as \n), so no quote or separator the
// agent writes can end its field or start another.
func (s summary) plain() string {
	var b strings.Builder
	b.WriteString(s.level + " Vigil: an action waits for approval\n")
	rules := "-"
	if len(s.rules) > 0 {
		rules = strings.Join(s.rules, ", ")
		if s.more > 0 {
			rules += fmt.Sprintf(" and %d more", s.more)
		}
	}
	fmt.Fprintf(&b, "rules: %s\nconversation: %s\nagent: %s\naction: %s\nsent with: %s\n", rules, s.conversation, s.agent, s.action, s.sent)
	if s.timeout != "" {
		fmt.Fprintf(&b, "denied in: %s unless approved\n", s.timeout)
	}
	b.WriteString("command: " + s.command)
	return b.String()
}

// deliver POSTs body to h, retrying with backoff.
func (n *Notifier) deliver(ctx context.Context, h events.Webhook, label, id string, body []byte) {
	pause := n.o.Backoff
	for attempt := 1; ; attempt++ {
		reason := n.attempt(ctx, h, id, body)
		if reason == "" {
			n.deliveries.WithLabelValues(label, "sent").Inc()
			return
		}
		n.failures.WithLabelValues(label, reason).Inc()
		if reason == "config" || attempt >= n.o.Attempts {
			n.deliveries.WithLabelValues(label, "failed").Inc()
			n.o.Logger.Warn("notify: webhook delivery failed", "webhook", label, "delivery", id, "attempts", attempt, "reason", reason)
			return
		}
		select {
		case <-ctx.Done():
			n.deliveries.WithLabelValues(label, "failed").Inc()
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, n.o.MaxBackoff)
	}
}

// attempt makes one POST and returns "" on a 2xx, else the reason.
func (n *Notifier) attempt(ctx context.Context, h events.Webhook, id string, body []byte) string {
	target, secret, err := n.resolve(h)
	if err != nil {
		n.o.Logger.Warn("notify: webhook not usable", "webhook", h.Name, "err", err)
		return "config"
	}
	ctx, cancel := context.WithTimeout(ctx, n.o.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return "config"
	}
	ts := n.o.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "vigil-notify/1")
	req.Header.Set(HeaderEvent, string(events.KindGateRequested))
	req.Header.Set(HeaderDelivery, id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	if secret != nil {
		req.Header.Set(HeaderSignature, Sign(secret, ts, body))
	}
	resp, err := n.o.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "timeout"
		}
		return "connect"
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return ""
	case resp.StatusCode/100 == 4:
		return "status_4xx"
	}
	return "status_5xx"
}

// resolve reads a webhook's URL and secret where the node keeps them.
func (n *Notifier) resolve(h events.Webhook) (string, []byte, error) {
	target := h.URL
	switch {
	case h.URLEnv != "":
		target = strings.TrimSpace(n.o.Getenv(h.URLEnv))
		if target == "" {
			return "", nil, fmt.Errorf("url_env %s is not set on this node", h.URLEnv)
		}
	case h.URLFile != "":
		b, err := os.ReadFile(n.path(h.URLFile))
		if err != nil {
			return "", nil, fmt.Errorf("url_file: %w", err)
		}
		target = strings.TrimSpace(string(b))
	}
	if !strings.HasPrefix(target, "https://") && !strings.HasPrefix(target, "http://") {
		return "", nil, errors.New("the URL is not http or https")
	}
	var secret []byte
	switch {
	case h.SecretEnv != "":
		v := n.o.Getenv(h.SecretEnv)
		if v == "" {
			return "", nil, fmt.Errorf("secret_env %s is not set on this node", h.SecretEnv)
		}
		secret = []byte(v)
	case h.SecretFile != "":
		b, err := os.ReadFile(n.path(h.SecretFile))
		if err != nil {
			return "", nil, fmt.Errorf("secret_file: %w", err)
		}
		secret = bytes.TrimSpace(b)
		if len(secret) == 0 {
			return "", nil, errors.New("secret_file is empty")
		}
	}
	return target, secret, nil
}

func (n *Notifier) path(p string) string {
	if filepath.IsAbs(p) || n.o.DataDir == "" {
		return p
	}
	return filepath.Join(n.o.DataDir, p)
}

// Sign returns the Vigil-Signature of body sent at Unix time ts.
func Sign(secret []byte, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a notification's signature headers against body, and
// that its timestamp is within tolerance of now.
func Verify(secret []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no %s", ErrBadSignature, HeaderTimestamp)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp %d is %s from now", ErrBadSignature, ts, d)
	}
	if !hmac.Equal([]byte(h.Get(HeaderSignature)), []byte(Sign(secret, ts, body))) {
		return ErrBadSignature
	}
	return nil
}

// Serve runs Run until ctx ends, starting it again (after a pause) when
// it fails: a stream lost or a connection cut must not end the
// notifications for good.
func (n *Notifier) Serve(ctx context.Context) {
	pause := time.Second
	for {
		err := n.Run(ctx)
		if ctx.Err() != nil {
			return
		}
		n.o.Logger.Warn("notify: stopped; starting again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
}
