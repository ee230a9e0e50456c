// Package replay is Vigil's second driver: it runs the processors over a
// recorded log — VIGIL_LOG, or a file written by `vigil audit export` —
// with the same folds and the same processors.Feed as the live driver
// (internal/driver), and
//
//   - checks that they reproduce the recorded derived stream byte for byte
//     (any difference is a bug in a fold or tampering with VIGIL_DERIVED);
//   - under another config (WhatIf), reports per action where the gate's
//     decision would have differed: "what would this policy have stopped?";
//   - feeds a Sink, which is how the read models are rebuilt from the log.
//
// # Ranges
//
// Folds carry state, so a replay always folds the log from its first
// record. From only says where comparison starts: records before it are
// folded silently, exactly as the live driver warms up after a restart.
// To says where the replay stops.
//
// # One conversation
//
// With Selection.Conversation the folds see that conversation's records
// plus the global ones (vigil.log._: global config events, allowlist and
// pairing changes): every record that can change a decision in the
// conversation. Conversation-scoped configs and approvals of the
// conversation are on its own subject. What the folds then do not see is
// the other conversations, which changes three things:
//
//   - processors that fold the whole log (the audit tree, listed in
//     Config.WholeLog) derive different outputs; they are not compared;
//   - only outputs about the conversation are compared (by their subject,
//     or for alerts their conversation); outputs of global records are not;
//   - gate state shared across conversations other than through global
//     events would be missing. The gate keeps none today (session grants
//     are per conversation; the allowlist is global events), so decisions
//     replay exactly; if a difference appears only with --conversation,
//     confirm it with a full replay.
//
// The package does no I/O of its own beyond its sources. Run's
// goroutines (reading and decoding the source, scoring actions ahead of
// the fold, the processors folded beside it, reading the recorded
// stream, the stages after the fold) all end before it returns.
package replay

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/risk"
)

// Config configures a replay.
type Config struct {
	Source Source
	// Build returns a fresh set of processors, in the live system's order,
	// built with o. It is called once, and once more with
	// o.ConfigOverride = WhatIf for a what-if replay.
	Build func(o processors.Options) ([]processors.Processor, error)
	// From is the first log sequence whose outputs are compared (and
	// what-if decisions reported); earlier records are only folded.
	From uint64
	// To is the last log sequence replayed; 0 means the end of the source.
	To uint64
	// Conversation restricts the replay to one conversation (see the package doc).
	Conversation string
	// WholeLog names processors whose outputs depend on every record, not
	// compared in a one-conversation replay; nil means {"audit"}.
	WholeLog []string
	// Recorded, when set, is the derived stream to compare with.
	Recorded Recorded
	// UnsignedCheckpoints compares audit checkpoints without their signed
	// note (tree size and root hash only): for a replay without the
	// node's signing key, whose Build signs with another one.
	UnsignedCheckpoints bool
	// ExportChecks, when set, are an export's risk and gate data to compare with.
	ExportChecks *ExportChecks
	// WhatIf replays a second time, in the same pass, under this config in
	// place of every config event, and reports the gate's changed decisions.
	WhatIf *events.Config
	// OnChange, when set, receives every action whose fate differs under
	// WhatIf, as soon as both fates are known (nearly log order); the
	// report lists only the first MaxListed.
	OnChange func(ActionChange)
	// Sink, when set, receives every applied record in batches of
	// BatchSize, in log order (projections rebuild).
	Sink      func([]processors.Applied) error
	BatchSize int
	// Progress, when set, is called every ProgressEvery records and at the end.
	Progress      func(Progress)
	ProgressEvery int
	// MaxListed bounds the differences and changed actions listed in the
	// report (all are counted); 0 means 100.
	MaxListed int
	// Frontier, when set, says why the replay stops where it does (To):
	// it is copied to the report.
	Frontier *Frontier
	// Workers score actions ahead of the fold, in parallel (ahead.go); 0
	// means GOMAXPROCS, 1 scoring in the fold. The outputs are the same
	// bytes either way.
	Workers int
	// MemoEntries bounds each scoring worker's memo of assessments
	// (ahead.go: a repeated action is scored once per config and
	// environment); 0 means 8192, negative no memo.
	MemoEntries int
	// Beside names the processors folded beside the fold, on a goroutine
	// of their own (beside.go), when Workers is not 1: processors that
	// share no state with the others and whose outputs depend only on the
	// records they are fed, or the risk processor (whose memo is handed
	// over). nil means {"risk", "audit", "stats"}.
	Beside []string
}

