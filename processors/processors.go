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
	"encoding"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"

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

// Applied is one log record and the outputs the processors derived from
// it, as drivers (live and replay) hand them to the read models once the
// outputs are stored.
type Applied struct {
	Record  events.Record
	Outputs []Output
}

// Processor is a deterministic fold over the log.
//
// Step must be called with records in strictly increasing Seq order. It
// returns the outputs for rec; an error means rec could not be folded (the
// driver records it and goes on: a poison record never stalls a processor),
// and the processor's state must then be as if rec had not been seen.
//
// A Step that panics is recovered (by Pipeline for each of its processors,
// and by FeedRecord): its outputs for rec are dropped and replaced by one
// alert ("<processor>:<seq>:panic"), and the processor is fed the next
// record as usual. Go cannot roll a value back, so its state is whatever
// the panic left behind: the updates Step made before it panicked stay,
// the rest never happen. That state is the same in the live driver and in
// replay (both recover the same way at the same record), so they still
// agree; the alert tells an operator the processor's view from that record
// on deserves a look. Unrecoverable runtime failures (a stack overflow, out
// of memory) still end the process.
type Processor interface {
	// Name is the processor's stable name; it prefixes every output id.
	Name() string
	Step(rec events.Record) ([]Output, error)
}

// OutputID is the id, and Nats-Msg-Id, of output n of a processor for the
// log record at seq: "<processor>:<seq>" for the first, "<processor>:<seq>:<n>" after.
func OutputID(processor string, seq uint64, n int) string {
	// Built in one buffer: one allocation, the string itself.
	var buf [64]byte
	b := append(append(buf[:0], processor...), ':')
	b = strconv.AppendUint(b, seq, 10)
	if n != 0 {
		b = strconv.AppendInt(append(b, ':'), int64(n), 10)
	}
	return string(b)
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
	// bounder bounds the outputs FeedRecord returns for this pipeline.
	bounder *Bounder
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
	return &Pipeline{procs: procs, bounder: NewBounder(DefaultLimits())}, nil
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
// others: their outputs are returned together with the first error. A
// processor that panics does not stop them either: its outputs for rec are
// replaced by a panic alert (see Processor).
func (p *Pipeline) Step(rec events.Record) ([]Output, error) {
	// Each processor's outputs are kept until all have run, so that they
	// are copied into one slice of the right size.
	var parts [8][]Output
	each := parts[:0]
	n := 0
	var firstErr error
	for _, proc := range p.procs {
		o, pv, err := safeStep(proc, rec)
		switch {
		case pv != nil:
			o = []Output{panicAlert(proc.Name(), &rec, pv)}
		case err != nil:
			if firstErr == nil {
				firstErr = &StepError{Processor: proc.Name(), Seq: rec.Seq, Err: err}
			}
			o = nil
		}
		each = append(each, o)
		n += len(o)
	}
	if n == 0 {
		return nil, firstErr
	}
	out := make([]Output, 0, n)
	for _, o := range each {
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
//
// Every output it returns is bounded to DefaultLimits (see Bounder; a
// Pipeline keeps its own Bounder, another processor gets a fresh one on
// each call): whatever a record holds, no output outgrows what
// VIGIL_DERIVED accepts, so no single record can stop a driver. A panic in
// p becomes an alert (see Processor).
func FeedRecord(p Processor, rec events.Record, decodeErr error) []Output {
	out, pv, err := safeStep(p, rec)
	if pv != nil {
		out = []Output{panicAlert(p.Name(), &rec, pv)}
	}
	if decodeErr != nil {
		out = append(out, alertOutput(p.Name(), &rec, 0, fmt.Sprintf("log record %d does not decode: %v", rec.Seq, decodeErr)))
	} else if err != nil {
		out = append(out, alertOutput(p.Name(), &rec, 0, err.Error()))
	}
	bd := (*Bounder)(nil)
	if pipe, ok := p.(*Pipeline); ok {
		bd = pipe.bounder
	}
	if bd == nil {
		bd = NewBounder(DefaultLimits())
	}
	return bd.Bound(&rec, out)
}

// safeStep runs p.Step, turning a panic into its value.
func safeStep(p Processor, rec events.Record) (out []Output, panicked any, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, panicked, err = nil, v, nil
		}
	}()
	out, err = p.Step(rec)
	return out, nil, err
}

// panicAlert is the alert that replaces the outputs of a processor that
// panicked on rec. Its text must be the same in every run (replay compares
// it byte for byte), so a panic value is described by its message or its
// type, never by an address or a stack.
func panicAlert(proc string, rec *events.Record, v any) Output {
	o := alertOutput(proc, rec, 0, fmt.Sprintf("processor %s panicked on log seq %d (%s event %q) and goes on with the next record; its state may be partly updated by this record: %s",
		proc, rec.Seq, kindName(rec.Event.Kind), rec.Event.ID, describePanic(v)))
	o.Event.ID = OutputID(proc, rec.Seq, 0) + ":panic"
	return o
}

func kindName(k events.Kind) string {
	if k == "" {
		return "undecoded"
	}
	return string(k)
}

// describePanic renders a recovered value deterministically.
func describePanic(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("a panic value of type %T", v)
		}
	}()
	switch x := v.(type) {
	case error:
		return x.Error()
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return fmt.Sprint(x)
	}
	return fmt.Sprintf("a panic value of type %T", v)
}

