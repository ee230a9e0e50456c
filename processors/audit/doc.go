// Package audit makes VIGIL_LOG tamper-evident: an RFC 6962 / RFC 9162
// Merkle tree over the canonical log, signed checkpoints in the C2SP
// tlog-checkpoint text format (a golang.org/x/mod/sumdb/note signed note,
// Ed25519), inclusion proofs, and the pure verifiers behind
// `vigil audit verify` and `vigil audit export`.
//
// The tree: leaf i is SHA-256(0x00 || raw) of the record at log sequence
// i+1, raw being the msgpack bytes exactly as VIGIL_LOG stores them; nodes
// are SHA-256(0x01 || left || right). A log sequence with no record when
// the fold passes it gets MissingLeaf, so leaf index and sequence never
// drift apart.
//
// The Processor is a deterministic fold: every Interval records (count
// based, never clock based) it emits one audit.checkpoint on
// vigil.audit.checkpoint carrying the signed note, the leaf hashes of the
// records since the previous checkpoint and the compact range before them.
// Ed25519 signatures are deterministic, so the live and replay drivers
// produce the same bytes. The Signer is injected: this package reads no
// file, no clock and no randomness. internal/auditkey loads the key.
//
// LogVerifier and ExportVerifier do no I/O either: the caller reads the
// streams or the export file and feeds them. docs/audit.md describes what
// each kind of tampering looks like in their reports.
package audit
