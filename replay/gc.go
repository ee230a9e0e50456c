package replay

import (
	"os"
	"runtime/debug"
)

// Garbage collection of a replay. A replay is a batch job whose live heap
// is the folds' state (tens of MB for a million events, small beside the
// 2 KB a record allocates and drops: decoded events, parse trees,
// outputs). A collection costs the live heap it marks, and the
// proportional trigger (GOGC) starts one each time the heap grows by a
// multiple of that live heap: at GOGC=400 collecting took about a sixth
// of a record's CPU when a record allocated 7 KB; at 2 KB, BenchmarkReplay
// spends 6.4-7.4 µs of CPU an event at GOGC=400 against 5.9-6.2 µs with
// BatchGC (which spends instead about a tenth of its CPU in the kernel,
// on the heap's first touch of fresh memory). BatchGC turns the
// proportional trigger off and lets the heap grow to MemoryLimit between
// collections: a replay then holds up to MemoryLimit (about 1 GiB of
// RSS) and spends a few percent of its CPU collecting. A live heap near the limit makes collections frequent
// again (Go then caps them at half the CPU). GOGC and GOMEMLIMIT in the
// environment override either setting.
const (
	GCPercent   = -1 // off: MemoryLimit triggers collection
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
