package projections

import (
	"context"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Feed yields the log's applied records in order, from its first record,
// in batches: replay.Run with a Sink does exactly this.
type Feed func(ctx context.Context, yield func([]Applied) error) error

// RebuildResult says what a rebuild did.
type RebuildResult struct {
	Projections []string `json:"projections"`
	// Refolded counts records folded into only the dropped projections, up
	// to the position the others were at; Applied counts records folded
	// into every projection (all of them when every projection was dropped).
	Refolded uint64 `json:"refolded"`
	Applied  uint64 `json:"applied"`
	Position uint64 `json:"position"`
}

// Rebuild drops the named projections (all of them when names is empty)
// and rebuilds them by folding feed.
//
// Dropping all of them empties the store and folds the whole feed. A crash
// part way leaves a consistent store at an earlier position, which the
// driver simply continues.
//
// Dropping some refolds them up to the store's current position, leaving
// the others untouched, then folds any records past it into every
// projection. A marker records the rebuild until it completes, so a crash
// part way makes the next Open rebuild everything. The feed must reach the
// current position; if the log no longer holds it, rebuild them all.
func (s *Store) Rebuild(ctx context.Context, names []string, feed Feed) (RebuildResult, error) {
	projs := allProjections
	if len(names) > 0 {
		var err error
		if projs, err = lookupProjections(names); err != nil {
			return RebuildResult{}, err
		}
	}
	all := len(projs) == len(allProjections)
	res := RebuildResult{}
	for _, p := range projs {
		res.Projections = append(res.Projections, p.name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return res, err
	}
	target := s.pos.Load()
	b := s.db.NewBatch()
	for _, p := range projs {
		lo := []byte(p.prefix)
		if err := b.DeleteRange(lo, prefixEnd(lo), nil); err != nil {
			b.Close()
			return res, s.fail(err)
		}
	}
	if all {
		target = 0
		_ = b.Set(keyPosition, encodePosition(0), nil)
	} else {
		_ = b.Set(keyRebuilding, []byte(strings.Join(res.Projections, ",")), nil)
	}
	err := b.Commit(pebble.Sync)
	b.Close()
	if err != nil {
		return res, s.fail(err)
	}
	if all {
		s.pos.Store(0)
	}
	var last uint64
	err = feed(ctx, func(batch []Applied) error {
		if len(batch) == 0 {
			return nil
		}
		if !all && batch[0].Record.Seq <= target {
			n, err := s.applyLocked(batch, projs, false, target)
			if err != nil {
				return err
			}
			res.Refolded += uint64(n)
		}
		n, err := s.applyLocked(batch, allProjections, true, 0)
		if err != nil {
			return err
		}
		res.Applied += uint64(n)
		last = batch[len(batch)-1].Record.Seq
		return ctx.Err()
	})
	res.Position = s.pos.Load()
	if err != nil {
		return res, err
	}
	if last < target {
		return res, fmt.Errorf("projections: the log ends at sequence %d but the read models were at %d; rebuild all of them", last, target)
	}
	if !all {
		if err := s.db.Delete(keyRebuilding, pebble.Sync); err != nil {
			return res, s.fail(err)
		}
	}
	return res, nil
}