func alertOutput(proc string, rec *events.Record, n int, reason string) Output {
	o := NewOutput(proc, rec, n, events.SubjectAlert, events.KindAlert, events.Alert{
		Severity: events.SeverityHigh, Reason: reason, EventID: rec.Event.ID, LogSeq: rec.Seq,
	})
	o.Event.ID = proc + ":" + fmt.Sprint(rec.Seq) + ":alert"
	return o
}

// Bounds on every output, applied by FeedRecord (see Limits). They are far
// below what NATS accepts (4 MiB a message) and what a person reads.
const (
	// MaxReasons is the most reasons one list in an output holds; a longer
	// list keeps MaxReasons-1 of them and ends with a marker reason.
	MaxReasons = 32
	// MaxStringBytes bounds any string of an output's data (a command, an
	// alert's reason, a shape).
	MaxStringBytes = 16 << 10
	// MaxReasonStringBytes bounds each string of a reason (its detail).
	MaxReasonStringBytes = 1 << 10
	// MaxOutputBytes bounds an output's encoded size; a larger output is
	// replaced by an alert. It is a quarter of the NATS payload limit, and
	// above the largest audit checkpoint audit.MaxInterval allows (about
	// 700 KB of leaf hashes, which cannot be shortened).
	MaxOutputBytes = 1 << 20
)

// Reason markers: what bounding writes into an output it shortened.
const (
	// BoundAnalyzer is the analyzer of a marker reason.
	BoundAnalyzer = "vigil"
	// RuleReasonsOmitted is the rule of the marker reason that ends a
	// shortened reason list.
	RuleReasonsOmitted = "reasons-omitted"
)

// Limits bound the outputs of a processor. A zero field means the default
// (the Max* constants). Both drivers must bound with the same limits, or
// they would not agree: FeedRecord always uses DefaultLimits.
type Limits struct {
	Reasons      int // reasons in one list
	String       int // bytes of a string in an output's data
	ReasonString int // bytes of a string in a reason
	Output       int // bytes of an encoded output
}

// DefaultLimits are the limits FeedRecord applies.
func DefaultLimits() Limits {
	return Limits{Reasons: MaxReasons, String: MaxStringBytes, ReasonString: MaxReasonStringBytes, Output: MaxOutputBytes}
}

// minLimit keeps a limit large enough for a truncation marker.
const minLimit = 64

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Reasons <= 0 {
		l.Reasons = d.Reasons
	}
	l.Reasons = max(l.Reasons, 2)
	if l.String <= 0 {
		l.String = d.String
	}
	if l.ReasonString <= 0 {
		l.ReasonString = d.ReasonString
	}
	if l.Output <= 0 {
		l.Output = d.Output
	}
	l.String, l.ReasonString, l.Output = max(l.String, minLimit), max(l.ReasonString, minLimit), max(l.Output, 4*minLimit)
	return l
}

