package audit

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/transparency-dev/merkle/compact"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
)

// FindingKind says what verification found at a log sequence.
type FindingKind string

// Finding kinds. Every one of them is evidence of tampering: a clean log
// gives no finding at all.
const (
	// FindDeleted: a record the signed tree includes is gone, or a log
	// sequence has no record (VIGIL_LOG denies deletes, so a gap is itself
	// evidence).
	FindDeleted FindingKind = "deleted"
	// FindAltered: the record at a sequence has other bytes than the ones
	// checkpointed there, and those bytes are nowhere else in the log.
	FindAltered FindingKind = "altered"
	// FindInserted: a sequence holds a record no checkpoint lists, while
	// the record checkpointed there moved to a later sequence.
	FindInserted FindingKind = "inserted"
	// FindMoved: a sequence holds a record checkpointed at another one.
	FindMoved FindingKind = "moved"
	// FindUnaudited: a record is in the log, but the audit fold saw none
	// at that sequence (it did not decode), so no checkpoint covers it.
	FindUnaudited FindingKind = "unaudited"
	// FindMismatch: records differ from the signed tree where no surviving
	// checkpoint lists leaf hashes, so the sequence is named as a range.
	FindMismatch FindingKind = "mismatch"
	// FindCheckpoint: a checkpoint is invalid, missing, or contradicts
	// another (VIGIL_DERIVED or the trusted key was tampered with).
	FindCheckpoint FindingKind = "checkpoint"
	// FindMalformed: an export line cannot be read.
	FindMalformed FindingKind = "malformed"
)

// Finding is one piece of evidence, named by log sequence.
type Finding struct {
	Kind FindingKind `json:"kind"`
	// Seq is the (first) log sequence concerned; 0 when none is.
	Seq uint64 `json:"seq,omitempty"`
	// Last is the last sequence of a run of equal findings (0: just Seq).
	Last uint64 `json:"last,omitempty"`
	// Other is the other sequence involved (moved, inserted, shifted).
	Other uint64 `json:"other,omitempty"`
	// TreeSize is the checkpoint that shows it, when one does.
	TreeSize uint64 `json:"tree_size,omitempty"`
	// Line is the export line, when verifying an export.
	Line   int    `json:"line,omitempty"`
	Detail string `json:"detail"`

	why    reason
	other2 uint64
}

// String is the finding as one line for people.
func (f Finding) String() string {
	var b strings.Builder
	switch {
	case f.Seq == 0 && f.Kind == FindCheckpoint && f.TreeSize > 0:
		fmt.Fprintf(&b, "checkpoint %d", f.TreeSize)
	case f.Seq == 0 && f.Line > 0:
		fmt.Fprintf(&b, "line %d", f.Line)
	case f.Seq == 0:
		b.WriteString("log")
	case f.Last > f.Seq:
		fmt.Fprintf(&b, "seqs %d..%d", f.Seq, f.Last)
	default:
		fmt.Fprintf(&b, "seq %d", f.Seq)
	}
	fmt.Fprintf(&b, ": %s: %s", f.Kind, f.Detail)
	return b.String()
}

type reason uint8

const (
	rPlain            reason = iota // Detail already written
	rDeletedGone                    // absent; the checkpointed record is nowhere
	rDeletedAtFold                  // absent; already absent when folded
	rDeletedUncovered               // absent; in the signed tree, no window lists it
	rDeletedTail                    // absent; after the last checkpoint
	rDeletedTruncated               // beyond the log's end, inside the signed tree
	rDeletedShift                   // holds the record of Other; its own is gone
	rMovedGap                       // absent; its record is now at Other
	rMoved                          // holds the record of Other; its own is at other2
	rInserted                       // holds an unknown record; its own is at Other
	rAltered
	rUnaudited
	rMismatch
)

// namesCheckpoint says the detail names the checkpoint's tree size, so
// only findings of the same checkpoint merge.
func (r reason) namesCheckpoint() bool {
	switch r {
	case rDeletedGone, rDeletedUncovered, rDeletedTruncated, rAltered, rUnaudited, rMismatch:
		return true
	}
	return false
}

