package replay

import (
	"os"
	"runtime/debug"
)

// Garbage collection of a replay. A replay is a batch job whose live heap
// is the folds' state (small beside what it allocates and drops per
// record: decoded events, parse trees, outputs), so at Go's default
// (GOGC=100) collection takes a fifth of a record's CPU. BatchGC trades
// memory for it: collection at GCPercent, bounded by MemoryLimit.
const (
	GCPercent   = 400
	MemoryLimit = 1 << 30
)

// BatchGC sets the process's garbage collector for a replay (GCPercent,
// MemoryLimit), each unless the environment sets it (GOGC, GOMEMLIMIT),
// and returns a function that restores what was set before. It changes
// process-wide settings: a command running a replay calls it, the
// package never does.
func BatchGC() (restore func()) {
	gc, limit := -2, int64(-2)
	if os.Getenv("GOGC") == "" {
		gc = debug.SetGCPercent(GCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		limit = debug.SetMemoryLimit(MemoryLimit)
	}
	return func() {
		if gc != -2 {
			debug.SetGCPercent(gc)
		}
		if limit != -2 {
			debug.SetMemoryLimit(limit)
		}
	}
}