// Bound is NewBounder(l).Bound(rec, outs).
func (l Limits) Bound(rec *events.Record, outs []Output) []Output {
	return NewBounder(l).Bound(rec, outs)
}

// Bounder bounds outputs to its Limits, deterministically: the same
// outputs always give the same bounded outputs.
//
//   - Every list of events.Reason longer than Limits.Reasons keeps the
//     Reasons-1 reasons of highest level (in their order) and ends with a
//     marker reason (analyzer BoundAnalyzer, rule RuleReasonsOmitted) that
//     says how many were omitted and carries the highest omitted level.
//   - Every string longer than its limit (Limits.ReasonString in a reason,
//     Limits.String elsewhere) keeps its beginning, cut on a UTF-8
//     boundary, and ends with a marker giving the bytes omitted and the
//     original size: " …[vigil: 69012 of 70036 bytes omitted]". An audit
//     checkpoint's strings (hashes, a signed note) are never cut.
//   - An output that still encodes to more than Limits.Output bytes (or
//     does not encode at all) is replaced by an alert, id
//     "<output id>:oversize", naming the processor, the log seq, the
//     output and its size.
//
// The data is walked generically (structs, maps, slices, pointers), so a
// new output type is bounded without being named here. Values are never
// changed in place: a processor may share them with its state, so what is
// shortened is a copy, of the same type. Map keys are not shortened (two
// could become one); they count towards the encoded size.
//
// A Bounder remembers the shape of the struct types it has walked (so the
// walk costs little on every record); it is not safe for concurrent use.
// Each Pipeline has its own.
type Bounder struct {
	l       Limits
	structs map[reflect.Type]*structPlan
	opaque  map[reflect.Type]bool
	reason  *structPlan // events.Reason's
	// keys are the encoded keys' bytes (keysOf) of events.Reason and of
	// the data types quickSize reads (0: not counted yet).
	reasonKeys, decidedKeys, assessedKeys, requestedKeys int
}

// NewBounder returns a Bounder for l (zero fields take the defaults).
func NewBounder(l Limits) *Bounder {
	bd := &Bounder{l: l.withDefaults(), structs: map[reflect.Type]*structPlan{}, opaque: map[reflect.Type]bool{}}
	bd.reason = bd.plan(reflect.TypeFor[events.Reason]())
	bd.reasonKeys = bd.keysOf(reflect.TypeFor[events.Reason]())
	return bd
}

// keysOf is the bytes of the encoded keys of struct type t, as the walk
// counts them.
func (bd *Bounder) keysOf(t reflect.Type) (n int) {
	for _, f := range bd.plan(t).fields {
		n += f.key
	}
	return n
}

// Bound returns outs, the outputs of rec, each bounded (see Bounder). outs
// itself is returned when nothing needed bounding.
func (bd *Bounder) Bound(rec *events.Record, outs []Output) (bounded []Output) {
	for i := range outs {
		o, changed := bd.boundOne(rec, outs[i])
		if !changed {
			continue
		}
		if bounded == nil {
			bounded = slices.Clone(outs)
		}
		bounded[i] = o
	}
	if bounded == nil {
		return outs
	}
	return bounded
}

