// Package client is Vigil's Go API for embedding and for the CLI: connect to
// a Vigil server (embedded on this host or a remote NATS cluster), append
// events and get their log sequence back, and read the log.
//
// Appending goes through the ingest service (request/reply), never straight
// to the stream: the reply arrives only once the event is stored, so a
// caller that got a Result knows the event is in the log, and a caller that
// got an error may retry with the same event ids — they are stored once.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// ServeInfoFile is the name of the file `vigil serve` writes in its data
// directory so client commands can find it.
const ServeInfoFile = transport.ServeInfoFile

// ServeInfo is the content of serve.json.
type ServeInfo struct {
	NATSURL string `json:"nats_url"`
	HTTPURL string `json:"http_url,omitempty"`
	PID     int    `json:"pid"`
	DataDir string `json:"data_dir"`
	Started string `json:"started"`
	Version string `json:"version"`
	// CredsDir is the node's credentials directory (absolute) when it is
	// not the data directory's own (`vigil serve --creds-dir`, a fleet):
	// clients given only the data directory read the role's seed there.
	CredsDir string `json:"creds_dir,omitempty"`
	// TLSCA is the CA (absolute path) the node's certificate is verified
	// against, when its listeners speak TLS (a fleet): clients given only
	// the data directory verify it with this file.
	TLSCA string `json:"tls_ca,omitempty"`
}

// DefaultDataDir is $VIGIL_DATA, else $XDG_DATA_HOME/vigil, else
// ~/.local/share/vigil.
func DefaultDataDir() string {
	if d := os.Getenv("VIGIL_DATA"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "vigil")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "vigil")
	}
	return "vigil-data"
}

// ReadServeInfo reads dir/serve.json.
func ReadServeInfo(dir string) (ServeInfo, error) {
	path := filepath.Join(dir, ServeInfoFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return ServeInfo{}, fmt.Errorf("%w: no %s (is `vigil serve --data %s` running? or pass --nats URL --creds FILE)", ErrNoServer, path, dir)
	}
	var si ServeInfo
	if err := json.Unmarshal(b, &si); err != nil {
		return ServeInfo{}, fmt.Errorf("%s is not valid JSON: %w (delete it and restart vigil serve)", path, err)
	}
	return si, nil
}

// ErrNoServer means no server could be found or reached.
var ErrNoServer = errors.New("no Vigil server")

// Options say how to reach a server.
type Options struct {
	// URL and CredsFile reach any NATS server (a fleet).
	URL       string
	CredsFile string
	// TLSCA is the CA file the server's certificate is verified against;
	// empty: the fleet CA beside CredsFile (transport.FleetCAFile) if
	// there is one, or serve.json's tls_ca. With none the connection is
	// plain (a single host on loopback); a server that requires TLS then
	// refuses it, and one whose certificate the CA did not issue is never
	// reached.
	TLSCA string
	// DataDir finds a local `vigil serve` (serve.json and the role's seed)
	// when URL is empty.
	DataDir string
	// Role picks which credentials in DataDir to use; default admin.
	Role events.Role
	// Conn reuses an existing connection (embedding); the client closes it
	// only when CloseConn is set.
	Conn      *nats.Conn
	CloseConn bool
	Name      string
	// Timeout bounds one request; default 30s.
	Timeout time.Duration
	// AttemptTimeout bounds one attempt of an append: an attempt with no
	// reply by then (sent to a node that died, or waiting on a stream
	// leader election) is sent again with the same events, whose ids make
	// the retry stored once, until Timeout. Zero means
	// DefaultAttemptTimeout; it is never longer than Timeout.
	AttemptTimeout time.Duration
	// PingInterval is how often the connection pings its server; with two
	// pings unanswered the server is taken for dead and the client moves
	// to the next URL. Zero means DefaultPingInterval. (A node whose
	// process dies closes its sockets: that is noticed at once, without
	// pings. The pings find a machine or a network that went silent.)
	PingInterval time.Duration
	// ReconnectWait is the pause before a server of the list is tried
	// again after it failed; zero means DefaultReconnectWait. The next
	// server of the list is tried at once.
	ReconnectWait time.Duration
	// ConnectTimeout bounds one connection attempt to one server of the
	// list (a machine that does not answer); zero means
	// DefaultConnectTimeout, never longer than Timeout.
	ConnectTimeout time.Duration
	// Runtime sends agent kinds on the runtime subjects
	// (events.IngestRuntimeSubject): for an agent's runtime, with the
	// runtime credential, so what it says (a conversation's sandbox
	// backend) is believed.
	Runtime bool
}

