// Package events defines Vigil's event envelope, the kinds of event, their
// typed data, and the codecs for the wire (msgpack) and for people and tools
// (JSON).
//
// Decoding follows DESIGN.md's rules, which are what "old security_risk
// fields can never break a reload" means:
//
//   - Unknown fields are kept and round-tripped, at the top level (Event.Extra)
//     and inside data (Event.Data is kept as a generic map), never an error.
//   - security_risk is accepted wherever producers put it (data, or the tool
//     arguments, or a JSON string of arguments), in any case, as a string,
//     an integer or null; anything unrecognised normalises to UNKNOWN. It is
//     never required. See Event.SecurityRisk.
//   - Every event carries its schema version v; older shapes are upcast on
//     read (see upcast.go).
//   - A body that cannot be decoded is a *DecodeError, never a panic.
//
// The package does no I/O.
package events
