package natsutil

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
)

// The log reader lives in the public client/transport (replay and client
// read the log with it, and public packages do not import internal/);
// these names forward to it for the node's own packages.

// RawRecord is one message of a stream, undecoded (transport.RawRecord).
type RawRecord = transport.RawRecord

// ReadOptions select what ReadStream reads (transport.ReadOptions).
type ReadOptions = transport.ReadOptions

// ReadStream calls fn for every message selected by o, in stream order
// (transport.ReadStream).
func ReadStream(ctx context.Context, js jetstream.JetStream, o ReadOptions, fn func(RawRecord) error) error {
	return transport.ReadStream(ctx, js, o, fn)
}
