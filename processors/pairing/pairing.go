// Package pairing is the fold behind device pairing (Hermes' pairing
// rules, applied to approver devices): a browser asks for a code, an
// admin approves or denies it by that code, and the browser becomes an
// approver session with a name.
//
// Every step is an event in VIGIL_LOG, on the control subjects of the
// conversation Conversation, and this fold is the only judge of what each
// event means: whether a request is accepted (one per client per
// ClientInterval, at most MaxPending open), whether an approval's code
// matches an open request, when MaxFailures failed approvals lock pairing
// out. It reads no clock: "now" is the time of the pairing event being
// folded (set by the ingest service, or by the node's own timer and HTTP
// API: pairing kinds are control kinds, which no agent credential may
// send), and time-based outcomes that open or end something (a code's
// expiry, the end of a lockout) are events the pairing timer appends
// (internal/pairinglog). Log time only ever makes the fold stricter: a
// code past its TTL no longer matches, even before its expiry event.
//
// Codes and the browser's secret are never in the log: requests and
// attempts carry keyed hashes (HashCode, HashSecret, HashClient) under a
// key kept in the node's data directory, so the log's 40-bit code hashes
// cannot be brute-forced offline from the log alone.
//
// The fold depends only on pairing events of Conversation sent with an
// admin origin, so a reader that folds just that conversation's log
// subject (internal/pairinglog) reaches the same state as the processor
// in the node's pipeline.
package pairing

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// Name is the processor's name.
const Name = "pairing"

// Conversation is the conversation every pairing event belongs to: they
// are sent on events.IngestControlSubject(Conversation) and stored on
// events.LogSubject(Conversation).
const Conversation = "vigil-pairing"

// PlatformWeb is the platform of a browser paired over the HTTP API.
const PlatformWeb = "web"

// The pairing rules.
const (
	// CodeLen is the length of a pairing code.
	CodeLen = 8
	// CodeTTL is how long a code may be approved after it was requested.
	CodeTTL = time.Hour
	// ClientInterval is how long a client waits between two requests.
	ClientInterval = 10 * time.Minute
	// MaxPending is how many codes may be open at once.
	MaxPending = 3
	// MaxFailures failed approvals (or denials) within LockoutFor lock
	// pairing out.
	MaxFailures = 5
	// LockoutFor is how long a lockout lasts, and the window in which
	// failures are counted.
	LockoutFor = time.Hour
	// MaxFinished is how many finished requests (denied, expired,
	// revoked, refused) the fold keeps for listings; older ones are
	// forgotten, oldest first.
	MaxFinished = 64
)

// States of a request.
const (
	StatePending  = "pending"
	StateApproved = "approved"
	StateDenied   = "denied"
	StateExpired  = "expired"
	StateRevoked  = "revoked"
	StateRefused  = "refused"
)

// Results of folding one pairing event (Outcome.Result).
const (
	// ResultAccepted: a request is pending, its code open.
	ResultAccepted = "accepted"
	// ResultRefused: a request broke a limit (Outcome.Reason says which).
	ResultRefused = "refused"
	// ResultApproved and ResultDenied: an attempt's code matched an open
	// request, which is now approved or denied.
	ResultApproved = "approved"
	ResultDenied   = "denied"
	// ResultFailed: an attempt's code matched no open request.
	ResultFailed = "failed"
	// ResultLocked: an attempt failed and locked pairing out, or pairing
	// was already locked out and the attempt was not even looked at.
	ResultLocked = "locked"
	// ResultExpired, ResultRevoked, ResultUnlocked: the timer's and the
	// admin's events took effect (a lockout ends with a pairing.expired
	// event whose user is UnlockID).
	ResultExpired  = "expired"
	ResultRevoked  = "revoked"
	ResultUnlocked = "unlocked"
	// ResultIgnored: the event changed nothing (an expiry of a request
	// already decided, an event of another origin or conversation …).
	ResultIgnored = "ignored"
)

