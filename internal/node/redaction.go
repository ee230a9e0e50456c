package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// The redaction-seen file (datadir.Layout.RedactionSeen) remembers what
// the last start found of the redaction settings in force: the settings of
// the latest global config event up to a log seq, so the next start reads
// only the global subject's records after it.
//
// Why: the global subject vigil.log._ holds few records (16 in
// a 10,000,000-event log: configs and seals), but they are spread over
// the whole log, and nats-server finds the next one by loading every
// message block in between: reading them all took 2.2 s of a 4.4 s start.
//
// The file is a cache, never the record: it names VIGIL_LOG's creation
// time, and one of another log, of a seq past the log's end, or that does
// not decode is ignored (the whole subject is read, as before). Only the
// node's own user can write the data directory, as with the rest of it.

const redactionSeenVersion = 1

type redactionSeen struct {
	V int `msgpack:"v"`
	// Created is VIGIL_LOG's creation time.
	Created time.Time `msgpack:"created"`
	// Seq is the last log seq whose global records were read.
	Seq      uint64                   `msgpack:"seq"`
	Found    bool                     `msgpack:"found"`
	Settings events.RedactionSettings `msgpack:"settings"`
}

// lastGlobalRedaction finds the redaction settings of the latest global
// config event. Global events all live on vigil.log._, so only those are
// read, and only those after what seenPath remembers.
func lastGlobalRedaction(ctx context.Context, js jetstream.JetStream, seenPath string, log *slog.Logger) (events.RedactionSettings, bool, error) {
	st, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return events.RedactionSettings{}, false, fmt.Errorf("node: find the config in force: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return events.RedactionSettings{}, false, fmt.Errorf("node: find the config in force: %w", err)
	}
	last := info.State.LastSeq
	seen := readRedactionSeen(seenPath, info.Created, last, log)
	rs, found := seen.Settings, seen.Found
	if seen.Seq < last {
		err = natsutil.ReadStream(ctx, js, natsutil.ReadOptions{Stream: events.StreamLog, From: seen.Seq + 1, To: last,
			Subjects: []string{events.LogSubject("")}},
			func(r natsutil.RawRecord) error {
				ev, err := events.DecodeMsgpack(r.Data)
				if err != nil || ev.Kind != events.KindConfig {
					return nil
				}
				cfg, err := events.DataAs[events.Config](&ev)
				if err != nil || (cfg.Scope != "" && cfg.Scope != events.ScopeGlobal) {
					return nil
				}
				rs, found = cfg.Redaction, true
				return nil
			})
		if err != nil {
			return rs, false, fmt.Errorf("node: find the config in force: %w", err)
		}
	}
	b, err := msgpack.Marshal(&redactionSeen{V: redactionSeenVersion, Created: info.Created, Seq: last, Found: found, Settings: rs})
	if err == nil {
		err = natsutil.WriteFileAtomic(seenPath, b, 0o600)
	}
	if err != nil {
		log.Warn("redaction settings in force not remembered; the next start reads every global record", "file", seenPath, "err", err)
	}
	return rs, found, nil
}

// readRedactionSeen returns what path remembers, or the zero value (read
// everything) when it is missing, damaged, or of another log.
func readRedactionSeen(path string, created time.Time, last uint64, log *slog.Logger) redactionSeen {
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("redaction settings remembered unreadable; reading every global record", "file", path, "err", err)
		}
		return redactionSeen{}
	}
	var s redactionSeen
	switch err := msgpack.Unmarshal(b, &s); {
	case err != nil || s.V != redactionSeenVersion:
		log.Warn("redaction settings remembered do not decode; reading every global record", "file", path, "err", err, "version", s.V)
	case !s.Created.Equal(created) || s.Seq > last:
		log.Info("redaction settings remembered are of another log; reading every global record", "file", path)
	default:
		return s
	}
	return redactionSeen{}
}
