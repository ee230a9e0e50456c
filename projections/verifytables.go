package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// verifiedFile, in the store's directory, lists the tables the background
// verification has read back whole, each by file number, size and
// modification time. Pebble never rewrites a table once it is written, so
// a table listed with the same size and time is not read again: a start
// reads back the tables written since the last one (compactions' and
// flushes' outputs), not the whole store (at 10,000,000 events a full
// read-back took 81 s at a quarter of a core after every start).
// Damage to a table already verified is still found by the first read
// that meets it (Pebble checks every block it reads; the store then
// refuses to serve and is rebuilt), as it was between two starts before.
const verifiedFile = "VERIFIED"

type verifiedTable struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime"`
}

// verifyTables reads back every table not verified since it was written
// (see verifiedFile), checking each block's checksum, and records those
// that passed. It returns how many tables it read. It returns early, with
// a nil error, once stop is closed; after each table it pauses pause
// times the time the table took (0: no pause). The memtables are not
// tables: their log's checksums were checked when Pebble replayed it at
// open.
func (s *Store) verifyTables(stop <-chan struct{}, pause int) (read int, err error) {
	levels, err := s.db.SSTables()
	if err != nil {
		return 0, err
	}
	done := s.readVerified()
	next := map[uint64]verifiedTable{}
	defer func() {
		if werr := s.writeVerified(next); werr != nil && err == nil {
			s.log.Warn("read models: verified tables not recorded; the next start reads them again", "err", werr)
		}
	}()
	for _, level := range levels {
		for _, t := range level {
			if t.Virtual || t.BackingType != pebble.BackingTypeLocal {
				continue
			}
			num := uint64(t.BackingSSTNum)
			path := filepath.Join(s.dir, fmt.Sprintf("%06d.sst", num))
			fi, err := os.Stat(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue // compacted away since the listing
			}
			if err != nil {
				return read, err
			}
			vt := verifiedTable{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
			if prev, ok := done[num]; ok && prev == vt {
				next[num] = vt
				continue
			}
			start := time.Now()
			err = validateTable(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return read, fmt.Errorf("table %06d.sst: %w", num, err)
			}
			read++
			next[num] = vt
			if stopped(stop, time.Duration(pause)*time.Since(start)) {
				return read, nil
			}
		}
	}
	return read, nil
}

// validateTable reads every block of the table at path and checks its
// checksum.
func validateTable(path string) error {
	f, err := vfs.Default.Open(path)
	if err != nil {
		return err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		f.Close()
		return err
	}
	r, err := sstable.NewReader(context.Background(), readable, sstable.ReaderOptions{})
	if err != nil {
		readable.Close()
		return err
	}
	verr := r.ValidateBlockChecksums()
	if cerr := r.Close(); verr == nil {
		verr = cerr
	}
	return verr
}

func (s *Store) readVerified() map[uint64]verifiedTable {
	b, err := os.ReadFile(filepath.Join(s.dir, verifiedFile))
	if err != nil {
		return nil
	}
	var m map[uint64]verifiedTable
	if json.Unmarshal(b, &m) != nil {
		return nil // read everything again
	}
	return m
}

func (s *Store) writeVerified(m map[uint64]verifiedTable) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	path := filepath.Join(s.dir, verifiedFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// stopped waits d (none when d is 0) and reports whether stop was closed
// meanwhile (or before): the background verification's pause.
func stopped(stop <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return true
	case <-t.C:
		return false
	}
}