// Reasons a request is refused.
const (
	ReasonLocked      = "locked"
	ReasonRateLimited = "rate-limited"
	ReasonTooMany     = "too-many-pending"
	ReasonDuplicate   = "duplicate"
)

// Request is one pairing request as the fold knows it.
type Request struct {
	ID       string `msgpack:"id" json:"id"`
	Platform string `msgpack:"platform" json:"platform"`
	State    string `msgpack:"state" json:"state"`
	// Name is the approved device's name.
	Name string `msgpack:"name,omitempty" json:"name,omitempty"`
	// CodeHash, ClaimHash and Client are keyed hashes (never shown by
	// listings meant for people: see Public).
	CodeHash  string `msgpack:"code_hash,omitempty" json:"-"`
	ClaimHash string `msgpack:"claim_hash,omitempty" json:"-"`
	Client    string `msgpack:"client,omitempty" json:"-"`
	// Reason says why a request was refused, expired or revoked.
	Reason       string    `msgpack:"reason,omitempty" json:"reason,omitempty"`
	By           string    `msgpack:"by,omitempty" json:"by,omitempty"`
	RequestedSeq uint64    `msgpack:"requested_seq" json:"requested_seq"`
	RequestedAt  time.Time `msgpack:"requested_at" json:"requested_at"`
	// ExpiresAt is when the code stops matching.
	ExpiresAt  time.Time `msgpack:"expires_at" json:"expires_at"`
	DecidedSeq uint64    `msgpack:"decided_seq,omitempty" json:"decided_seq,omitempty"`
	DecidedAt  time.Time `msgpack:"decided_at,omitzero" json:"decided_at,omitzero"`
}

// Open reports whether r's code may still be approved at log time now.
func (r *Request) Open(now time.Time) bool {
	return r.State == StatePending && now.Before(r.ExpiresAt)
}

