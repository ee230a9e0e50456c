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
//     read (see upcast.go): no v, or an OpenHands ActionEvent, is v0.
//   - A body that cannot be decoded is a *DecodeError, never a panic. Its
//     reason never quotes the body, which may hold a secret.
//
// Untrusted bodies go to DecodeMsgpack, DecodeMsgpackArray, DecodeJSON,
// DecodeDerived or DecodeDerivedJSON. They bound what a body can cost: a
// msgpack body's structure is checked before anything is allocated (a
// declared length longer than the body is refused), and values nest at most
// MaxDepth levels.
//
// Encoding is canonical: the same event, decoded from msgpack or JSON or
// built in code, always encodes to the same bytes (values normalised as a
// decoder returns them, map keys sorted, integers compact), which is what
// the audit chain hashes and what replay compares. The two formats carry the
// same values: integral floats are integers, strings are valid UTF-8, and
// NaN and infinities, which JSON cannot carry, are null.
//
// Validate checks an event before it is appended: the envelope, and the
// data its kind requires (validate.go, with the config's coherence rules in
// ValidateConfig). The JSON Schemas in schemas/ state the same rules; their
// tests check that both accept and refuse the same documents.
//
// The package does no I/O.
package events