// Frontier is the last log sequence a replay of a live log compares, and
// why it is known that both sides reached it: the recorded outputs of
// every record up to it are stored (a live driver's checkpoint: its
// outputs are stored before it acknowledges; or the derived stream's
// frontier), or the caller chose it. LiveFrontier chooses one.
type Frontier struct {
	Seq uint64 `json:"seq"`
	// By is FrontierCheckpoint, FrontierDerived, FrontierTo or FrontierLogEnd.
	By string `json:"by"`
	// Detail names the checkpoint (the driver's durable consumer) or what
	// the choice leaves out, for people.
	Detail string `json:"detail,omitempty"`
	// Published, when set, is the last log sequence whose outputs are
	// known to be stored, and PublishedBy how it is known
	// (FrontierCheckpoint or FrontierDerived). A replayed output of a
	// later record that the record lacks is not published yet: it is
	// counted in Report.Unpublished, not as missing.
	Published   *uint64 `json:"published,omitempty"`
	PublishedBy string  `json:"published_by,omitempty"`
	// LogEnd is the log's last sequence when the frontier was chosen (0:
	// not read).
	LogEnd uint64 `json:"log_end,omitempty"`
}

// Frontier kinds.
const (
	// FrontierCheckpoint: the highest checkpoint of the nodes' live
	// drivers (their durable consumers' ack floor on VIGIL_LOG).
	FrontierCheckpoint = "checkpoint"
	// FrontierTo: the caller's --to.
	FrontierTo = "to"
	// FrontierLogEnd: the end of the source (no live driver's checkpoint
	// is known: an export, or a log no driver ever read).
	FrontierLogEnd = "log-end"
)

// Progress reports a replay under way.
type Progress struct {
	Records uint64
	Seq     uint64
	Elapsed time.Duration
	Done    bool
}

