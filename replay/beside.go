package replay

import (
	"fmt"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/risk"
)

// # Folding beside the fold
//
// Some processors fold only their own state from the records they are
// fed: the audit tree hashes every record, stats counts them. Nothing
// another processor does reaches them, and they reach no other. Replay
// runs such processors (Config.Beside) on a goroutine of their own, fed
// the same records in the same order, one batch ahead of the fold; in the
// fold's pipeline each is stood in for by a besideProc, which hands the
// pipeline the outputs, error or panic the processor had for that record.
// The pipeline, its order of outputs, its bounding and its alerts are the
// fold's own, unchanged, so the outputs are the same bytes.
//
// The risk processor folds only its own state too, but hands each
// action's assessment to the gate through a risk.Memo. Beside the fold it
// records into a memo of its own, whose state after each record is handed
// over with its outputs: the gate then finds in its memo, at every
// record, what it would have found with risk in the fold. Beside the
// fold, risk takes the assessments scored ahead after the workers.

// sideResult is what a processor beside the fold did with one record.
type sideResult struct {
	seq      uint64
	out      []processors.Output
	err      error
	panicked any
}

// besideProc stands in the fold's pipeline for the processor run beside
// it at index i of runner.side.
type besideProc struct {
	r    *runner
	i    int
	name string
	// memo, when set, is the memo the processor shared with the fold's
	// processors: it is given the processor's memo's state (runner.curMemo).
	memo *risk.Memo
}

func (b *besideProc) Name() string { return b.name }

// Step returns what the processor beside the fold did with rec; its panic
// is raised again here, for the pipeline to turn into the same alert.
func (b *besideProc) Step(rec events.Record) ([]processors.Output, error) {
	side := b.r.curSide
	if b.i >= len(side) || side[b.i].seq != rec.Seq {
		panic(fmt.Sprintf("replay: no result of %s beside the fold for log seq %d", b.name, rec.Seq))
	}
	res := &side[b.i]
	if b.memo != nil {
		*b.memo = *b.r.curMemo
	}
	if res.panicked != nil {
		panic(res.panicked)
	}
	return res.out, res.err
}

var _ processors.Processor = (*besideProc)(nil)

// foldBeside steps the processors beside the fold with every record of
// b, in order, keeping what each did in b.side (and the risk memo's state
// in b.memos), then closes b.sideDone.
func (r *runner) foldBeside(b *decodedBatch) {
	if r.riskBeside {
		<-b.done // the assessments scored ahead
	}
	k := len(r.side)
	n := len(b.items) * k
	if cap(b.side) < n {
		b.side = make([]sideResult, n)
	}
	b.side = b.side[:n]
	if r.sideMemo != nil {
		if cap(b.memos) < len(b.items) {
			b.memos = make([]risk.Memo, len(b.items))
		}
		b.memos = b.memos[:len(b.items)]
	}
	for i := range b.items {
		d := &b.items[i]
		if r.riskBeside {
			r.taker.cur = d
		}
		for j, p := range r.side {
			out, pv, err := stepSafely(p, d.rec)
			b.side[i*k+j] = sideResult{seq: d.rec.Seq, out: out, err: err, panicked: pv}
		}
		if r.sideMemo != nil {
			b.memos[i] = *r.sideMemo
		}
	}
	if r.riskBeside {
		r.taker.cur = nil
	}
	close(b.sideDone)
}

// stepSafely runs p.Step as the pipeline does, turning a panic into its value.
func stepSafely(p processors.Processor, rec events.Record) (out []processors.Output, panicked any, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, panicked, err = nil, v, nil
		}
	}()
	out, err = p.Step(rec)
	return out, nil, err
}