func (f *Finding) render() {
	if f.why == rPlain {
		return
	}
	n := max(f.Last, f.Seq) - f.Seq
	seqs := func(s uint64) string {
		if n == 0 {
			return fmt.Sprintf("seq %d", s)
		}
		return fmt.Sprintf("seqs %d..%d", s, s+n)
	}
	it, is := "it", "is"
	if n > 0 {
		it, is = "them", "are"
	}
	var d string
	switch f.why {
	case rDeletedGone:
		d = fmt.Sprintf("missing from VIGIL_LOG; the checkpoint of tree size %d lists %s and %s %s nowhere else in the log", f.TreeSize, it, it, is)
	case rDeletedAtFold:
		d = fmt.Sprintf("missing from VIGIL_LOG; already missing when the audit processor folded past %s (see its alert)", it)
	case rDeletedUncovered:
		d = fmt.Sprintf("missing from VIGIL_LOG; the signed tree of size %d includes %s", f.TreeSize, it)
	case rDeletedTail:
		d = "missing from VIGIL_LOG, after the last checkpoint (VIGIL_LOG denies deletes, so a gap is evidence of deletion)"
	case rDeletedTruncated:
		d = fmt.Sprintf("missing from the end of VIGIL_LOG; the signed tree of size %d includes %s", f.TreeSize, it)
	case rDeletedShift:
		d = fmt.Sprintf("the record checkpointed here is gone from the log; it now holds the record checkpointed at %s (records were deleted before it and later ones renumbered)", seqs(f.Other))
	case rMovedGap:
		d = fmt.Sprintf("missing from VIGIL_LOG; the record checkpointed here is now at %s", seqs(f.Other))
	case rMoved:
		here, gone := int64(f.Other)-int64(f.Seq), int64(f.other2)-int64(f.Seq)
		switch {
		case here == -gone && here > 0:
			d = fmt.Sprintf("holds the record checkpointed at %s: records were renumbered down by %d (records before them were deleted)", seqs(f.Other), here)
		case here == -gone && here < 0:
			d = fmt.Sprintf("holds the record checkpointed at %s: records were renumbered up by %d (records were inserted before them)", seqs(f.Other), -here)
		default:
			d = fmt.Sprintf("holds the record checkpointed at %s; the record checkpointed here is now at %s (reordered)", seqs(f.Other), seqs(f.other2))
		}
	case rInserted:
		d = fmt.Sprintf("holds a record no checkpoint lists; the record checkpointed here is now at %s", seqs(f.Other))
	case rAltered:
		d = fmt.Sprintf("the stored bytes differ from the ones the checkpoint of tree size %d lists (leaf hash mismatch)", f.TreeSize)
	case rUnaudited:
		d = fmt.Sprintf("in VIGIL_LOG, but the audit processor found no decodable record there when it folded, so the checkpoint of tree size %d does not cover %s", f.TreeSize, it)
	case rMismatch:
		d = fmt.Sprintf("differ from the signed tree of size %d; no surviving checkpoint lists their leaf hashes, so the changed record cannot be named more precisely", f.TreeSize)
	}
	f.Detail = d
}

// Report is the outcome of a verification.
type Report struct {
	// LogEnd is the last log sequence (VIGIL_LOG's last sequence).
	LogEnd uint64 `json:"log_end"`
	// Records is the number of records read.
	Records uint64 `json:"records"`
	// Checkpoints read, and how many of them verify with a trusted key.
	Checkpoints      int `json:"checkpoints"`
	ValidCheckpoints int `json:"valid_checkpoints"`
	// Witnesses counts the trusted checkpoints given from outside.
	Witnesses int `json:"witnesses,omitempty"`
	// SignedSize is the largest tree size a valid checkpoint signs.
	SignedSize uint64 `json:"signed_size"`
	// Unsigned counts records after SignedSize: no signature covers them
	// yet, so a change there is not detectable until the next checkpoint.
	Unsigned uint64 `json:"unsigned"`
	// Latest is the signed note of the largest valid checkpoint.
	Latest   string    `json:"latest_checkpoint,omitempty"`
	Findings []Finding `json:"findings"`
	Warnings []string  `json:"warnings,omitempty"`
	// UnknownKeys lists the keys that signed checkpoints no trusted key
	// verifies (a wrong --pubkey, or a forged checkpoint).
	UnknownKeys []string `json:"unknown_keys,omitempty"`
}

// Clean reports whether nothing was found.
func (r *Report) Clean() bool { return len(r.Findings) == 0 }