// Report is the outcome of a replay.
type Report struct {
	Source       string   `json:"source"`
	Processors   []string `json:"processors"`
	Conversation string   `json:"conversation,omitempty"`
	From         uint64   `json:"from,omitempty"`
	To           uint64   `json:"to,omitempty"`
	// First and Last are the first and last log sequences replayed;
	// Records counts them, Compared those at or after From.
	First    uint64 `json:"first"`
	Last     uint64 `json:"last"`
	Records  uint64 `json:"records"`
	Compared uint64 `json:"compared"`
	// Verified is true when outputs were compared with a record.
	Verified bool `json:"verified"`
	// Outputs counts the outputs replay derived and compared; Recorded the
	// recorded outputs considered; Matched those identical.
	Outputs  uint64 `json:"outputs"`
	Recorded uint64 `json:"recorded"`
	Matched  uint64 `json:"matched"`
	// Changed, Missing, Unexpected and Malformed count the differences by
	// kind; Differences lists the first MaxListed.
	Changed     uint64       `json:"changed"`
	Missing     uint64       `json:"missing"`
	Unexpected  uint64       `json:"unexpected"`
	Malformed   uint64       `json:"malformed"`
	Differences []Difference `json:"differences,omitempty"`
	// Duplicates counts recorded outputs stored twice with the same bytes
	// (a republish after the dedup window: harmless). Ignored counts
	// recorded messages no fold produces (the ingest service's, and the
	// live driver's own alerts).
	Duplicates uint64 `json:"duplicates,omitempty"`
	// Unpublished counts replayed outputs of records after
	// Frontier.Published that the record does not hold: not stored yet,
	// which is no difference.
	Unpublished uint64        `json:"unpublished,omitempty"`
	Ignored     uint64        `json:"ignored,omitempty"`
	WhatIf      *WhatIfReport `json:"what_if,omitempty"`
	// ScoredAhead counts the actions whose assessment was scored ahead of
	// the fold, in parallel (Config.Workers).
	ScoredAhead uint64 `json:"scored_ahead,omitempty"`
	// ScoredRepeats counts those of them that repeated an action scored
	// before under the same config and environment, and took a copy of
	// its assessment (Config.MemoEntries).
	ScoredRepeats uint64 `json:"scored_repeats,omitempty"`
	// Frontier says where and why the comparison stops (Config.Frontier).
	Frontier *Frontier     `json:"frontier,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// Identical reports whether the replay reproduced the record exactly.
func (r *Report) Identical() bool {
	return r.Changed+r.Missing+r.Unexpected+r.Malformed == 0
}

// Rate is the replay's speed in records per second.
func (r *Report) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Records) / r.Elapsed.Seconds()
}

// ErrNoGate means a what-if replay has no processor deciding on actions.
var ErrNoGate = errors.New("replay: what-if needs a processor that emits gate decisions (the gate)")

// Run replays the source and returns the report. An error means the
// replay could not run to the end (a source or sink failed, ctx ended);
// differences are not errors: see Report.Identical.
//
// The fold itself is sequential (it is one fold over the log); the work
// around it runs beside it, one goroutine per stage, in log order:
// encoding and comparing the outputs, the what-if fold, and the sink.
// Stages read the records and outputs the fold returned, never changing
// them: processors must not change an output once returned (the live
// driver relies on the same, handing outputs to its Sink a batch later).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Source == nil || cfg.Build == nil {
		return nil, errors.New("replay: Source and Build are required")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 512
	}
	if cfg.MaxListed <= 0 {
		cfg.MaxListed = 100
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 4096
	}
	if cfg.WholeLog == nil {
		cfg.WholeLog = []string{"audit"}
	}
	if cfg.Beside == nil {
		cfg.Beside = []string{"risk", "audit", "stats"}
	}
	if cfg.To != 0 && cfg.From > cfg.To {
		return nil, fmt.Errorf("replay: --from %d is after --to %d", cfg.From, cfg.To)
	}
	procs, err := cfg.Build(processors.Options{})
	if err != nil {
		return nil, fmt.Errorf("replay: processors: %w", err)
	}
	rep := &Report{Source: cfg.Source.String(), Conversation: cfg.Conversation, From: cfg.From, To: cfg.To,
		Verified: cfg.Recorded != nil || cfg.ExportChecks != nil, Frontier: cfg.Frontier}
	for _, p := range procs {
		rep.Processors = append(rep.Processors, p.Name())
	}
	r := &runner{cfg: cfg, rep: rep, start: time.Now(), workers: cfg.Workers}
	if r.workers == 0 {
		r.workers = runtime.GOMAXPROCS(0)
	}
	if r.workers > 1 {
		procs = slices.Clone(procs)
		for i, p := range procs {
			rp, isRisk := p.(*risk.Processor)
			if isRisk {
				rp.WithAhead(&r.taker)
			}
			if !slices.Contains(cfg.Beside, p.Name()) {
				continue
			}
			bp := &besideProc{r: r, i: len(r.side), name: p.Name()}
			if isRisk {
				if m := rp.Memo(); m != nil {
					if r.sideMemo != nil {
						continue // one processor beside the fold hands a memo over
					}
					// Its own memo, handed over to the fold's record by record.
					bp.memo, r.sideMemo = m, &risk.Memo{}
					rp.WithMemo(r.sideMemo)
				}
				r.riskBeside = true
			}
			procs[i] = bp
			r.side = append(r.side, p)
		}
	}
	if r.pipe, err = processors.NewPipeline(procs...); err != nil {
		return nil, err
	}
	if cfg.WhatIf != nil {
		if err := events.ValidateConfig(*cfg.WhatIf); err != nil {
			return nil, fmt.Errorf("replay: what-if config: %w", err)
		}
		aprocs, err := cfg.Build(processors.Options{ConfigOverride: cfg.WhatIf})
		if err != nil {
			return nil, fmt.Errorf("replay: processors under the what-if config: %w", err)
		}
		if !slices.ContainsFunc(aprocs, func(p processors.Processor) bool { return p.Name() == "gate" }) {
			return nil, ErrNoGate
		}
		if r.alt, err = processors.NewPipeline(aprocs...); err != nil {
			return nil, err
		}
		r.wi = newWhatIf(cfg.WhatIf, cfg.MaxListed)
		r.wi.onChange = cfg.OnChange
		rep.WhatIf = &r.wi.rep
	}
	if rep.Verified {
		r.cmp = newComparer(rep, cfg.MaxListed)
		if fr := cfg.Frontier; fr != nil && fr.Published != nil {
			r.cmp.published, r.cmp.bounded = *fr.Published, true
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	if cfg.Recorded != nil {
		r.recCh = make(chan RecordedOutput, 4096)
		r.recErr = make(chan error, 1)
		wg.Go(func() {
			defer close(r.recCh)
			r.recErr <- cfg.Recorded.Outputs(ctx, func(o RecordedOutput) error {
				select {
				case r.recCh <- o:
					return nil
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			})
		})
	}
	var stages []*stage
	if r.cmp != nil {
		stages = append(stages, r.newStage(ctx, cancel, &wg, r.check, r.finishCheck))
	}
	if r.alt != nil {
		stages = append(stages, r.newStage(ctx, cancel, &wg, r.whatIfStep, func() error { r.wi.finish(); return nil }))
	}
	if cfg.Sink != nil {
		stages = append(stages, r.newStage(ctx, cancel, &wg, r.sinkStep, r.finishSink))
	}
	r.stages = stages
	err = r.readDecoded(ctx, Selection{To: cfg.To, Conversation: cfg.Conversation})
	if err == nil {
		r.flush()
	} else {
		cancel(err)
	}
	for _, st := range stages {
		close(st.in)
	}
	wg.Wait()
	if cerr := context.Cause(ctx); err == nil && cerr != nil && !errors.Is(cerr, errDone) {
		err = cerr
	}
	if err != nil {
		return rep, err
	}
	rep.ScoredAhead, rep.ScoredRepeats = r.taker.ahead, r.taker.repeats
	rep.Elapsed = time.Since(r.start)
	if cfg.Progress != nil {
		cfg.Progress(Progress{Records: rep.Records, Seq: rep.Last, Elapsed: rep.Elapsed, Done: true})
	}
	return rep, nil
}

// errDone cancels the reader of the recorded stream once it is no longer needed.
var errDone = errors.New("replay: done")

// item is one folded record, as the stages see it.
type item struct {
	raw  Record
	rec  events.Record
	outs []processors.Output
}

// itemBatch amortises the hand-over between the fold and its stages.
const itemBatch = 128

type stage struct {
	in chan []item
}

// newStage runs fn on every item, in order, then finish; the first error
// cancels the replay.
func (r *runner) newStage(ctx context.Context, cancel context.CancelCauseFunc, wg *sync.WaitGroup, fn func(*item) error, finish func() error) *stage {
	st := &stage{in: make(chan []item, 64)}
	wg.Go(func() {
		var err error
		for items := range st.in {
			for i := range items {
				if err == nil {
					err = fn(&items[i])
				}
			}
			if err != nil {
				cancel(err)
			}
		}
		if err == nil && ctx.Err() == nil {
			err = finish()
		}
		if err != nil {
			cancel(err)
		}
	})
	return st
}

type runner struct {
	cfg    Config
	rep    *Report
	pipe   *processors.Pipeline
	alt    *processors.Pipeline
	wi     *whatIf
	cmp    *comparer
	stages []*stage
	items  []item
	batch  []processors.Applied
	start  time.Time

	// workers score actions ahead of the fold (ahead.go); taker hands
	// their assessments to the risk processor.
	workers int
	taker   taker
	// side are the processors folded beside the fold (beside.go), and
	// curSide what they did with the record being folded; riskBeside says
	// the risk processor is one of them, and sideMemo is its memo when it
	// has one, curMemo that memo's state after the record being folded.
	side       []processors.Processor
	curSide    []sideResult
	riskBeside bool
	sideMemo   *risk.Memo
	curMemo    *risk.Memo

	recCh      chan RecordedOutput
	recErr     chan error
	recDone    bool
	recPulled  uint64 // the log sequence of the last recorded output pulled
	lastSeen   uint64 // the last log sequence the checker saw
	sinceProgr int
}

// decoded is a raw record decoded ahead of the fold, and for an action
// scored ahead, its assessment (ahead.go).
type decoded struct {
	raw Record
	rec events.Record
	err error

	key    risk.MemoKey
	scorer *risk.Scorer
	a      risk.Assessment
	scored bool
	repeat bool // a copied from a repeat's (scoreMemo)
}

// decodedBatch is a batch of decoded records; done is closed once its
// actions are scored.
type decodedBatch struct {
	items []decoded
	done  chan struct{}
	// side holds, for each item in turn, what each processor beside the
	// fold did with it; sideDone is closed once it does (beside.go).
	side     []sideResult
	memos    []risk.Memo
	sideDone chan struct{}
}

// readDecoded reads the source and decodes on one goroutine, which also
// predicts how each action will be scored, while workers score the
// actions (ahead.go), another goroutine folds the processors beside the
// fold (beside.go), and the fold runs on this goroutine, in log order:
// the fold is sequential by nature, so everything that need not be in
// it runs beside it.
func (r *runner) readDecoded(ctx context.Context, sel Selection) error {
	const batchSize = 256
	ch := make(chan *decodedBatch, 8)
	srcErr := make(chan error, 1)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var work chan *decodedBatch
	var workers sync.WaitGroup
	var pred *predictor
	if r.workers > 1 {
		work, pred = make(chan *decodedBatch, 2*r.workers), newPredictor()
		for range r.workers {
			workers.Go(func() {
				m := newScoreMemo(r.cfg.MemoEntries)
				for b := range work {
					score(b, m)
				}
			})
		}
	}
	var sideCh chan *decodedBatch
	if len(r.side) > 0 {
		sideCh = make(chan *decodedBatch, 8)
		workers.Go(func() {
			for b := range sideCh {
				r.foldBeside(b)
			}
		})
	}
	// Batches folded come back to the reader (a batch is 170 KB, and
	// allocating them was a tenth of what a replay allocates).
	free := make(chan *decodedBatch, 16)
	newBatch := func() *decodedBatch {
		select {
		case b := <-free:
			clear(b.items)
			clear(b.side)
			clear(b.memos)
			b.items, b.side, b.memos = b.items[:0], b.side[:0], b.memos[:0]
			return b
		default:
			return &decodedBatch{items: make([]decoded, 0, batchSize)}
		}
	}
	go func() {
		defer close(ch)
		if work != nil {
			defer close(work)
		}
		if sideCh != nil {
			defer close(sideCh)
		}
		batch := newBatch()
		ahead := false
		send := func() bool {
			batch.done = make(chan struct{})
			if ahead {
				select {
				case work <- batch:
				case <-rctx.Done():
					return false
				}
			} else {
				close(batch.done)
			}
			if sideCh != nil {
				batch.sideDone = make(chan struct{})
				select {
				case sideCh <- batch:
				case <-rctx.Done():
					return false
				}
			}
			select {
			case ch <- batch:
			case <-rctx.Done():
				return false
			}
			batch, ahead = newBatch(), false
			return true
		}
		err := r.cfg.Source.Records(rctx, sel, func(raw Record) error {
			rec, derr := processors.Decode(raw.Seq, raw.Subject, raw.Data)
			batch.items = append(batch.items, decoded{raw: raw, rec: rec, err: derr})
			if pred != nil && pred.observe(&batch.items[len(batch.items)-1]) {
				ahead = true
			}
			if len(batch.items) == batchSize && !send() {
				return rctx.Err()
			}
			return nil
		})
		if err == nil && len(batch.items) > 0 {
			send()
		}
		srcErr <- err
	}()
	defer workers.Wait()
	k := len(r.side)
	for batch := range ch {
		for _, done := range []chan struct{}{batch.done, batch.sideDone} {
			if done == nil {
				continue
			}
			select {
			case <-done:
			case <-ctx.Done():
				stop()
				for range ch { // let the reader end
				}
				return ctx.Err()
			}
		}
		for i := range batch.items {
			d := &batch.items[i]
			if !r.riskBeside {
				r.taker.cur = d
			}
			if k > 0 {
				r.curSide = batch.side[i*k : (i+1)*k]
			}
			if r.sideMemo != nil {
				r.curMemo = &batch.memos[i]
			}
			r.step(d.raw, d.rec, d.err)
		}
		r.curSide, r.curMemo = nil, nil
		if !r.riskBeside {
			r.taker.cur = nil
		}
		// Nothing refers to a folded batch any more: step copied what
		// it keeps.
		select {
		case free <- batch:
		default:
		}
	}
	return <-srcErr
}

// step folds one decoded record and hands it to the stages.
func (r *runner) step(raw Record, rec events.Record, decodeErr error) {
	rep := r.rep
	rep.Records++
	if rep.First == 0 {
		rep.First = raw.Seq
	}
	rep.Last = raw.Seq
	if raw.Seq >= r.cfg.From {
		rep.Compared++
	}
	outs := processors.FeedRecord(r.pipe, rec, decodeErr)
	if len(r.stages) > 0 {
		r.items = append(r.items, item{raw: raw, rec: rec, outs: outs})
		if len(r.items) >= itemBatch {
			r.flush()
		}
	}
	if r.cfg.Progress != nil {
		r.sinceProgr++
		if r.sinceProgr >= r.cfg.ProgressEvery {
			r.sinceProgr = 0
			r.cfg.Progress(Progress{Records: rep.Records, Seq: raw.Seq, Elapsed: time.Since(r.start)})
		}
	}
}

func (r *runner) flush() {
	if len(r.items) == 0 {
		return
	}
	for _, st := range r.stages {
		st.in <- r.items
	}
	r.items = make([]item, 0, itemBatch)
}

// check encodes and compares one record's outputs (the checker stage).
func (r *runner) check(it *item) error {
	seq := it.raw.Seq
	r.lastSeen = seq
	if seq < r.cfg.From {
		return nil
	}
	for i := range it.outs {
		o := &it.outs[i]
		if !r.comparable(o.Event.ID, o.Subject, o.Event.Conversation) {
			continue
		}
		if r.cfg.Recorded != nil {
			b, err := o.Event.Marshal()
			if err != nil {
				return fmt.Errorf("replay: output %s of log seq %d does not encode: %w", o.Event.ID, seq, err)
			}
			if r.cfg.UnsignedCheckpoints && o.Event.Kind == events.KindAuditCheckpoint {
				b = unsigned(b)
			}
			r.cmp.replayed(o.Event.ID, seq, o.Subject, b)
		}
		if r.cfg.ExportChecks != nil {
			r.cfg.ExportChecks.replayed(r.cmp, o)
		}
	}
	if r.recCh != nil {
		r.pull(seq)
		if r.recDone && len(r.cmp.expected) > 0 {
			r.cmp.flushMissing()
		}
	}
	return nil
}

func (r *runner) finishCheck() error {
	if r.recCh != nil {
		r.pull(^uint64(0))
		if err := <-r.recErr; err != nil {
			return err
		}
	}
	r.dropBeyond(r.lastSeen)
	r.cmp.finish()
	if r.cfg.ExportChecks != nil {
		r.cfg.ExportChecks.finish(r.cmp)
	}
	return nil
}

// whatIfStep folds one record under the what-if config (its own stage:
// the two folds are independent).
func (r *runner) whatIfStep(it *item) error {
	// A fresh decode: the main fold's record is shared with other stages.
	_, altOuts := processors.Feed(r.alt, it.raw.Seq, it.raw.Subject, it.raw.Data)
	if it.raw.Seq >= r.cfg.From {
		r.wi.observe(&it.rec, it.outs, altOuts)
	}
	return nil
}

func (r *runner) sinkStep(it *item) error {
	r.batch = append(r.batch, processors.Applied{Record: it.rec, Outputs: it.outs})
	if len(r.batch) < r.cfg.BatchSize {
		return nil
	}
	err := r.cfg.Sink(r.batch)
	r.batch = make([]processors.Applied, 0, r.cfg.BatchSize)
	return err
}

func (r *runner) finishSink() error {
	if len(r.batch) == 0 {
		return nil
	}
	return r.cfg.Sink(r.batch)
}

// pull takes recorded outputs until one is past seq (it is kept for later).
func (r *runner) pull(seq uint64) {
	for !r.recDone && r.recPulled <= seq {
		o, ok := <-r.recCh
		if !ok {
			r.recDone = true
			return
		}
		r.recorded(o)
	}
}

func (r *runner) recorded(o RecordedOutput) {
	if ignoredID(o.ID) {
		r.rep.Ignored++
		return
	}
	if o.Err != nil {
		r.cmp.diff(Difference{Kind: DiffMalformed, ID: o.ID, Subject: o.Subject, Recorded: o.Data,
			Detail: fmt.Sprintf("%s sequence %d: %v", events.StreamDerived, o.StreamSeq, o.Err)})
		return
	}
	if o.Seq > r.recPulled {
		r.recPulled = o.Seq
	}
	if o.BodyID != o.ID {
		r.cmp.diff(Difference{Kind: DiffMalformed, ID: o.ID, Seq: o.Seq, Subject: o.Subject, Recorded: o.Data,
			Detail: fmt.Sprintf("%s sequence %d: Nats-Msg-Id %q but the body says %q", events.StreamDerived, o.StreamSeq, o.ID, o.BodyID)})
		return
	}
	if o.Seq < r.cfg.From || (r.cfg.To != 0 && o.Seq > r.cfg.To) {
		return
	}
	if !r.comparable(o.ID, o.Subject, o.Conversation) {
		return
	}
	if r.cfg.UnsignedCheckpoints && o.Subject == events.SubjectCheckpoint {
		o.Data = unsigned(o.Data)
	}
	r.cmp.recordedOut(o)
}

// dropBeyond forgets recorded outputs of records after the last one
// replayed (the log grew while the replay ran).
func (r *runner) dropBeyond(last uint64) {
	for id, p := range r.cmp.recorded {
		if p.seq > last {
			delete(r.cmp.recorded, id)
			r.rep.Recorded--
		}
	}
}

// comparable says whether an output takes part in the comparison.
func (r *runner) comparable(id, subject, conv string) bool {
	if r.cfg.Conversation == "" {
		return true
	}
	proc, _, _ := strings.Cut(id, ":")
	if slices.Contains(r.cfg.WholeLog, proc) {
		return false
	}
	return outputConv(subject, conv) == r.cfg.Conversation
}

// outputConv is the conversation an output is about: its subject's for
// risk, gate and stats outputs, else the conversation of its record.
func outputConv(subject, conv string) string {
	for _, p := range []string{events.RiskPrefix, events.GatePrefix, events.StatsPrefix} {
		if tok, ok := strings.CutPrefix(subject, p); ok {
			return tok
		}
	}
	if conv == "" {
		return events.GlobalScope
	}
	return conv
}
