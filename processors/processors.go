// Package processors holds the contract every Vigil stream processor
// follows, and the small pieces of state several of them fold the same way.
//
// A processor is a deterministic fold: it is fed log records in VIGIL_LOG
// order and returns the derived events its drivers must publish. It does no
// I/O and reads no clock and no randomness, so the live driver
// (internal/driver) and the replay driver (replay/) produce byte-identical
// outputs from the same log. Rule of thumb: if a function here needs a
// context.Context, a logger or a clock, the work belongs in a driver.
package processors

import (
	"fmt"
	"strconv"

	"github.com/vigil-dev/vigil/events"
)

// Output is one derived event a processor asks its driver to publish.
//
// The driver publishes Event.Marshal() on Subject with Nats-Msg-Id =
// Event.ID, and checkpoints the log record only after every output of that
// record is acknowledged. Outputs of one record are published in order.
type Output struct {
	Subject string
	Event   events.Derived
}

// Processor is a deterministic fold over the log.
//
// Step must be called with records in strictly increasing Seq order. It
// returns the outputs for rec; an error means rec could not be folded (the
// driver records it and goes on: a poison record never stalls a processor),
// and the processor's state must then be as if rec had not been seen.
type Processor interface {
	// Name is the processor's stable name; it prefixes every output id.
	Name() string
	Step(rec events.Record) ([]Output, error)
}

// OutputID is the id, and Nats-Msg-Id, of output n of a processor for the
// log record at seq: "<processor>:<seq>" for the first, "<processor>:<seq>:<n>" after.
func OutputID(processor string, seq uint64, n int) string {
	if n == 0 {
		return processor + ":" + strconv.FormatUint(seq, 10)
	}
	return processor + ":" + strconv.FormatUint(seq, 10) + ":" + strconv.Itoa(n)
}

// NewOutput builds output n of processor for rec.
func NewOutput(processor string, rec *events.Record, n int, subject string, kind events.Kind, data any) Output {
	return Output{
		Subject: subject,
		Event: events.Derived{
			V:            events.CurrentVersion,
			ID:           OutputID(processor, rec.Seq, n),
			Kind:         kind,
			Conversation: rec.Event.Conversation,
			Seq:          rec.Seq,
			Time:         rec.Event.Time.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"),
			Data:         data,
		},
	}
}

// Pipeline runs several processors over the same records, in a fixed order.
// It is itself a Processor, so drivers can run one processor or many.
type Pipeline struct {
	procs []Processor
}

// NewPipeline returns a pipeline of procs; names must be unique.
func NewPipeline(procs ...Processor) (*Pipeline, error) {
	seen := map[string]bool{}
	for _, p := range procs {
		if seen[p.Name()] {
			return nil, fmt.Errorf("processors: two processors named %q", p.Name())
		}
		seen[p.Name()] = true
	}
	return &Pipeline{procs: procs}, nil
}

// Name is "pipeline".
func (p *Pipeline) Name() string { return "pipeline" }

// Processors returns the processors in order.
func (p *Pipeline) Processors() []Processor { return p.procs }

// StepError says which processor failed on which record.
type StepError struct {
	Processor string
	Seq       uint64
	Err       error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("processor %s at log seq %d: %v", e.Processor, e.Seq, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// Step feeds rec to every processor. A failing processor does not stop the
// others: their outputs are returned together with the first error.
func (p *Pipeline) Step(rec events.Record) ([]Output, error) {
	var out []Output
	var firstErr error
	for _, proc := range p.procs {
		o, err := proc.Step(rec)
		if err != nil {
			if firstErr == nil {
				firstErr = &StepError{Processor: proc.Name(), Seq: rec.Seq, Err: err}
			}
			continue
		}
		out = append(out, o...)
	}
	return out, firstErr
}

// Feed decodes one raw log record and steps p with it: Decode, then
// FeedRecord. It never fails: a record that does not decode, or that p
// cannot fold, also yields an alert output (deterministically, so replay
// produces the same alert). Both the live and the replay driver go through
// these two functions, which is what makes them agree; replay calls them
// separately so it can decode ahead on another core.
func Feed(p Processor, seq uint64, subject string, raw []byte) (events.Record, []Output) {
	rec, err := Decode(seq, subject, raw)
	return rec, FeedRecord(p, rec, err)
}

// Decode turns one raw log record into a Record. On error the Record still
// carries Seq, Subject and Raw, with a zero Event.
func Decode(seq uint64, subject string, raw []byte) (events.Record, error) {
	ev, err := events.DecodeMsgpack(raw)
	if err != nil {
		ev = events.Event{}
	}
	return events.Record{Seq: seq, Subject: subject, Raw: raw, Event: ev}, err
}

// FeedRecord steps p with a record from Decode and its decode error.
//
// A record that did not decode is still stepped, with a zero Event (Kind
// ""): processors that work on the stored bytes (audit) see every record,
// and the others ignore a kind they do not know.
func FeedRecord(p Processor, rec events.Record, decodeErr error) []Output {
	out, err := p.Step(rec)
	if decodeErr != nil {
		out = append(out, alertOutput(p.Name(), &rec, 0, fmt.Sprintf("log record %d does not decode: %v", rec.Seq, decodeErr)))
	} else if err != nil {
		out = append(out, alertOutput(p.Name(), &rec, 0, err.Error()))
	}
	return out
}

func alertOutput(proc string, rec *events.Record, n int, reason string) Output {
	o := NewOutput(proc, rec, n, events.SubjectAlert, events.KindAlert, events.Alert{
		Severity: "high", Reason: reason, EventID: rec.Event.ID, LogSeq: rec.Seq,
	})
	o.Event.ID = proc + ":" + fmt.Sprint(rec.Seq) + ":alert"
	return o
}
