// Package transport is how a process reaches a Vigil node over NATS: the
// ordered log reader (ReadStream) that replays, audits, tails and the
// client read the streams with, the credentials layout and connect
// options of each role, the per-connection reply inbox the server's
// permissions expect, and the headers and replies of the ingest service's
// wire protocol.
//
// It lives below client and replay, not in internal/natsutil, because
// those public packages need it and internal/ is used only from above
// (cmd/, internal/node, internal/httpapi…): the embedded server, its
// permissions and stream definitions stay in internal/natsutil, which
// imports this package and forwards the shared names. It depends on
// events and the NATS client libraries only, never on a processor, a read
// model or the server, so any reader of a node's log can import it.
package transport