// LogVerifier re-derives the tree from the log's records and checks it
// against the checkpoints. It does no I/O: the caller feeds it records in
// log order, the checkpoints (any order) and the log's last sequence, then
// calls Finish.
type LogVerifier struct {
	verifiers note.Verifiers
	leaves    []Hash
	absent    map[uint64]bool
	records   uint64
	logEnd    uint64
	interval  uint64
	hasher    leafHasher
	cps       []rawCheckpoint
	findings  []Finding
	warnings  []string
}

type rawCheckpoint struct {
	at  uint64 // VIGIL_DERIVED sequence; 0 for a trusted external one
	cp  events.AuditCheckpoint
	ext string // the trusted note, for external ones
}

// NewLogVerifier returns a verifier trusting the given keys.
func NewLogVerifier(verifiers note.Verifiers) *LogVerifier {
	return &LogVerifier{verifiers: verifiers, absent: map[uint64]bool{}}
}

// AddRecord adds the raw record at log sequence seq; records must come in
// increasing order. Sequences skipped over are absent.
func (v *LogVerifier) AddRecord(seq uint64, raw []byte) error {
	return v.AddLeaf(seq, v.hasher.hash(raw))
}

// AddLeaf is AddRecord with the leaf hash already computed.
func (v *LogVerifier) AddLeaf(seq uint64, h Hash) error {
	next := uint64(len(v.leaves)) + 1
	if seq < next {
		return fmt.Errorf("audit: record seq %d after seq %d: records must come in increasing order", seq, next-1)
	}
	for s := next; s < seq; s++ {
		v.leaves = append(v.leaves, MissingLeaf)
		v.absent[s] = true
	}
	v.leaves = append(v.leaves, h)
	v.records++
	return nil
}

// SetLogEnd records the log's last sequence, so records deleted at its end
// are seen as absent.
func (v *LogVerifier) SetLogEnd(seq uint64) { v.logEnd = seq }

// ExpectInterval sets the checkpoint interval the audit processor runs
// with: a log of at least k records with no valid checkpoint at all is
// then a finding (the checkpoints were deleted, or the audit never ran),
// not just a warning. Zero (the default) disables the check.
func (v *LogVerifier) ExpectInterval(k uint64) { v.interval = k }

// AddCheckpoint adds a checkpoint read at VIGIL_DERIVED sequence at.
func (v *LogVerifier) AddCheckpoint(at uint64, cp events.AuditCheckpoint) {
	v.cps = append(v.cps, rawCheckpoint{at: at, cp: cp})
}

// AddBadCheckpoint records a message on vigil.audit.checkpoint that could
// not be decoded.
func (v *LogVerifier) AddBadCheckpoint(at uint64, err error) {
	v.findings = append(v.findings, Finding{Kind: FindCheckpoint,
		Detail: fmt.Sprintf("VIGIL_DERIVED seq %d on %s does not decode: %v", at, events.SubjectCheckpoint, err)})
}

// AddTrusted adds a checkpoint kept outside the streams (a witness: a note
// saved from an earlier export or `vigil audit prove`). The log must still
// match it. It returns an error when the note does not verify.
func (v *LogVerifier) AddTrusted(signedNote string) error {
	c, err := OpenCheckpoint(signedNote, v.verifiers)
	if err != nil {
		return err
	}
	v.cps = append(v.cps, rawCheckpoint{cp: events.AuditCheckpoint{TreeSize: c.Size, RootHash: c.Root.String(), Note: signedNote}, ext: signedNote})
	return nil
}

// cpInfo is a checkpoint whose signature verified.
type cpInfo struct {
	at      uint64
	ext     bool
	cp      Checkpoint
	first   uint64
	leaves  []byte // the window's leaf hashes, when authenticated
	prefix  []byte // the compact range at first-1, when authenticated
	trusted bool   // leaves and prefix are authenticated by the signed root
	window  bool   // claims a window (trusted or not)
	iv      uint64
}

func (c *cpInfo) where() string {
	if c.ext {
		return "the trusted checkpoint file"
	}
	return fmt.Sprintf("VIGIL_DERIVED seq %d", c.at)
}

