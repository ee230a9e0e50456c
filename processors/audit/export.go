package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
)

// ExportFormat is the header's "format": the version of the export layout.
const ExportFormat = "vigil-audit-export/1"

// MaxLineBytes bounds one export line: a 4 MiB record in base64 plus its
// JSON view and proof fit with room to spare.
const MaxLineBytes = 16 << 20

// maxProof bounds an inclusion proof: a tree of 2^64 leaves needs 64.
const maxProof = 64

// An export is JSON lines: one header, one line per record, and a final
// checkpoint line every covered record's proof leads to. See docs/audit.md.

// ExportHeader is the first line of an export.
type ExportHeader struct {
	Type   string `json:"type"` // "header"
	Format string `json:"format"`
	// Conversation is the --conversation filter, if any.
	Conversation string `json:"conversation,omitempty"`
	// From is the first log sequence selected.
	From uint64 `json:"from"`
	// Complete says every log sequence from From on is in the export (no
	// conversation filter), so a missing line is detectable. The header is
	// not signed: an auditor who relies on completeness checks this field.
	Complete bool `json:"complete"`
	// LogEnd is VIGIL_LOG's last sequence when the export was written.
	LogEnd uint64 `json:"log_end"`
	// Processed is the live drivers' checkpoint read before the risk and
	// gate data, and ProcessedBy its durable consumer ("" when none was
	// known): every record up to Processed carries its data; a later one
	// may carry none yet, only because it was not processed.
	Processed   uint64 `json:"processed,omitempty"`
	ProcessedBy string `json:"processed_by,omitempty"`
}

// ExportEvent is the line of one log record.
type ExportEvent struct {
	Type string `json:"type"` // "event"
	Seq  uint64 `json:"seq"`
	// Event is the JSON envelope, decoded from Raw (a view for people).
	Event json.RawMessage `json:"event"`
	// Raw is the record's msgpack bytes exactly as stored, in base64: what
	// the leaf hash is computed from.
	Raw      string `json:"raw"`
	LeafHash string `json:"leaf_hash"`
	// TreeSize and Proof are the inclusion proof of the record in the tree
	// of the export's checkpoint; both absent for records after it.
	TreeSize uint64   `json:"tree_size,omitempty"`
	Proof    []string `json:"proof,omitempty"`
	// Risk is the risk.assessed data for this action, Gate the
	// gate.decided data, Approver the person who decided, when present.
	// They are derived outputs, not covered by the tree (see docs/audit.md).
	Risk     json.RawMessage `json:"risk,omitempty"`
	Gate     json.RawMessage `json:"gate,omitempty"`
	Approver string          `json:"approver,omitempty"`
	// Credential is the class of credential the record arrived with, as
	// the ingest service stamped it in the stored record (its origin;
	// "agent" for records stored without one): who sent it, as opposed
	// to what it claims. A verifier checks it against Raw.
	Credential events.Origin `json:"credential,omitempty"`
	// Claim says, in a sentence, what in the record is only the claim of
	// the credential that sent it, when that matters to a reader: a
	// message the agent credential sent as role "user" is not the user's
	// words, and the conversation, agent and backend an agent credential
	// names are its own. Empty for records a trusted credential sent.
	Claim string `json:"claim,omitempty"`
	// Placement says whether a trusted (runtime or admin) credential
	// attested the record's conversation, agent and backend: the first
	// conversation.started such a credential sent in that conversation
	// before this record (display.Placement as JSON). Like Risk and Gate it
	// is derived by the exporter, not covered by the tree; absent for
	// records with no conversation and in an export that does not start at
	// the log's first record (a start before it cannot be seen).
	Placement json.RawMessage `json:"placement,omitempty"`
}

// CredentialOf is the credential class a stored record arrived with:
// its origin, or agent for a record stored before origins existed.
func CredentialOf(ev *events.Event) events.Origin {
	if ev.Origin == "" {
		return events.OriginAgent
	}
	return ev.Origin
}

// ClaimOf is ExportEvent.Claim for ev.
func ClaimOf(ev *events.Event) string {
	if CredentialOf(ev).Trusted() {
		return ""
	}
	if ev.Kind == events.KindMessage && ev.StringField("role") == "user" {
		return "sent with the agent credential as role user: the agent's claim, not the user's words"
	}
	return "sent with the agent credential: its conversation, agent and backend are the agent's claims"
}