// boundOne bounds one output.
func (bd *Bounder) boundOne(rec *events.Record, o Output) (out Output, changed bool) {
	defer func() {
		// A value bounding cannot walk must not stop the fold either.
		if v := recover(); v != nil {
			out, changed = bd.oversize(rec, o, fmt.Sprintf("cannot be bounded: %s", describePanic(v))), true
		}
	}()
	e := &o.Event
	strMax := bd.l.String
	if exactKind(e.Kind) {
		strMax = math.MaxInt
	}
	if size, ok := bd.quickSize(e.Data, strMax); ok && size+envelopeSize(e) <= bd.l.Output {
		return o, false
	}
	w := &walker{bd: bd}
	data, dataChanged := w.walk(reflect.ValueOf(e.Data), strMax, 0)
	if dataChanged {
		e.Data = data.Interface()
		changed = true
	}
	w.size += envelopeSize(e)
	if !w.opaque && w.size <= bd.l.Output {
		return o, changed
	}
	body, err := e.Marshal()
	if err != nil {
		return bd.oversize(rec, o, fmt.Sprintf("does not encode: %v", err)), true
	}
	if len(body) > bd.l.Output {
		return bd.oversize(rec, o, fmt.Sprintf("is %d bytes encoded, over the %d-byte bound", len(body), bd.l.Output)), true
	}
	return o, changed
}

// envelopeSize is what the walk counts for an output's envelope: keys, v,
// seq and the strings.
func envelopeSize(e *events.Derived) int {
	return 96 + len(e.ID) + len(e.Kind) + len(e.Conversation) + len(e.Time)
}

// quickSize is the walk without reflection for the data every action
// gets (gate.decided, gate.requested, risk.assessed, as values): the size
// the walk counts, and true, when the walk would change nothing in data
// (every string within its bound, no reason list too long); false when
// the walk must decide, or data is of another type.
// TestQuickSizeIsTheWalk holds it to the walk, field for field.
func (bd *Bounder) quickSize(data any, strMax int) (int, bool) {
	ok := true
	str := func(s string) int {
		if len(s) > strMax {
			ok = false
		}
		return len(s) + 5
	}
	const number = 9
	switch d := data.(type) {
	case events.GateDecided:
		if bd.decidedKeys == 0 {
			bd.decidedKeys = bd.keysOf(reflect.TypeFor[events.GateDecided]())
		}
		rs, rok := bd.quickReasons(d.Reasons)
		size := 5 + bd.decidedKeys + rs + 3*number + 1 +
			str(d.ActionID) + str(string(d.Outcome)) + str(string(d.By)) + str(string(d.Level)) + str(d.Approver) +
			str(d.Reason) + str(d.Shape) + str(string(d.Verdict)) + str(d.EntryID) + str(d.Would) + str(d.Digest)
		return size, ok && rok
	case events.RiskAssessed:
		if bd.assessedKeys == 0 {
			bd.assessedKeys = bd.keysOf(reflect.TypeFor[events.RiskAssessed]())
		}
		rs, rok := bd.quickReasons(d.Reasons)
		size := 5 + bd.assessedKeys + rs + 2*number + str(d.ActionID) + str(string(d.Level))
		return size, ok && rok
	case events.GateRequested:
		if bd.requestedKeys == 0 {
			bd.requestedKeys = bd.keysOf(reflect.TypeFor[events.GateRequested]())
		}
		rs, rok := bd.quickReasons(d.Reasons)
		size := 5 + bd.requestedKeys + rs + 2*number +
			str(d.ActionID) + str(string(d.Level)) + str(d.Tool) + str(d.Command) + str(d.Shape) + str(d.Timeout) +
			str(d.Agent) + str(d.Backend) + str(d.BackendClaimed) + str(d.Digest)
		return size, ok && rok
	}
	return 0, false
}

// quickReasons is the walk of a reason list, for quickSize.
func (bd *Bounder) quickReasons(rs []events.Reason) (int, bool) {
	if rs == nil {
		return 1, true
	}
	if len(rs) > bd.l.Reasons {
		return 0, false
	}
	size := 5
	for i := range rs {
		r := &rs[i]
		for _, s := range [...]string{r.Analyzer, r.Rule, r.Detail, string(r.Level)} {
			if len(s) > bd.l.ReasonString {
				return 0, false
			}
			size += len(s) + 5
		}
		size += 5 + bd.reasonKeys + 5 + 9*len(r.Span)
	}
	return size, true
}

