// Package projections keeps Vigil's read models in a Pebble database: events
// by id and by conversation, risk by action, pending approvals and gate
// decisions, allowlists, pairing state, per-conversation "ask the agent for
// security_risk", and statistics. A Store is the live driver's Sink
// (internal/driver): it is handed every applied batch — the log records
// with the outputs the processors folded from them — before the driver
// acknowledges the records.
//
// # Exactly once, across crashes
//
// Each Apply writes all of its index updates and the key meta/position (the
// last log sequence the batch reflects) in one Pebble batch, committed
// atomically. Position returns that sequence, the driver re-sends every
// record after it on start, and Apply skips records at or below it. So
// whatever point a process dies at — before the commit, after the commit
// but before the driver's ack, in the middle of a warm-up — a restart
// applies every record exactly once: none twice, none skipped.
//
// # Never serve bad data
//
// Open checks, before anything is served: that the database opens, that it
// has this package's format version, that the position record's checksum
// holds, that it was built from the same log (Options.LogIdentity) and is
// not ahead of it (Options.LogLastSeq), and that no rebuild was interrupted.
// If any check fails the database is wiped and starts empty at position 0;
// the driver's warm-up then refills it from VIGIL_LOG. Then, in the
// background (unless Options.SkipVerify), every table is read back so that
// Pebble checks every block checksum (Store.VerifyDone): Pebble checks a
// block's checksum whenever it reads it, so nothing damaged is served
// meanwhile, and reading a large store at open would put seconds on the
// path of the first decision after a restart. A corruption met later, by
// that verification, a read or a commit, makes the store refuse every read
// (ErrCorrupt) and drop further batches — the driver, and gating, go on —
// and leaves a REBUILD marker, so the next start rebuilds it.
//
// # Dropping and rebuilding
//
// Every projection owns one key prefix and folds only its own keys, so any
// subset can be dropped and rebuilt from the log (Rebuild, and `vigil
// projections rebuild`) while the others stay as they are.
//
// The package does not read the log itself, and runs no goroutine but the
// verification after Open: drivers feed it.
package projections
