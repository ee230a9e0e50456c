package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
)

// Checkpoint is a live driver's checkpoint on VIGIL_LOG: the ack floor of
// its durable consumer. A driver acknowledges a record only once every
// output of it is stored, so the outputs of every record up to Seq are in
// VIGIL_DERIVED.
type Checkpoint struct {
	Seq uint64
	// Durable names the consumer ("vigil-<node>").
	Durable string
}

// CheckpointPatience bounds LiveCheckpoint's wait for the drivers'
// consumers to answer.
const CheckpointPatience = 20 * time.Second

// LiveCheckpoint returns the highest checkpoint of the live drivers (one
// durable consumer "vigil-…" on VIGIL_LOG per node), and false when no
// driver has a consumer. A listing that fails or leaves out consumers
// whose leader is gone (an election under way) is asked again for up to
// CheckpointPatience; each floor that answers is a true checkpoint, so
// the highest of them is one.
func LiveCheckpoint(ctx context.Context, js jetstream.JetStream) (Checkpoint, bool, error) {
	deadline := time.Now().Add(CheckpointPatience)
	for {
		cp, ok, err := readCheckpoint(ctx, js)
		if err == nil {
			return cp, ok, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return Checkpoint{}, false, fmt.Errorf("replay: the live drivers' checkpoint (their consumers on %s) did not answer within %s: %w",
				events.StreamLog, CheckpointPatience, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func readCheckpoint(ctx context.Context, js jetstream.JetStream) (Checkpoint, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := js.Stream(rctx, events.StreamLog)
	if err != nil {
		return Checkpoint{}, false, err
	}
	var best Checkpoint
	names := st.ConsumerNames(rctx)
	var failed error
	for name := range names.Name() {
		if !strings.HasPrefix(name, "vigil-") {
			continue
		}
		c, err := st.Consumer(rctx, name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue // re-created by its driver right now
		}
		if err != nil {
			failed = err
			continue
		}
		ci := c.CachedInfo()
		if best.Durable == "" || ci.AckFloor.Stream > best.Seq {
			best = Checkpoint{Seq: ci.AckFloor.Stream, Durable: name}
		}
	}
	if err := names.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	if best.Durable == "" && failed != nil {
		return Checkpoint{}, false, failed
	}
	return best, best.Durable != "", nil
}

// DerivedFrontier returns the derived stream's frontier: the highest log
// sequence of a fold output among VIGIL_DERIVED's last messages (read
// from its leader), and false when they hold none. Every node stores the
// outputs of a batch of records whole and in log order, each batch before
// the next, so the outputs of every record up to it are stored.
func DerivedFrontier(ctx context.Context, js jetstream.JetStream) (uint64, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := js.Stream(rctx, events.StreamDerived)
	if err != nil {
		return 0, false, fmt.Errorf("replay: stream %s: %w", events.StreamDerived, err)
	}
	info := st.CachedInfo()
	if info.State.Msgs == 0 {
		return 0, false, nil
	}
	first, last := max(info.State.FirstSeq, 1), info.State.LastSeq
	for seq := last; seq >= first && last-seq < derivedFrontierScan; seq-- {
		m, err := st.GetMsg(rctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("replay: read %s seq %d: %w", events.StreamDerived, seq, err)
		}
		id, logSeq, _, err := peekDerived(m.Data)
		if err == nil && logSeq > 0 && id != "" && !ignoredID(id) {
			return logSeq, true, nil
		}
	}
	return 0, false, nil
}

// derivedFrontierScan bounds the messages DerivedFrontier reads back.
const derivedFrontierScan = 256

// Frontier kinds, continued.
const (
	// FrontierDerived: the derived stream's frontier (DerivedFrontier),
	// when no live driver's checkpoint is known.
	FrontierDerived = "derived"
)

// LiveFrontier chooses where a replay of a live log compares up to, and
// what is known to be stored: the live drivers' checkpoint; without one
// (no driver's consumer, or none answered within CheckpointPatience) the
// derived stream's frontier; without outputs either, the log's end. A
// to other than 0 (the caller's --to) is where the comparison stops
// instead; Published still says what is known to be stored, so outputs
// of later records that the record lacks are reported as not published
// yet, not as missing. The frontier's LogEnd is VIGIL_LOG's last
// sequence, read before the checkpoint (the log grows meanwhile).
func LiveFrontier(ctx context.Context, js jetstream.JetStream, to uint64) (*Frontier, error) {
	last, err := Stream{JS: js}.LastSeq(ctx)
	if err != nil {
		return nil, err
	}
	fr := &Frontier{LogEnd: last}
	cp, ok, cpErr := LiveCheckpoint(ctx, js)
	switch {
	case ok:
		fr.Seq, fr.By, fr.Detail = cp.Seq, FrontierCheckpoint, "durable "+cp.Durable
		fr.Published, fr.PublishedBy = &cp.Seq, FrontierCheckpoint
	default:
		df, dok, err := DerivedFrontier(ctx, js)
		if err != nil {
			return nil, errors.Join(cpErr, err)
		}
		why := "no live driver's checkpoint on " + events.StreamLog
		if cpErr != nil {
			why = cpErr.Error()
		}
		if dok {
			df = min(df, last)
			fr.Seq, fr.By, fr.Published, fr.PublishedBy = df, FrontierDerived, &df, FrontierDerived
			fr.Detail = why + "; the highest log seq with an output in " + events.StreamDerived
		} else {
			fr.Seq, fr.By, fr.Detail = last, FrontierLogEnd, why+"; no output in "+events.StreamDerived
		}
	}
	if to != 0 {
		fr.Seq, fr.By = to, FrontierTo
		fr.Detail = ""
		if fr.Published != nil && to > *fr.Published {
			fr.Detail = fmt.Sprintf("past log seq %d, up to which outputs are known stored: outputs of later records not stored yet are counted as not published, not as missing", *fr.Published)
		}
	}
	return fr, nil
}