// oversize is the alert that replaces output o of rec.
func (bd *Bounder) oversize(rec *events.Record, o Output, why string) Output {
	proc, _, _ := strings.Cut(o.Event.ID, ":")
	a := alertOutput(proc, rec, 0, fmt.Sprintf("output %s of processor %s for log seq %d (%s on %s) %s; it is replaced by this alert (the log record itself is intact)",
		o.Event.ID, proc, rec.Seq, o.Event.Kind, o.Subject, why))
	a.Event.ID = o.Event.ID + ":oversize"
	if !events.ValidID(a.Event.ID) {
		a.Event.ID = OutputID(proc, rec.Seq, 0) + ":oversize"
	}
	w := &walker{bd: bd}
	if v, ch := w.walk(reflect.ValueOf(a.Event.Data), bd.l.String, 0); ch {
		a.Event.Data = v.Interface()
	}
	return a
}

// exactKind reports whether the strings of kind k are data a cut would
// make wrong rather than text for people: an audit checkpoint's hashes,
// leaves and signed note. They are never shortened; only the output bound
// applies (the audit processor bounds them itself, see audit.MaxInterval).
func exactKind(k events.Kind) bool { return k == events.KindAuditCheckpoint }

// fieldKind is how the walk treats a struct field.
type fieldKind uint8

const (
	fieldString  fieldKind = iota // a string (of a type that does not encode itself)
	fieldNumber                   // an integer or a float
	fieldBool                     // a bool
	fieldNumbers                  // a slice or an array of numbers
	fieldReasons                  // []events.Reason
	fieldOther                    // anything else: walked generically
)

// structPlan is what the walk needs of a struct type: the fields msgpack
// encodes, each with its key's size and how to walk it.
type structPlan struct {
	fields []fieldPlan
	opaque bool // the type encodes itself
}

type fieldPlan struct {
	index int
	key   int // bytes of the encoded key
	kind  fieldKind
}

func (bd *Bounder) plan(t reflect.Type) *structPlan {
	if p, ok := bd.structs[t]; ok {
		return p
	}
	p := &structPlan{opaque: bd.isOpaque(t)}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fp := fieldPlan{index: i, key: len(name) + 5, kind: fieldOther}
		switch k := f.Type.Kind(); {
		case bd.isOpaque(f.Type):
		case k == reflect.String:
			fp.kind = fieldString
		case numberKind(k):
			fp.kind = fieldNumber
		case k == reflect.Bool:
			fp.kind = fieldBool
		case (k == reflect.Slice || k == reflect.Array) && numberKind(f.Type.Elem().Kind()) && !bd.isOpaque(f.Type.Elem()):
			fp.kind = fieldNumbers
		case f.Type == reflect.TypeFor[[]events.Reason]():
			fp.kind = fieldReasons
		}
		p.fields = append(p.fields, fp)
	}
	bd.structs[t] = p
	return p
}

func numberKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64 || k == reflect.Float32 || k == reflect.Float64
}

// isOpaque reports whether t encodes itself (the walk cannot bound its
// size, and does not look inside). Only defined types have methods.
func (bd *Bounder) isOpaque(t reflect.Type) bool {
	if t.Kind() == reflect.Interface {
		return false
	}
	if t.PkgPath() == "" && (t.Kind() != reflect.Pointer || t.Elem().PkgPath() == "") {
		return false // predeclared or unnamed: no methods
	}
	if o, ok := bd.opaque[t]; ok {
		return o
	}
	o := false
	if pt := reflect.PointerTo(t); pt.NumMethod() > 0 {
		for _, it := range [...]reflect.Type{reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[msgpack.Marshaler](),
			reflect.TypeFor[encoding.BinaryMarshaler](), reflect.TypeFor[encoding.TextMarshaler]()} {
			if t.Implements(it) || pt.Implements(it) {
				o = true
				break
			}
		}
	}
	bd.opaque[t] = o
	return o
}

// walker walks one output's data, shortening what is too long and adding
// up an upper bound of its encoded (msgpack) size.
type walker struct {
	bd   *Bounder
	size int
	// opaque is set when the walk met a value whose size it cannot bound
	// (a custom encoder, a function …): the output is then encoded to
	// measure it.
	opaque bool
}

