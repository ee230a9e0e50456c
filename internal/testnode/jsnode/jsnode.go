// Package jsnode starts a bare embedded JetStream server for tests that
// need streams but no Vigil node (internal/testnode.StartNode starts one).
// It imports nothing of Vigil, so any package's tests can use it.
package jsnode

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Start starts a JetStream server on a port the kernel picks, with its
// store in a temporary directory, and returns a JetStream context on a
// connection to it (made with opts); both are closed when the test ends.
func Start(t testing.TB, opts ...nats.Option) jetstream.JetStream {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("jsnode: server not ready")
	}
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