// open checks one checkpoint's signature and window.
func (v *LogVerifier) open(r rawCheckpoint, rep *Report, unknown map[string]bool) *cpInfo {
	bad := func(size uint64, format string, a ...any) {
		v.findings = append(v.findings, Finding{Kind: FindCheckpoint, TreeSize: size, Detail: fmt.Sprintf(format, a...)})
	}
	c, err := OpenCheckpoint(r.cp.Note, v.verifiers)
	if err != nil {
		if errors.Is(err, ErrUnknownKey) {
			_, names, _ := strings.Cut(err.Error(), "(signed by ")
			unknown[strings.TrimSuffix(names, ")")] = true
			bad(r.cp.TreeSize, "VIGIL_DERIVED seq %d: not signed by a trusted key (%v)", r.at, err)
			return nil
		}
		bad(r.cp.TreeSize, "VIGIL_DERIVED seq %d: invalid signed note: %v", r.at, err)
		return nil
	}
	ci := &cpInfo{at: r.at, ext: r.ext != "", cp: c, iv: r.cp.Interval}
	if ci.ext {
		rep.Witnesses++
		return ci
	}
	rep.ValidCheckpoints++
	if r.cp.TreeSize != c.Size || r.cp.RootHash != c.Root.String() {
		bad(c.Size, "VIGIL_DERIVED seq %d: tree_size/root_hash (%d, %s) disagree with the signed note (%d, %s); the note is what counts",
			r.at, r.cp.TreeSize, clip(r.cp.RootHash, 50), c.Size, c.Root)
		if r.cp.FirstSeq > 0 && r.cp.FirstSeq <= c.Size {
			ci.first, ci.window = r.cp.FirstSeq, true
		}
		return ci
	}
	if r.cp.FirstSeq == 0 && r.cp.Leaves == "" && r.cp.Prefix == "" {
		return ci // a checkpoint without a window: root only
	}
	ci.window = true
	ci.first = r.cp.FirstSeq
	if ci.first == 0 || ci.first > c.Size {
		ci.window = false
		bad(c.Size, "VIGIL_DERIVED seq %d: first_seq %d is outside the tree of size %d", r.at, r.cp.FirstSeq, c.Size)
		return ci
	}
	leaves, err1 := base64.StdEncoding.DecodeString(r.cp.Leaves)
	prefix, err2 := base64.StdEncoding.DecodeString(r.cp.Prefix)
	if err1 != nil || err2 != nil || uint64(len(leaves)) != (c.Size-ci.first+1)*HashSize {
		bad(c.Size, "VIGIL_DERIVED seq %d: leaf hashes of seqs %d..%d are malformed; those seqs cannot be checked one by one", r.at, ci.first, c.Size)
		return ci
	}
	rng, err := newRange(ci.first-1, prefix)
	if err != nil {
		bad(c.Size, "VIGIL_DERIVED seq %d: prefix is malformed (%v); seqs %d..%d cannot be checked one by one", r.at, err, ci.first, c.Size)
		return ci
	}
	for i := 0; i < len(leaves); i += HashSize {
		if err := rng.Append(leaves[i:i+HashSize], nil); err != nil {
			bad(c.Size, "VIGIL_DERIVED seq %d: %v", r.at, err)
			return ci
		}
	}
	if rootOf(rng) != c.Root {
		bad(c.Size, "VIGIL_DERIVED seq %d: its leaf hashes do not lead to its signed root (the checkpoint was edited); seqs %d..%d cannot be checked one by one", r.at, ci.first, c.Size)
		return ci
	}
	ci.leaves, ci.prefix, ci.trusted = leaves, prefix, true
	return ci
}

