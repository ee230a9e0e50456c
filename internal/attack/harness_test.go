package attack

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// target is a running node under attack.
type target struct {
	*node.Node
	dir string
	url string
}

// startTarget starts a node exactly as `vigil serve` does (internal/node),
// listening on loopback TCP, in a temporary directory. It is shut down
// when the test ends. mod may change the config before start.
func startTarget(t testing.TB, mod ...func(*node.Config)) *target {
	t.Helper()
	dir := t.TempDir()
	cfg := node.Config{
		DataDir:    dir,
		NATSListen: "127.0.0.1:-1",
		Durability: natsutil.DurabilityInterval,
	}
	for _, m := range mod {
		m(&cfg)
	}
	n, err := node.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := n.Close(ctx); err != nil {
			t.Errorf("close node: %v", err)
		}
	})
	return &target{Node: n, dir: cfg.DataDir, url: n.Info().NATSURL}
}

// dial connects over TCP with a role's credentials as any NATS client
// would, with the options every Vigil tool uses (natsutil.InboxOptions).
// extra options come last, so an attack can override them (e.g. another
// inbox prefix).
func (tg *target) dial(t testing.TB, role natsutil.Role, extra ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := tg.tryDial(role, extra...)
	if err != nil {
		t.Fatalf("connect as %s: %v", role, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func (tg *target) tryDial(role natsutil.Role, extra ...nats.Option) (*nats.Conn, error) {
	co, err := natsutil.CredsOption(datadir.New(tg.dir).Creds().Seed(role))
	if err != nil {
		return nil, err
	}
	opts := append([]nats.Option{co, nats.Name("attack-" + string(role)), nats.MaxReconnects(0), nats.Timeout(5 * time.Second)},
		natsutil.InboxOptions()...)
	return nats.Connect(tg.url, append(opts, extra...)...)
}

// clientAs returns a Vigil client over TCP with a role's credentials.
func (tg *target) clientAs(t testing.TB, role natsutil.Role) *client.Client {
	t.Helper()
	c, err := client.Connect(t.Context(), client.Options{DataDir: tg.dir, Role: role, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("client as %s: %v", role, err)
	}
	t.Cleanup(c.Close)
	return c
}

// admin is a JetStream context with the admin role, to inspect the streams.
func (tg *target) admin(t testing.TB) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(tg.dial(t, natsutil.RoleAdmin))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// action is a bash action in conversation conv.
func action(id, conv, command string) events.Event {
	return events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindAction, Conversation: conv,
		Agent: "attacker", Time: time.Now().UTC(),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
}

// ingestReply decodes an ingest service reply.
func ingestReply(t testing.TB, data []byte) struct {
	Results []client.Result `json:"results"`
	Error   string          `json:"error"`
} {
	t.Helper()
	var r struct {
		Results []client.Result `json:"results"`
		Error   string          `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("ingest reply %q: %v", data, err)
	}
	return r
}

// streamRecords reads every record of a stream (admin view).
func (tg *target) streamRecords(t testing.TB, stream string) []natsutil.RawRecord {
	t.Helper()
	var out []natsutil.RawRecord
	err := natsutil.ReadStream(t.Context(), tg.admin(t), natsutil.ReadOptions{Stream: stream}, func(r natsutil.RawRecord) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", stream, err)
	}
	return out
}

// derivedOf returns the derived events of stream VIGIL_DERIVED (decoded).
func (tg *target) derived(t testing.TB) []events.Derived {
	t.Helper()
	var out []events.Derived
	for _, r := range tg.streamRecords(t, events.StreamDerived) {
		d, err := events.DecodeDerived(r.Data)
		if err != nil {
			t.Fatalf("VIGIL_DERIVED seq %d does not decode: %v", r.Seq, err)
		}
		out = append(out, d)
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
