package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// The start-time continuity check (internal/node/integrity) runs in the
// background; its finding is logged and stored as one alert.

// WaitContinuity waits for the start-time continuity check and returns its
// report. It returns an error if the check could not run (or was stopped),
// or ctx's error.
func (s *Node) WaitContinuity(ctx context.Context) (integrity.Report, error) {
	if s.watch.contDone == nil {
		return integrity.Report{}, errors.New("node: no continuity check runs (NoContinuityCheck)")
	}
	select {
	case <-ctx.Done():
		return integrity.Report{}, ctx.Err()
	case <-s.watch.contDone:
		return s.watch.contRep, s.watch.contErr
	}
}

// startContinuity runs the check in the background under ctx.
func (s *Node) startContinuity(ctx context.Context) {
	s.watch.contDone = make(chan struct{})
	s.core.Go("continuity check", func(context.Context) {
		defer close(s.watch.contDone)
		rep, err := s.checkContinuity(ctx)
		s.watch.contRep, s.watch.contErr = rep, err
		log := s.cfg.Logger.With("component", "continuity")
		switch {
		case err != nil:
			if ctx.Err() == nil {
				log.Error("continuity check could not run", "err", err)
			}
		case !rep.OK():
			reason := fmt.Sprintf("continuity check at start: VIGIL_LOG is not continuous with what was signed: first bad seq %d: %s; run vigil audit verify for the full report",
				rep.FirstBad, strings.Join(rep.Problems, "; "))
			log.Error("vigil: "+reason, "first_bad_seq", rep.FirstBad, "checkpoint", rep.Checkpoint, "log_end", rep.LogEnd)
			s.publishAlert(ctx, fmt.Sprintf("serve:continuity:%d:%d:%x", rep.LogEnd, rep.FirstBad, digest(reason)),
				events.Alert{Severity: events.SeverityCritical, Reason: reason, LogSeq: rep.FirstBad, Subject: events.StreamLog})
		default:
			log.Info("continuity check: the log is continuous", "log_end", rep.LogEnd, "read_from", rep.From+1, "checkpoint", rep.Checkpoint,
				"root_checked", rep.RootChecked, "skipped", rep.Skipped, "elapsed", rep.Elapsed)
		}
	})
}

// checkContinuity runs the continuity check (internal/node/integrity)
// on this node's streams, key and continuity file.
func (s *Node) checkContinuity(ctx context.Context) (integrity.Report, error) {
	c := integrity.Continuity{JS: s.js, Verifiers: s.cfg.AuditVerifiers, Logger: s.cfg.Logger}
	if s.cfg.DataDir != "" {
		c.StateFile = datadir.New(s.cfg.DataDir).Continuity()
	}
	return c.Check(ctx)
}