// Finish runs the checks and returns the report.
func (v *LogVerifier) Finish() *Report {
	rep := &Report{Records: v.records, LogEnd: max(v.logEnd, uint64(len(v.leaves)))}
	unknown := map[string]bool{}

	// 1. Signatures, and one checkpoint per tree size.
	bySize := map[uint64]*cpInfo{}
	distrust := false
	for _, r := range v.cps {
		if r.ext == "" {
			rep.Checkpoints++
		}
		ci := v.open(r, rep, unknown)
		if ci == nil {
			continue
		}
		prev, ok := bySize[ci.cp.Size]
		if !ok {
			bySize[ci.cp.Size] = ci
			continue
		}
		if prev.cp.Root != ci.cp.Root {
			distrust = distrust || prev.ext || ci.ext
			first, second := prev, ci
			if ci.ext || (!prev.ext && ci.at < prev.at) {
				first, second = ci, prev
			}
			v.findings = append(v.findings, Finding{Kind: FindCheckpoint, TreeSize: ci.cp.Size,
				Detail: fmt.Sprintf("two signed checkpoints for tree size %d have different roots (%s and %s): the log was rewritten and signed again; the first is used",
					ci.cp.Size, first.where(), second.where())})
			bySize[ci.cp.Size] = first
			continue
		}
		// The same tree head twice (a witness, a republished checkpoint):
		// keep the one whose leaf hashes are authenticated.
		if ci.trusted && !prev.trusted {
			bySize[ci.cp.Size] = ci
		}
	}
	list := make([]*cpInfo, 0, len(bySize))
	for _, c := range bySize {
		list = append(list, c)
	}
	if distrust {
		// A trusted checkpoint contradicts VIGIL_DERIVED's: the key signed
		// another history, so none of VIGIL_DERIVED's checkpoints counts.
		v.warnings = append(v.warnings, "VIGIL_DERIVED's checkpoints contradict the trusted checkpoint: they are ignored, and only the trusted checkpoint is checked")
		list = slices.DeleteFunc(list, func(c *cpInfo) bool { return !c.ext })
	}
	slices.SortFunc(list, func(a, b *cpInfo) int {
		switch {
		case a.cp.Size < b.cp.Size:
			return -1
		case a.cp.Size > b.cp.Size:
			return 1
		}
		return 0
	})
	for k := range unknown {
		rep.UnknownKeys = append(rep.UnknownKeys, k)
	}
	slices.Sort(rep.UnknownKeys)

	var top uint64 // SignedSize
	if len(list) > 0 {
		last := list[len(list)-1]
		top = last.cp.Size
		rep.SignedSize = top
		rep.Latest = last.cp.Note
	}
	absent := func(seq uint64) bool { return seq > uint64(len(v.leaves)) || v.absent[seq] }
	act := func(seq uint64) Hash {
		if seq > uint64(len(v.leaves)) {
			return MissingLeaf
		}
		return v.leaves[seq-1]
	}

	// 2. Reference leaves from authenticated windows; missing windows.
	ref := make([]Hash, top)
	refSet := make([]bool, top)
	var covered uint64
	for _, c := range list {
		if c.ext || !c.window {
			continue
		}
		if c.first > covered+1 {
			if covered == 0 {
				v.warnings = append(v.warnings, fmt.Sprintf("seqs 1..%d: no checkpoint lists their leaf hashes (the audit processor started after them, or the first checkpoints were deleted); they are checked as a block against the signed tree", c.first-1))
			} else {
				v.findings = append(v.findings, Finding{Kind: FindCheckpoint, Seq: covered + 1, Last: c.first - 1, TreeSize: c.cp.Size,
					Detail: fmt.Sprintf("no checkpoint lists the leaf hashes of these seqs: a checkpoint was deleted from VIGIL_DERIVED (the next one, tree size %d, starts at seq %d)", c.cp.Size, c.first)})
			}
		}
		covered = max(covered, c.cp.Size)
		if !c.trusted {
			continue
		}
		forked := false
		for i := uint64(0); i <= c.cp.Size-c.first; i++ {
			var h Hash
			copy(h[:], c.leaves[i*HashSize:])
			s := c.first + i
			if refSet[s-1] {
				if ref[s-1] != h && !forked {
					forked = true
					v.findings = append(v.findings, Finding{Kind: FindCheckpoint, Seq: s, TreeSize: c.cp.Size,
						Detail: fmt.Sprintf("%s lists another leaf hash for this seq than an earlier checkpoint: two different logs were signed", c.where())})
				}
				continue
			}
			ref[s-1], refSet[s-1] = h, true
		}
	}

	// 3. Record by record, inside authenticated windows.
	var refIdx, actIdx map[Hash]uint64
	index := func() {
		if refIdx != nil {
			return
		}
		refIdx = make(map[Hash]uint64)
		for i := range ref {
			if refSet[i] {
				if _, dup := refIdx[ref[i]]; !dup {
					refIdx[ref[i]] = uint64(i) + 1
				}
			}
		}
		actIdx = make(map[Hash]uint64, len(v.leaves))
		for i, h := range v.leaves {
			s := uint64(i) + 1
			if v.absent[s] {
				continue
			}
			if _, dup := actIdx[h]; !dup {
				actIdx[h] = s
			}
		}
	}
	var done uint64
	for _, c := range list {
		if !c.trusted {
			continue
		}
		for s := max(c.first, done+1); s <= c.cp.Size; s++ {
			r := ref[s-1]
			f := Finding{Seq: s, TreeSize: c.cp.Size}
			switch {
			case absent(s) && r == MissingLeaf:
				f.Kind, f.why = FindDeleted, rDeletedAtFold
			case absent(s):
				index()
				if n, ok := actIdx[r]; ok {
					f.Kind, f.why, f.Other = FindMoved, rMovedGap, n
				} else if s > rep.LogEnd {
					f.Kind, f.why = FindDeleted, rDeletedTruncated
				} else {
					f.Kind, f.why = FindDeleted, rDeletedGone
				}
			case act(s) == r:
				continue
			case r == MissingLeaf:
				f.Kind, f.why = FindUnaudited, rUnaudited
			default:
				index()
				m, fromRef := refIdx[act(s)]
				n, stillThere := actIdx[r]
				switch {
				case fromRef && stillThere:
					f.Kind, f.why, f.Other, f.other2 = FindMoved, rMoved, m, n
				case fromRef:
					f.Kind, f.why, f.Other = FindDeleted, rDeletedShift, m
				case stillThere:
					f.Kind, f.why, f.Other = FindInserted, rInserted, n
				default:
					f.Kind, f.why = FindAltered, rAltered
				}
			}
			v.findings = append(v.findings, f)
		}
		done = max(done, c.cp.Size)
	}

	// 4. The rest of the signed tree, as blocks: the tree built from the
	// authenticated leaves where known and the log's elsewhere must give
	// every signed root and prefix.
	v.checkBlocks(list, ref, refSet, absent, act)

	// 5. Gaps outside authenticated windows.
	end := max(rep.LogEnd, top)
	gaps := make([]uint64, 0, len(v.absent))
	for s := range v.absent {
		gaps = append(gaps, s)
	}
	slices.Sort(gaps)
	addGap := func(s uint64) {
		if s <= top && refSet[s-1] {
			return // named in step 3
		}
		f := Finding{Kind: FindDeleted, Seq: s, why: rDeletedTail}
		if s <= top {
			f.why, f.TreeSize = rDeletedUncovered, top
			if s > rep.LogEnd {
				f.why = rDeletedTruncated
			}
		}
		v.findings = append(v.findings, f)
	}
	for _, s := range gaps {
		addGap(s)
	}
	for s := uint64(len(v.leaves)) + 1; s <= end; s++ {
		addGap(s)
	}

	// 6. What is not yet signed.
	if rep.LogEnd > top {
		rep.Unsigned = rep.LogEnd - top
		for s := top + 1; s <= rep.LogEnd; s++ {
			if absent(s) {
				rep.Unsigned--
			}
		}
	}
	if n := len(list); n > 0 && !list[n-1].ext && list[n-1].iv > 0 && rep.LogEnd >= top+list[n-1].iv {
		v.warnings = append(v.warnings, fmt.Sprintf("the log has %d records after the last checkpoint (tree size %d), more than the checkpoint interval %d: the audit processor is behind or stopped, or newer checkpoints were deleted", rep.LogEnd-top, top, list[n-1].iv))
	}
	if rep.Checkpoints > 0 && rep.ValidCheckpoints == 0 && len(rep.UnknownKeys) > 0 {
		v.warnings = append(v.warnings, "no checkpoint verifies with the trusted key(s): check --pubkey (`vigil audit key` on the server prints the right one)")
	}
	switch {
	case rep.ValidCheckpoints == 0 && v.interval > 0 && rep.Records >= v.interval:
		v.findings = append(v.findings, Finding{Kind: FindCheckpoint, Seq: 1, Last: rep.LogEnd,
			Detail: fmt.Sprintf("no valid checkpoint in VIGIL_DERIVED covers these records, though the audit processor signs one every %d: the checkpoints were deleted or replaced, or the audit processor does not run", v.interval)})
	case len(list) == 0 && rep.Records > 0:
		v.warnings = append(v.warnings, "no valid checkpoint: nothing in the log is covered by a signature yet")
	}
	rep.Findings = collapse(v.findings)
	rep.Warnings = v.warnings
	return rep
}

