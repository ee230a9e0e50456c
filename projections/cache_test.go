package projections

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestPebbleCacheHoldsBlocks: Pebble charges the memtables to the block
// cache, so a cache sized like the memtables held no block and every
// lookup read its filter and index blocks from the file again. Lookups
// of keys a flushed table does not hold are served from the cache once
// the first has read them.
func TestPebbleCacheHoldsBlocks(t *testing.T) {
	const memtable = 1 << 20
	db, err := OpenPebble(t.TempDir(), PebbleOptions{CacheSize: 1 << 20, MemTableSize: memtable, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := db.NewBatch()
	for i := 0; i < 20000; i++ {
		if err := b.Set(fmt.Appendf(nil, "k/%08d", i), make([]byte, 64), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if _, _, err := db.Get(fmt.Appendf(nil, "k/%08d-absent", i*17)); err != pebble.ErrNotFound {
			t.Fatalf("lookup %d: %v", i, err)
		}
	}
	m := db.Metrics().BlockCache
	if m.Count == 0 || m.Hits < 900 {
		t.Fatalf("block cache after 1000 lookups: %d blocks, %d hits, %d misses: it holds nothing", m.Count, m.Hits, m.Misses)
	}
}