// ExportCheckpoint is the last line: the signed checkpoint every proof in
// the export leads to, and the key that signed it.
type ExportCheckpoint struct {
	Type     string `json:"type"` // "checkpoint"
	TreeSize uint64 `json:"tree_size"`
	RootHash string `json:"root_hash"`
	Note     string `json:"note"`
	// VerifierKey is the signer's verifier key, for convenience only: an
	// auditor passes the key they trust with --pubkey.
	VerifierKey string `json:"verifier_key,omitempty"`
}

// Line types.
const (
	LineHeader     = "header"
	LineEvent      = "event"
	LineCheckpoint = "checkpoint"
)

// ExportLine is one decoded line: exactly one field is set.
type ExportLine struct {
	Header     *ExportHeader
	Event      *ExportEvent
	Checkpoint *ExportCheckpoint
}

// Marshal encodes the line as JSON, without the newline.
func (l ExportLine) Marshal() ([]byte, error) {
	switch {
	case l.Header != nil:
		l.Header.Type = LineHeader
		return json.Marshal(l.Header)
	case l.Event != nil:
		l.Event.Type = LineEvent
		return json.Marshal(l.Event)
	case l.Checkpoint != nil:
		l.Checkpoint.Type = LineCheckpoint
		return json.Marshal(l.Checkpoint)
	}
	return nil, errors.New("audit: empty export line")
}

// ErrBadLine is wrapped by every export-line decoding error.
var ErrBadLine = errors.New("audit: bad export line")

func badLine(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadLine, fmt.Sprintf(format, a...))
}

// DecodeExportLine decodes and checks the shape of one export line. It
// refuses unknown fields and malformed hashes; it never panics.
func DecodeExportLine(b []byte) (ExportLine, error) {
	if len(b) > MaxLineBytes {
		return ExportLine{}, badLine("longer than %d bytes", MaxLineBytes)
	}
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return ExportLine{}, badLine("not a JSON object: %v", err)
	}
	strict := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return badLine("%s line: %v", probe.Type, err)
		}
		if dec.More() {
			return badLine("%s line: data after the JSON object", probe.Type)
		}
		return nil
	}
	switch probe.Type {
	case LineHeader:
		var h ExportHeader
		if err := strict(&h); err != nil {
			return ExportLine{}, err
		}
		if h.Format != ExportFormat {
			return ExportLine{}, badLine("format %q is not %q (a newer vigil wrote it?)", clip(h.Format, 40), ExportFormat)
		}
		if h.From == 0 {
			return ExportLine{}, badLine("header: from must be at least 1")
		}
		return ExportLine{Header: &h}, nil
	case LineEvent:
		var e ExportEvent
		if err := strict(&e); err != nil {
			return ExportLine{}, err
		}
		if e.Seq == 0 {
			return ExportLine{}, badLine("event: seq must be at least 1")
		}
		if _, err := ParseHash(e.LeafHash); err != nil {
			return ExportLine{}, badLine("seq %d: leaf_hash: %v", e.Seq, err)
		}
		if _, err := base64.StdEncoding.DecodeString(e.Raw); err != nil || e.Raw == "" {
			return ExportLine{}, badLine("seq %d: raw is not base64 record bytes", e.Seq)
		}
		if len(e.Proof) > maxProof {
			return ExportLine{}, badLine("seq %d: proof has %d hashes, at most %d", e.Seq, len(e.Proof), maxProof)
		}
		if len(e.Proof) > 0 && e.TreeSize == 0 {
			return ExportLine{}, badLine("seq %d: a proof needs tree_size", e.Seq)
		}
		if e.TreeSize != 0 && e.Seq > e.TreeSize {
			return ExportLine{}, badLine("seq %d: not in a tree of size %d", e.Seq, e.TreeSize)
		}
		for i, p := range e.Proof {
			if _, err := ParseHash(p); err != nil {
				return ExportLine{}, badLine("seq %d: proof[%d]: %v", e.Seq, i, err)
			}
		}
		if !isObject(e.Event) {
			return ExportLine{}, badLine("seq %d: event must be a JSON object", e.Seq)
		}
		for name, v := range map[string]json.RawMessage{"risk": e.Risk, "gate": e.Gate} {
			if len(v) > 0 && !isObject(v) && string(bytes.TrimSpace(v)) != "null" {
				return ExportLine{}, badLine("seq %d: %s must be a JSON object", e.Seq, name)
			}
		}
		return ExportLine{Event: &e}, nil
	case LineCheckpoint:
		var c ExportCheckpoint
		if err := strict(&c); err != nil {
			return ExportLine{}, err
		}
		if c.TreeSize == 0 {
			return ExportLine{}, badLine("checkpoint: tree_size must be at least 1")
		}
		if _, err := ParseHash(c.RootHash); err != nil {
			return ExportLine{}, badLine("checkpoint: root_hash: %v", err)
		}
		if c.Note == "" {
			return ExportLine{}, badLine("checkpoint: note is empty")
		}
		return ExportLine{Checkpoint: &c}, nil
	}
	return ExportLine{}, badLine("type %q is not header, event or checkpoint", clip(probe.Type, 30))
}

