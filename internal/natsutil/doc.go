// Package natsutil owns Vigil's use of NATS: the embedded server and its
// durability setting, per-role credentials and permissions, the stream
// definitions of DESIGN.md, the slog bridge for the server's logger, and
// test helpers that start real servers on loopback.
//
// On the data path: NATS plumbing under both paths: the transport of
// every event into the log and of every output out of it.
package natsutil
