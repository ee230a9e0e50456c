package auditlog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/audit"
)

// ErrNoWitness: a JSON file given as a witness holds no checkpoint line.
var ErrNoWitness = errors.New("no checkpoint line in this JSON file")

// Witness is a checkpoint kept outside the streams (a signed note saved
// from an earlier export or proof): the log must still match it even if
// VIGIL_DERIVED was rewritten.
type Witness struct {
	// Name says where the note comes from, in errors (a file name).
	Name string
	// Note is the signed checkpoint note.
	Note string
}

// WitnessNote returns the signed note a witness file holds: the file
// itself when it is a note, else the checkpoint line of an export or of a
// proof's export lines (ErrNoWitness when there is none).
func WitnessNote(b []byte) (string, error) {
	if !strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
		return string(b), nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		l, err := audit.DecodeExportLine([]byte(line))
		if err == nil && l.Checkpoint != nil {
			return l.Checkpoint.Note, nil
		}
	}
	return "", ErrNoWitness
}

// VerifyConfig configures a check of the log against its checkpoints.
type VerifyConfig struct {
	// Verifiers are the keys trusted to sign checkpoints (required).
	Verifiers note.Verifiers
	// Interval is the audit processor's checkpoint interval: a log this
	// long with no valid checkpoint is tampering (0: not checked).
	Interval uint64
	// Witnesses are checkpoints kept elsewhere the log must still match.
	Witnesses []Witness
	// Progress is told how far the read of the log has got (may be nil).
	Progress Progress
}

// LogCheck re-derives the audit tree from VIGIL_LOG and checks it against
// every checkpoint on vigil.audit.checkpoint and the witnesses. Made by
// NewLogCheck (which checks the configuration without any I/O), run once.
type LogCheck struct {
	v        *audit.LogVerifier
	progress Progress
}

// LogReport is the result of a LogCheck.
type LogReport struct {
	*audit.Report
	// Elapsed is the time spent reading and checking the log (after the
	// checkpoints were read).
	Elapsed time.Duration
}

// NewLogCheck returns a check of the log under cfg, or an error when no
// key is given or a witness does not verify with the keys.
func NewLogCheck(cfg VerifyConfig) (*LogCheck, error) {
	if cfg.Verifiers == nil {
		return nil, audit.ErrNoKey
	}
	v := audit.NewLogVerifier(cfg.Verifiers)
	v.ExpectInterval(cfg.Interval)
	for _, w := range cfg.Witnesses {
		if err := v.AddTrusted(w.Note); err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name, err)
		}
	}
	return &LogCheck{v: v, progress: cfg.Progress}, nil
}

// Run reads the checkpoints and then the log of js and reports every
// deleted, altered, inserted or reordered record. An error means nothing
// was verified; tampering is in the report's findings.
func (c *LogCheck) Run(ctx context.Context, js jetstream.JetStream) (*LogReport, error) {
	if c.v == nil {
		return nil, errors.New("auditlog: LogCheck already run")
	}
	v := c.v
	c.v = nil
	end, err := checkpointsThenEnd(ctx, js, v, nil)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := readLog(ctx, js, c.progress, "verify", 1, end, nil, func(r transport.RawRecord) error {
		return v.AddRecord(r.Seq, r.Data)
	}); err != nil {
		return nil, err
	}
	v.SetLogEnd(end)
	rep := v.Finish()
	return &LogReport{Report: rep, Elapsed: time.Since(start)}, nil
}

// checkpointsThenEnd gives every checkpoint to v and the valid ones to
// keep (either may be nil), then returns VIGIL_LOG's last sequence.
// Checkpoints first: each is published after the records it covers, so
// the log read up to that sequence holds everything they sign.
func checkpointsThenEnd(ctx context.Context, js jetstream.JetStream, v *audit.LogVerifier, keep func(events.AuditCheckpoint)) (uint64, error) {
	if err := ReadCheckpoints(ctx, js, func(at uint64, cp events.AuditCheckpoint, err error) {
		if err == nil && keep != nil {
			keep(cp)
		}
		switch {
		case v == nil:
		case err != nil:
			v.AddBadCheckpoint(at, err)
		default:
			v.AddCheckpoint(at, cp)
		}
	}); err != nil {
		return 0, err
	}
	return LogEnd(ctx, js)
}

// VerifyLog is NewLogCheck(cfg) and Run.
func VerifyLog(ctx context.Context, js jetstream.JetStream, cfg VerifyConfig) (*LogReport, error) {
	c, err := NewLogCheck(cfg)
	if err != nil {
		return nil, err
	}
	return c.Run(ctx, js)
}

// ExportVerifyConfig configures the offline check of an export.
type ExportVerifyConfig struct {
	// Verifiers are the keys trusted to sign the checkpoint; nil trusts
	// the key written in the export (and the report says so).
	Verifiers note.Verifiers
	// Name names the export in errors (a file name, - for standard input).
	Name string
}

// VerifyExport checks an export read from r offline: each record's bytes,
// its JSON view, its inclusion proof and the signed checkpoint, and for a
// complete export that no line is missing or moved. An error means the
// export could not be read (nothing verified); tampering is in the
// report's findings.
func VerifyExport(ctx context.Context, r io.Reader, cfg ExportVerifyConfig) (*audit.ExportReport, error) {
	v := audit.NewExportVerifier(cfg.Verifiers)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), audit.MaxLineBytes+1)
	for n := 0; sc.Scan(); n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v.AddLine(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w (is it an export? lines are at most %d bytes)", cfg.Name, err, audit.MaxLineBytes)
	}
	return v.Finish()
}