// checkBlocks builds the hybrid tree and compares it with every signed
// prefix (authenticated windows) and root (other checkpoints).
func (v *LogVerifier) checkBlocks(list []*cpInfo, ref []Hash, refSet []bool, absent func(uint64) bool, act func(uint64) Hash) {
	type check struct {
		pos    uint64
		c      *cpInfo
		prefix bool
	}
	var checks []check
	for _, c := range list {
		switch {
		case c.trusted && c.first > 1:
			checks = append(checks, check{pos: c.first - 1, c: c, prefix: true})
		case !c.trusted:
			checks = append(checks, check{pos: c.cp.Size, c: c})
		}
	}
	slices.SortStableFunc(checks, func(a, b check) int {
		switch {
		case a.pos < b.pos:
			return -1
		case a.pos > b.pos:
			return 1
		}
		return 0
	})
	rng := factory.NewEmptyRange(0)
	var verified uint64
	blamed := make([]bool, len(refSet))
	// blame reports the seqs of lo..hi that can explain a difference from
	// checkpoint c: those no authenticated window lists and no earlier
	// check proved (below from), unless already blamed. With none,
	// checkpoints contradict each other.
	blame := func(lo, hi, from uint64, c *cpInfo) {
		var runStart uint64
		found := false
		flush := func(end uint64) {
			if runStart != 0 {
				v.findings = append(v.findings, Finding{Kind: FindMismatch, Seq: runStart, Last: end, TreeSize: c.cp.Size, why: rMismatch})
				runStart = 0
			}
		}
		for s := lo; s <= hi; s++ {
			if refSet[s-1] || (s < from && !blamed[s-1]) {
				flush(s - 1)
				continue
			}
			found = true
			if absent(s) || blamed[s-1] { // reported already
				flush(s - 1)
				continue
			}
			blamed[s-1] = true
			if runStart == 0 {
				runStart = s
			}
		}
		flush(hi)
		if !found {
			v.findings = append(v.findings, Finding{Kind: FindCheckpoint, Seq: lo, Last: hi, TreeSize: c.cp.Size,
				Detail: fmt.Sprintf("the checkpoint of tree size %d (%s) disagrees with the leaf hashes other checkpoints list for these seqs: two different logs were signed", c.cp.Size, c.where())})
		}
	}
	for _, ch := range checks {
		for s := rng.End() + 1; s <= ch.pos; s++ {
			h := act(s)
			if refSet[s-1] {
				h = ref[s-1]
			}
			_ = rng.Append(h[:], nil)
		}
		if ch.prefix {
			ids := compact.RangeNodes(0, ch.pos, nil)
			got := rng.Hashes()
			for i, id := range ids {
				if string(got[i]) != string(ch.c.prefix[i*HashSize:(i+1)*HashSize]) {
					lo, hi := id.Coverage()
					blame(lo+1, hi, verified+1, ch.c)
				}
			}
			verified = max(verified, ch.c.cp.Size)
			continue
		}
		if rootOf(rng) != ch.c.cp.Root {
			blame(1, ch.pos, verified+1, ch.c)
		}
		verified = max(verified, ch.pos)
	}
}

// collapse sorts findings and merges runs of the same finding over
// consecutive sequences, then renders their details.
func collapse(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		switch {
		case a.Seq != b.Seq:
			if a.Seq < b.Seq {
				return -1
			}
			return 1
		case a.Line != b.Line:
			return a.Line - b.Line
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		if n := len(out); n > 0 && f.why != rPlain {
			p := &out[n-1]
			last := max(p.Last, p.Seq)
			if p.why == f.why && p.Kind == f.Kind && (p.TreeSize == f.TreeSize || !f.why.namesCheckpoint()) && f.Seq == last+1 && p.Line == 0 && f.Line == 0 &&
				sameDelta(p.Other, p.Seq, f.Other, f.Seq) && sameDelta(p.other2, p.Seq, f.other2, f.Seq) {
				p.Last = max(f.Last, f.Seq)
				continue
			}
		}
		out = append(out, f)
	}
	for i := range out {
		out[i].render()
	}
	return out
}

func sameDelta(a, aSeq, b, bSeq uint64) bool {
	if a == 0 || b == 0 {
		return a == b
	}
	return int64(a-aSeq) == int64(b-bSeq)
}
