// Package httpapi is Vigil's HTTP API: JSON over HTTP, served by `vigil
// serve` on --http-listen (loopback by default), for people who approve
// from another machine or a phone and for agents and tools that would
// rather not speak NATS. docs/http.md is the user's guide and
// schemas/openapi.json the contract; a test checks that every route
// served here is in the contract with the same methods and roles, and
// that the contract has no route this package does not serve.
//
// # What it does not do
//
// The API holds no state of its own and decides nothing. Every write goes
// through the ingest service on the subject family of the caller's role,
// with that role's NATS credentials (Config.Connect): what a token may do
// over HTTP is exactly what its role's credential may do over NATS
// (docs/security.md), and an attempt the role may not make is sent where
// the role would send it, so the ingest service refuses it, records it in
// VIGIL_DLQ and alerts, as it would on NATS. Reads come from the read
// models (projections) or the streams.
//
// # Auth
//
// Every route but /healthz and /readyz needs `Authorization: Bearer
// <token>`, the token of a role (natsutil.EnsureTokens writes them beside
// the nkey seeds). Tokens are compared in constant time. A missing or
// unknown token gets 401; a token whose role may not use the route gets
// 403 naming the roles that may. An agent token may append agent events
// and gate actions, and reads a decision only by presenting the action it
// gated (a retry of the same action returns the same decision): as over
// NATS, it can never read another conversation, pending actions, the
// config, or the allowlist.
//
// # Bounds
//
// Bodies are bounded per route (Limits), headers and slow clients by the
// server's timeouts, gate waits and live streams by counts; what is over
// a bound is refused (413, 503) rather than queued. Close ends every wait
// and stream, then drains requests within its context.
package httpapi