// maxWalkDepth stops a walk through a (buggy) cyclic value.
const maxWalkDepth = 64

// str bounds a string value of type t.
func (w *walker) str(v reflect.Value, strMax int) (reflect.Value, bool) {
	n := v.Len()
	if n <= strMax {
		w.size += n + 5
		return v, false
	}
	s := truncate(v.String(), strMax)
	w.size += len(s) + 5
	return reflect.ValueOf(s).Convert(v.Type()), true
}

// walk returns v bounded and whether it differs from v. strMax bounds the
// strings under v.
func (w *walker) walk(v reflect.Value, strMax int, depth int) (reflect.Value, bool) {
	if !v.IsValid() {
		w.size++
		return v, false
	}
	if depth > maxWalkDepth {
		w.opaque = true
		return v, false
	}
	t := v.Type()
	if w.bd.isOpaque(t) {
		w.opaque = true
		return v, false
	}
	switch v.Kind() {
	case reflect.String:
		return w.str(v, strMax)
	case reflect.Bool:
		w.size++
		return v, false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		w.size += 9
		return v, false
	case reflect.Slice:
		if v.IsNil() {
			w.size++
			return v, false
		}
		if t.Elem() == reflect.TypeFor[events.Reason]() {
			return w.reasons(v, depth)
		}
		if t.Elem().Kind() == reflect.Uint8 {
			w.size += v.Len() + 5
			return v, false
		}
		return w.elems(v, strMax, depth)
	case reflect.Array:
		return w.elems(v, strMax, depth)
	case reflect.Map:
		return w.mapValues(v, strMax, depth)
	case reflect.Pointer:
		if v.IsNil() {
			w.size++
			return v, false
		}
		nv, ch := w.walk(v.Elem(), strMax, depth+1)
		if !ch {
			return v, false
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(nv)
		return p, true
	case reflect.Interface:
		if v.IsNil() {
			w.size++
			return v, false
		}
		nv, ch := w.walk(v.Elem(), strMax, depth+1)
		if !ch {
			return v, false
		}
		out := reflect.New(t).Elem()
		out.Set(nv)
		return out, true
	case reflect.Struct:
		return w.fields(v, w.bd.plan(t), strMax, depth)
	}
	w.opaque = true
	return v, false
}

// fields walks the encoded fields of struct v (of plan p), copying it if
// one changes.
func (w *walker) fields(v reflect.Value, p *structPlan, strMax int, depth int) (reflect.Value, bool) {
	if p.opaque {
		w.opaque = true
		return v, false
	}
	w.size += 5
	var out reflect.Value
	for _, f := range p.fields {
		w.size += f.key
		fv := v.Field(f.index)
		var nv reflect.Value
		var ch bool
		switch f.kind {
		case fieldString:
			nv, ch = w.str(fv, strMax)
		case fieldNumber:
			w.size += 9
		case fieldBool:
			w.size++
		case fieldNumbers:
			w.size += 5 + 9*fv.Len()
		case fieldReasons:
			if fv.IsNil() {
				w.size++
			} else {
				nv, ch = w.reasons(fv, depth+1)
			}
		default:
			nv, ch = w.walk(fv, strMax, depth+1)
		}
		if !ch {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(v.Type()).Elem()
			out.Set(v)
		}
		out.Field(f.index).Set(nv)
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

// mapValues walks a map's keys (counted, never changed) and values,
// copying the map if a value changes.
func (w *walker) mapValues(v reflect.Value, strMax int, depth int) (reflect.Value, bool) {
	if v.IsNil() {
		w.size++
		return v, false
	}
	w.size += 5
	var out reflect.Value
	it := v.MapRange()
	for it.Next() {
		w.walk(it.Key(), math.MaxInt, depth+1)
		nv, ch := w.walk(it.Value(), strMax, depth+1)
		if !ch {
			continue
		}
		if !out.IsValid() {
			out = reflect.MakeMapWithSize(v.Type(), v.Len())
			for c := v.MapRange(); c.Next(); {
				out.SetMapIndex(c.Key(), c.Value())
			}
		}
		out.SetMapIndex(it.Key(), nv)
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

// elems walks the elements of a slice or an array, copying it if one changes.
func (w *walker) elems(v reflect.Value, strMax int, depth int) (reflect.Value, bool) {
	w.size += 5
	var out reflect.Value
	for i := range v.Len() {
		nv, ch := w.walk(v.Index(i), strMax, depth+1)
		if !ch {
			continue
		}
		if !out.IsValid() {
			if v.Kind() == reflect.Slice {
				out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			} else {
				out = reflect.New(v.Type()).Elem()
			}
			reflect.Copy(out, v)
		}
		out.Index(i).Set(nv)
	}
	if out.IsValid() {
		return out, true
	}
	return v, false
}

// reasons bounds a list of reasons (see Bounder).
func (w *walker) reasons(v reflect.Value, depth int) (reflect.Value, bool) {
	n := v.Len()
	changed := false
	if n > w.bd.l.Reasons {
		rs := make([]events.Reason, n)
		for i := range n {
			rs[i] = v.Index(i).Interface().(events.Reason)
		}
		v = reflect.ValueOf(capReasons(rs, w.bd.l.Reasons)).Convert(v.Type())
		n, changed = v.Len(), true
	}
	w.size += 5
	var out reflect.Value
	for i := range n {
		nv, ch := w.fields(v.Index(i), w.bd.reason, w.bd.l.ReasonString, depth+1)
		if !ch {
			continue
		}
		if !out.IsValid() {
			if changed {
				out = v // a copy already
			} else {
				out = reflect.MakeSlice(v.Type(), n, n)
				reflect.Copy(out, v)
			}
		}
		out.Index(i).Set(nv)
	}
	if out.IsValid() {
		return out, true
	}
	return v, changed
}

// capReasons keeps max-1 reasons of rs, those of highest level first (ties
// by position), in their original order, and appends the marker reason.
func capReasons(rs []events.Reason, max int) []events.Reason {
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rs[b].Level.Rank() - rs[a].Level.Rank() })
	keep := idx[:max-1]
	slices.Sort(keep)
	omitted := idx[max-1:]
	var top events.Risk
	for _, i := range omitted {
		if l := rs[i].Level; l != "" && (top == "" || l.Rank() > top.Rank()) {
			top = l
		}
	}
	out := make([]events.Reason, 0, max)
	for _, i := range keep {
		out = append(out, rs[i])
	}
	detail := fmt.Sprintf("%d more reasons omitted (%d in all); the action in the log holds what they were about", len(omitted), len(rs))
	if top != "" {
		detail += "; the highest omitted level is " + string(top)
	}
	return append(out, events.Reason{Analyzer: BoundAnalyzer, Rule: RuleReasonsOmitted, Detail: detail, Level: top})
}

// truncate shortens s to at most max bytes, marker included, cutting on a
// UTF-8 boundary.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := func(omitted int) string {
		return fmt.Sprintf(" …[vigil: %d of %d bytes omitted]", omitted, len(s))
	}
	cut := max - len(marker(len(s)))
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker(len(s)-cut)
}

// Snapshotter is a Processor whose fold state can be saved and restored,
// so a driver can start from a snapshot and fold only the records after
// it (DESIGN.md, "snapshots").
//
// Snapshot encodes the state deterministically: the same state gives the
// same bytes. Restore replaces the state with a snapshot's; it is all or
// nothing, and refuses (an error wrapping ErrSnapshot) a snapshot that is
// damaged, of another format version, or taken under other options that
// change outputs. After Restore(s), folding the records after the
// snapshot gives byte-for-byte the outputs folding from the start gives.
//
// Both are called by a driver between two Steps, never during one; Step
// stays pure. A snapshot is never the system of record: VIGIL_LOG is.
type Snapshotter interface {
	Snapshot() ([]byte, error)
	Restore(snapshot []byte) error
}