func isObject(b json.RawMessage) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// NewExportEvent builds the line of the record at seq. proof is its
// inclusion proof in the tree of size treeSize (nil and 0 for a record
// after the export's checkpoint); risk and gate are the derived data found
// for it, or nil.
func NewExportEvent(seq uint64, raw []byte, ev *events.Event, treeSize uint64, proof []Hash, risk, gate any) (ExportEvent, error) {
	evJSON, err := json.Marshal(ev)
	if err != nil {
		return ExportEvent{}, fmt.Errorf("audit: export seq %d: %w", seq, err)
	}
	line := ExportEvent{
		Type: LineEvent, Seq: seq, Event: evJSON,
		Raw:        base64.StdEncoding.EncodeToString(raw),
		LeafHash:   LeafHash(raw).String(),
		TreeSize:   treeSize,
		Credential: CredentialOf(ev), Claim: ClaimOf(ev),
	}
	if ev.Kind == "undecodable" {
		line.Credential, line.Claim = "", ""
	}
	for _, h := range proof {
		line.Proof = append(line.Proof, h.String())
	}
	if risk != nil {
		if line.Risk, err = json.Marshal(risk); err != nil {
			return ExportEvent{}, fmt.Errorf("audit: export seq %d risk: %w", seq, err)
		}
	}
	if gate != nil {
		if line.Gate, err = json.Marshal(gate); err != nil {
			return ExportEvent{}, fmt.Errorf("audit: export seq %d gate: %w", seq, err)
		}
		if m, ok := gate.(map[string]any); ok {
			line.Approver, _ = m["approver"].(string)
		}
	}
	return line, nil
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spaces,
// so two spellings of the same value compare equal.
func canonicalJSON(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// ExportReport is the outcome of verifying an export offline.
type ExportReport struct {
	Lines        int    `json:"lines"`
	Events       int    `json:"events"`
	Conversation string `json:"conversation,omitempty"`
	From         uint64 `json:"from,omitempty"`
	// Complete says the export claims every sequence from From on, and
	// that claim was checked.
	Complete bool `json:"complete"`
	// SignedSize is the checkpoint's tree size; Unsigned counts lines after it.
	SignedSize uint64 `json:"signed_size"`
	Unsigned   int    `json:"unsigned"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// KeyFromExport says the key was taken from the export itself (no
	// --pubkey): it proves integrity against that key only.
	KeyFromExport bool      `json:"key_from_export"`
	Findings      []Finding `json:"findings"`
	Warnings      []string  `json:"warnings,omitempty"`
}

// Clean reports whether nothing was found.
func (r *ExportReport) Clean() bool { return len(r.Findings) == 0 }

// ErrNoKey means there is no key to verify with.
var ErrNoKey = errors.New("audit: no verifier key: pass --pubkey (`vigil audit key` on the server prints it)")

// ExportVerifier checks an export offline, line by line. It does no I/O.
type ExportVerifier struct {
	verifiers note.Verifiers
	line      int
	header    *ExportHeader
	cp        *ExportCheckpoint
	cpLine    int
	seen      []seenEvent
	findings  []Finding
	warnings  []string
}

type seenEvent struct {
	line     int
	seq      uint64
	leaf     Hash
	treeSize uint64
	proof    []Hash
}

// NewExportVerifier returns a verifier trusting verifiers; nil means trust
// the key written in the export (and say so in the report).
func NewExportVerifier(verifiers note.Verifiers) *ExportVerifier {
	return &ExportVerifier{verifiers: verifiers}
}

func (v *ExportVerifier) find(f Finding) { v.findings = append(v.findings, f) }

// AddLine checks one line (without its newline). Blank lines are skipped.
func (v *ExportVerifier) AddLine(b []byte) {
	v.line++
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	l, err := DecodeExportLine(b)
	if err != nil {
		var probe struct {
			Seq uint64 `json:"seq"`
		}
		_ = json.Unmarshal(b, &probe)
		v.find(Finding{Kind: FindMalformed, Seq: probe.Seq, Line: v.line, Detail: err.Error()})
		return
	}
	switch {
	case l.Header != nil:
		if v.header != nil || len(v.seen) > 0 || v.cp != nil {
			v.find(Finding{Kind: FindMalformed, Line: v.line, Detail: "a header line must come first, and only once"})
			return
		}
		v.header = l.Header
	case l.Checkpoint != nil:
		if v.cp != nil {
			v.find(Finding{Kind: FindMalformed, Line: v.line, Detail: fmt.Sprintf("a second checkpoint line (the first is line %d)", v.cpLine)})
			return
		}
		v.cp, v.cpLine = l.Checkpoint, v.line
	case l.Event != nil:
		v.addEvent(l.Event)
	}
}

func (v *ExportVerifier) addEvent(e *ExportEvent) {
	f := Finding{Kind: FindAltered, Seq: e.Seq, Line: v.line}
	if v.cp != nil {
		v.find(Finding{Kind: FindMoved, Seq: e.Seq, Line: v.line, Detail: fmt.Sprintf("event line after the checkpoint line (line %d): lines were moved", v.cpLine)})
	}
	raw, _ := base64.StdEncoding.DecodeString(e.Raw) // checked by the decoder
	leaf := LeafHash(raw)
	if leaf.String() != e.LeafHash {
		f.Detail = "raw does not match leaf_hash: the record's bytes or its hash were edited"
		v.find(f)
	}
	ev, err := events.DecodeMsgpack(raw)
	if err != nil {
		f.Detail = fmt.Sprintf("raw is not a Vigil event: %v", err)
		v.find(f)
	} else {
		want, err1 := json.Marshal(ev)
		if err1 == nil {
			want, err1 = canonicalJSON(want)
		}
		got, err2 := canonicalJSON(e.Event)
		if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
			f.Detail = "\"event\" differs from the record stored in \"raw\": the JSON view was edited"
			v.find(f)
		}
		if e.Credential != "" && (e.Credential != CredentialOf(&ev) || e.Claim != ClaimOf(&ev)) {
			f.Detail = "\"credential\" or \"claim\" differs from the record stored in \"raw\": who sent it was edited"
			v.find(f)
		}
	}
	s := seenEvent{line: v.line, seq: e.Seq, leaf: leaf, treeSize: e.TreeSize}
	for _, p := range e.Proof {
		h, _ := ParseHash(p)
		s.proof = append(s.proof, h)
	}
	v.seen = append(v.seen, s)
}

// Finish runs the checks that need the whole export. It returns ErrNoKey
// when no key was given and the export names none.
func (v *ExportVerifier) Finish() (*ExportReport, error) {
	rep := &ExportReport{Lines: v.line, Events: len(v.seen)}
	if v.header == nil {
		v.warnings = append(v.warnings, "no header line: whether lines are missing cannot be checked")
	} else {
		rep.Conversation, rep.From, rep.Complete = v.header.Conversation, v.header.From, v.header.Complete
		if !v.header.Complete {
			v.warnings = append(v.warnings, "partial export (a conversation or a single record): each record is proven to be in the signed log at its seq, but records left out cannot be detected")
		}
	}
	var cp Checkpoint
	cpOK := false
	if v.cp == nil {
		v.find(Finding{Kind: FindCheckpoint, Detail: "the export has no checkpoint line: no record in it can be verified"})
	} else {
		verifiers := v.verifiers
		if verifiers == nil {
			if v.cp.VerifierKey == "" {
				return nil, ErrNoKey
			}
			vs, err := NewVerifiers(v.cp.VerifierKey)
			if err != nil {
				return nil, err
			}
			verifiers = vs
			rep.KeyFromExport = true
			v.warnings = append(v.warnings, "trusting the verifier key written in the export ("+clip(v.cp.VerifierKey, 60)+"); pass --pubkey with the key you trust")
		}
		c, err := OpenCheckpoint(v.cp.Note, verifiers)
		switch {
		case err != nil:
			v.find(Finding{Kind: FindCheckpoint, TreeSize: v.cp.TreeSize, Line: v.cpLine, Detail: fmt.Sprintf("checkpoint signature: %v", err)})
		case c.Size != v.cp.TreeSize || c.Root.String() != v.cp.RootHash:
			v.find(Finding{Kind: FindCheckpoint, TreeSize: c.Size, Line: v.cpLine, Detail: "tree_size/root_hash disagree with the signed note"})
		default:
			cp, cpOK = c, true
			rep.SignedSize, rep.Checkpoint = c.Size, c.Note
		}
	}

	// Proofs.
	for _, s := range v.seen {
		if cpOK && s.seq <= cp.Size {
			if s.treeSize != cp.Size {
				v.find(Finding{Kind: FindAltered, Seq: s.seq, Line: s.line, Detail: fmt.Sprintf("tree_size %d is not the checkpoint's %d", s.treeSize, cp.Size)})
				continue
			}
			if err := VerifyInclusion(s.seq, cp.Size, s.leaf, s.proof, cp.Root); err != nil {
				v.find(Finding{Kind: FindAltered, Seq: s.seq, Line: s.line, Detail: fmt.Sprintf("the record is not at this seq in the signed tree of size %d: the line was edited or moved", cp.Size)})
			}
			continue
		}
		rep.Unsigned++
	}
	if rep.Unsigned > 0 && cpOK {
		v.warnings = append(v.warnings, fmt.Sprintf("%d records after the checkpoint (tree size %d) are not covered by a signature: export again after the next checkpoint", rep.Unsigned, cp.Size))
	}

	// Order, duplicates, completeness.
	lineOf := map[uint64]int{}
	var top uint64
	var topLine int
	for _, s := range v.seen {
		if l, dup := lineOf[s.seq]; dup {
			v.find(Finding{Kind: FindInserted, Seq: s.seq, Line: s.line, Detail: fmt.Sprintf("the same seq is on line %d too", l)})
			continue
		}
		lineOf[s.seq] = s.line
		if s.seq < top {
			v.find(Finding{Kind: FindMoved, Seq: s.seq, Other: top, Line: s.line, Detail: fmt.Sprintf("comes after seq %d (line %d): lines were reordered", top, topLine)})
			continue
		}
		top, topLine = s.seq, s.line
	}
	if v.header != nil && v.header.Complete {
		end := top
		if cpOK {
			end = max(end, cp.Size)
		}
		end = max(end, v.header.LogEnd)
		// Walk the gaps between the seqs present (never the whole range:
		// a hostile export may claim a log of 2^64 records).
		seqs := make([]uint64, 0, len(lineOf))
		for seq := range lineOf {
			if seq >= v.header.From {
				seqs = append(seqs, seq)
			}
		}
		slices.Sort(seqs)
		next, done := v.header.From, false
		for _, seq := range seqs {
			if seq > next {
				v.find(Finding{Kind: FindDeleted, Seq: next, Last: seq - 1, Detail: "missing from the export, which claims every seq from its start"})
			}
			if seq == ^uint64(0) {
				done = true
				break
			}
			next = seq + 1
		}
		if !done && end >= next {
			v.find(Finding{Kind: FindDeleted, Seq: next, Last: end, Detail: "missing from the export, which claims every seq from its start"})
		}
		for seq, l := range lineOf {
			if seq < v.header.From {
				v.find(Finding{Kind: FindInserted, Seq: seq, Line: l, Detail: fmt.Sprintf("before the export's first seq %d", v.header.From)})
			}
		}
	}
	rep.Findings = collapse(v.findings)
	rep.Warnings = v.warnings
	slices.SortStableFunc(rep.Findings, func(a, b Finding) int {
		if a.Seq != b.Seq {
			if a.Seq < b.Seq {
				return -1
			}
			return 1
		}
		return a.Line - b.Line
	})
	return rep, nil
}
