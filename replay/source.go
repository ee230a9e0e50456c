package replay

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/audit"
)

// Record is one raw log record: sequence, subject and the bytes as stored.
type Record = events.RawRecord

// Selection says which records a Source yields.
type Selection struct {
	// To is the last log sequence to yield; 0 means up to the end.
	To uint64
	// Conversation, when set, yields only that conversation's records and
	// the global ones (config, allowlist and pairing changes): see the
	// package doc for what that does to the folds.
	Conversation string
}

// Source yields log records in log order, from the first one it holds.
type Source interface {
	Records(ctx context.Context, sel Selection, fn func(Record) error) error
	// String names the source in reports and errors.
	String() string
}

// Stream reads VIGIL_LOG.
type Stream struct {
	JS jetstream.JetStream
}

func (s Stream) String() string { return "stream " + events.StreamLog }

// Records reads VIGIL_LOG through an ordered consumer, filtered on the
// conversation's subject and the global subject when a conversation is set.
// Like the live driver's reader, it never takes a replica's "nothing
// pending" for the end of the log (transport.ReadStreamPatient).
func (s Stream) Records(ctx context.Context, sel Selection, fn func(Record) error) error {
	o := transport.ReadOptions{Stream: events.StreamLog, To: sel.To}
	if sel.Conversation != "" {
		o.Subjects = []string{events.LogSubject(sel.Conversation), events.LogSubject("")}
	}
	return transport.ReadStreamPatient(ctx, s.JS, o, fn)
}

// LastSeq returns VIGIL_LOG's last sequence. An answer that does not
// come (the stream's leader killed, an election under way) is asked for
// again, for up to transport.ReadPatience.
func (s Stream) LastSeq(ctx context.Context) (uint64, error) {
	deadline := time.Now().Add(transport.ReadPatience)
	for {
		last, err := s.lastSeq(ctx)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) || !transient(err) {
			return last, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s Stream) lastSeq(ctx context.Context) (uint64, error) {
	ictx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := s.JS.Stream(ictx, events.StreamLog)
	if err != nil {
		return 0, fmt.Errorf("replay: %w", err)
	}
	info, err := st.Info(ictx)
	if err != nil {
		return 0, fmt.Errorf("replay: %w", err)
	}
	return info.State.LastSeq, nil
}

// transient reports whether err may pass with an election.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		(errors.As(err, &apiErr) && apiErr.Code == 503)
}

// Export reads the JSON lines `vigil audit export` writes (processors/audit,
// ExportFormat). Each event line carries the record's bytes exactly as
// stored (base64 "raw"), which is what the processors are fed; its "risk"
// and "gate" fields are checked against what replay derives (see Checks).
type Export struct {
	R    io.Reader
	Name string
	// Header is the export's header, once Records has read it.
	Header audit.ExportHeader
	// Checks collects the recorded risk and gate data to compare.
	Checks *ExportChecks
}

func (e *Export) String() string { return "export " + e.Name }

// Records yields the export's event lines. The subject of a record is
// rebuilt from its event's conversation (vigil.log.<conversation>), as the
// ingest service chose it.
func (e *Export) Records(ctx context.Context, sel Selection, fn func(Record) error) error {
	sc := bufio.NewScanner(e.R)
	sc.Buffer(make([]byte, 0, 1<<20), audit.MaxLineBytes+1)
	line := 0
	var last uint64
	for sc.Scan() {
		line++
		if err := ctx.Err(); err != nil {
			return err
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		l, err := audit.DecodeExportLine(b)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", e.Name, line, err)
		}
		switch {
		case l.Header != nil:
			e.Header = *l.Header
			continue
		case l.Event == nil:
			continue
		}
		ev := l.Event
		if sel.To != 0 && ev.Seq > sel.To {
			return nil
		}
		if ev.Seq <= last {
			return fmt.Errorf("%s line %d: seq %d after seq %d: an export is in log order", e.Name, line, ev.Seq, last)
		}
		last = ev.Seq
		var env struct {
			ID           string `json:"id"`
			Kind         string `json:"kind"`
			Conversation string `json:"conversation"`
		}
		_ = json.Unmarshal(ev.Event, &env)
		if sel.Conversation != "" && env.Conversation != sel.Conversation && env.Conversation != "" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(ev.Raw)
		if err != nil {
			return fmt.Errorf("%s line %d: raw: %w", e.Name, line, err)
		}
		if e.Checks != nil && env.Kind == string(events.KindAction) && env.ID != "" {
			e.Checks.add(env.ID, ev.Seq, ev.Risk, ev.Gate)
		}
		if err := fn(Record{Seq: ev.Seq, Subject: events.LogSubject(env.Conversation), Data: raw}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s line %d: longer than %d bytes", e.Name, line+1, audit.MaxLineBytes)
		}
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	return nil
}

// Records is an in-memory source, for tests and benchmarks. Conversation
// filtering decodes each record.
type Records []Record

func (r Records) String() string { return fmt.Sprintf("%d records in memory", len(r)) }

// Records yields the selected records.
func (r Records) Records(ctx context.Context, sel Selection, fn func(Record) error) error {
	for _, rec := range r {
		if sel.To != 0 && rec.Seq > sel.To {
			return nil
		}
		if sel.Conversation != "" {
			if rec.Subject != events.LogSubject(sel.Conversation) && rec.Subject != events.LogSubject("") {
				continue
			}
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return ctx.Err()
}
