// Package memlimit gives a long-running node a soft memory limit sized
// from what it holds, unless the operator set one (GOMEMLIMIT).
//
// Go's collector lets the heap grow to twice what was live at the last
// collection (GOGC=100) and returns freed pages to the OS slowly, so a
// node whose live heap is 100 MB sits at 250–300 MB of RSS after a burst
// of garbage (a restart's background reads). A soft limit makes
// the collector run before the heap reaches that, and the scavenger
// return memory to stay under it. A fixed limit would be wrong for a node
// whose live state grows (a fleet with many open conversations): below
// the live heap the collector runs continuously. So the limit follows the
// live heap: live + max(live/2, MinHeadroom) plus the runtime's own
// non-heap memory, re-sized every few seconds, never below Floor. Memory
// outside the Go runtime (Pebble's caches and memtables, allocated in C)
// is not in it.
//
// On the data path: assembly: a setting of the process the node runs in,
// off the data path.
package memlimit

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Sizing of the limit.
const (
	// Floor is the least limit set: below it the collector's work buys
	// little.
	Floor = 128 << 20
	// MinHeadroom is the least room over the live heap, so the collector
	// never runs continuously.
	MinHeadroom = 48 << 20
	// Every is how often the limit is re-sized.
	Every = 5 * time.Second
)

// Limit is the soft limit for a process with live bytes of live heap and
// other bytes of non-heap runtime memory (stacks, metadata).
func Limit(live, other uint64) int64 {
	l := float64(live) + float64(max(live/2, MinHeadroom)) + float64(other)
	if l >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(int64(l), Floor)
}

// Auto sizes the process's soft memory limit from its live heap now and
// every Every until ctx ends, unless GOMEMLIMIT is set in the environment
// (the operator's setting is kept, "off" included). It reports whether it
// manages the limit; when ctx ends the limit in force before is put back.
// Call it once per process (vigil serve), never from a library: the limit
// is the process's.
func Auto(ctx context.Context, logger *slog.Logger) bool {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		logger.Info("memory limit: GOMEMLIMIT set, kept", "limit_mb", debug.SetMemoryLimit(-1)>>20)
		return false
	}
	prev := debug.SetMemoryLimit(-1)
	resize()
	go func() {
		t := time.NewTicker(Every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				debug.SetMemoryLimit(prev)
				return
			case <-t.C:
				resize()
			}
		}
	}()
	logger.Info("memory limit: sized from the live heap (set GOMEMLIMIT to choose one, GOMEMLIMIT=off for none)",
		"limit_mb", debug.SetMemoryLimit(-1)>>20)
	return true
}

var names = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
}

// resize sets the limit from the runtime's current figures.
func resize() {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	v := make([]uint64, len(s))
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	// other: what the runtime holds besides heap spans (stacks, its
	// metadata, buffers); released heap memory is not held at all.
	live, total := v[0], v[1]
	heap := v[2] + v[3] + v[4] + v[5]
	other := uint64(0)
	if total > heap {
		other = total - heap
	}
	debug.SetMemoryLimit(Limit(live, other))
}