// Client talks to a Vigil server.
type Client struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	own     bool
	timeout time.Duration
	attempt time.Duration
	// runtime sends agent kinds on the runtime subjects (Options.Runtime).
	runtime bool
	// req sends append requests: nc, or a function-field fake in tests.
	req requester
}

// requester is what an append needs of the connection: one request, one
// reply. Its retries (Options.AttemptTimeout) are above it.
type requester interface {
	RequestMsgWithContext(ctx context.Context, msg *nats.Msg) (*nats.Msg, error)
}

// Connect reaches a server as o says.
func Connect(ctx context.Context, o Options) (*Client, error) {
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Name == "" {
		o.Name = "vigil-client"
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.ReconnectWait <= 0 {
		o.ReconnectWait = DefaultReconnectWait
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	c := &Client{timeout: o.Timeout, attempt: min(o.AttemptTimeout, o.Timeout), runtime: o.Runtime}
	if o.Conn != nil {
		c.nc, c.own = o.Conn, o.CloseConn
	} else {
		url, creds, ca := o.URL, o.CredsFile, o.TLSCA
		explicitCA := ca != ""
		if url == "" {
			dir := o.DataDir
			if dir == "" {
				dir = DefaultDataDir()
			}
			si, err := ReadServeInfo(dir)
			if err != nil {
				return nil, err
			}
			url = si.NATSURL
			if ca == "" {
				ca, explicitCA = si.TLSCA, si.TLSCA != ""
			}
			if creds == "" {
				role := o.Role
				if role == "" {
					role = events.RoleAdmin
				}
				creds = transport.CredsFile(dir, role)
				if si.CredsDir != "" {
					creds = transport.CredsFileIn(si.CredsDir, role)
				}
			}
		}
		// DontRandomize: the URLs are tried in the order given, so a caller
		// can prefer a node (its own, the nearest) and fall back on others.
		// A lost server is left at once for the next one in the list;
		// requests in flight to it are sent again on the new connection
		// (request, GateAndWait).
		opts := []nats.Option{nats.Name(o.Name), nats.Timeout(min(o.ConnectTimeout, o.Timeout)), nats.MaxReconnects(-1),
			nats.ReconnectWait(o.ReconnectWait), nats.DontRandomize(),
			nats.PingInterval(o.PingInterval), nats.MaxPingsOutstanding(maxPingsOutstanding)}
		if creds != "" {
			co, err := transport.CredsOption(creds)
			if err != nil {
				return nil, err
			}
			opts = append(opts, co)
			opts = append(opts, transport.InboxOptions()...)
		}
		if ca = transport.CAFor(ca, creds); ca != "" {
			to, err := transport.TLSOption(ca, transport.TLSRequired(url, explicitCA))
			if err != nil {
				return nil, err
			}
			opts = append(opts, to)
		}
		nc, err := nats.Connect(url, opts...)
		if err != nil {
			return nil, fmt.Errorf("%w at %s: %v", ErrNoServer, url, err)
		}
		c.nc, c.own = nc, true
	}
	js, err := jetstream.New(c.nc)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.js, c.req = js, c.nc
	return c, nil
}

// Close closes the connection if the client opened it.
func (c *Client) Close() {
	if c.own && c.nc != nil {
		c.nc.Close()
	}
}

// Conn returns the underlying connection.
func (c *Client) Conn() *nats.Conn { return c.nc }

// JetStream returns the JetStream context.
func (c *Client) JetStream() jetstream.JetStream { return c.js }

// Result is where an event was stored.
type Result = events.IngestResult

// ErrRefused is wrapped by RefusedError.
var ErrRefused = errors.New("refused by the ingest service")

// RefusedError is the ingest service's reason for refusing a request.
type RefusedError struct {
	Reason string
	// Index is the position in the batch of the event refused, or -1.
	Index int
}

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Append stores one event and returns its log position.
func (c *Client) Append(ctx context.Context, ev events.Event) (Result, error) {
	rs, err := c.AppendBatch(ctx, []events.Event{ev})
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// maxRequestBytes keeps batches under the server's payload limit.
const maxRequestBytes = 1 << 20

// AppendBatch stores events in order. Consecutive agent events (or
// consecutive control events) travel in one request, split to stay under
// the payload limit; a request whose events share a conversation goes to
// that conversation's subject, one that mixes them to the "_" subject,
// where each event's own conversation is used. On error, events before the
// failing request are stored; retrying the whole batch with the same ids is
// safe.
func (c *Client) AppendBatch(ctx context.Context, evs []events.Event) ([]Result, error) {
	out := make([]Result, 0, len(evs))
	var (
		group     []msgpack.RawMessage
		groupKind events.Kind // a kind that picks the group's subject family
		groupConv string
		mixed     bool
		groupSize int
		groupBase int
	)
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		conv := groupConv
		if mixed {
			conv = ""
		}
		subj := c.ingestSubject(groupKind, conv)
		rs, err := c.request(ctx, subj, group)
		if err != nil {
			var re *RefusedError
			if errors.As(err, &re) && re.Index >= 0 {
				re.Index += groupBase
			}
			return err
		}
		out = append(out, rs...)
		group, groupSize = group[:0], 0
		return nil
	}
	for i := range evs {
		k := evs[i].Kind
		b, err := evs[i].MarshalMsgpack()
		if err != nil {
			return out, err
		}
		if len(group) > 0 && (!sameFamily(k, groupKind) || groupSize+len(b) > maxRequestBytes || len(group) >= 1000) {
			if err := flush(); err != nil {
				return out, err
			}
		}
		if len(group) == 0 {
			groupKind, groupConv, mixed, groupBase = k, evs[i].Conversation, false, i
		} else if evs[i].Conversation != groupConv {
			mixed = true
		}
		group = append(group, b)
		groupSize += len(b)
	}
	return out, flush()
}

// sameFamily reports whether events of kinds a and b go to the same
// family of ingest subjects (events.IngestSubjectFor).
func sameFamily(a, b events.Kind) bool {
	return events.IngestSubjectFor(a, "") == events.IngestSubjectFor(b, "")
}

// msgpackArray is the msgpack array of the encoded values items, in one
// allocation (what msgpack.Marshal(items) writes, growing its buffer).
func msgpackArray(items []msgpack.RawMessage) []byte {
	n := 5
	for _, it := range items {
		n += len(it)
	}
	b := make([]byte, 0, n)
	switch l := len(items); {
	case l < 16:
		b = append(b, 0x90|byte(l))
	case l <= math.MaxUint16:
		b = append(b, 0xdc, byte(l>>8), byte(l))
	default:
		b = append(b, 0xdd, byte(l>>24), byte(l>>16), byte(l>>8), byte(l))
	}
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

func (c *Client) request(ctx context.Context, subj string, group []msgpack.RawMessage) ([]Result, error) {
	var body []byte
	if len(group) == 1 {
		body = group[0]
	} else {
		body = msgpackArray(group)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// A reconnection (the server died, the client moved to the next one)
	// loses the reply of an attempt in flight: the attempt is sent again
	// at once instead of at the end of its attempt timeout.
	reconnected := c.watchReconnects()
	defer c.stopWatching(reconnected)
	unanswered := 0 // attempts in a row with no reply from this server
	for attempt := 1; ; attempt++ {
		msg := &nats.Msg{Subject: subj, Data: body, Header: nats.Header{}}
		msg.Header.Set(transport.HeaderContentType, transport.ContentTypeMsgpack)
		// The first attempt ends early (as GateAndWait's does): the node
		// of the queue group that took it may have died with it.
		timeout, early := c.attempt, attempt == 1 && c.attempt > 2*earlyResend
		if early {
			timeout = earlyResend
		}
		actx, acancel := context.WithTimeout(ctx, timeout)
		if reconnected != nil {
			go func() {
				select {
				case _, ok := <-reconnected:
					if ok {
						acancel()
					}
				case <-actx.Done():
				}
			}()
		}
		resp, err := c.req.RequestMsgWithContext(actx, msg)
		acancel()
		if err == nil {
			return ParseReply(resp.Data, len(group))
		}
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !early {
			if unanswered++; unanswered >= moveAfterUnanswered {
				unanswered = 0
				c.moveOn()
			}
		}
		if ctx.Err() != nil || !(retryRequest(err) || errors.Is(err, context.Canceled)) {
			if errors.Is(err, nats.ErrNoResponders) {
				return nil, fmt.Errorf("%w: nothing answers on %s (is vigil serve running?)", ErrNoServer, subj)
			}
			return nil, fmt.Errorf("append to %s (%d attempts): %w", subj, attempt, err)
		}
		if errors.Is(err, nats.ErrNoResponders) {
			// A node restarting: do not spin on it.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// moveAfterUnanswered attempts in a row without a reply make the client
// leave its server for the next one of its list: a node that is up but
// cannot store (cut off from the others' majority, its JetStream stuck)
// answers nothing, and a stream leader election is over well before.
const moveAfterUnanswered = 2

// moveOn makes the connection leave its server for the next one of its
// list, when the client owns the connection and knows another server
// (the URLs given, and those the cluster advertises). Requests in flight
// are sent again once connected (watchReconnects). It reports whether the
// connection is moving.
func (c *Client) moveOn() bool {
	if c.own && c.nc != nil && len(c.nc.Servers()) > 1 {
		return c.nc.ForceReconnect() == nil
	}
	return false
}

// watchReconnects returns a channel that receives a value each time the
// connection is established again after a loss, or nil without a
// connection (tests); stopWatching releases it.
func (c *Client) watchReconnects() chan nats.Status {
	if c.nc == nil {
		return nil
	}
	return c.nc.StatusChanged(nats.CONNECTED)
}

func (c *Client) stopWatching(ch chan nats.Status) {
	if ch != nil {
		c.nc.RemoveStatusListener(ch)
	}
}

// Defaults of Options: a dead node is left quickly for the next one.
const (
	DefaultPingInterval   = time.Second
	DefaultReconnectWait  = 250 * time.Millisecond
	DefaultConnectTimeout = 2 * time.Second
	// maxPingsOutstanding unanswered pings make the server taken for dead.
	maxPingsOutstanding = 2
)

// DefaultAttemptTimeout is Options.AttemptTimeout's default: longer than
// an append takes on a loaded node, shorter than a stream leader election
// lasts in a fleet (BENCHMARKS.md, "Fleet: node loss").
const DefaultAttemptTimeout = 2 * time.Second

// retryRequest reports whether an append attempt that failed with err may
// be sent again (no answer, or nobody to answer yet): never after a reply.
func retryRequest(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// ParseReply decodes an ingest reply expecting n results.
func ParseReply(data []byte, n int) ([]Result, error) {
	var r events.IngestReply
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("unreadable reply from the ingest service: %w", err)
	}
	return parseReply(r, n)
}

// parseReply is ParseReply on a decoded reply.
func parseReply(r events.IngestReply, n int) ([]Result, error) {
	if r.Error != "" {
		return nil, &RefusedError{Reason: r.Error, Index: r.Index}
	}
	if len(r.Results) != n {
		return nil, fmt.Errorf("ingest replied with %d results for %d events", len(r.Results), n)
	}
	return r.Results, nil
}

// TailOptions select records to read from the log.
type TailOptions struct {
	From         uint64
	Count        int
	Conversation string
	Follow       bool
}

// Tail calls fn for each log record selected by o, in log order. Without
// Follow it returns once it has read what was there when it started.
func (c *Client) Tail(ctx context.Context, o TailOptions, fn func(events.Record) error) error {
	ro := transport.ReadOptions{Stream: events.StreamLog, From: o.From, Follow: o.Follow}
	if o.Conversation != "" {
		ro.Subjects = []string{events.LogSubject(o.Conversation)}
	}
	n := 0
	errDone := errors.New("done")
	err := transport.ReadStream(ctx, c.js, ro, func(r transport.RawRecord) error {
		ev, err := events.DecodeMsgpack(r.Data)
		if err != nil {
			return fmt.Errorf("log record %d does not decode: %w", r.Seq, err)
		}
		if err := fn(events.Record{Seq: r.Seq, Subject: r.Subject, Raw: r.Data, Event: ev}); err != nil {
			return err
		}
		n++
		if o.Count > 0 && n >= o.Count {
			return errDone
		}
		return nil
	})
	if errors.Is(err, errDone) {
		return nil
	}
	return err
}