// Outcome is what folding one pairing event did.
type Outcome struct {
	Seq    uint64      `json:"seq"`
	Kind   events.Kind `json:"kind"`
	Result string      `json:"result"`
	// Request is the request the event concerned, if any.
	Request string `json:"request,omitempty"`
	Name    string `json:"name,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Failures is the number of failed attempts counted towards a
	// lockout after the event.
	Failures int `json:"failures,omitempty"`
}

// Lockout is the lockout state.
type Lockout struct {
	Locked bool `msgpack:"locked" json:"locked"`
	// Seq and At are where the lockout began; Until when the timer ends it.
	Seq   uint64    `msgpack:"seq,omitempty" json:"seq,omitempty"`
	At    time.Time `msgpack:"at,omitzero" json:"at,omitzero"`
	Until time.Time `msgpack:"until,omitzero" json:"until,omitzero"`
	// Failures are the log times of the failed attempts still counted.
	Failures []time.Time `msgpack:"failures,omitempty" json:"-"`
}

// Fold is the pairing fold. The zero value is not usable: use New.
type Fold struct {
	requests map[string]*Request
	// byCode maps the code hash of each pending request to its id.
	byCode map[string]string
	// lastByClient is the log time of each client's last accepted request.
	lastByClient map[string]time.Time
	// finished lists the ids of finished requests, oldest first.
	finished []string
	lock     Lockout
	clock    time.Time
	seq      uint64
}

// New returns an empty fold.
func New() *Fold {
	return &Fold{requests: map[string]*Request{}, byCode: map[string]string{}, lastByClient: map[string]time.Time{}}
}

// Name returns "pairing".
func (f *Fold) Name() string { return Name }

// Relevant reports whether rec is an event the fold judges: a pairing
// kind, in Conversation, sent with an admin credential.
func Relevant(ev *events.Event) bool {
	return IsPairingKind(ev.Kind) && ev.Conversation == Conversation && ev.Origin == events.OriginAdmin
}

// IsPairingKind reports whether k is one of the pairing.* kinds.
func IsPairingKind(k events.Kind) bool {
	return strings.HasPrefix(string(k), "pairing.") && k.IsControl()
}

// Step folds rec (see processors.Processor). Its outputs are alerts that
// operators should see: a device paired, pairing locked out, a pairing
// event sent where the fold does not look for it.
func (f *Fold) Step(rec events.Record) ([]processors.Output, error) {
	ev := &rec.Event
	if !IsPairingKind(ev.Kind) {
		return nil, nil
	}
	if !Relevant(ev) {
		return []processors.Output{alert(&rec, events.SeverityMedium, fmt.Sprintf(
			"pairing event %q (%s) ignored: pairing events count only in conversation %q with an admin credential (this one: conversation %q, origin %q)",
			ev.ID, ev.Kind, Conversation, ev.Conversation, ev.Origin))}, nil
	}
	o := f.Apply(&rec)
	switch o.Result {
	case ResultApproved:
		return []processors.Output{alert(&rec, events.SeverityMedium, fmt.Sprintf("pairing: device %q (request %s) is now an approver (by %s)", o.Name, o.Request, by(ev)))}, nil
	case ResultLocked:
		if f.lock.Seq == rec.Seq {
			return []processors.Output{alert(&rec, events.SeverityHigh, fmt.Sprintf("pairing locked out until %s after %d failed approvals", f.lock.Until.UTC().Format(time.RFC3339), MaxFailures))}, nil
		}
	}
	return nil, nil
}

func alert(rec *events.Record, severity events.Severity, reason string) processors.Output {
	return processors.NewOutput(Name, rec, 0, events.SubjectAlert, events.KindAlert, events.Alert{
		Severity: severity, Reason: reason, EventID: rec.Event.ID, LogSeq: rec.Seq,
	})
}

func by(ev *events.Event) string {
	p, _ := events.DataAs[events.Pairing](ev)
	if p.By != "" {
		return p.By
	}
	if ev.Agent != "" {
		return ev.Agent
	}
	return "admin"
}

// Apply folds one pairing event and says what it did. Records that are not
// Relevant are ignored. Records must come in increasing Seq order.
func (f *Fold) Apply(rec *events.Record) Outcome {
	ev := &rec.Event
	o := Outcome{Seq: rec.Seq, Kind: ev.Kind, Result: ResultIgnored}
	if !Relevant(ev) || rec.Seq <= f.seq && f.seq != 0 {
		return o
	}
	f.seq = rec.Seq
	if t := ev.Time.UTC(); t.After(f.clock) {
		f.clock = t
	}
	now := f.clock
	f.forgetFailures(now)
	p, err := events.DataAs[events.Pairing](ev)
	if err != nil {
		o.Reason = "data does not decode"
		return o
	}
	switch ev.Kind {
	case events.KindPairingRequested:
		return f.request(rec, p, now, o)
	case events.KindPairingApproved, events.KindPairingDenied:
		return f.attempt(rec, p, now, o)
	case events.KindPairingExpired:
		if f.lock.Locked && p.User == UnlockID(f.lock.Seq) {
			f.lock = Lockout{}
			o.Result = ResultUnlocked
			break
		}
		r := f.requests[p.User]
		o.Request = p.User
		if r == nil || r.State != StatePending {
			return o
		}
		f.finish(r, StateExpired, rec.Seq, now, p.Reason, "")
		o.Result = ResultExpired
	case events.KindPairingRevoked:
		r := f.requests[p.User]
		o.Request = p.User
		if r == nil || (r.State != StatePending && r.State != StateApproved) {
			return o
		}
		o.Name = r.Name
		f.finish(r, StateRevoked, rec.Seq, now, p.Reason, p.By)
		o.Result = ResultRevoked
	}
	o.Failures = len(f.lock.Failures)
	return o
}

func (f *Fold) request(rec *events.Record, p events.Pairing, now time.Time, o Outcome) Outcome {
	o.Request = p.User
	if _, dup := f.requests[p.User]; dup {
		o.Result, o.Reason = ResultRefused, ReasonDuplicate
		return o
	}
	r := &Request{
		ID: p.User, Platform: p.Platform, CodeHash: p.CodeHash, ClaimHash: p.ClaimHash, Client: p.Client,
		By: p.By, RequestedSeq: rec.Seq, RequestedAt: now, ExpiresAt: now.Add(CodeTTL),
	}
	reason := ""
	switch last, seen := f.lastByClient[p.Client]; {
	case f.lock.Locked:
		reason = ReasonLocked
	case p.CodeHash == "" || p.ClaimHash == "":
		reason = "no code or claim hash"
	case seen && now.Before(last.Add(ClientInterval)):
		reason = ReasonRateLimited
	case f.openCount(now) >= MaxPending:
		reason = ReasonTooMany
	case f.byCode[p.CodeHash] != "":
		// Two open codes with one hash: as likely as a collision of
		// random 40-bit codes under one key; refuse rather than guess.
		reason = ReasonDuplicate
	}
	if reason != "" {
		r.State, r.Reason, r.DecidedSeq, r.DecidedAt = StateRefused, reason, rec.Seq, now
		r.CodeHash, r.ClaimHash = "", ""
		f.requests[r.ID] = r
		f.finished = append(f.finished, r.ID)
		f.trim()
		o.Result, o.Reason = ResultRefused, reason
		return o
	}
	r.State = StatePending
	f.requests[r.ID] = r
	f.byCode[r.CodeHash] = r.ID
	f.lastByClient[p.Client] = now
	for c, t := range f.lastByClient {
		if !now.Before(t.Add(ClientInterval)) {
			delete(f.lastByClient, c)
		}
	}
	o.Result = ResultAccepted
	return o
}

// attempt folds an approval or a denial: a code typed by an admin.
func (f *Fold) attempt(rec *events.Record, p events.Pairing, now time.Time, o Outcome) Outcome {
	if f.lock.Locked {
		o.Result, o.Reason, o.Failures = ResultLocked, ReasonLocked, len(f.lock.Failures)
		return o
	}
	id := f.byCode[p.CodeHash]
	r := f.requests[id]
	if p.CodeHash == "" || r == nil || !r.Open(now) || (p.Platform != "" && p.Platform != r.Platform) {
		f.lock.Failures = append(f.lock.Failures, now)
		o.Failures = len(f.lock.Failures)
		if len(f.lock.Failures) >= MaxFailures {
			f.lock.Locked, f.lock.Seq, f.lock.At, f.lock.Until = true, rec.Seq, now, now.Add(LockoutFor)
			o.Result, o.Reason = ResultLocked, fmt.Sprintf("%d failed attempts within %s", len(f.lock.Failures), LockoutFor)
			return o
		}
		o.Result, o.Reason = ResultFailed, "no open pairing request has this code"
		return o
	}
	o.Request = r.ID
	if rec.Event.Kind == events.KindPairingApproved {
		name := p.Name
		if !ValidName(name) {
			name = DefaultName(r.ID)
		}
		delete(f.byCode, r.CodeHash)
		r.State, r.Name, r.By, r.DecidedSeq, r.DecidedAt = StateApproved, name, p.By, rec.Seq, now
		r.CodeHash = ""
		o.Result, o.Name = ResultApproved, name
	} else {
		f.finish(r, StateDenied, rec.Seq, now, p.Reason, p.By)
		o.Result = ResultDenied
	}
	o.Failures = len(f.lock.Failures)
	return o
}

// finish ends r in state.
func (f *Fold) finish(r *Request, state string, seq uint64, now time.Time, reason, by string) {
	if r.CodeHash != "" && f.byCode[r.CodeHash] == r.ID {
		delete(f.byCode, r.CodeHash)
	}
	// The claim hash stays: the browser still proves who it is to learn
	// how its request ended.
	r.State, r.DecidedSeq, r.DecidedAt, r.CodeHash = state, seq, now, ""
	if reason != "" {
		r.Reason = reason
	}
	if by != "" {
		r.By = by
	}
	f.finished = append(f.finished, r.ID)
	f.trim()
}

// trim forgets the oldest finished requests beyond MaxFinished.
func (f *Fold) trim() {
	for len(f.finished) > MaxFinished {
		delete(f.requests, f.finished[0])
		f.finished = f.finished[1:]
	}
}

// forgetFailures drops failures older than LockoutFor (unless locked: a
// lockout ends only with the timer's unlock event).
func (f *Fold) forgetFailures(now time.Time) {
	if f.lock.Locked {
		return
	}
	i := 0
	for i < len(f.lock.Failures) && !now.Before(f.lock.Failures[i].Add(LockoutFor)) {
		i++
	}
	f.lock.Failures = f.lock.Failures[i:]
}

func (f *Fold) openCount(now time.Time) int {
	n := 0
	for _, id := range f.byCode {
		if f.requests[id].Open(now) {
			n++
		}
	}
	return n
}

// WouldRefuse says why a request from client (its HashClient) at now
// would be refused by the limits as they stand, or "" when it would not
// (a duplicate id aside). The HTTP API asks before it appends, so that
// requests past the limits cost the log nothing; the fold still judges
// what is appended. now is never taken earlier than the fold's log time.
func (f *Fold) WouldRefuse(client string, now time.Time) string {
	if now.Before(f.clock) {
		now = f.clock
	}
	last, seen := f.lastByClient[client]
	switch {
	case f.lock.Locked:
		return ReasonLocked
	case seen && now.Before(last.Add(ClientInterval)):
		return ReasonRateLimited
	case f.openCount(now) >= MaxPending:
		return ReasonTooMany
	}
	return ""
}

// Now is the fold's log time: the latest pairing event time folded.
func (f *Fold) Now() time.Time { return f.clock }

// Seq is the log sequence of the last pairing event folded.
func (f *Fold) Seq() uint64 { return f.seq }

// Lock returns the lockout state.
func (f *Fold) Lock() Lockout {
	l := f.lock
	l.Failures = slices.Clone(l.Failures)
	return l
}

// Get returns a copy of request id.
func (f *Fold) Get(id string) (Request, bool) {
	r, ok := f.requests[id]
	if !ok {
		return Request{}, false
	}
	return *r, true
}

// Requests lists every request the fold keeps, by request sequence.
func (f *Fold) Requests() []Request {
	out := make([]Request, 0, len(f.requests))
	for _, r := range f.requests {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Request) int {
		switch {
		case a.RequestedSeq < b.RequestedSeq:
			return -1
		case a.RequestedSeq > b.RequestedSeq:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Pending lists the pending requests (open or past their TTL but not yet
// expired by the timer), by request sequence.
func (f *Fold) Pending() []Request {
	var out []Request
	for _, r := range f.Requests() {
		if r.State == StatePending {
			out = append(out, r)
		}
	}
	return out
}

// FindDevice returns the approved request with id or name.
func (f *Fold) FindDevice(idOrName string) (Request, bool) {
	for _, r := range f.Requests() {
		if r.State == StateApproved && (r.ID == idOrName || r.Name == idOrName) {
			return r, true
		}
	}
	return Request{}, false
}

// UnlockID is the user field of the pairing.expired event that ends the
// lockout that began at seq (the lockout expires like a code does).
func UnlockID(seq uint64) string { return fmt.Sprintf("lockout-%d", seq) }

// DefaultName is the name of a device approved with no (valid) name.
func DefaultName(requestID string) string {
	id := strings.TrimPrefix(requestID, "web-")
	if len(id) > 8 {
		id = id[:8]
	}
	return "device-" + id
}

// MaxNameLen bounds a device's name, in characters.
const MaxNameLen = 64

// ValidName reports whether s may name a device: 1 to MaxNameLen
// printable characters.
func ValidName(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxNameLen {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

var _ processors.Processor = (*Fold)(nil)
